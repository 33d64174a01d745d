// Binary elementwise core ops with numpy broadcasting, defined by one table (see elementwise.h).
#include "ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::elementwise {

namespace {

struct BinaryFn {
  const char *name; // core op name without the "kiln." prefix
  Accept accept;
  bool bool_result = false;
  bool mixed = false; // operand dtypes may differ (pow: the result has the base's dtype)
  double (*ff)(double, double) = nullptr;      // floats
  int64_t (*fi)(int64_t, int64_t) = nullptr;   // signed integers and bool (0/1)
  uint64_t (*fu)(uint64_t, uint64_t) = nullptr; // unsigned integers
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Wrapping signed arithmetic (through uint64, no undefined overflow).
int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }

// Integer division truncates toward zero; by zero it gives 0 and INT64_MIN / -1 wraps.
int64_t sdiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return wrap(0 - u(a));
  return a / b;
}
// C remainder (sign of the dividend); by zero it gives 0.
int64_t srem(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
// Python remainder (sign of the divisor); by zero it gives 0.
int64_t smod(int64_t a, int64_t b) {
  int64_t r = srem(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double fmod_py(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double fmax_nan(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : std::max(a, b); }
double fmin_nan(double a, double b) { return (std::isnan(a) || std::isnan(b)) ? kNaN : std::min(a, b); }

// Exact integer power with wrapping; a negative exponent gives the truncated 1 / a^-b
// (1 for a == 1, +-1 for a == -1, otherwise 0, also for a == 0).
int64_t int_pow(int64_t a, int64_t b, bool exp_unsigned) {
  if (!exp_unsigned && b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b & 1) ? -1 : 1;
    return 0;
  }
  uint64_t base = u(a), e = u(b), r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return wrap(r);
}

// clang-format off
const BinaryFn kBinary[] = {
    {.name = "add", .accept = Accept::numeric,
     .ff = [](double a, double b) { return a + b; },
     .fi = [](int64_t a, int64_t b) { return wrap(u(a) + u(b)); },
     .fu = [](uint64_t a, uint64_t b) { return a + b; }},
    {.name = "sub", .accept = Accept::numeric,
     .ff = [](double a, double b) { return a - b; },
     .fi = [](int64_t a, int64_t b) { return wrap(u(a) - u(b)); },
     .fu = [](uint64_t a, uint64_t b) { return a - b; }},
    {.name = "mul", .accept = Accept::numeric,
     .ff = [](double a, double b) { return a * b; },
     .fi = [](int64_t a, int64_t b) { return wrap(u(a) * u(b)); },
     .fu = [](uint64_t a, uint64_t b) { return a * b; }},
    {.name = "div", .accept = Accept::numeric,
     .ff = [](double a, double b) { return a / b; },
     .fi = sdiv,
     .fu = [](uint64_t a, uint64_t b) { return b ? a / b : 0; }},
    {.name = "mod", .accept = Accept::numeric,
     .ff = fmod_py, .fi = smod,
     .fu = [](uint64_t a, uint64_t b) { return b ? a % b : 0; }},
    {.name = "fmod", .accept = Accept::numeric,
     .ff = [](double a, double b) { return std::fmod(a, b); },
     .fi = srem,
     .fu = [](uint64_t a, uint64_t b) { return b ? a % b : 0; }},
    {.name = "pow", .accept = Accept::numeric, .mixed = true,
     .ff = [](double a, double b) { return std::pow(a, b); }},
    {.name = "max", .accept = Accept::numeric,
     .ff = fmax_nan,
     .fi = [](int64_t a, int64_t b) { return std::max(a, b); },
     .fu = [](uint64_t a, uint64_t b) { return std::max(a, b); }},
    {.name = "min", .accept = Accept::numeric,
     .ff = fmin_nan,
     .fi = [](int64_t a, int64_t b) { return std::min(a, b); },
     .fu = [](uint64_t a, uint64_t b) { return std::min(a, b); }},
    {.name = "prelu", .accept = Accept::numeric,
     .ff = [](double x, double s) { return x < 0 ? x * s : x; },
     .fi = [](int64_t x, int64_t s) { return x < 0 ? wrap(u(x) * u(s)) : x; },
     .fu = [](uint64_t x, uint64_t) { return x; }},
    {.name = "equal", .accept = Accept::any, .bool_result = true,
     .ff = [](double a, double b) { return a == b ? 1.0 : 0.0; },
     .fi = [](int64_t a, int64_t b) -> int64_t { return a == b; },
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return a == b; }},
    {.name = "less", .accept = Accept::numeric, .bool_result = true,
     .ff = [](double a, double b) { return a < b ? 1.0 : 0.0; },
     .fi = [](int64_t a, int64_t b) -> int64_t { return a < b; },
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return a < b; }},
    {.name = "greater", .accept = Accept::numeric, .bool_result = true,
     .ff = [](double a, double b) { return a > b ? 1.0 : 0.0; },
     .fi = [](int64_t a, int64_t b) -> int64_t { return a > b; },
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return a > b; }},
    {.name = "less_equal", .accept = Accept::numeric, .bool_result = true,
     .ff = [](double a, double b) { return a <= b ? 1.0 : 0.0; },
     .fi = [](int64_t a, int64_t b) -> int64_t { return a <= b; },
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return a <= b; }},
    {.name = "greater_equal", .accept = Accept::numeric, .bool_result = true,
     .ff = [](double a, double b) { return a >= b ? 1.0 : 0.0; },
     .fi = [](int64_t a, int64_t b) -> int64_t { return a >= b; },
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return a >= b; }},
    {.name = "and", .accept = Accept::boolean,
     .fi = [](int64_t a, int64_t b) -> int64_t { return a && b; }},
    {.name = "or", .accept = Accept::boolean,
     .fi = [](int64_t a, int64_t b) -> int64_t { return a || b; }},
    {.name = "xor", .accept = Accept::boolean,
     .fi = [](int64_t a, int64_t b) -> int64_t { return (a != 0) != (b != 0); }},
    {.name = "bitwise_and", .accept = Accept::ints,
     .fi = [](int64_t a, int64_t b) { return a & b; },
     .fu = [](uint64_t a, uint64_t b) { return a & b; }},
    {.name = "bitwise_or", .accept = Accept::ints,
     .fi = [](int64_t a, int64_t b) { return a | b; },
     .fu = [](uint64_t a, uint64_t b) { return a | b; }},
    {.name = "bitwise_xor", .accept = Accept::ints,
     .fi = [](int64_t a, int64_t b) { return a ^ b; },
     .fu = [](uint64_t a, uint64_t b) { return a ^ b; }},
    // Shifts by the operand width or more give 0 (after wrapping to the result width).
    {.name = "shl", .accept = Accept::unsigned_ints,
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return b >= 64 ? 0 : a << b; }},
    {.name = "shr", .accept = Accept::unsigned_ints,
     .fu = [](uint64_t a, uint64_t b) -> uint64_t { return b >= 64 ? 0 : a >> b; }},
};
// clang-format on

