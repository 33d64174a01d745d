#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe {

void register_onnx_elementwise(ConverterTable &t) { (void)t; }

} // namespace kiln::onnx_fe
