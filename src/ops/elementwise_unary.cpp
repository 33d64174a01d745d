// Unary elementwise core ops, defined by one table (see elementwise.h for the list).
#include "ops/elementwise.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace kiln::elementwise {

namespace {

using Params = std::array<double, 2>;

struct UnaryFn {
  const char *name; // core op name without the "kiln." prefix
  Accept accept;
  bool bool_result = false;
  // Float attributes of the op (canonical names) and their defaults.
  std::array<const char *, 2> params = {nullptr, nullptr};
  Params dflt = {0, 0};
  // Float path (also used for integer operands when `fi` is null).
  double (*ff)(double, const Params &) = nullptr;
  // Exact integer / bool path; `uns` is true for unsigned dtypes (values are their bit patterns).
  int64_t (*fi)(int64_t, bool uns) = nullptr;
};

int64_t wrap_neg(int64_t x) { return static_cast<int64_t>(uint64_t(0) - static_cast<uint64_t>(x)); }

double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}
double softplus(double x) { return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0); }
double sign_f(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrt2 = 1.4142135623730950488;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

// clang-format off
const UnaryFn kUnary[] = {
    {.name = "abs", .accept = Accept::numeric,
     .ff = [](double x, const Params &) { return std::fabs(x); },
     .fi = [](int64_t x, bool uns) { return (!uns && x < 0) ? wrap_neg(x) : x; }},
    {.name = "neg", .accept = Accept::numeric,
     .ff = [](double x, const Params &) { return -x; },
     .fi = [](int64_t x, bool) { return wrap_neg(x); }},
    {.name = "sign", .accept = Accept::numeric,
     .ff = [](double x, const Params &) { return sign_f(x); },
     .fi = [](int64_t x, bool uns) -> int64_t { return uns ? x != 0 : (x > 0) - (x < 0); }},
    {.name = "relu", .accept = Accept::numeric,
     .ff = [](double x, const Params &) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); },
     .fi = [](int64_t x, bool uns) -> int64_t { return (uns || x > 0) ? x : 0; }},
    {.name = "exp", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::exp(x); }},
    {.name = "log", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::log(x); }},
    {.name = "sqrt", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::sqrt(x); }},
    {.name = "reciprocal", .accept = Accept::floats, .ff = [](double x, const Params &) { return 1.0 / x; }},
    {.name = "sin", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::sin(x); }},
    {.name = "cos", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::cos(x); }},
    {.name = "tan", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::tan(x); }},
    {.name = "asin", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::asin(x); }},
    {.name = "acos", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::acos(x); }},
    {.name = "atan", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::atan(x); }},
    {.name = "sinh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::sinh(x); }},
    {.name = "cosh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::cosh(x); }},
    {.name = "asinh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::asinh(x); }},
    {.name = "acosh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::acosh(x); }},
    {.name = "atanh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::atanh(x); }},
    {.name = "erf", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::erf(x); }},
    {.name = "floor", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::floor(x); }},
    {.name = "ceil", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::ceil(x); }},
    // Round half to even: nearbyint under the default rounding mode (to nearest, ties to even).
    {.name = "round", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::nearbyint(x); }},
    {.name = "sigmoid", .accept = Accept::floats, .ff = [](double x, const Params &) { return sigmoid(x); }},
    {.name = "tanh", .accept = Accept::floats, .ff = [](double x, const Params &) { return std::tanh(x); }},
    {.name = "softplus", .accept = Accept::floats, .ff = [](double x, const Params &) { return softplus(x); }},
    {.name = "softsign", .accept = Accept::floats,
     .ff = [](double x, const Params &) { return x / (1.0 + std::fabs(x)); }},
    {.name = "mish", .accept = Accept::floats,
     .ff = [](double x, const Params &) { return x * std::tanh(softplus(x)); }},
    {.name = "gelu", .accept = Accept::floats,
     .ff = [](double x, const Params &) { return 0.5 * x * (1.0 + std::erf(x / kSqrt2)); }},
    {.name = "gelu_tanh", .accept = Accept::floats,
     .ff = [](double x, const Params &) {
       return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
     }},
    {.name = "hard_swish", .accept = Accept::floats,
     .ff = [](double x, const Params &) { return x * std::clamp(x / 6.0 + 0.5, 0.0, 1.0); }},
    {.name = "leaky_relu", .accept = Accept::floats, .params = {"alpha", nullptr}, .dflt = {0.01, 0},
     .ff = [](double x, const Params &p) { return x < 0 ? p[0] * x : x; }},
    {.name = "elu", .accept = Accept::floats, .params = {"alpha", nullptr}, .dflt = {1.0, 0},
     .ff = [](double x, const Params &p) { return x < 0 ? p[0] * std::expm1(x) : x; }},
    {.name = "celu", .accept = Accept::floats, .params = {"alpha", nullptr}, .dflt = {1.0, 0},
     .ff = [](double x, const Params &p) {
       return std::max(0.0, x) + std::min(0.0, p[0] * std::expm1(x / p[0]));
     }},
    {.name = "thresholded_relu", .accept = Accept::floats, .params = {"alpha", nullptr}, .dflt = {1.0, 0},
     .ff = [](double x, const Params &p) { return x > p[0] ? x : 0.0; }},
    {.name = "swish", .accept = Accept::floats, .params = {"alpha", nullptr}, .dflt = {1.0, 0},
     .ff = [](double x, const Params &p) { return x * sigmoid(p[0] * x); }},
    {.name = "selu", .accept = Accept::floats, .params = {"alpha", "gamma"},
     .dflt = {1.67326319217681884765625, 1.05070102214813232421875},
     .ff = [](double x, const Params &p) { return x > 0 ? p[1] * x : p[1] * p[0] * std::expm1(x); }},
    {.name = "hard_sigmoid", .accept = Accept::floats, .params = {"alpha", "beta"}, .dflt = {0.2, 0.5},
     .ff = [](double x, const Params &p) { return std::clamp(p[0] * x + p[1], 0.0, 1.0); }},
    // Integer operands go through f64 (bias and lambd are floats); the result truncates.
    {.name = "shrink", .accept = Accept::numeric, .params = {"bias", "lambd"}, .dflt = {0.0, 0.5},
     .ff = [](double x, const Params &p) {
       return x < -p[1] ? x + p[0] : (x > p[1] ? x - p[0] : (std::isnan(x) ? kNaN : 0.0));
     }},
    {.name = "isnan", .accept = Accept::floats, .bool_result = true,
     .ff = [](double x, const Params &) { return std::isnan(x) ? 1.0 : 0.0; }},
    {.name = "isinf", .accept = Accept::floats, .bool_result = true,
     .ff = [](double x, const Params &) { return std::isinf(x) ? 1.0 : 0.0; }},
    {.name = "isposinf", .accept = Accept::floats, .bool_result = true,
     .ff = [](double x, const Params &) { return std::isinf(x) && x > 0 ? 1.0 : 0.0; }},
    {.name = "isneginf", .accept = Accept::floats, .bool_result = true,
     .ff = [](double x, const Params &) { return std::isinf(x) && x < 0 ? 1.0 : 0.0; }},
    {.name = "not", .accept = Accept::boolean,
     .fi = [](int64_t x, bool) -> int64_t { return x == 0; }},
    {.name = "bitwise_not", .accept = Accept::ints,
     .fi = [](int64_t x, bool) { return ~x; }},
};
// clang-format on

