#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe {

void register_onnx_control(ConverterTable &t) { (void)t; }

} // namespace kiln::onnx_fe
