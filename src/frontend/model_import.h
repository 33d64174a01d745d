// Picks the frontend from the file name: *.mlir is StableHLO text, anything else ONNX.
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>

namespace kiln::frontend {

bool is_stablehlo_path(const std::string &path);
Result<std::unique_ptr<Module>> import_model(const std::string &path);

} // namespace kiln::frontend