Params read_params(const UnaryFn &f, const Op &op) {
  Params p = f.dflt;
  for (size_t k = 0; k < p.size(); ++k)
    if (f.params[k]) p[k] = op.attr_float(f.params[k], f.dflt[k]);
  return p;
}

Status infer_unary(const UnaryFn &f, InferCtx &ctx) {
  DType t = ctx.type(0).dtype;
  if (!accepts(f.accept, t))
    return ctx.error(fmt::format("operand of dtype {} is not supported (expects {})",
                                 dtype_name(t), accept_str(f.accept)));
  TensorType out = ctx.type(0);
  if (f.bool_result) out.dtype = DType::boolean;
  ctx.out = {out};
  return Status::ok();
}

Status eval_unary(const UnaryFn &f, EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (!accepts(f.accept, x.dtype()))
    return ctx.error(fmt::format("operand of dtype {} is not supported", dtype_name(x.dtype())));
  const Params p = read_params(f, ctx.op);
  const DType out = f.bool_result ? DType::boolean : x.dtype();
  Tensor r(out, x.shape());
  const int64_t n = x.numel();
  if (is_float(x.dtype()) || !f.fi) {
    if (x.dtype() == DType::f32 && out == DType::f32) {
      const float *src = x.data<float>();
      float *dst = r.data_mut<float>();
      for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(f.ff(src[i], p));
    } else {
      for (int64_t i = 0; i < n; ++i) r.set_f64(i, f.ff(x.get_f64(i), p));
    }
  } else {
    const bool uns = is_unsigned_int(x.dtype());
    for (int64_t i = 0; i < n; ++i) r.set_i64(i, f.fi(x.get_i64(i), uns));
  }
  ctx.out = {std::move(r)};
  return Status::ok();
}

Status verify_unary(const UnaryFn &f, const Op &op) {
  for (size_t k = 0; k < f.params.size(); ++k) {
    if (!f.params[k] || !op.has_attr(f.params[k])) continue;
    if (!std::holds_alternative<double>(op.attrs.find(f.params[k])->second))
      return Status::error(fmt::format("{}: attribute '{}' must be a float", op.describe(),
                                       f.params[k]));
  }
  if (std::string_view(f.name) == "celu" && op.attr_float("alpha", 1.0) == 0.0)
    return Status::error(op.describe() + ": alpha must not be 0");
  return Status::ok();
}

} // namespace

void register_unary_ops(OpRegistry &r) {
  for (const UnaryFn &f : kUnary) {
    const UnaryFn *fp = &f;
    r.add(OpDef{
        .name = std::string("kiln.") + f.name,
        .min_operands = 1,
        .max_operands = 1,
        .verify = [fp](const Op &op) { return verify_unary(*fp, op); },
        .infer = [fp](InferCtx &ctx) { return infer_unary(*fp, ctx); },
        .eval = [fp](EvalCtx &ctx) { return eval_unary(*fp, ctx); },
    });
  }
}

} // namespace kiln::elementwise
