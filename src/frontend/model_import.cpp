#include "frontend/model_import.h"

#include "frontend/onnx/importer.h"
#include "frontend/stablehlo/importer.h"

namespace kiln::frontend {

bool is_stablehlo_path(const std::string &path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".mlir") == 0;
}

Result<std::unique_ptr<Module>> import_model(const std::string &path) {
  if (is_stablehlo_path(path)) return stablehlo_fe::import_file(path);
  return onnx_fe::import_file(path);
}

} // namespace kiln::frontend
