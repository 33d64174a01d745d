// Gather / scatter family: kiln.gather, kiln.gather_elements, kiln.gather_nd,
// kiln.scatter_elements, kiln.scatter_nd.
#include "ops/shape_util.h"

#include <algorithm>

namespace kiln::shape_ops {
namespace {

// Normalises index `v` against `dim` (negative counts from the end); error when out of range.
Result<int64_t> norm_index(const Op &op, int64_t v, int64_t dim) {
  int64_t k = v < 0 ? v + dim : v;
  if (k < 0 || k >= dim)
    return op_error(op, fmt::format("index {} is out of range for a dimension of size {}", v, dim));
  return k;
}

Status need_int_indices(const Op &op, DType t) {
  if (t != DType::i32 && t != DType::i64)
    return op_error(op, fmt::format("indices must be i32 or i64, got {}", dtype_name(t)));
  return Status::ok();
}

// ---- gather ---------------------------------------------------------------------------------

Status infer_gather(InferCtx &ctx) {
  const TensorType &x = ctx.type(0), &ix = ctx.type(1);
  KILN_TRY(need_int_indices(ctx.op, ix.dtype));
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  if (!ix.ranked) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  Shape out(x.dims.begin(), x.dims.begin() + axis);
  out.insert(out.end(), ix.dims.begin(), ix.dims.end());
  out.insert(out.end(), x.dims.begin() + axis + 1, x.dims.end());
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_gather(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &ix = ctx.in[1];
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  const Shape &xs = x.shape();
  Shape os(xs.begin(), xs.begin() + axis);
  os.insert(os.end(), ix.shape().begin(), ix.shape().end());
  os.insert(os.end(), xs.begin() + axis + 1, xs.end());
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), os));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= xs[d];
  const int64_t dim = xs[axis], n = ix.numel();
  std::vector<int64_t> k(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    KILN_ASSIGN(k[j], norm_index(ctx.op, ix.get_i64(j), dim));
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j)
      copy_elems(x, (o * dim + k[j]) * inner, out, (o * n + j) * inner, inner);
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- gather_elements / scatter_elements ---------------------------------------------------

// For every element of `ix` (rank r), calls f(flat index into ix, flat offset into a tensor of
// shape `xs` with the axis coordinate replaced by the index value).
template <class F>
Status for_each_element_index(const Op &op, const Tensor &ix, const Shape &xs, int64_t axis, F f) {
  if (ix.rank() != static_cast<int64_t>(xs.size()))
    return op_error(op, "indices must have the same rank as the data");
  if (ix.numel() == 0) return Status::ok();
  auto st = shape_strides(xs);
  std::vector<int64_t> idx(xs.size(), 0);
  int64_t i = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < xs.size(); ++d) {
      if (static_cast<int64_t>(d) == axis) {
        KILN_ASSIGN(int64_t k, norm_index(op, ix.get_i64(i), xs[d]));
        off += k * st[d];
      } else {
        if (idx[d] >= xs[d]) return op_error(op, "indices shape exceeds the data shape");
        off += idx[d] * st[d];
      }
    }
    f(i, off);
    ++i;
  } while (next_index(idx, ix.shape()));
  return Status::ok();
}

Status eval_gather_elements(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &ix = ctx.in[1];
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  Tensor out(x.dtype(), ix.shape());
  KILN_TRY(for_each_element_index(ctx.op, ix, x.shape(), axis,
                                  [&](int64_t i, int64_t off) { copy_elem(x, off, out, i); }));
  ctx.out = {std::move(out)};
  return Status::ok();
}

enum class Reduce { none, add, mul, max, min };

Result<Reduce> reduction(const Op &op) {
  std::string r = op.attr_str("reduction", "none");
  if (r == "none") return Reduce::none;
  if (r == "add") return Reduce::add;
  if (r == "mul") return Reduce::mul;
  if (r == "max") return Reduce::max;
  if (r == "min") return Reduce::min;
  return op_error(op, fmt::format("reduction '{}' is not supported", r));
}

// out[off] = reduce(out[off], upd[i]).
void apply_update(Reduce red, Tensor &out, int64_t off, const Tensor &upd, int64_t i) {
  if (red == Reduce::none) {
    copy_elem(upd, i, out, off);
    return;
  }
  if (is_float(out.dtype())) {
    double a = out.get_f64(off), b = upd.get_f64(i);
    double v = red == Reduce::add ? a + b
               : red == Reduce::mul ? a * b
               : red == Reduce::max ? std::max(a, b)
                                    : std::min(a, b);
    out.set_f64(off, v);
  } else {
    int64_t a = out.get_i64(off), b = upd.get_i64(i);
    int64_t v = red == Reduce::add ? static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b))
                : red == Reduce::mul ? static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b))
                : red == Reduce::max ? std::max(a, b)
                                     : std::min(a, b);
    out.set_i64(off, v);
  }
}

