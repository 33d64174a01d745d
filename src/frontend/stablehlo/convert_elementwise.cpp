// Elementwise ops: arithmetic, math functions (with exact decompositions where kiln has no
// core op), logic and shifts, compare (all directions and compare types), select, clamp,
// convert, bitcast_convert, and the chlo ops JAX emits.
#include "frontend/stablehlo/convert.h"

#include <cmath>
#include <fmt/format.h>

namespace kiln::stablehlo_fe {

namespace {

constexpr double kPi = 3.14159265358979323846;

// One kiln op per operand dtype class.
struct Mapping {
  const char *shlo;
  const char *floats;   // kiln op for float operands (nullptr: unsupported)
  const char *ints;     // for integer operands
  const char *booleans; // for i1 operands
};

// clang-format off
const Mapping kDirect[] = {
    {"stablehlo.add",       "kiln.add", "kiln.add", "kiln.or"},
    {"stablehlo.subtract",  "kiln.sub", "kiln.sub", nullptr},
    {"stablehlo.multiply",  "kiln.mul", "kiln.mul", "kiln.and"},
    {"stablehlo.divide",    "kiln.div", "kiln.div", nullptr},
    {"stablehlo.remainder", "kiln.fmod", "kiln.fmod", nullptr},
    {"stablehlo.power",     "kiln.pow", "kiln.pow", nullptr},
    {"stablehlo.maximum",   "kiln.max", "kiln.max", "kiln.or"},
    {"stablehlo.minimum",   "kiln.min", "kiln.min", "kiln.and"},
    {"stablehlo.and",       nullptr, "kiln.bitwise_and", "kiln.and"},
    {"stablehlo.or",        nullptr, "kiln.bitwise_or", "kiln.or"},
    {"stablehlo.xor",       nullptr, "kiln.bitwise_xor", "kiln.xor"},
    {"stablehlo.not",       nullptr, "kiln.bitwise_not", "kiln.not"},
    {"stablehlo.negate",    "kiln.neg", "kiln.neg", nullptr},
    {"stablehlo.abs",       "kiln.abs", "kiln.abs", nullptr},
    {"stablehlo.sign",      "kiln.sign", "kiln.sign", nullptr},
    {"stablehlo.exponential", "kiln.exp", nullptr, nullptr},
    {"stablehlo.log",       "kiln.log", nullptr, nullptr},
    {"stablehlo.logistic",  "kiln.sigmoid", nullptr, nullptr},
    {"stablehlo.sqrt",      "kiln.sqrt", nullptr, nullptr},
    {"stablehlo.tanh",      "kiln.tanh", nullptr, nullptr},
    {"stablehlo.sine",      "kiln.sin", nullptr, nullptr},
    {"stablehlo.cosine",    "kiln.cos", nullptr, nullptr},
    {"stablehlo.tan",       "kiln.tan", nullptr, nullptr},
    {"stablehlo.floor",     "kiln.floor", nullptr, nullptr},
    {"stablehlo.ceil",      "kiln.ceil", nullptr, nullptr},
    {"stablehlo.round_nearest_even", "kiln.round", nullptr, nullptr},
    {"chlo.erf",   "kiln.erf", nullptr, nullptr},
    {"chlo.tan",   "kiln.tan", nullptr, nullptr},
    {"chlo.sinh",  "kiln.sinh", nullptr, nullptr},
    {"chlo.cosh",  "kiln.cosh", nullptr, nullptr},
    {"chlo.asin",  "kiln.asin", nullptr, nullptr},
    {"chlo.acos",  "kiln.acos", nullptr, nullptr},
    {"chlo.atan",  "kiln.atan", nullptr, nullptr},
    {"chlo.asinh", "kiln.asinh", nullptr, nullptr},
    {"chlo.acosh", "kiln.acosh", nullptr, nullptr},
    {"chlo.atanh", "kiln.atanh", nullptr, nullptr},
};
// clang-format on

const char *pick(const Mapping &m, DType t) {
  if (is_float(t)) return m.floats;
  if (is_bool(t)) return m.booleans;
  return m.ints;
}

Outs convert_direct(OpCtx &c, const Mapping &m) {
  const DType t = c.in.at(0)->type.dtype;
  const char *k = pick(m, t);
  if (!k) return c.error(fmt::format("{} on {} is not supported", c.op.name, dtype_name(t)));
  return one(c.make(k, c.in));
}

Result<Value *> unary(OpCtx &c, const char *name, Value *x) { return c.make(name, {x}); }
Result<Value *> binary(OpCtx &c, const char *name, Value *x, Value *y) { return c.make(name, {x, y}); }

Status need_float(OpCtx &c) {
  if (!is_float(c.in.at(0)->type.dtype))
    return c.error(fmt::format("{} on {} is not supported", c.op.name, dtype_name(c.in[0]->type.dtype)));
  return Status::ok();
}

// expm1(x) = 2 exp(x/2) sinh(x/2) (exact identity, no cancellation) for |x| < 1, exp(x) - 1
// elsewhere (where it is accurate and the product form could give inf * 0).
Outs convert_expm1(OpCtx &c) {
  KILN_TRY(need_float(c));
  Value *x = c.in[0];
  const DType t = x->type.dtype;
  KILN_ASSIGN(Value * h, binary(c, "kiln.mul", x, c.scalar(t, 0.5)));
  KILN_ASSIGN(Value * e, unary(c, "kiln.exp", h));
  KILN_ASSIGN(Value * s, unary(c, "kiln.sinh", h));
  KILN_ASSIGN(Value * p, binary(c, "kiln.mul", e, s));
  KILN_ASSIGN(Value * small, binary(c, "kiln.add", p, p));
  KILN_ASSIGN(Value * ex, unary(c, "kiln.exp", x));
  KILN_ASSIGN(Value * big, binary(c, "kiln.sub", ex, c.scalar(t, 1)));
  KILN_ASSIGN(Value * ax, unary(c, "kiln.abs", x));
  KILN_ASSIGN(Value * lt, binary(c, "kiln.less", ax, c.scalar(t, 1)));
  return one(c.make("kiln.where", {lt, small, big}));
}

// log1p(x) = 2 atanh(x / (x + 2)) (exact identity) for |x| < 0.5, log(1 + x) elsewhere.
Outs convert_log1p(OpCtx &c) {
  KILN_TRY(need_float(c));
  Value *x = c.in[0];
  const DType t = x->type.dtype;
  KILN_ASSIGN(Value * d, binary(c, "kiln.add", x, c.scalar(t, 2)));
  KILN_ASSIGN(Value * q, binary(c, "kiln.div", x, d));
  KILN_ASSIGN(Value * a, unary(c, "kiln.atanh", q));
  KILN_ASSIGN(Value * small, binary(c, "kiln.add", a, a));
  KILN_ASSIGN(Value * p, binary(c, "kiln.add", x, c.scalar(t, 1)));
  KILN_ASSIGN(Value * big, unary(c, "kiln.log", p));
  KILN_ASSIGN(Value * ax, unary(c, "kiln.abs", x));
  KILN_ASSIGN(Value * lt, binary(c, "kiln.less", ax, c.scalar(t, 0.5)));
  return one(c.make("kiln.where", {lt, small, big}));
}

Outs convert_rsqrt(OpCtx &c) {
  KILN_TRY(need_float(c));
  KILN_ASSIGN(Value * s, unary(c, "kiln.sqrt", c.in[0]));
  return one(unary(c, "kiln.reciprocal", s));
}

// cbrt(x) = sign(x) |x|^(1/3).
Outs convert_cbrt(OpCtx &c) {
  KILN_TRY(need_float(c));
  Value *x = c.in[0];
  KILN_ASSIGN(Value * a, unary(c, "kiln.abs", x));
  KILN_ASSIGN(Value * p, binary(c, "kiln.pow", a, c.scalar(x->type.dtype, 1.0 / 3.0)));
  KILN_ASSIGN(Value * s, unary(c, "kiln.sign", x));
  return one(binary(c, "kiln.mul", s, p));
}

// Round half away from zero, exactly: t = trunc(x); ties (|x - t| == 0.5) go to t + sign(x),
// everything else rounds like round-half-even.
Outs convert_round_afz(OpCtx &c) {
  KILN_TRY(need_float(c));
  Value *x = c.in[0];
  const DType dt = x->type.dtype;
  KILN_ASSIGN(Value * s, unary(c, "kiln.sign", x));
  KILN_ASSIGN(Value * a, unary(c, "kiln.abs", x));
  KILN_ASSIGN(Value * fa, unary(c, "kiln.floor", a));
  KILN_ASSIGN(Value * t, binary(c, "kiln.mul", s, fa));
  KILN_ASSIGN(Value * f, binary(c, "kiln.sub", x, t));
  KILN_ASSIGN(Value * af, unary(c, "kiln.abs", f));
  KILN_ASSIGN(Value * tie, binary(c, "kiln.equal", af, c.scalar(dt, 0.5)));
  KILN_ASSIGN(Value * away, binary(c, "kiln.add", t, s));
  KILN_ASSIGN(Value * even, unary(c, "kiln.round", x));
  return one(c.make("kiln.where", {tie, away, even}));
}

Outs convert_is_finite(OpCtx &c) {
  KILN_TRY(need_float(c));
  KILN_ASSIGN(Value * n, unary(c, "kiln.isnan", c.in[0]));
  KILN_ASSIGN(Value * i, unary(c, "kiln.isinf", c.in[0]));
  KILN_ASSIGN(Value * bad, binary(c, "kiln.or", n, i));
  return one(unary(c, "kiln.not", bad));
}

// atan2(y, x) from atan(y / x) with the quadrant corrections; atan2(+-0, +-0) gives +-0 / +-pi
// by the sign of x only through x < 0 (signed zeros of x are not distinguished).
Outs convert_atan2(OpCtx &c) {
  KILN_TRY(need_float(c));
  Value *y = c.in[0], *x = c.in[1];
  const DType t = y->type.dtype;
  KILN_ASSIGN(Value * q, binary(c, "kiln.div", y, x));
  KILN_ASSIGN(Value * base, unary(c, "kiln.atan", q));
  Value *zero = c.scalar(t, 0);
  KILN_ASSIGN(Value * xneg, binary(c, "kiln.less", x, zero));
  KILN_ASSIGN(Value * yneg, binary(c, "kiln.less", y, zero));
  KILN_ASSIGN(Value * plus, binary(c, "kiln.add", base, c.scalar(t, kPi)));
  KILN_ASSIGN(Value * minus, binary(c, "kiln.sub", base, c.scalar(t, kPi)));
  KILN_ASSIGN(Value * fix, c.make("kiln.where", {yneg, minus, plus}));
  KILN_ASSIGN(Value * r, c.make("kiln.where", {xneg, fix, base}));
  // y == 0 and x == 0: atan(NaN) -> 0 (or pi when x < 0, impossible here).
  KILN_ASSIGN(Value * yz, binary(c, "kiln.equal", y, zero));
  KILN_ASSIGN(Value * xz, binary(c, "kiln.equal", x, zero));
  KILN_ASSIGN(Value * both, binary(c, "kiln.and", yz, xz));
  return one(c.make("kiln.where", {both, y, r}));
}

// ---- shifts: kiln has logical shifts on unsigned integers; signed operands are bitcast ----

DType unsigned_of(DType t) {
  switch (t) {
  case DType::i8: return DType::u8;
  case DType::i16: return DType::u16;
  case DType::i32: return DType::u32;
  case DType::i64: return DType::u64;
  default: return t;
  }
}

Result<Value *> bitcast(OpCtx &c, Value *x, DType to) {
  if (x->type.dtype == to) return x;
  return c.make("kiln.bitcast", {x}, {{"to", to}});
}

Outs convert_shift(OpCtx &c) {
  Value *x = c.in.at(0), *s = c.in.at(1);
  const DType t = x->type.dtype;
  if (!is_integer(t)) return c.error(fmt::format("{} on {} is not supported", c.op.name, dtype_name(t)));
  const DType u = unsigned_of(t);
  KILN_ASSIGN(Value * ux, bitcast(c, x, u));
  KILN_ASSIGN(Value * us, bitcast(c, s, u));
  Value *r = nullptr;
  if (c.op.name == "stablehlo.shift_left") {
    KILN_ASSIGN(r, binary(c, "kiln.shl", ux, us));
  } else if (c.op.name == "stablehlo.shift_right_logical" || !is_signed_int(t)) {
    KILN_ASSIGN(r, binary(c, "kiln.shr", ux, us));
  } else {
    // Arithmetic: x < 0 ? ~(~x >> s) : x >> s (shifts past the width give 0 / -1).
    KILN_ASSIGN(Value * nx, unary(c, "kiln.bitwise_not", ux));
    KILN_ASSIGN(Value * sn, binary(c, "kiln.shr", nx, us));
    KILN_ASSIGN(Value * neg, unary(c, "kiln.bitwise_not", sn));
    KILN_ASSIGN(Value * pos, binary(c, "kiln.shr", ux, us));
    KILN_ASSIGN(Value * lt, binary(c, "kiln.less", x, c.scalar_int(t, 0)));
    KILN_ASSIGN(r, c.make("kiln.where", {lt, neg, pos}));
  }
  return one(bitcast(c, r, t));
}

// popcnt by the SWAR sum over bit fields, on the unsigned bit pattern.
Outs convert_popcnt(OpCtx &c) {
  Value *x = c.in.at(0);
  const DType t = x->type.dtype;
  if (!is_integer(t)) return c.error(fmt::format("popcnt on {} is not supported", dtype_name(t)));
  const DType u = unsigned_of(t);
  const int bits = static_cast<int>(dtype_size(t) * 8);
  KILN_ASSIGN(Value * v, bitcast(c, x, u));
  auto mask = [&](uint64_t m) { return c.scalar_int(u, static_cast<int64_t>(m)); };
  const uint64_t m1 = 0x5555555555555555ull, m2 = 0x3333333333333333ull, m4 = 0x0f0f0f0f0f0f0f0full;
  // v = (v & m1) + ((v >> 1) & m1), then pairs, nibbles, bytes, ...
  const uint64_t masks[] = {m1, m2, m4, 0x00ff00ff00ff00ffull, 0x0000ffff0000ffffull,
                            0x00000000ffffffffull};
  for (int k = 0, w = 1; w < bits; ++k, w *= 2) {
    KILN_ASSIGN(Value * lo, binary(c, "kiln.bitwise_and", v, mask(masks[k])));
    KILN_ASSIGN(Value * sh, binary(c, "kiln.shr", v, c.scalar_int(u, w)));
    KILN_ASSIGN(Value * hi, binary(c, "kiln.bitwise_and", sh, mask(masks[k])));
    KILN_ASSIGN(v, binary(c, "kiln.add", lo, hi));
  }
  return one(bitcast(c, v, t));
}

// ---- compare ----------------------------------------------------------------------------------

// Float bits mapped to signed integers that order like IEEE totalOrder:
// -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
Result<Value *> total_order_key(OpCtx &c, Value *x) {
  const DType t = x->type.dtype;
  DType it = t == DType::f64 ? DType::i64 : (t == DType::f32 ? DType::i32 : DType::i16);
  KILN_ASSIGN(Value * i, bitcast(c, x, it));
  const int bits = static_cast<int>(dtype_size(it) * 8);
  const int64_t mag = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
  KILN_ASSIGN(Value * flipped, binary(c, "kiln.bitwise_xor", i, c.scalar_int(it, mag)));
  KILN_ASSIGN(Value * neg, binary(c, "kiln.less", i, c.scalar_int(it, 0)));
  return c.make("kiln.where", {neg, flipped, i});
}

Outs convert_compare(OpCtx &c) {
  Value *a = c.in.at(0), *b = c.in.at(1);
  const DType t = a->type.dtype;
  const std::string dir = c.ident("comparison_direction");
  std::string type = c.ident("compare_type");
  if (type.empty()) type = is_float(t) ? "FLOAT" : (is_unsigned_int(t) || is_bool(t) ? "UNSIGNED" : "SIGNED");
  const bool ok_type = (type == "FLOAT" && is_float(t)) || (type == "TOTALORDER" && is_float(t)) ||
                       (type == "SIGNED" && is_signed_int(t)) ||
                       (type == "UNSIGNED" && (is_unsigned_int(t) || is_bool(t)));
  if (!ok_type)
    return c.error(fmt::format("compare_type {} on {} is not supported", type, dtype_name(t)));
  if (type == "TOTALORDER") {
    KILN_ASSIGN(a, total_order_key(c, a));
    KILN_ASSIGN(b, total_order_key(c, b));
  } else if (is_bool(t) && dir != "EQ" && dir != "NE") {
    KILN_ASSIGN(a, c.cast(a, DType::u8));
    KILN_ASSIGN(b, c.cast(b, DType::u8));
  }
  if (dir == "EQ") return one(binary(c, "kiln.equal", a, b));
  if (dir == "NE") {
    KILN_ASSIGN(Value * e, binary(c, "kiln.equal", a, b));
    return one(unary(c, "kiln.not", e));
  }
  if (dir == "LT") return one(binary(c, "kiln.less", a, b));
  if (dir == "LE") return one(binary(c, "kiln.less_equal", a, b));
  if (dir == "GT") return one(binary(c, "kiln.greater", a, b));
  if (dir == "GE") return one(binary(c, "kiln.greater_equal", a, b));
  return c.error(fmt::format("unknown comparison_direction '{}'", dir));
}

Outs convert_select(OpCtx &c) { return one(c.make("kiln.where", c.in)); }

// clamp(min, x, max) = min(max(x, min), max); min / max are scalars or full-shape.
Outs convert_clamp(OpCtx &c) {
  Value *lo = c.in.at(0), *x = c.in.at(1), *hi = c.in.at(2);
  if (is_bool(x->type.dtype)) return c.error("clamp on i1 is not supported");
  return one(c.clamp(x, lo, hi));
}

Outs convert_convert(OpCtx &c) {
  Value *x = c.in.at(0);
  const DType to = c.result_dtype();
  return one(c.cast(x, to));
}

Outs convert_bitcast_convert(OpCtx &c) {
  Value *x = c.in.at(0);
  const DType to = c.result_dtype();
  if (dtype_size(to) != dtype_size(x->type.dtype) || c.result_dims() != x->type.dims)
    return c.error(fmt::format("bitcast_convert between {} and {} (different element widths) is not "
                               "supported",
                               dtype_name(x->type.dtype), dtype_name(to)));
  if (is_bool(to) || is_bool(x->type.dtype)) return c.error("bitcast_convert of i1 is not supported");
  return one(bitcast(c, x, to));
}

Outs convert_square(OpCtx &c) { return one(binary(c, "kiln.mul", c.in.at(0), c.in.at(0))); }

Outs convert_erfc(OpCtx &c) {
  KILN_TRY(need_float(c));
  KILN_ASSIGN(Value * e, unary(c, "kiln.erf", c.in[0]));
  return one(binary(c, "kiln.sub", c.scalar(c.in[0]->type.dtype, 1), e));
}

Outs convert_is_inf(OpCtx &c, const char *k) {
  KILN_TRY(need_float(c));
  return one(unary(c, k, c.in[0]));
}

// reduce_precision to a format kiln stores: a round trip through f16 (5, 10) or bf16 (8, 7);
// the operand's own format is the identity.
Outs convert_reduce_precision(OpCtx &c) {
  Value *x = c.in.at(0);
  const DType t = x->type.dtype;
  KILN_ASSIGN(int64_t e, c.int_attr("exponent_bits"));
  KILN_ASSIGN(int64_t m, c.int_attr("mantissa_bits"));
  auto bits_of = [](DType d) -> std::pair<int64_t, int64_t> {
    switch (d) {
    case DType::f16: return {5, 10};
    case DType::bf16: return {8, 7};
    case DType::f32: return {8, 23};
    case DType::f64: return {11, 52};
    default: return {0, 0};
    }
  };
  if (!is_float(t)) return c.error("reduce_precision needs a float operand");
  const auto own = bits_of(t);
  if (e >= own.first && m >= own.second) return std::vector<Value *>{x};
  for (DType n : {DType::f16, DType::bf16}) {
    if (bits_of(n) != std::make_pair(e, m) || dtype_size(n) >= dtype_size(t)) continue;
    KILN_ASSIGN(Value * r, c.cast(x, n));
    return one(c.cast(r, t));
  }
  return c.error(fmt::format("reduce_precision to {} exponent and {} mantissa bits is not supported "
                             "(only the f16 and bf16 formats)",
                             e, m));
}

} // namespace

void register_elementwise(ConverterTable &t) {
  t.add("stablehlo.reduce_precision", convert_reduce_precision);
  for (const Mapping &m : kDirect) {
    const Mapping *mp = &m;
    t.add(m.shlo, [mp](OpCtx &c) { return convert_direct(c, *mp); });
  }
  t.add("stablehlo.exponential_minus_one", convert_expm1);
  t.add("stablehlo.log_plus_one", convert_log1p);
  t.add("stablehlo.rsqrt", convert_rsqrt);
  t.add("stablehlo.cbrt", convert_cbrt);
  t.add("stablehlo.round_nearest_afz", convert_round_afz);
  t.add("stablehlo.is_finite", convert_is_finite);
  t.add("stablehlo.atan2", convert_atan2);
  t.add("stablehlo.shift_left", convert_shift);
  t.add("stablehlo.shift_right_logical", convert_shift);
  t.add("stablehlo.shift_right_arithmetic", convert_shift);
  t.add("stablehlo.popcnt", convert_popcnt);
  t.add("stablehlo.compare", convert_compare);
  t.add("stablehlo.select", convert_select);
  t.add("stablehlo.clamp", convert_clamp);
  t.add("stablehlo.convert", convert_convert);
  t.add("stablehlo.bitcast_convert", convert_bitcast_convert);
  t.add("chlo.square", convert_square);
  t.add("chlo.erfc", convert_erfc);
  t.add("chlo.is_inf", [](OpCtx &c) { return convert_is_inf(c, "kiln.isinf"); });
  t.add("chlo.is_pos_inf", [](OpCtx &c) { return convert_is_inf(c, "kiln.isposinf"); });
  t.add("chlo.is_neg_inf", [](OpCtx &c) { return convert_is_inf(c, "kiln.isneginf"); });
}

} // namespace kiln::stablehlo_fe