// Calls fn(out_index, a_index, b_index) over the broadcast of a and b to `out`.
template <class Fn> void for_each_bcast(const Shape &out, const Tensor &a, const Tensor &b, Fn fn) {
  const int64_t n = shape_numel(out);
  if (a.shape() == out && b.shape() == out) {
    for (int64_t i = 0; i < n; ++i) fn(i, i, i);
  } else if (a.shape() == out && b.numel() == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, i, int64_t(0));
  } else if (b.shape() == out && a.numel() == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, int64_t(0), i);
  } else {
    BroadcastIndexer bi(out, {a.shape(), b.shape()});
    bi.for_each([&](int64_t i, const int64_t *o) { fn(i, o[0], o[1]); });
  }
}

Status check_dtypes(const BinaryFn &f, const Op &op, DType a, DType b) {
  if (!f.mixed && a != b)
    return Status::error(fmt::format("{}: operand dtypes differ ({} and {})", op.describe(),
                                     dtype_name(a), dtype_name(b)));
  for (DType t : {a, b})
    if (!accepts(f.accept, t))
      return Status::error(fmt::format("{}: operands of dtype {} are not supported (expects {})",
                                       op.describe(), dtype_name(t), accept_str(f.accept)));
  return Status::ok();
}

Status infer_binary(const BinaryFn &f, InferCtx &ctx) {
  KILN_TRY(check_dtypes(f, ctx.op, ctx.type(0).dtype, ctx.type(1).dtype));
  return infer_broadcast(ctx, f.bool_result ? DType::boolean : ctx.type(0).dtype);
}

