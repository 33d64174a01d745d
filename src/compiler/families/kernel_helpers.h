// Internal to the sampling, conv, conv_transpose, quantize and resize lowerings (families/):
// small kernel-building helpers they share (defined in sampling.cpp).
#pragma once

#include "compiler/lowering/lower.h"

#include <string>
#include <vector>

namespace kiln::compiler::helpers {

// Appends `DeclareVar name = value` to `s` and returns the variable.
kir::Expr def(GridKernel &g, std::vector<kir::Stmt> &s, const std::string &prefix,
              const kir::Expr &value);
// Conjunction that tolerates an undefined left side (undefined = true).
kir::Expr conj(const kir::Expr &a, const kir::Expr &b);
// x clamped to [lo, hi] (same scalar type).
kir::Expr clamp(const kir::Expr &x, const kir::Expr &lo, const kir::Expr &hi);
// Float accumulation type for float element types: f16 computes in f32.
kir::ScalarType float_acc(kir::ScalarType t);
// Rounds a float to nearest-even and saturates it into integer type `to` (NaN -> 0), as
// the reference's round_saturate. Works in the float type of `v` (f32 or f64).
kir::Expr round_saturate(const kir::Expr &v, kir::ScalarType to);

// Per-tensor 8-bit kiln.quantize_linear / kiln.dequantize_linear of f32 values with f32 scales
// as an expression (quantize.cpp): what their own kernels compute for that case, so that the
// fused epilogue (qdq_epilogue_op) and the kernel agree bit for bit. `zp` may be undefined.
kir::Expr quantize_expr(const kir::Expr &x, const kir::Expr &scale, const kir::Expr &zp,
                        kir::ScalarType to);
kir::Expr dequantize_expr(const kir::Expr &q, const kir::Expr &scale, const kir::Expr &zp);
// dequantize_expr(quantize_expr(x, scale, zp, to), dq_scale, dq_zp) (to: i8 or u8) computed
// in f32 without the integer round trip: the quantised value is clamped as a float, then
// shifted by dq_zp and scaled. Equal bit for bit (every intermediate is a small integer), and
// a C compiler vectorises it where the conversions to 8 bits and back kept it scalar.
kir::Expr quantize_dequantize_expr(const kir::Expr &x, const kir::Expr &scale, const kir::Expr &zp,
                                   kir::ScalarType to, const kir::Expr &dq_scale,
                                   const kir::Expr &dq_zp);
// Whether `op` is such a quantize / dequantize (the fusable case).
bool qdq_epilogue_op(const Op &op);

// The requantisation multiplier s1 * s2 / s3 of kiln.qlinear_matmul / kiln.qlinear_conv,
// rounded as the reference's requant_multiplier (src/ops/nn_quant_linear.cpp): computed in the
// scales' type `st` (f16 rounded through f32 where the target has f16 arithmetic, f32, f64),
// after the product and after the quotient. The operands are of `st`'s computing type (f64
// for f64 scales, else f32); the result has that type too. Defined in quantize.cpp.
kir::Expr requant_multiplier(const LowerCtx &c, kir::ScalarType st, const kir::Expr &s1,
                             const kir::Expr &s2, const kir::Expr &s3);
// The scalar type requant_multiplier rounds in for scales of dtype `t`.
kir::ScalarType scale_type(DType t);
// The type the accumulator is requantised in: f32 for the `requant = "f32"` attribute (ONNX
// Runtime's), else f64 where the target has it (the reference's). Defined in quantize.cpp.
kir::ScalarType requant_type(const LowerCtx &c, bool f32);
// The requantised value of real = acc * multiplier (of requant_type) before saturation:
// round_even(real) + zp for "f32" (zero point after rounding), round_even(real + zp) otherwise.
kir::Expr requantize(const kir::Expr &real, const kir::Expr &zp, bool f32);

// The buffers of a convolution-like op (operands x, w and an optional bias, result y), bound
// on `g` in that order; B.index is -1 without a bias.
struct ConvBuffers {
  kir::BufferVar X, W, B, Y;
};
// `weights` false: W is left unbound (index -1), for a lowering that binds a packed copy.
Result<ConvBuffers> bind_conv_buffers(GridKernel &g, const Op &op, bool weights = true);

} // namespace kiln::compiler::helpers
