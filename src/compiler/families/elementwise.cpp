// Elementwise ops (unary, binary with broadcasting, where, cast): one invocation per output
// element; operand indices come from constant-stride index math.
#include "compiler/lowering/float_math.h"
#include "compiler/lowering/lower.h"
#include "compiler/families/kernel_helpers.h"
#include "compiler/families/narrow_encode.h"
#include "support/narrow.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::compiler {

using namespace kir;

namespace {

using Params = std::array<double, 2>;
using UnaryExpr = Expr (*)(const Expr &x, const Params &p);

Expr k(const Expr &like, double v) { return make_const(like.type(), v); }
Expr fn(Intrinsic f, const Expr &x) { return call(f, {x}); }
Expr exp_(const Expr &x) { return fn(Intrinsic::exp, x); }
Expr abs_(const Expr &x) { return fn(Intrinsic::abs, x); }
Expr clamp01(const Expr &x) { return min(max(x, k(x, 0)), k(x, 1)); }

struct UnaryDef {
  const char *name;
  bool floats_only;
  std::array<const char *, 2> params;
  Params dflt;
  UnaryExpr f;
};

#define KILN_INTRINSIC(op, intr)                                                                   \
  {op, true, {nullptr, nullptr}, {0, 0}, [](const Expr &x, const Params &) {                       \
     return fn(Intrinsic::intr, x);                                                                \
   }}

// Float formulas of the unary ops (see src/ops/elementwise_unary.cpp for the reference).
const UnaryDef kUnary[] = {
    KILN_INTRINSIC("exp", exp), KILN_INTRINSIC("log", log), KILN_INTRINSIC("sqrt", sqrt),
    KILN_INTRINSIC("sin", sin), KILN_INTRINSIC("cos", cos), KILN_INTRINSIC("tan", tan),
    KILN_INTRINSIC("asin", asin), KILN_INTRINSIC("acos", acos), KILN_INTRINSIC("atan", atan),
    KILN_INTRINSIC("sinh", sinh), KILN_INTRINSIC("cosh", cosh), KILN_INTRINSIC("asinh", asinh),
    KILN_INTRINSIC("acosh", acosh), KILN_INTRINSIC("atanh", atanh), KILN_INTRINSIC("erf", erf),
    KILN_INTRINSIC("floor", floor), KILN_INTRINSIC("ceil", ceil),
    {"tanh", true, {}, {}, [](const Expr &x, const Params &) { return tanh_expr(x); }},
    KILN_INTRINSIC("round", round_even),
    {"reciprocal", true, {}, {}, [](const Expr &x, const Params &) { return k(x, 1) / x; }},
    {"sigmoid", true, {}, {}, [](const Expr &x, const Params &) { return sigmoid_expr(x); }},
    {"softplus", true, {}, {}, [](const Expr &x, const Params &) { return softplus_expr(x); }},
    {"softsign", true, {}, {},
     [](const Expr &x, const Params &) { return x / (k(x, 1) + abs_(x)); }},
    {"mish", true, {}, {},
     [](const Expr &x, const Params &) { return x * tanh_expr(softplus_expr(x)); }},
    {"gelu", true, {}, {},
     [](const Expr &x, const Params &) {
       return k(x, 0.5) * x * (k(x, 1) + fn(Intrinsic::erf, x * k(x, M_SQRT1_2)));
     }},
    {"gelu_tanh", true, {}, {},
     [](const Expr &x, const Params &) {
       Expr inner = k(x, 0.79788456080286535588) * (x + k(x, 0.044715) * x * x * x);
       return k(x, 0.5) * x * (k(x, 1) + tanh_expr(inner));
     }},
    {"hard_swish", true, {}, {},
     [](const Expr &x, const Params &) { return x * clamp01(x / k(x, 6) + k(x, 0.5)); }},
    {"leaky_relu", true, {"alpha", nullptr}, {0.01, 0},
     [](const Expr &x, const Params &p) { return select(x < k(x, 0), k(x, p[0]) * x, x); }},
    {"elu", true, {"alpha", nullptr}, {1.0, 0},
     [](const Expr &x, const Params &p) {
       return select(x < k(x, 0), k(x, p[0]) * (exp_(x) - k(x, 1)), x);
     }},
    {"celu", true, {"alpha", nullptr}, {1.0, 0},
     [](const Expr &x, const Params &p) {
       return max(k(x, 0), x) + min(k(x, 0), k(x, p[0]) * (exp_(x / k(x, p[0])) - k(x, 1)));
     }},
    {"thresholded_relu", true, {"alpha", nullptr}, {1.0, 0},
     [](const Expr &x, const Params &p) { return select(x > k(x, p[0]), x, k(x, 0)); }},
    {"swish", true, {"alpha", nullptr}, {1.0, 0},
     [](const Expr &x, const Params &p) { return x * sigmoid_expr(k(x, p[0]) * x); }},
    {"selu", true, {"alpha", "gamma"}, {1.67326319217681884765625, 1.05070102214813232421875},
     [](const Expr &x, const Params &p) {
       return select(x > k(x, 0), k(x, p[1]) * x, k(x, p[1] * p[0]) * (exp_(x) - k(x, 1)));
     }},
    {"hard_sigmoid", true, {"alpha", "beta"}, {0.2, 0.5},
     [](const Expr &x, const Params &p) { return clamp01(k(x, p[0]) * x + k(x, p[1])); }},
    {"isnan", true, {}, {}, [](const Expr &x, const Params &) { return fn(Intrinsic::isnan, x); }},
    {"isinf", true, {}, {}, [](const Expr &x, const Params &) { return fn(Intrinsic::isinf, x); }},
    {"isposinf", true, {}, {},
     [](const Expr &x, const Params &) { return fn(Intrinsic::isinf, x) && x > k(x, 0); }},
    {"isneginf", true, {}, {},
     [](const Expr &x, const Params &) { return fn(Intrinsic::isinf, x) && x < k(x, 0); }},
    // Floats and integers.
    {"abs", false, {}, {},
     [](const Expr &x, const Params &) {
       if (is_float(x.type())) return abs_(x);
       return is_unsigned_int(x.type()) ? x : select(x < k(x, 0), -x, x);
     }},
    {"neg", false, {}, {}, [](const Expr &x, const Params &) { return -x; }},
    {"sign", false, {}, {},
     [](const Expr &x, const Params &) {
       Expr s = select(x > k(x, 0), k(x, 1), select(x < k(x, 0), k(x, -1), k(x, 0)));
       return is_float(x.type()) ? select(fn(Intrinsic::isnan, x), x, s) : s;
     }},
    {"relu", false, {}, {},
     [](const Expr &x, const Params &) { return select(x < k(x, 0), k(x, 0), x); }},
    {"not", false, {}, {}, [](const Expr &x, const Params &) { return logical_not(x); }},
    {"bitwise_not", false, {}, {},
     [](const Expr &x, const Params &) { return x ^ imm(x.type(), -1); }},
};
#undef KILN_INTRINSIC

const UnaryDef *find_unary(std::string_view name) {
  for (const UnaryDef &d : kUnary)
    if (name == d.name) return &d;
  return nullptr;
}

// The expression of unary op `op` (defined by `d`) applied to element value x.
Result<Expr> unary_expr(const Op &op, const UnaryDef &d, const Expr &x) {
  const DType dt = op.operands[0]->type.dtype;
  if (d.floats_only && !is_float(dt))
    return unsupported(op, fmt::format("{} on {}", op.name(), dtype_name(dt)));
  Params p = d.dflt;
  for (size_t i = 0; i < p.size(); ++i)
    if (d.params[i]) p[i] = op.attr_float(d.params[i], d.dflt[i]);
  return d.f(x, p);
}

Status lower_unary(LowerCtx &c, const Op &op, const UnaryDef &d) {
  return lower_map(c, op, {op.operands[0]},
                   [&](const std::vector<Expr> &x) { return unary_expr(op, d, x[0]); });
}

// ---- binary ------------------------------------------------------------------------------------

Expr nan_of(const Expr &x) { return make_const(x.type(), std::nan("")); }
Expr isnan_(const Expr &x) { return fn(Intrinsic::isnan, x); }

// Python-style remainder (sign of the divisor) from the C remainder r of a / b.
Expr py_mod_fix(const Expr &r, const Expr &b) {
  Expr z = k(r, 0);
  return select((r != z) && ((r < z) != (b < z)), r + b, r);
}

Expr int_safe(const Expr &b, const Expr &v) { return select(b == k(b, 0), k(v, 0), v); }

// pow for floats with the C semantics at negative bases (integral exponents) and 0^0 = 1.
Expr float_pow(const Expr &a, const Expr &b) {
  Expr r = pow(abs_(a), b);
  Expr integral = b == fn(Intrinsic::trunc, b);
  Expr odd = integral && (abs_(b) % k(b, 2)) == k(b, 1);
  Expr neg = select(integral, select(odd, -r, r), nan_of(a));
  return select(b == k(b, 0), k(a, 1), select(a < k(a, 0), neg, r));
}

Result<Expr> binary_expr(const Op &op, std::string_view name, const Expr &a, const Expr &b) {
  const ScalarType t = a.type();
  const bool fl = is_float(t);
  const bool bl = t == ScalarType::boolean;
  if (name == "add") return a + b;
  if (name == "sub") return a - b;
  if (name == "mul") return a * b;
  // Correctly rounded, as ONNX Runtime and PyTorch divide (kir div_exact).
  if (name == "div") return fl ? call(Intrinsic::div_exact, {a, b}) : int_safe(b, a / b);
  if (name == "fmod") return fl ? a % b : int_safe(b, a % b);
  if (name == "mod") return fl ? py_mod_fix(a % b, b) : int_safe(b, py_mod_fix(a % b, b));
  if (name == "max" || name == "min") {
    Expr m = name == "max" ? max(a, b) : min(a, b);
    if (!fl) return m;
    // An operand that is a number (a folded constant: a clip's bounds) needs no NaN check.
    auto number = [](const Expr &x) {
      const auto *f = x.as<FloatImm>();
      return f && !std::isnan(f->value);
    };
    if (number(b)) return select(isnan_(a), a, m);
    if (number(a)) return select(isnan_(b), b, m);
    return select(isnan_(a), a, select(isnan_(b), b, m));
  }
  if (name == "prelu") return select(a < k(a, 0), a * b, a);
  if (name == "pow") {
    if (!fl) return unsupported(op, "integer kiln.pow");
    return float_pow(a, cast(t, b)); // the exponent may have another dtype
  }
  if (name == "equal") return bl ? select(a, b, logical_not(b)) : a == b;
  if (name == "less") return a < b;
  if (name == "greater") return a > b;
  if (name == "less_equal") return a <= b;
  if (name == "greater_equal") return a >= b;
  if (name == "and") return logical_and(a, b);
  if (name == "or") return logical_or(a, b);
  if (name == "xor") return select(a, logical_not(b), b);
  if (name == "bitwise_and") return a & b;
  if (name == "bitwise_or") return a | b;
  if (name == "bitwise_xor") return a ^ b;
  if (name == "shl" || name == "shr") {
    Expr s = name == "shl" ? a << b : a >> b;
    return select(b >= k(b, bits(t)), k(a, 0), s);
  }
  return unsupported(op, std::string(op.name()));
}

const char *const kBinary[] = {"add", "sub", "mul", "div", "fmod", "mod", "max", "min",
                               "prelu", "pow", "equal", "less", "greater", "less_equal",
                               "greater_equal", "and", "or", "xor", "bitwise_and", "bitwise_or",
                               "bitwise_xor", "shl", "shr"};

Status lower_binary(LowerCtx &c, const Op &op) {
  const std::string name(op.name().substr(5));
  return lower_map(c, op, {op.operands[0], op.operands[1]},
                   [&](const std::vector<Expr> &x) { return binary_expr(op, name, x[0], x[1]); });
}

// ---- where / cast ------------------------------------------------------------------------------

Status lower_where(LowerCtx &c, const Op &op) {
  return lower_map(c, op, {op.operands[0], op.operands[1], op.operands[2]},
                   [&](const std::vector<Expr> &x) { return elementwise_expr(op, x); });
}

// To i4 / u4 / i2 / u2 (held as i8 / u8): the value as i32 (floats truncated toward zero), then
// wrapped to the narrow width, sign-extended for i4 / i2, as the reference executor does.
Expr wrap_narrow(DType dt, ScalarType to, const Expr &v) {
  Expr w = v.type() == ScalarType::boolean ? select(v, i32(1), i32(0)) : cast(ScalarType::i32, v);
  const int64_t bits = dtype_bits(dt);
  w = w & i32((int64_t(1) << bits) - 1);
  if (is_signed_int(dt)) w = (w ^ i32(int64_t(1) << (bits - 1))) - i32(int64_t(1) << (bits - 1));
  return cast(to, w);
}

// From float8 / float4 / e8m0 (held as their u8 bit pattern) to a float type: a lookup in a
// 256-entry f32 table of the decoded values (exact: every such value is an f32, NaN and inf
// included), computed on the host by the reference's decoder.
Status lower_cast_from_narrow_float(LowerCtx &c, const Op &op, ScalarType to) {
  const DType from = op.operands[0]->type.dtype, dt = op.results[0]->type.dtype;
  if (!is_float(dt))
    return unsupported(op, fmt::format("a cast from {} to {}", dtype_name(from), dtype_name(dt)));
  Tensor table(DType::f32, {256});
  for (int b = 0; b < 256; ++b) // float4 uses the low nibble only
    table.data_mut<float>()[b] = static_cast<float>(
        narrow_float_to_f64(from, static_cast<uint8_t>(from == DType::f4e2m1 ? b & 0xF : b)));
  const int tb = c.new_constant(std::move(table));
  GridKernel g(c, op, "cast_" + std::string(dtype_name(from)));
  KILN_ASSIGN(BufferVar x, g.in(op.operands[0]));
  const BufferVar t = g.scratch(tb, ScalarType::f32, false);
  KILN_ASSIGN(BufferVar o, g.out(op.results[0]));
  return g.finish(shape_numel(op.results[0]->type.dims), [&](Expr i) -> Result<Stmt> {
    return g.store(o, i, cast(to, load(t, cast(ScalarType::i32, load(x, i)))));
  });
}

// To float8 / float4 / e8m0 (held as their u8 bit pattern) from a type every value of which
// is an f32 (f32, f16, integers up to 16 bits, bool): rounded by the reference's step table
// (helpers::NarrowEncoder) with the op's saturate and round_mode. Wider sources would round
// twice and are refused.
Status lower_cast_to_narrow_float(LowerCtx &c, const Op &op) {
  const DType from = op.operands[0]->type.dtype, dt = op.results[0]->type.dtype;
  const bool exact = from == DType::f32 || from == DType::f16 || is_bool(from) ||
                     (is_integer(from) && dtype_bits(from) <= 16);
  if (!exact)
    return unsupported(op, fmt::format("a cast from {} to {} (devices round f32, f16 and "
                                       "integers of up to 16 bits to it)",
                                       dtype_name(from), dtype_name(dt)));
  helpers::NarrowEncoding e{dt};
  e.saturate = op.attr_int("saturate", 1) != 0;
  const std::string round = op.attr_str("round_mode", "up");
  e.round = round == "down" ? E8M0Round::down
            : round == "nearest" ? E8M0Round::nearest
                                 : E8M0Round::up;
  GridKernel g(c, op, "cast_to_" + std::string(dtype_name(dt)));
  KILN_ASSIGN(BufferVar x, g.in(op.operands[0]));
  const helpers::NarrowEncoder enc = helpers::NarrowEncoder::make(c, g, e, from == DType::f32);
  KILN_ASSIGN(BufferVar o, g.out(op.results[0]));
  const bool floating = from == DType::f32 || from == DType::f16;
  BufferVar bits{-1, ScalarType::u32};
  if (floating) bits = helpers::bits_view(c, g, op.operands[0]);
  return g.finish(shape_numel(op.results[0]->type.dims), [&](Expr i) -> Result<Stmt> {
    std::vector<Stmt> s;
    Expr v = load(x, i);
    if (v.type() == ScalarType::boolean)
      v = select(v, make_const(ScalarType::f32, 1), make_const(ScalarType::f32, 0));
    Expr neg = v < make_const(v.type(), 0); // integers: no -0, no NaN
    if (floating) neg = helpers::sign_bit(bits, i);
    Expr code;
    if (from == DType::f32) { // exact on devices that flush subnormals: |x|'s bit pattern
      const Expr magnitude = cast(ScalarType::u32, load(bits, i)) &
                             make_const(ScalarType::u32, 0x7FFFFFFF);
      code = enc.encode(g, s, v, neg, helpers::NarrowEncoder::Compare::bits, &magnitude);
    } else { // f16 widened, integers, booleans: never an f32 subnormal
      code = enc.encode(g, s, cast(ScalarType::f32, v), neg,
                        helpers::NarrowEncoder::Compare::no_subnormal);
    }
    KILN_ASSIGN(Stmt st, g.store(o, i, code));
    s.push_back(st);
    return block(s);
  });
}

Status lower_cast(LowerCtx &c, const Op &op) {
  const DType dt = op.results[0]->type.dtype;
  KILN_ASSIGN(ScalarType to, scalar_type(op, dt));
  if (is_narrow_float(op.operands[0]->type.dtype)) return lower_cast_from_narrow_float(c, op, to);
  if (is_narrow_float(dt)) return lower_cast_to_narrow_float(c, op);
  return lower_map(c, op, {op.operands[0]}, [to, dt](const std::vector<Expr> &x) -> Result<Expr> {
    const Expr &v = x[0];
    if (is_narrow_int(dt)) return wrap_narrow(dt, to, v);
    if (to == ScalarType::boolean) {
      if (v.type() == ScalarType::boolean) return v;
      return v != k(v, 0);
    }
    if (v.type() == ScalarType::boolean) return select(v, make_const(to, 1), make_const(to, 0));
    return cast(to, v);
  });
}

bool is_binary(std::string_view name) {
  for (const char *n : kBinary)
    if (name == n) return true;
  return false;
}

} // namespace

