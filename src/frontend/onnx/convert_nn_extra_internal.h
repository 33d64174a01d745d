// Internal declarations of the ONNX "nn extra" converters (resampling, detection,
// quantisation): convert_nn_extra*.cpp. register_onnx_nn_extra (convert_nn_extra.cpp) calls
// the per-file functions below.
#pragma once

#include "frontend/onnx/convert_nn_internal.h"

namespace kiln::onnx_fe {

void register_onnx_nn_extra_quant(ConverterTable &t); // convert_nn_extra_quant.cpp

} // namespace kiln::onnx_fe
