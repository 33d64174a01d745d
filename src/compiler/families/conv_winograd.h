// Winograd F(4x4, 3x3) convolutions on the matrix strategy (the cpu target); see
// conv_winograd.cpp.
#pragma once

#include "compiler/lowering/lower.h"
#include "ops/nn_kernels.h"

namespace kiln::compiler {

// The three Winograd kernels of `op` (input transform, batched products, output transform) when
// the convolution qualifies (one group, 3x3, unit strides and dilations, f32, constant
// weights, channels a multiple of 4, at least 196 output positions per image, an input that is
// not dequantized (an integer QDQ group), the matrix strategy, CompileOptions::winograd);
// false (nothing emitted) otherwise.
Result<bool> lower_conv_winograd(LowerCtx &c, const Op &op, const nn::Window &w);

} // namespace kiln::compiler
