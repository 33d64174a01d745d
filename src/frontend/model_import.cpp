#include "frontend/model_import.h"

#include "frontend/nnef/importer.h"
#include "frontend/onnx/importer.h"
#include "frontend/stablehlo/importer.h"
#include "frontend/tflite/importer.h"

#include <filesystem>

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

Result<std::unique_ptr<Module>> import_model(const std::string &path) {
  if (is_stablehlo_path(path)) return stablehlo_fe::import_file(path);
  if (is_tflite_path(path)) return tflite_fe::import_file(path);
  if (is_nnef_path(path)) return nnef_fe::import_path(path);
  return onnx_fe::import_file(path);
}

} // namespace kiln::frontend
