// Generators: kiln.range, kiln.constant_of_shape, kiln.one_hot, kiln.eye_like, kiln.trilu.
#include "ops/shape_util.h"

#include <cmath>

namespace kiln::shape_ops {
namespace {

// ---- range ----------------------------------------------------------------------------------

Status scalar_operand(const Op &op, const Tensor &t, const char *what) {
  if (t.numel() != 1) return op_error(op, fmt::format("{} must be a scalar", what));
  return Status::ok();
}

Result<int64_t> range_count(const Op &op, const Tensor &s, const Tensor &l, const Tensor &d) {
  KILN_TRY(scalar_operand(op, s, "start"));
  KILN_TRY(scalar_operand(op, l, "limit"));
  KILN_TRY(scalar_operand(op, d, "delta"));
  double n;
  if (is_float(s.dtype())) {
    double delta = d.get_f64(0);
    if (delta == 0 || std::isnan(delta)) return op_error(op, "delta must be non-zero");
    n = std::ceil((l.get_f64(0) - s.get_f64(0)) / delta);
  } else {
    int64_t delta = d.get_i64(0);
    if (delta == 0) return op_error(op, "delta must be non-zero");
    // Exact in 128 bits: limit - start of hostile values overflows int64, and doubles would
    // round a short range near INT64_MAX to nothing.
    const __int128 diff = static_cast<__int128>(l.get_i64(0)) - s.get_i64(0);
    __int128 q = diff / delta;
    if (diff % delta != 0 && (diff < 0) == (delta < 0)) ++q; // ceil
    if (q <= 0) return int64_t{0};
    if (q > static_cast<__int128>(1e12)) return op_error(op, "range is too long");
    return static_cast<int64_t>(q);
  }
  if (!(n > 0)) return int64_t{0};
  if (n > 1e12) return op_error(op, "range is too long");
  return static_cast<int64_t>(n);
}

Status infer_range(InferCtx &ctx) {
  const DType dt = ctx.type(0).dtype;
  if (ctx.type(1).dtype != dt || ctx.type(2).dtype != dt)
    return op_error(ctx.op, "start, limit and delta must have the same dtype");
  if (is_bool(dt)) return op_error(ctx.op, "bool is not supported");
  const Tensor *s = const_operand(ctx, 0), *l = const_operand(ctx, 1), *d = const_operand(ctx, 2);
  int64_t n = kDynamic;
  if (s && l && d) {
    KILN_ASSIGN(n, range_count(ctx.op, *s, *l, *d));
  }
  ctx.out = {TensorType{dt, {n}}};
  return Status::ok();
}

Status eval_range(EvalCtx &ctx) {
  const Tensor &s = ctx.in[0], &d = ctx.in[2];
  KILN_ASSIGN(int64_t n, range_count(ctx.op, s, ctx.in[1], d));
  KILN_ASSIGN(Tensor out, alloc(ctx.op, s.dtype(), {n}));
  if (is_float(s.dtype())) {
    const double start = s.get_f64(0), delta = d.get_f64(0);
    for (int64_t i = 0; i < n; ++i) out.set_f64(i, start + static_cast<double>(i) * delta);
  } else {
    const int64_t start = s.get_i64(0), delta = d.get_i64(0);
    // Every element lies between start and limit, but i * delta alone may not fit int64:
    // wrapping unsigned arithmetic gives the exact in-range result.
    for (int64_t i = 0; i < n; ++i)
      out.set_i64(i, static_cast<int64_t>(static_cast<uint64_t>(start) +
                                          static_cast<uint64_t>(i) * static_cast<uint64_t>(delta)));
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- constant_of_shape ------------------------------------------------------------------------

Status verify_cos(const Op &op) {
  const Tensor *v = op.attr_tensor("value");
  if (!v || v->numel() != 1) return op_error(op, "needs a one-element tensor attribute 'value'");
  return Status::ok();
}

Status infer_cos(InferCtx &ctx) {
  const DType dt = ctx.op.attr_tensor("value")->dtype();
  KILN_ASSIGN(int64_t n, int_list_len(ctx.op, ctx.type(0), "shape"));
  if (n < 0) {
    ctx.out = {TensorType{dt, {}, false}};
    return Status::ok();
  }
  Shape out = dynamic_dims(n);
  if (const Tensor *c = const_operand(ctx, 0)) {
    out = c->to_i64s();
    for (int64_t d : out)
      if (d < 0) return op_error(ctx.op, "shape must be non-negative");
  }
  ctx.out = {TensorType{dt, out}};
  return Status::ok();
}

Status eval_cos(EvalCtx &ctx) {
  const Tensor &v = *ctx.op.attr_tensor("value");
  KILN_ASSIGN(auto shape, int_list(ctx.op, ctx.in[0], "shape"));
  if (ctx.in[0].rank() == 0) return op_error(ctx.op, "shape must be 1-D");
  for (int64_t d : shape)
    if (d < 0) return op_error(ctx.op, "shape must be non-negative");
  KILN_ASSIGN(Tensor out, alloc(ctx.op, v.dtype(), shape));
  for (int64_t i = 0; i < out.numel(); ++i) copy_elem(v, 0, out, i);
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- one_hot --------------------------------------------------------------------------------

Status infer_one_hot(InferCtx &ctx) {
  const TensorType &ix = ctx.type(0);
  if (unranked_result(ctx, 0, ctx.type(2).dtype)) return Status::ok();
  const int64_t rank = ix.rank() + 1;
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), rank));
  int64_t depth = kDynamic;
  if (const Tensor *c = const_operand(ctx, 1)) {
    if (c->numel() != 1) return op_error(ctx.op, "depth must have one element");
    depth = c->get_i64(0);
    if (depth < 1) return op_error(ctx.op, "depth must be positive");
  }
  Shape out = ix.dims;
  out.insert(out.begin() + axis, depth);
  ctx.out = {TensorType{ctx.type(2).dtype, out}};
  return Status::ok();
}

Status eval_one_hot(EvalCtx &ctx) {
  const Tensor &ix = ctx.in[0], &vals = ctx.in[2];
  if (ctx.in[1].numel() != 1) return op_error(ctx.op, "depth must have one element");
  if (vals.numel() != 2) return op_error(ctx.op, "values must have two elements");
  const int64_t depth = ctx.in[1].get_i64(0);
  if (depth < 1) return op_error(ctx.op, "depth must be positive");
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), ix.rank() + 1));
  Shape os = ix.shape();
  os.insert(os.begin() + axis, depth);
  KILN_ASSIGN(Tensor out, alloc(ctx.op, vals.dtype(), os));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= ix.shape()[d];
  for (int64_t d = axis; d < ix.rank(); ++d) inner *= ix.shape()[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      int64_t k = ix.get_i64(o * inner + j);
      if (k < 0) k += depth;
      for (int64_t c = 0; c < depth; ++c)
        copy_elem(vals, c == k ? 1 : 0, out, (o * depth + c) * inner + j);
    }
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- eye_like / trilu -----------------------------------------------------------------------

