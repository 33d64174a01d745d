// Checks of quantisation parameters, shared by every op that takes them:
// kiln.quantize_linear, kiln.dequantize_linear, kiln.qlinear_matmul, kiln.qlinear_conv,
// kiln.matmul_integer and kiln.conv_integer (kiln.dynamic_quantize_linear computes its own).
//
// Each op calls these from its shape function, where they see operand types and the values of
// constant operands (so a bad initializer is refused at import and by `kiln compile`, naming
// the node), and from its reference implementation, where they see every value (so a scale
// fed as a graph input is refused by cpu-ref). Compiled kernels read runtime scales as they
// are: a zero / NaN / Inf scale that is not a constant cannot be checked before a device runs,
// and there gives IEEE results, saturated to the quantised type (docs/ARCHITECTURE.md).
//
// Rules (ONNX's, made explicit):
// - a scale is finite and nonzero; a negative scale is allowed (ONNX does not forbid it and
//   the formulas are defined for it);
// - a zero point has the dtype of the tensor it belongs to;
// - granularity (QuantizeLinear / DequantizeLinear): a per-tensor scale has one value; a
//   per-axis scale is 1-D of x.shape[axis]; a blocked scale (block_size > 0) has x's rank,
//   ceil(x.shape[axis] / block_size) entries along axis (a block size that does not divide
//   the axis is valid) and x's dims elsewhere; axis must lie in [-rank, rank) where it is
//   used; block_size >= 0; the zero point has as many values as the scale;
// - per channel (QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger): one value, or one
//   per row / column / output channel.
#pragma once

#include "ir/op_registry.h"

#include <string_view>

namespace kiln::quant {

// Every value of `scale` is finite and nonzero.
Status check_scale_values(const Op &op, const Tensor &scale, std::string_view what);

// check_scale_values on operand `i` where it is a known constant (shape functions).
Status check_const_scale(const InferCtx &ctx, size_t i, std::string_view what);

// `zp` (the zero point named `what`) has dtype `q`, the dtype of `of`.
Status check_zero_point_dtype(const Op &op, DType zp, DType q, std::string_view what,
                              std::string_view of);

// The per-tensor / per-axis / blocked layout of `scale` against `x` (attributes axis and
// block_size of `op`). Dynamic dims are skipped; unranked types pass.
Status check_layout(const Op &op, const TensorType &x, const TensorType &scale);

// One value, or `n` values (`n` < 0: unknown) in at most one non-unit dim.
Status check_per_channel(const Op &op, const TensorType &p, int64_t n, std::string_view what,
                         std::string_view per);

} // namespace kiln::quant