Status verify_reduction(const Op &op) { return reduction(op).status(); }

Status eval_scatter_elements(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &ix = ctx.in[1], &upd = ctx.in[2];
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  KILN_ASSIGN(Reduce red, reduction(ctx.op));
  if (upd.shape() != ix.shape() || upd.dtype() != x.dtype())
    return op_error(ctx.op, "updates must match indices in shape and data in dtype");
  Tensor out = x.clone();
  KILN_TRY(for_each_element_index(ctx.op, ix, x.shape(), axis, [&](int64_t i, int64_t off) {
    apply_update(red, out, off, upd, i);
  }));
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- gather_nd / scatter_nd -----------------------------------------------------------------

struct NdLayout {
  int64_t batch = 1;     // product of batch dims
  int64_t per_batch = 1; // index tuples per batch
  int64_t k = 0;         // tuple length
  int64_t slice = 1;     // elements per gathered slice
  int64_t batch_stride = 0;
  Shape out;             // gather_nd result shape
};

Result<NdLayout> nd_layout(const Op &op, const Shape &xs, const Shape &is, int64_t b) {
  const int64_t r = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size());
  if (q < 1) return op_error(op, "indices must have rank >= 1");
  if (b < 0 || b >= std::min(r, q)) return op_error(op, "batch_dims is out of range");
  NdLayout l;
  l.k = is[q - 1];
  if (l.k < 0) return l; // dynamic (inference only)
  if (l.k < 1 || b + l.k > r)
    return op_error(op, fmt::format("index tuples of length {} do not fit rank {}", l.k, r));
  // Products of hostile dims may overflow int64 (during inference a kDynamic dim makes them
  // meaningless but small; they are only used at run time).
  bool overflow = false;
  auto mul = [&](int64_t &acc, int64_t d) { overflow |= __builtin_mul_overflow(acc, d, &acc); };
  for (int64_t d = 0; d < b; ++d) {
    if (xs[d] >= 0 && is[d] >= 0 && xs[d] != is[d])
      return op_error(op, "batch dimensions of data and indices differ");
    mul(l.batch, xs[d]);
  }
  for (int64_t d = b; d < q - 1; ++d) mul(l.per_batch, is[d]);
  for (int64_t d = b + l.k; d < r; ++d) mul(l.slice, xs[d]);
  l.out.assign(is.begin(), is.end() - 1);
  l.out.insert(l.out.end(), xs.begin() + b + l.k, xs.end());
  l.batch_stride = 1;
  for (int64_t d = b; d < r; ++d) mul(l.batch_stride, xs[d]);
  if (overflow)
    return overflow_error(op, fmt::format("the layout of data [{}] and indices [{}]",
                                          shape_str(xs), shape_str(is)));
  return l;
}

// Calls f(tuple number, flat offset of the addressed slice in data).
template <class F>
Status for_each_nd(const Op &op, const Tensor &ix, const Shape &xs, int64_t b, const NdLayout &l,
                   F f) {
  auto st = shape_strides(xs);
  for (int64_t bi = 0; bi < l.batch; ++bi)
    for (int64_t t = 0; t < l.per_batch; ++t) {
      const int64_t tuple = bi * l.per_batch + t;
      int64_t off = bi * l.batch_stride;
      for (int64_t j = 0; j < l.k; ++j) {
        KILN_ASSIGN(int64_t c, norm_index(op, ix.get_i64(tuple * l.k + j), xs[b + j]));
        off += c * st[b + j];
      }
      f(tuple, off);
    }
  return Status::ok();
}

Status infer_gather_nd(InferCtx &ctx) {
  const TensorType &x = ctx.type(0), &ix = ctx.type(1);
  KILN_TRY(need_int_indices(ctx.op, ix.dtype));
  if (!x.ranked || !ix.ranked || ix.rank() < 1 || ix.dims.back() < 0) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(NdLayout l, nd_layout(ctx.op, x.dims, ix.dims, ctx.op.attr_int("batch_dims", 0)));
  for (auto &d : l.out) d = d < 0 ? kDynamic : d;
  ctx.out = {TensorType{x.dtype, l.out}};
  return Status::ok();
}

Status eval_gather_nd(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &ix = ctx.in[1];
  const int64_t b = ctx.op.attr_int("batch_dims", 0);
  KILN_ASSIGN(NdLayout l, nd_layout(ctx.op, x.shape(), ix.shape(), b));
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), l.out));
  KILN_TRY(for_each_nd(ctx.op, ix, x.shape(), b, l, [&](int64_t t, int64_t off) {
    copy_elems(x, off, out, t * l.slice, l.slice);
  }));
  ctx.out = {std::move(out)};
  return Status::ok();
}