Status infer_eye(InferCtx &ctx) {
  const DType dt = ctx.op.attr_dtype("dtype", ctx.type(0).dtype);
  if (unranked_result(ctx, 0, dt)) return Status::ok();
  if (ctx.type(0).rank() != 2) return op_error(ctx.op, "input must be 2-D");
  ctx.out = {TensorType{ctx.op.attr_dtype("dtype", ctx.type(0).dtype), ctx.type(0).dims}};
  return Status::ok();
}

Status eval_eye(EvalCtx &ctx) {
  const Shape &s = ctx.in[0].shape();
  if (s.size() != 2) return op_error(ctx.op, "input must be 2-D");
  Tensor out(ctx.op.attr_dtype("dtype", ctx.in[0].dtype()), s);
  const int64_t k = ctx.op.attr_int("k", 0);
  // A diagonal outside the matrix sets nothing (and i + k of a hostile k would overflow).
  const bool inside = k < s[1] && k > -s[0];
  for (int64_t i = 0; inside && i < s[0]; ++i) {
    int64_t j = i + k;
    if (j >= 0 && j < s[1]) out.set_i64(i * s[1] + j, 1);
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

Status infer_trilu(InferCtx &ctx) {
  if (unranked_result(ctx, 0, ctx.type(0).dtype)) return Status::ok();
  if (ctx.type(0).rank() < 2) return op_error(ctx.op, "input must have rank >= 2");
  return infer_same_as(ctx, 0);
}

Status eval_trilu(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  if (x.rank() < 2) return op_error(ctx.op, "input must have rank >= 2");
  int64_t k = 0;
  if (ctx.present(1)) {
    if (ctx.in[1].numel() != 1) return op_error(ctx.op, "k must be a scalar");
    k = ctx.in[1].get_i64(0);
  }
  const bool upper = ctx.op.attr_int("upper", 1) != 0;
  const int64_t rows = x.shape()[x.rank() - 2], cols = x.shape()[x.rank() - 1];
  Tensor out(x.dtype(), x.shape());
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) copy_elem(x, i, out, i);
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

} // namespace

void register_shape_gen(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.range",
              .min_operands = 3,
              .max_operands = 3,
              .infer = infer_range,
              .eval = eval_range});
  r.add(OpDef{.name = "kiln.constant_of_shape",
              .min_operands = 1,
              .max_operands = 1,
              .verify = verify_cos,
              .infer = infer_cos,
              .eval = eval_cos});
  r.add(OpDef{.name = "kiln.one_hot",
              .min_operands = 3,
              .max_operands = 3,
              .infer = infer_one_hot,
              .eval = eval_one_hot});
  r.add(OpDef{.name = "kiln.eye_like",
              .min_operands = 1,
              .max_operands = 1,
              .infer = infer_eye,
              .eval = eval_eye});
  r.add(OpDef{.name = "kiln.trilu",
              .min_operands = 1,
              .max_operands = 2,
              .infer = infer_trilu,
              .eval = eval_trilu});
}

} // namespace kiln::shape_ops