bool is_epilogue_op(const Op &op) {
  const std::string_view name = op.name();
  if (name.substr(0, 5) != "kiln.") return false;
  // A QDQ model's QuantizeLinear / DequantizeLinear pairs (per tensor, 8-bit): fused, the
  // producer stores the dequantised value and the 8-bit tensor is never written.
  if (helpers::qdq_epilogue_op(op)) return true;
  const std::string_view n = name.substr(5);
  if (op.results.size() != 1) return false;
  if (op.operands.size() == 1) return find_unary(n) != nullptr;
  if (op.operands.size() == 3) return n == "where";
  return op.operands.size() == 2 && is_binary(n);
}

std::optional<Result<Expr>> quantize_dequantize_steps(const Op &q, const std::vector<Expr> &q_ops,
                                                      const Op &dq,
                                                      const std::vector<Expr> &dq_ops) {
  if (q.name() != "kiln.quantize_linear" || dq.name() != "kiln.dequantize_linear" ||
      !helpers::qdq_epilogue_op(q) || !helpers::qdq_epilogue_op(dq) ||
      dq.operands[0] != q.results[0])
    return std::nullopt;
  auto to = scalar_type(q, q.results[0]->type.dtype);
  if (!to) return Result<Expr>(to.status());
  return Result<Expr>(helpers::quantize_dequantize_expr(
      q_ops[0], q_ops[1], q_ops.size() > 2 ? q_ops[2] : Expr(), *to, dq_ops[1],
      dq_ops.size() > 2 ? dq_ops[2] : Expr()));
}

