// Rounding f32 values to float8 / float4 / e8m0 in kernel IR, for kiln.cast and
// kiln.quantize_linear on compiled devices (Vulkan and the C backend alike).
//
// The rounding function of the reference (support/narrow.h: round to nearest even, saturate or
// not, e8m0's round modes, the types' NaN / inf / -0 rules) is, for each sign, a step function
// of |x|: each bit pattern is produced by one interval of f32 magnitudes. The host finds the
// f32 where each step starts by bisection over f32 bit patterns (which order non-negative
// floats as their values) with the reference's own encoder, so the device reproduces it for
// every f32 input by construction. A kernel finds the step of |x| by a branch-free binary
// search (8 loads) in a constant table, then loads its bit pattern; NaN is tested apart. The
// sign (-0, -NaN) comes from the caller: a Cast reads the input's sign bit through an integer
// view of its buffer, QuantizeLinear takes the sign of its quotient (-0 by the sign of 1 / q,
// a NaN quotient has x's sign, as the reference's division keeps it).
#pragma once

#include "compiler/lowering/lower.h"
#include "support/narrow.h"

#include <vector>

namespace kiln::compiler::helpers {

struct NarrowEncoding {
  DType type;             // f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f4e2m1 or f8e8m0
  bool saturate = true;   // ONNX's saturate (float8 only; float4 always saturates)
  E8M0Round round = E8M0Round::up; // e8m0 only
};

class NarrowEncoder {
public:
  // Builds the table on the host and binds it to `g` as a constant (`bits`: also as u32, for
  // encode's exact search over bit patterns).
  static NarrowEncoder make(LowerCtx &c, GridKernel &g, const NarrowEncoding &e,
                            bool bits = false);
  // How encode compares |v| with the table's step starts. A device may flush f32 subnormals
  // to zero in comparisons (NVIDIA does), and e8m0's first step starts at one (2^-127):
  //   bits:        `magnitude` is |v|'s bit pattern (u32, from an integer view of an f32
  //                input), compared with the starts' patterns as integers: exact everywhere;
  //   no_subnormal: |v| is 0 or at least 2^-126 (widened f16, integers, booleans), so a
  //                subnormal start is passed exactly when |v| > 0;
  //   value:       |v| as computed (QuantizeLinear's quotient): a device that flushes it
  //                rounds the flushed value.
  enum class Compare { bits, no_subnormal, value };
  // The bit pattern (u8) of the f32 value `v` rounded to the type, `negative` (boolean) its
  // sign bit (which tells -0 and -NaN apart: see sign_bit / sign_of); statements that declare
  // the search's variables are appended to `s`.
  kir::Expr encode(GridKernel &g, std::vector<kir::Stmt> &s, const kir::Expr &v,
                   const kir::Expr &negative, Compare how = Compare::value,
                   const kir::Expr *magnitude = nullptr) const;

private:
  kir::BufferVar table_;
  kir::BufferVar table_bits_{-1, kir::ScalarType::u32};
  uint8_t nan_code_[2] = {0, 0}; // + NaN, - NaN
};

// An integer view (u32 for f32, u16 for f16) of the buffer of float value `v`, bound to `g`
// after `v` itself (g.in, which places it): the kernel IR has no bitcast, and the sign bit
// is what tells -0 and -NaN apart.
kir::BufferVar bits_view(LowerCtx &c, GridKernel &g, const Value *v);
// The sign bit of element `i` of a bits_view.
kir::Expr sign_bit(const kir::BufferVar &bits, const kir::Expr &i);
// The sign of a computed float: v < 0, or v == -0 (1 / v < 0). A NaN counts as positive.
kir::Expr sign_of(const kir::Expr &v);

// The reference's rounding of one f32 value (what NarrowEncoder reproduces).
uint8_t narrow_reference(const NarrowEncoding &e, float v);

} // namespace kiln::compiler::helpers
