// Internal to the elementwise converters (convert_elementwise*.cpp).
#pragma once

#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe {

// Clip, Cast, CastLike, Identity, Dropout, Where, variadic Max/Min/Sum/Mean, Mod, BitShift,
// IsInf, Gelu, PRelu, Swish, SwiGLU, BitCast (convert_elementwise_misc.cpp).
void register_onnx_elementwise_misc(ConverterTable &t);

// One kiln op on the node's inputs, one result.
Result<std::vector<Value *>> single(NodeCtx &c, std::string_view core, std::vector<Value *> ins,
                                    AttrMap attrs = {});

} // namespace kiln::onnx_fe
