// Internal to the shape-family converters (convert_shape*.cpp).
#pragma once

#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe {

// Second half of the family's converters (convert_shape_2.cpp).
void register_onnx_shape_2(ConverterTable &t);

} // namespace kiln::onnx_fe