Status eval_scatter_nd(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &ix = ctx.in[1], &upd = ctx.in[2];
  KILN_ASSIGN(Reduce red, reduction(ctx.op));
  KILN_ASSIGN(NdLayout l, nd_layout(ctx.op, x.shape(), ix.shape(), 0));
  if (upd.shape() != l.out || upd.dtype() != x.dtype())
    return op_error(ctx.op, fmt::format("updates must have shape [{}] and the data's dtype",
                                        shape_str(l.out)));
  Tensor out = x.clone();
  KILN_TRY(for_each_nd(ctx.op, ix, x.shape(), 0, l, [&](int64_t t, int64_t off) {
    for (int64_t e = 0; e < l.slice; ++e) apply_update(red, out, off + e, upd, t * l.slice + e);
  }));
  ctx.out = {std::move(out)};
  return Status::ok();
}

Status infer_scatter(InferCtx &ctx) {
  KILN_TRY(need_int_indices(ctx.op, ctx.type(1).dtype));
  if (ctx.type(2).dtype != ctx.type(0).dtype)
    return op_error(ctx.op, "updates must have the data's dtype");
  return infer_same_as(ctx, 0);
}

// ---- tensor_scatter (KV-cache update) -------------------------------------------------------

Status eval_tensor_scatter(EvalCtx &ctx) {
  const Tensor &past = ctx.in[0], &upd = ctx.in[1];
  const int64_t r = past.rank();
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -2), r));
  if (axis == 0) return op_error(ctx.op, "axis must not be the batch axis");
  const bool circular = ctx.op.attr_str("mode", "linear") == "circular";
  if (upd.rank() != r || upd.dtype() != past.dtype())
    return op_error(ctx.op, "update must match past_cache in rank and dtype");
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && upd.shape()[d] != past.shape()[d])
      return op_error(ctx.op, fmt::format("update differs from past_cache in dimension {}", d));
  const int64_t max_seq = past.shape()[axis];
  if (upd.shape()[axis] > max_seq) return op_error(ctx.op, "update is longer than the cache");
  std::vector<int64_t> w(static_cast<size_t>(past.shape()[0]), 0);
  if (ctx.present(2)) {
    if (ctx.in[2].numel() != past.shape()[0])
      return op_error(ctx.op, "write_indices must have one entry per batch");
    w = ctx.in[2].to_i64s();
  }
  Tensor out = past.clone();
  if (upd.numel() == 0) {
    ctx.out = {std::move(out)};
    return Status::ok();
  }
  auto st = shape_strides(past.shape());
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  int64_t i = 0;
  do {
    int64_t pos = w[idx[0]] + idx[axis];
    if (circular && max_seq > 0) pos = ((pos % max_seq) + max_seq) % max_seq;
    if (pos < 0 || pos >= max_seq) return op_error(ctx.op, "write position is out of range");
    int64_t off = 0;
    for (int64_t d = 0; d < r; ++d) off += (d == axis ? pos : idx[d]) * st[d];
    copy_elem(upd, i++, out, off);
  } while (next_index(idx, upd.shape()));
  ctx.out = {std::move(out)};
  return Status::ok();
}

} // namespace

void register_shape_gather(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.gather",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_gather,
              .eval = eval_gather});
  r.add(OpDef{.name = "kiln.gather_elements",
              .min_operands = 2,
              .max_operands = 2,
              .infer =
                  [](InferCtx &ctx) -> Status {
                    KILN_TRY(need_int_indices(ctx.op, ctx.type(1).dtype));
                    ctx.out = {TensorType{ctx.type(0).dtype, ctx.type(1).dims, ctx.type(1).ranked}};
                    return Status::ok();
                  },
              .eval = eval_gather_elements});
  r.add(OpDef{.name = "kiln.gather_nd",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_gather_nd,
              .eval = eval_gather_nd});
  r.add(OpDef{.name = "kiln.scatter_elements",
              .min_operands = 3,
              .max_operands = 3,
              .verify = verify_reduction,
              .infer = infer_scatter,
              .eval = eval_scatter_elements});
  r.add(OpDef{.name = "kiln.scatter_nd",
              .min_operands = 3,
              .max_operands = 3,
              .verify = verify_reduction,
              .infer = infer_scatter,
              .eval = eval_scatter_nd});
  r.add(OpDef{.name = "kiln.tensor_scatter",
              .min_operands = 2,
              .max_operands = 3,
              .verify =
                  [](const Op &op) {
                    std::string m = op.attr_str("mode", "linear");
                    if (m != "linear" && m != "circular")
                      return op_error(op, fmt::format("mode '{}' is not supported", m));
                    return Status::ok();
                  },
              .infer =
                  [](InferCtx &ctx) -> Status {
                    if (ctx.type(1).dtype != ctx.type(0).dtype)
                      return op_error(ctx.op, "update must have the cache's dtype");
                    return infer_same_as(ctx, 0);
                  },
              .eval = eval_tensor_scatter});
}

} // namespace kiln::shape_ops
