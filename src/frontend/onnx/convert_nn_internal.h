// Internal declarations of the ONNX nn converters (convert_nn*.cpp), called from
// register_onnx_nn (convert_nn.cpp).
#pragma once

#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe {

// convert_nn_conv.cpp: Conv, ConvTranspose, ConvInteger, DeformConv, Col2Im and pooling.
void register_onnx_nn_conv(ConverterTable &t);
// Defined by convert_nn_extra*.cpp (another owner); called at the end of register_onnx_nn.
void register_onnx_nn_extra(ConverterTable &t);

} // namespace kiln::onnx_fe
