// Picks the frontend from the file name: *.mlir is StableHLO text, *.tflite TensorFlow Lite, a
// folder holding graph.nnef (that file itself, or the folder as .tgz) NNEF, anything else ONNX.
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>

namespace kiln::frontend {

bool is_stablehlo_path(const std::string &path);
bool is_tflite_path(const std::string &path);
bool is_nnef_path(const std::string &path);
Result<std::unique_ptr<Module>> import_model(const std::string &path);

} // namespace kiln::frontend