void eval_float(const BinaryFn &f, const Tensor &a, const Tensor &b, Tensor &r) {
  if (a.dtype() == DType::f32 && b.dtype() == DType::f32 && r.dtype() == DType::f32) {
    const float *pa = a.data<float>(), *pb = b.data<float>();
    float *q = r.data_mut<float>();
    for_each_bcast(r.shape(), a, b, [&](int64_t i, int64_t ia, int64_t ib) {
      q[i] = static_cast<float>(f.ff(pa[ia], pb[ib]));
    });
    return;
  }
  for_each_bcast(r.shape(), a, b, [&](int64_t i, int64_t ia, int64_t ib) {
    r.set_f64(i, f.ff(a.get_f64(ia), b.get_f64(ib)));
  });
}

void eval_int(const BinaryFn &f, const Tensor &a, const Tensor &b, Tensor &r) {
  if (f.mixed) { // pow on integers
    const bool exp_unsigned = is_unsigned_int(b.dtype());
    for_each_bcast(r.shape(), a, b, [&](int64_t i, int64_t ia, int64_t ib) {
      r.set_i64(i, int_pow(a.get_i64(ia), b.get_i64(ib), exp_unsigned));
    });
  } else if (is_unsigned_int(a.dtype())) {
    for_each_bcast(r.shape(), a, b, [&](int64_t i, int64_t ia, int64_t ib) {
      r.set_i64(i, wrap(f.fu(u(a.get_i64(ia)), u(b.get_i64(ib)))));
    });
  } else {
    for_each_bcast(r.shape(), a, b, [&](int64_t i, int64_t ia, int64_t ib) {
      r.set_i64(i, f.fi(a.get_i64(ia), b.get_i64(ib)));
    });
  }
}

Status eval_binary(const BinaryFn &f, EvalCtx &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  KILN_TRY(check_dtypes(f, ctx.op, a.dtype(), b.dtype()));
  auto shape = broadcast_shapes(a.shape(), b.shape());
  if (!shape) return ctx.error(shape.status().message());
  KILN_ASSIGN(Tensor r, Tensor::allocate(f.bool_result ? DType::boolean : a.dtype(), *shape));
  const bool float_domain = is_float(a.dtype()) || is_float(b.dtype());
  const bool has_int_fn = f.mixed || (is_unsigned_int(a.dtype()) ? f.fu != nullptr : f.fi != nullptr);
  if (float_domain ? !f.ff : !has_int_fn)
    return ctx.error(fmt::format("operands of dtype {} are not supported", dtype_name(a.dtype())));
  if (float_domain) eval_float(f, a, b, r);
  else eval_int(f, a, b, r);
  ctx.out = {std::move(r)};
  return Status::ok();
}

} // namespace

void register_binary_ops(OpRegistry &r) {
  for (const BinaryFn &f : kBinary) {
    const BinaryFn *fp = &f;
    r.add(OpDef{
        .name = std::string("kiln.") + f.name,
        .min_operands = 2,
        .max_operands = 2,
        .infer = [fp](InferCtx &ctx) { return infer_binary(*fp, ctx); },
        .eval = [fp](EvalCtx &ctx) { return eval_binary(*fp, ctx); },
    });
  }
}

} // namespace kiln::elementwise