Result<Expr> elementwise_expr(const Op &op, const std::vector<Expr> &operands) {
  const std::string_view n = op.name().substr(5);
  if (helpers::qdq_epilogue_op(op)) {
    const Expr zp = operands.size() > 2 ? operands[2] : Expr();
    if (n == "quantize_linear") {
      KILN_ASSIGN(ScalarType to, scalar_type(op, op.results[0]->type.dtype));
      return helpers::quantize_expr(operands[0], operands[1], zp, to);
    }
    return helpers::dequantize_expr(operands[0], operands[1], zp);
  }
  if (operands.size() == 1)
    if (const UnaryDef *d = find_unary(n)) return unary_expr(op, *d, operands[0]);
  if (operands.size() == 2 && is_binary(n)) return binary_expr(op, n, operands[0], operands[1]);
  if (operands.size() == 3 && n == "where") return select(operands[0], operands[1], operands[2]);
  return unsupported(op, std::string(op.name()) + " as a fused epilogue");
}

Status lower_map(LowerCtx &c, const Op &op, const std::vector<const Value *> &operands,
                 const MapFn &f) {
  GridKernel g(c, op, std::string(op.name().substr(5)));
  std::vector<BufferVar> ins;
  std::vector<Expr> imms; // one-element constants, folded (scalar_immediate)
  bool broadcast = false;
  const Shape &os = op.results[0]->type.dims;
  for (const Value *v : operands) {
    KILN_ASSIGN(ScalarType t, scalar_type(op, v->type.dtype));
    imms.push_back(scalar_immediate(v, t));
    if (imms.back().defined()) {
      ins.push_back(BufferVar{-1, t});
      continue;
    }
    KILN_ASSIGN(BufferVar b, g.in(v));
    ins.push_back(b);
    broadcast = broadcast || v->type.dims != os;
  }
  KILN_ASSIGN(BufferVar o, g.out(op.results[0]));
  return g.finish(shape_numel(os), [&](Expr i) -> Result<Stmt> {
    auto body = [&](const std::vector<Expr> &cs) -> Result<Stmt> {
      std::vector<Expr> xs;
      for (size_t k = 0; k < operands.size(); ++k) {
        if (imms[k].defined()) {
          xs.push_back(imms[k]);
          continue;
        }
        const Shape &is = operands[k]->type.dims;
        xs.push_back(load(ins[k], is == os ? i : broadcast_index(cs, is)));
      }
      KILN_ASSIGN(Expr v, f(xs));
      return g.store(o, i, v);
    };
    if (!broadcast) return body({});
    return let_all(g, "c", unflatten(i, os), body);
  });
}

void add_elementwise_lowerings(LoweringTable &t) {
  for (const UnaryDef &d : kUnary) {
    const UnaryDef *dp = &d;
    t[std::string("kiln.") + d.name] = [dp](LowerCtx &c, const Op &op) {
      return lower_unary(c, op, *dp);
    };
  }
  for (const char *n : kBinary) t[std::string("kiln.") + n] = lower_binary;
  t["kiln.where"] = lower_where;
  t["kiln.cast"] = lower_cast;
}

} // namespace kiln::compiler
