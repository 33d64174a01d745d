// The elementwise op family: registration, dtype classes, and kiln.where / kiln.cast /
// kiln.bitcast. Unary and binary ops live in elementwise_unary.cpp / elementwise_binary.cpp.
#include "ops/elementwise.h"

#include "ops/ops.h"
#include "support/half.h"
#include "support/narrow.h"

#include <cmath>
#include <cstring>

namespace kiln {

namespace elementwise {

bool accepts(Accept a, DType t) {
  switch (a) {
  case Accept::floats: return is_float(t);
  case Accept::numeric: return !is_bool(t) && !is_narrow_float(t); // float8 & co: storage only
  case Accept::ints: return is_integer(t);
  case Accept::unsigned_ints: return is_unsigned_int(t);
  case Accept::boolean: return is_bool(t);
  case Accept::any: return true;
  }
  return false;
}

const char *accept_str(Accept a) {
  switch (a) {
  case Accept::floats: return "floating-point";
  case Accept::numeric: return "numeric (not bool)";
  case Accept::ints: return "integer";
  case Accept::unsigned_ints: return "unsigned integer";
  case Accept::boolean: return "bool";
  case Accept::any: return "any";
  }
  return "?";
}

namespace {

// ---- kiln.where(cond, x, y) -------------------------------------------------------------------

Status infer_where(InferCtx &ctx) {
  if (ctx.type(0).dtype != DType::boolean)
    return ctx.error(fmt::format("condition must be bool, got {}", dtype_name(ctx.type(0).dtype)));
  if (ctx.type(1).dtype != ctx.type(2).dtype)
    return ctx.error(fmt::format("operand dtypes differ ({} and {})", dtype_name(ctx.type(1).dtype),
                                 dtype_name(ctx.type(2).dtype)));
  return infer_broadcast(ctx, ctx.type(1).dtype);
}

Status eval_where(EvalCtx &ctx) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.dtype() != DType::boolean || x.dtype() != y.dtype())
    return ctx.error("operand dtypes do not match the shape function");
  auto s1 = broadcast_shapes(c.shape(), x.shape());
  if (!s1) return ctx.error(s1.status().message());
  auto shape = broadcast_shapes(*s1, y.shape());
  if (!shape) return ctx.error(shape.status().message());
  KILN_ASSIGN(Tensor r, Tensor::allocate(x.dtype(), *shape));
  const size_t es = dtype_size(x.dtype());
  const uint8_t *pc = c.data<uint8_t>();
  const std::byte *px = x.raw(), *py = y.raw();
  std::byte *q = r.raw_mut();
  BroadcastIndexer bi(*shape, {c.shape(), x.shape(), y.shape()});
  bi.for_each([&](int64_t i, const int64_t *o) {
    const std::byte *src = pc[o[0]] ? px + o[1] * es : py + o[2] * es;
    std::memcpy(q + i * es, src, es);
  });
  ctx.out = {std::move(r)};
  return Status::ok();
}

// ---- kiln.cast{to} ----------------------------------------------------------------------------

// f64 -> f32 rounding to odd: a second rounding to f16 / bf16 is then exact round-to-nearest-even
// (no double-rounding error).
float f64_to_f32_odd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return f32_from_bits(f32_bits(f) | 1u);
}

// kiln.cast's attributes beyond `to`: saturate (0/1, default 1; float8 targets only) and
// round_mode (up / down / nearest, default up; f8e8m0 targets only).
struct CastMode {
  bool saturate = true;
  E8M0Round round = E8M0Round::up;
};

Tensor cast_tensor(const Tensor &x, DType to, const CastMode &m) {
  if (x.dtype() == DType::f64 && (to == DType::f16 || to == DType::bf16)) {
    Tensor r(to, x.shape());
    const double *p = x.data<double>();
    uint16_t *q = r.data_mut<uint16_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      float f = f64_to_f32_odd(p[i]);
      q[i] = to == DType::f16 ? f32_to_f16(f) : f32_to_bf16(f);
    }
    return r;
  }
  if (to == DType::f8e8m0 && x.dtype() != to) {
    Tensor r(to, x.shape());
    uint8_t *q = r.data_mut<uint8_t>();
    for (int64_t i = 0; i < x.numel(); ++i)
      q[i] = f32_to_e8m0(static_cast<float>(x.get_f64(i)), m.round, m.saturate);
    return r;
  }
  return x.cast(to, m.saturate);
}

