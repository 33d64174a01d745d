// SPIR-V emitter: math intrinsics. Most map to GLSL.std.450; erf has no instruction and is
// expanded here, pow and tanh are guarded where GLSL.std.450 leaves results undefined.
#include "target/spirv/emitter_impl.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <limits>

namespace kiln::spirv {

using kir::Intrinsic;

namespace {

// GLSL.std.450 defines these only for 16- and 32-bit floats.
bool needs_32bit_float(Intrinsic f) {
  switch (f) {
  case Intrinsic::exp:
  case Intrinsic::log:
  case Intrinsic::sin:
  case Intrinsic::cos:
  case Intrinsic::tan:
  case Intrinsic::asin:
  case Intrinsic::acos:
  case Intrinsic::atan:
  case Intrinsic::sinh:
  case Intrinsic::cosh:
  case Intrinsic::tanh:
  case Intrinsic::asinh:
  case Intrinsic::acosh:
  case Intrinsic::atanh:
  case Intrinsic::erf: return true;
  case Intrinsic::sqrt:
  case Intrinsic::rsqrt:
  case Intrinsic::floor:
  case Intrinsic::ceil:
  case Intrinsic::round_even:
  case Intrinsic::trunc:
  case Intrinsic::abs:
  case Intrinsic::sign:
  case Intrinsic::fma:
  case Intrinsic::div_exact:
  case Intrinsic::isnan:
  case Intrinsic::isinf: return false;
  }
  return false;
}

// The GLSL.std.450 instruction of a one-to-one float intrinsic, or 0.
uint32_t glsl_float_inst(Intrinsic f) {
  switch (f) {
  case Intrinsic::exp: return GLSLstd450Exp;
  case Intrinsic::log: return GLSLstd450Log;
  case Intrinsic::sqrt: return GLSLstd450Sqrt;
  case Intrinsic::rsqrt: return GLSLstd450InverseSqrt;
  case Intrinsic::sin: return GLSLstd450Sin;
  case Intrinsic::cos: return GLSLstd450Cos;
  case Intrinsic::tan: return GLSLstd450Tan;
  case Intrinsic::asin: return GLSLstd450Asin;
  case Intrinsic::acos: return GLSLstd450Acos;
  case Intrinsic::atan: return GLSLstd450Atan;
  case Intrinsic::sinh: return GLSLstd450Sinh;
  case Intrinsic::cosh: return GLSLstd450Cosh;
  case Intrinsic::asinh: return GLSLstd450Asinh;
  case Intrinsic::acosh: return GLSLstd450Acosh;
  case Intrinsic::atanh: return GLSLstd450Atanh;
  case Intrinsic::floor: return GLSLstd450Floor;
  case Intrinsic::ceil: return GLSLstd450Ceil;
  case Intrinsic::round_even: return GLSLstd450RoundEven;
  case Intrinsic::trunc: return GLSLstd450Trunc;
  case Intrinsic::abs: return GLSLstd450FAbs;
  case Intrinsic::sign: return GLSLstd450FSign;
  case Intrinsic::fma: return GLSLstd450Fma;
  case Intrinsic::tanh:
  case Intrinsic::erf:
  case Intrinsic::isnan:
  case Intrinsic::isinf:
  case Intrinsic::div_exact: return 0;
  }
  return 0;
}

} // namespace

// erf in f32: the Maclaurin series through x^11 for |x| < 0.5 (relative error < 3e-8), and
// Abramowitz & Stegun 7.1.26 above (absolute error < 1.5e-7, relative < 3e-7 there).
static uint32_t emit_erf_f32(Emitter &e, uint32_t x) {
  const ScalarType f = ScalarType::f32;
  auto c = [&](double v) { return e.constant(f, v); };
  auto mul = [&](uint32_t a, uint32_t b) { return e.op(spv::OpFMul, f, {a, b}); };
  auto add = [&](uint32_t a, uint32_t b) { return e.op(spv::OpFAdd, f, {a, b}); };
  const double k = 1.1283791670955126; // 2 / sqrt(pi)
  uint32_t x2 = mul(x, x);
  const double series[] = {k, -k / 3, k / 10, -k / 42, k / 216, -k / 1320};
  uint32_t poly = c(series[5]);
  for (int i = 4; i >= 0; --i) poly = add(c(series[i]), mul(x2, poly));
  uint32_t small = mul(x, poly);

  uint32_t ax = e.glsl(f, GLSLstd450FAbs, {x});
  uint32_t t = e.op(spv::OpFDiv, f, {c(1.0), add(c(1.0), mul(c(0.3275911), ax))});
  const double a[] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  uint32_t q = c(a[4]);
  for (int i = 3; i >= 0; --i) q = add(c(a[i]), mul(t, q));
  q = mul(t, q);
  uint32_t decay = e.glsl(f, GLSLstd450Exp, {e.op(spv::OpFNegate, f, {mul(ax, ax)})});
  uint32_t y = e.op(spv::OpFSub, f, {c(1.0), mul(q, decay)});
  uint32_t large = mul(e.glsl(f, GLSLstd450FSign, {x}), y);
  uint32_t is_small = e.op(spv::OpFOrdLessThan, ScalarType::boolean, {ax, c(0.5)});
  return e.op(spv::OpSelect, f, {is_small, small, large});
}

// tanh from exp alone, with full relative precision everywhere: GLSL.std.450 Tanh's precision
// is only "inherited" from exp-based formulas, and drivers with fast transcendentals lose the
// small-argument digits (NVIDIA: ~1e-3 relative near 1e-4). Below |x| = 0.55, the odd Taylor
// series through x^15 (truncation < 5e-8 relative); above, sign(x) (1 - e) / (1 + e) with
// e = exp(-2|x|) <= 0.34, which cannot cancel or overflow (it rounds to +-1 from |x| = 9 on).
static uint32_t emit_tanh_f32(Emitter &e, uint32_t x) {
  const ScalarType f = ScalarType::f32;
  auto c = [&](double v) { return e.constant(f, v); };
  auto mul = [&](uint32_t a, uint32_t b) { return e.op(spv::OpFMul, f, {a, b}); };
  auto add = [&](uint32_t a, uint32_t b) { return e.op(spv::OpFAdd, f, {a, b}); };
  // tanh's Taylor coefficients of x^1, x^3, ..., x^15.
  const double series[] = {1.0,          -1.0 / 3,           2.0 / 15,
                           -17.0 / 315,  62.0 / 2835,        -1382.0 / 155925,
                           21844.0 / 6081075, -929569.0 / 638512875};
  uint32_t x2 = mul(x, x);
  uint32_t poly = c(series[7]);
  for (int i = 6; i >= 0; --i) poly = add(c(series[i]), mul(x2, poly));
  uint32_t small = mul(x, poly);
  uint32_t ax = e.glsl(f, GLSLstd450FAbs, {x});
  uint32_t ex = e.glsl(f, GLSLstd450Exp, {mul(c(-2.0), ax)});
  uint32_t mag = e.op(spv::OpFDiv, f, {e.op(spv::OpFSub, f, {c(1.0), ex}), add(c(1.0), ex)});
  uint32_t large = mul(e.glsl(f, GLSLstd450FSign, {x}), mag);
  uint32_t is_small = e.op(spv::OpFOrdLessThan, ScalarType::boolean, {ax, c(0.55)});
  return e.op(spv::OpSelect, f, {is_small, small, large});
}

uint32_t Emitter::call(const kir::Call *n) {
  ScalarType t = n->args[0].type();
  Words args;
  for (const kir::Expr &a : n->args) args.push_back(expr(a));
  // Vectors go lane by lane: the expansions below use scalar constants.
  return per_lane(n->value_type(), args, std::vector<ScalarType>(args.size(), t),
                  [&](const Words &lane) { return call_scalar(n->fn, t, lane); });
}

uint32_t Emitter::call_scalar(Intrinsic fn, ScalarType t, const Words &args) {
  use(t, true);
  if (!kir::is_float(t)) { // abs and sign on integers
    bool s = kir::is_signed_int(t);
    if (fn == Intrinsic::abs) return s ? glsl(t, GLSLstd450SAbs, args) : args[0];
    if (s) return glsl(t, GLSLstd450SSign, args);
    uint32_t nonzero = op(spv::OpINotEqual, ScalarType::boolean, {args[0], int_constant(t, 0)});
    return op(spv::OpSelect, t, {nonzero, int_constant(t, 1), int_constant(t, 0)});
  }
  if (t == ScalarType::f64 && needs_32bit_float(fn)) {
    fail(std::string("intrinsic ") + kir::to_string(fn) +
         " on f64: GLSL.std.450 has no 64-bit form (cast to f32 explicitly)");
    return int_constant(ScalarType::u32, 0);
  }
  if (fn == Intrinsic::div_exact)
    return t == ScalarType::f32 && t_.fdiv_via_f64 ? correctly_rounded_fdiv(args[0], args[1])
                                                  : op(spv::OpFDiv, t, args);
  if (fn == Intrinsic::isnan) return op(spv::OpIsNan, ScalarType::boolean, args);
  if (fn == Intrinsic::isinf) return op(spv::OpIsInf, ScalarType::boolean, args);
  if (fn == Intrinsic::erf || fn == Intrinsic::tanh) {
    // Evaluated in f32; f16 results round from there.
    uint32_t x = convert(args[0], t, ScalarType::f32);
    uint32_t r = fn == Intrinsic::erf ? emit_erf_f32(*this, x) : emit_tanh_f32(*this, x);
    return convert(r, ScalarType::f32, t);
  }
  return glsl(t, glsl_float_inst(fn), args);
}

// pow with the cases GLSL.std.450 leaves undefined (x < 0; x == 0 with y <= 0) defined as
// in C: a negative base with an integral exponent keeps the sign of odd powers, otherwise
// NaN; pow(0, y<0) = inf; pow(x, 0) = 1.
uint32_t Emitter::pow(uint32_t x, uint32_t y, ScalarType t) {
  if (t == ScalarType::f64) {
    fail("pow on f64: GLSL.std.450 has no 64-bit form (cast to f32 explicitly)");
    return int_constant(ScalarType::u32, 0);
  }
  const ScalarType b = ScalarType::boolean;
  uint32_t zero = constant(t, 0.0), one = constant(t, 1.0);
  uint32_t r = glsl(t, GLSLstd450Pow, {glsl(t, GLSLstd450FAbs, {x}), y});
  uint32_t integral = op(spv::OpFOrdEqual, b, {glsl(t, GLSLstd450Floor, {y}), y});
  uint32_t half = op(spv::OpFMul, t, {y, constant(t, 0.5)});
  uint32_t odd = op(spv::OpFOrdNotEqual, b, {glsl(t, GLSLstd450Floor, {half}), half});
  uint32_t neg_r = op(spv::OpSelect, t, {odd, op(spv::OpFNegate, t, {r}), r});
  uint32_t nan = constant(t, std::numeric_limits<double>::quiet_NaN());
  uint32_t neg = op(spv::OpSelect, t, {integral, neg_r, nan});
  uint32_t res = op(spv::OpSelect, t, {op(spv::OpFOrdLessThan, b, {x, zero}), neg, r});
  uint32_t at_zero = op(spv::OpSelect, t,
                        {op(spv::OpFOrdGreaterThan, b, {y, zero}), zero,
                         constant(t, std::numeric_limits<double>::infinity())});
  res = op(spv::OpSelect, t, {op(spv::OpFOrdEqual, b, {x, zero}), at_zero, res});
  return op(spv::OpSelect, t, {op(spv::OpFOrdEqual, b, {y, zero}), one, res});
}

} // namespace kiln::spirv
