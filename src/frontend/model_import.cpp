#include "frontend/model_import.h"

#include "frontend/nnef/importer.h"
#include "frontend/onnx/importer.h"
#include "frontend/stablehlo/importer.h"
#include "frontend/tflite/importer.h"
#include "passes/pass.h"

#include <filesystem>
#include <fmt/format.h>

namespace kiln::frontend {

namespace {
bool ends_with(const std::string &s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
} // namespace

bool is_stablehlo_path(const std::string &path) { return ends_with(path, ".mlir"); }

bool is_tflite_path(const std::string &path) { return ends_with(path, ".tflite"); }

bool is_nnef_path(const std::string &path) {
  if (ends_with(path, ".nnef") || ends_with(path, ".tgz") || ends_with(path, ".tar.gz")) return true;
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) &&
         std::filesystem::exists(std::filesystem::path(path) / "graph.nnef", ec);
}

namespace {
Result<std::unique_ptr<Module>> import_by_kind(const std::string &path) {
  if (is_stablehlo_path(path)) return stablehlo_fe::import_file(path);
  if (is_tflite_path(path)) return tflite_fe::import_file(path);
  if (is_nnef_path(path)) return nnef_fe::import_path(path);
  return onnx_fe::import_file(path);
}
} // namespace

Result<std::unique_ptr<Module>> import_model(const std::string &path) {
  KILN_ASSIGN(auto module, import_by_kind(path));
  // A model that declares no outputs computes nothing anyone can read: refuse it here, with
  // the file's name, rather than compile an artifact that runs no command.
  const Function *f = module->main();
  if (!f) return Status::error(fmt::format("{}: the model has no main function", path));
  if (f->body.results.empty())
    return Status::error(fmt::format("{}: the model has no outputs: a model must declare at "
                                     "least one output to compute",
                                     path));
  // Quantised groups run as integer ops on every device, cpu-ref included (passes/fuse_qdq.cpp).
  KILN_TRY(run_fuse_qdq(*module).with_context(path));
  return module;
}

} // namespace kiln::frontend
