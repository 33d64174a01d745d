// TensorFlow Lite import: reads a .tflite flatbuffer (schema version 3; verified with the
// flatbuffers Verifier before anything is read) and maps its first subgraph into kiln's core
// ops. Float models run as they are; int8/uint8 quantised tensors (per-tensor or per-channel
// scale and zero point) are held as their dequantised float values, and every quantised op
// output is re-quantised (round half away from zero, clamp) so later ops see TFLite's grid.
// NHWC tensors stay NHWC at the model's interface; convolutions and pooling run on NCHW
// values, with transposes inserted only where a consumer needs the other layout.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace kiln::tflite_fe {

// The module gets one function "main": its parameters are the subgraph's inputs in order,
// named after their tensors; its results are the subgraph's outputs in order. Unsupported
// builtins and custom ops are one error listing every offending operator (index, opcode
// name, version).
Result<std::unique_ptr<Module>> import_file(const std::string &path);
Result<std::unique_ptr<Module>> import_buffer(std::span<const uint8_t> data,
                                              const std::string &name);

} // namespace kiln::tflite_fe