Status verify_to(const Op &op) {
  auto it = op.attrs.find("to");
  if (it == op.attrs.end() || !std::holds_alternative<DType>(it->second))
    return Status::error(op.describe() + ": needs a dtype attribute 'to'");
  return Status::ok();
}

Result<CastMode> cast_mode(const Op &op) {
  CastMode m;
  const int64_t sat = op.attr_int("saturate", 1);
  if (sat != 0 && sat != 1)
    return Status::error(fmt::format("{}: saturate must be 0 or 1, got {}", op.describe(), sat));
  m.saturate = sat != 0;
  const std::string round = op.attr_str("round_mode", "up");
  if (round == "up") m.round = E8M0Round::up;
  else if (round == "down") m.round = E8M0Round::down;
  else if (round == "nearest") m.round = E8M0Round::nearest;
  else
    return Status::error(fmt::format("{}: round_mode must be up, down or nearest, got '{}'",
                                     op.describe(), round));
  return m;
}

Status verify_cast(const Op &op) {
  KILN_TRY(verify_to(op));
  return cast_mode(op).status();
}

Status infer_cast(InferCtx &ctx) {
  TensorType t = ctx.type(0);
  t.dtype = ctx.op.attr_dtype("to", t.dtype);
  ctx.out = {t};
  return Status::ok();
}

Status eval_cast(EvalCtx &ctx) {
  auto m = cast_mode(ctx.op);
  if (!m) return ctx.error(m.status().message());
  ctx.out = {cast_tensor(ctx.input(0), ctx.op.attr_dtype("to", ctx.input(0).dtype()), *m)};
  return Status::ok();
}

// ---- kiln.bitcast{to}: reinterprets the bytes (same element size, same shape) ------------------

Status infer_bitcast(InferCtx &ctx) {
  TensorType t = ctx.type(0);
  DType to = ctx.op.attr_dtype("to", t.dtype);
  if (dtype_bits(to) < 8 || dtype_bits(t.dtype) < 8)
    return ctx.error(fmt::format("cannot bitcast {} to {}: sub-byte dtypes are not supported",
                                 dtype_name(t.dtype), dtype_name(to)));
  if (dtype_size(to) != dtype_size(t.dtype))
    return ctx.error(fmt::format("cannot bitcast {} to {}: element sizes differ",
                                 dtype_name(t.dtype), dtype_name(to)));
  t.dtype = to;
  ctx.out = {t};
  return Status::ok();
}

Status eval_bitcast(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  DType to = ctx.op.attr_dtype("to", x.dtype());
  if (dtype_size(to) != dtype_size(x.dtype())) return ctx.error("element sizes differ");
  Tensor r(to, x.shape());
  if (x.nbytes()) std::memcpy(r.raw_mut(), x.raw(), x.nbytes());
  if (to == DType::boolean) { // keep kiln's bool invariant (bytes are 0 or 1)
    uint8_t *q = r.data_mut<uint8_t>();
    for (int64_t i = 0; i < r.numel(); ++i) q[i] = q[i] ? 1 : 0;
  }
  ctx.out = {std::move(r)};
  return Status::ok();
}

} // namespace

void register_misc_elementwise_ops(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.where", .min_operands = 3, .max_operands = 3,
              .infer = infer_where, .eval = eval_where});
  r.add(OpDef{.name = "kiln.cast", .min_operands = 1, .max_operands = 1, .verify = verify_cast,
              .infer = infer_cast, .eval = eval_cast});
  r.add(OpDef{.name = "kiln.bitcast", .min_operands = 1, .max_operands = 1, .verify = verify_to,
              .infer = infer_bitcast, .eval = eval_bitcast});
}

} // namespace elementwise

void register_elementwise_ops(OpRegistry &r) {
  elementwise::register_unary_ops(r);
  elementwise::register_binary_ops(r);
  elementwise::register_misc_elementwise_ops(r);
}

} // namespace kiln
