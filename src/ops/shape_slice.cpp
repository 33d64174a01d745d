// kiln.slice, kiln.split, kiln.pad, kiln.center_crop_pad.
#include "ops/shape_util.h"

#include <algorithm>
#include <limits>

namespace kiln::shape_ops {
namespace {

// ---- slice ----------------------------------------------------------------------------------

struct SliceAxis {
  int64_t start = 0, step = 1, len = 0;
};

// ONNX Slice clamping for one axis of size `dim`.
SliceAxis slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceAxis s;
  s.step = step;
  if (dim == 0) return s; // nothing to select
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  // ceil(span / |step|) as 1 + (span - 1) / |step|: no sum with the step (hostile steps
  // reach INT64_MAX) and no negation of it (INT64_MIN).
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    s.len = end > start ? 1 + (end - start - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    s.len = start > end ? 1 - (start - end - 1) / step : 0;
  }
  s.start = start;
  return s;
}

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;
};

// Reads and checks the slice operands (values given) against `rank`; axes normalised.
Status slice_spec(const Op &op, int64_t rank, const Tensor &st, const Tensor &en,
                  const Tensor *ax, const Tensor *sp, SliceSpec &s) {
  KILN_ASSIGN(s.starts, int_list(op, st, "starts"));
  KILN_ASSIGN(s.ends, int_list(op, en, "ends"));
  const size_t n = s.starts.size();
  if (s.ends.size() != n) return op_error(op, "starts and ends differ in length");
  if (ax) {
    KILN_ASSIGN(s.axes, int_list(op, *ax, "axes"));
  } else {
    for (size_t i = 0; i < n; ++i) s.axes.push_back(static_cast<int64_t>(i));
  }
  if (sp) {
    KILN_ASSIGN(s.steps, int_list(op, *sp, "steps"));
  } else {
    s.steps.assign(n, 1);
  }
  if (s.axes.size() != n || s.steps.size() != n)
    return op_error(op, "starts, ends, axes and steps differ in length");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN(s.axes[i], norm_axis(op, s.axes[i], rank));
    if (seen[s.axes[i]]) return op_error(op, "repeated axis");
    seen[s.axes[i]] = true;
    if (s.steps[i] == 0) return op_error(op, "step 0 is not allowed");
  }
  return Status::ok();
}

Status infer_slice(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (!x.ranked) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  const Tensor *st = const_operand(ctx, 1), *en = const_operand(ctx, 2);
  const Tensor *ax = ctx.present(3) ? const_operand(ctx, 3) : nullptr;
  const Tensor *sp = ctx.present(4) ? const_operand(ctx, 4) : nullptr;
  Shape out = x.dims;
  if (ctx.present(3) && !ax) {
    ctx.out = {TensorType{x.dtype, dynamic_dims(x.rank())}};
    return Status::ok();
  }
  if (!st || !en || (ctx.present(4) && !sp)) {
    // Affected axes are known only when axes are.
    if (ax) {
      KILN_ASSIGN(auto axes, int_list(ctx.op, *ax, "axes"));
      for (int64_t a : axes) {
        KILN_ASSIGN(int64_t na, norm_axis(ctx.op, a, x.rank()));
        out[na] = kDynamic;
      }
    } else {
      out = dynamic_dims(x.rank());
    }
    ctx.out = {TensorType{x.dtype, out}};
    return Status::ok();
  }
  SliceSpec s;
  KILN_TRY(slice_spec(ctx.op, x.rank(), *st, *en, ax, sp, s));
  for (size_t i = 0; i < s.axes.size(); ++i) {
    int64_t d = x.dims[s.axes[i]];
    out[s.axes[i]] = d < 0 ? kDynamic : slice_axis(d, s.starts[i], s.ends[i], s.steps[i]).len;
  }
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_slice(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  SliceSpec s;
  KILN_TRY(slice_spec(ctx.op, x.rank(), ctx.in[1], ctx.in[2], ctx.present(3) ? &ctx.in[3] : nullptr,
                      ctx.present(4) ? &ctx.in[4] : nullptr, s));
  Shape os = x.shape();
  auto ist = shape_strides(x.shape());
  std::vector<int64_t> strides = ist;
  int64_t base = 0;
  for (size_t i = 0; i < s.axes.size(); ++i) {
    const int64_t a = s.axes[i];
    SliceAxis sa = slice_axis(x.shape()[a], s.starts[i], s.ends[i], s.steps[i]);
    os[a] = sa.len;
    if (sa.len > 0) base += sa.start * ist[a];
    // With one element the step is never taken (and may be huge).
    strides[a] = sa.len > 1 ? ist[a] * sa.step : 0;
  }
  Tensor out(x.dtype(), os);
  strided_copy(x, base, strides, out);
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- split ----------------------------------------------------------------------------------

// Piece sizes for `n` outputs of an axis of size `dim` (dim may be kDynamic) with no explicit
// split: equal chunks of ceil(dim / n), the last one smaller.
std::vector<int64_t> even_split(int64_t dim, int64_t n) {
  if (dim < 0) return std::vector<int64_t>(static_cast<size_t>(n), kDynamic);
  std::vector<int64_t> sizes;
  if (n <= 0) return sizes;
  const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
  int64_t left = dim;
  for (int64_t i = 0; i < n; ++i) {
    int64_t s = std::min(chunk, left);
    sizes.push_back(s);
    left -= s;
  }
  return sizes;
}

Status check_split(const Op &op, const std::vector<int64_t> &sizes, size_t n, int64_t dim) {
  if (sizes.size() != n)
    return op_error(op, fmt::format("split has {} entries for {} outputs", sizes.size(), n));
  int64_t sum = 0;
  for (int64_t v : sizes) {
    if (v < 0) return op_error(op, "split sizes must be non-negative");
    if (__builtin_add_overflow(sum, v, &sum))
      return overflow_error(op, "the sum of the split sizes");
  }
  if (dim >= 0 && sum != dim)
    return op_error(op, fmt::format("split sizes sum to {} but the axis has size {}", sum, dim));
  return Status::ok();
}

Status infer_split(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  const size_t n = ctx.op.results.size();
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  std::vector<int64_t> sizes;
  if (ctx.present(1)) {
    if (const Tensor *c = const_operand(ctx, 1)) {
      sizes = c->to_i64s();
      KILN_TRY(check_split(ctx.op, sizes, n, x.dims[axis]));
    } else {
      sizes.assign(n, kDynamic);
    }
  } else {
    sizes = even_split(x.dims[axis], static_cast<int64_t>(n));
  }
  ctx.out.clear();
  for (size_t i = 0; i < n; ++i) {
    Shape d = x.dims;
    d[axis] = sizes[i];
    ctx.out.push_back(TensorType{x.dtype, d});
  }
  return Status::ok();
}

Status eval_split(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  const size_t n = ctx.op.results.size();
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes;
  if (ctx.present(1)) {
    KILN_ASSIGN(sizes, int_list(ctx.op, ctx.in[1], "split"));
    KILN_TRY(check_split(ctx.op, sizes, n, dim));
  } else {
    sizes = even_split(dim, static_cast<int64_t>(n));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  int64_t at = 0;
  ctx.out.clear();
  for (size_t i = 0; i < n; ++i) {
    Shape os = x.shape();
    os[axis] = sizes[i];
    Tensor t(x.dtype(), os);
    const int64_t chunk = sizes[i] * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elems(x, o * dim * inner + at, t, o * chunk, chunk);
    at += chunk;
    ctx.out.push_back(std::move(t));
  }
  return Status::ok();
}

// ---- pad ------------------------------------------------------------------------------------

// Full per-dimension pads [begin_0.., end_0..] from the pads / axes operands.
Result<std::vector<int64_t>> full_pads(const Op &op, int64_t rank, const Tensor &pads,
                                       const Tensor *axes) {
  KILN_ASSIGN(auto p, int_list(op, pads, "pads"));
  std::vector<int64_t> ax;
  if (axes) {
    KILN_ASSIGN(ax, int_list(op, *axes, "axes"));
  } else {
    for (int64_t i = 0; i < rank; ++i) ax.push_back(i);
  }
  if (p.size() != 2 * ax.size())
    return op_error(op, fmt::format("pads has {} entries for {} axes", p.size(), ax.size()));
  std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  const size_t n = ax.size();
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN(int64_t a, norm_axis(op, ax[i], rank));
    if (seen[a]) return op_error(op, "repeated axis");
    seen[a] = true;
    full[a] = p[i];
    full[a + rank] = p[i + n];
  }
  return full;
}

int mode_of(const std::string &m) {
  if (m == "constant") return 0;
  if (m == "reflect") return 1;
  if (m == "edge") return 2;
  if (m == "wrap") return 3;
  return -1;
}

Status verify_pad(const Op &op) {
  if (mode_of(op.attr_str("mode", "constant")) < 0)
    return op_error(op, fmt::format("pad mode '{}' is not supported", op.attr_str("mode", "")));
  return Status::ok();
}

// Dims after padding (kDynamic stays); error when a sum overflows int64 or goes negative.
Result<Shape> padded_dims(const Op &op, const Shape &dims, const std::vector<int64_t> &full) {
  const size_t rank = dims.size();
  Shape out = dims;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] < 0) continue;
    int64_t padded = 0;
    if (__builtin_add_overflow(full[d], full[d + rank], &padded) ||
        __builtin_add_overflow(out[d], padded, &out[d]))
      return overflow_error(op, fmt::format("dimension {} with pads {} and {}", d, full[d],
                                            full[d + rank]));
    if (out[d] < 0) return op_error(op, "negative pads remove more than the dimension");
  }
  return out;
}

Status infer_pad(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  const Tensor *p = const_operand(ctx, 1);
  const Tensor *ax = ctx.present(3) ? const_operand(ctx, 3) : nullptr;
  if (!p || (ctx.present(3) && !ax)) {
    ctx.out = {TensorType{x.dtype, dynamic_dims(x.rank())}};
    return Status::ok();
  }
  KILN_ASSIGN(auto full, full_pads(ctx.op, x.rank(), *p, ax));
  KILN_ASSIGN(Shape out, padded_dims(ctx.op, x.dims, full));
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

// Source coordinate for output coordinate `o` along an axis, or -1 for the pad value.
// Hostile pads reach INT64_MIN / INT64_MAX, so o - begin may not fit: the periodic modes
// reduce both terms first.
int64_t pad_source(int mode, int64_t o, int64_t begin, int64_t dim) {
  int64_t c = 0;
  const bool far = __builtin_sub_overflow(o, begin, &c);
  if (!far && c >= 0 && c < dim) return c;
  switch (mode) {
  case 0: return -1;
  case 1: {
    if (dim == 1) return 0;
    const int64_t period = 2 * (dim - 1);
    c = ((o % period) - (begin % period)) % period;
    c = (c + period) % period;
    return c >= dim ? period - c : c;
  }
  case 2: return (far ? begin > 0 : c < 0) ? 0 : dim - 1;
  default: {
    c = ((o % dim) - (begin % dim)) % dim;
    return (c + dim) % dim;
  }
  }
}

Status eval_pad(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  const int64_t rank = x.rank();
  const int mode = mode_of(ctx.op.attr_str("mode", "constant"));
  KILN_ASSIGN(auto full, full_pads(ctx.op, rank, ctx.in[1], ctx.present(3) ? &ctx.in[3] : nullptr));
  KILN_ASSIGN(Shape os, padded_dims(ctx.op, x.shape(), full));
  for (int64_t d = 0; d < rank; ++d) {
    if (mode != 0 && x.shape()[d] == 0 && os[d] > 0)
      return op_error(ctx.op, "cannot pad an empty dimension in a non-constant mode");
  }
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), os));
  Tensor value(x.dtype(), {});
  if (ctx.present(2)) {
    if (ctx.in[2].numel() != 1) return op_error(ctx.op, "constant_value must have one element");
    value = ctx.in[2].cast(x.dtype()).reshaped({});
  }
  if (out.numel() == 0) {
    ctx.out = {std::move(out)};
    return Status::ok();
  }
  auto st = shape_strides(x.shape());
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t i = 0;
  do {
    int64_t off = 0;
    bool pad = false;
    for (int64_t d = 0; d < rank && !pad; ++d) {
      int64_t c = pad_source(mode, idx[d], full[d], x.shape()[d]);
      if (c < 0) pad = true;
      else off += c * st[d];
    }
    if (pad) copy_elem(value, 0, out, i);
    else copy_elem(x, off, out, i);
    ++i;
  } while (next_index(idx, os));
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- center_crop_pad ------------------------------------------------------------------------

Result<std::vector<int64_t>> crop_axes(const Op &op, int64_t rank, size_t n) {
  std::vector<int64_t> axes = op.attr_ints("axes");
  if (!op.has_attr("axes"))
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  if (axes.size() != n)
    return op_error(op, fmt::format("shape has {} entries for {} axes", n, axes.size()));
  for (auto &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  return axes;
}

Status infer_crop(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  Shape out = x.dims;
  const Tensor *c = const_operand(ctx, 1);
  KILN_ASSIGN(int64_t n, int_list_len(ctx.op, ctx.type(1), "shape"));
  if (n < 0) {
    ctx.out = {TensorType{x.dtype, dynamic_dims(x.rank())}};
    return Status::ok();
  }
  KILN_ASSIGN(auto axes, crop_axes(ctx.op, x.rank(), static_cast<size_t>(n)));
  std::vector<int64_t> sh = c ? c->to_i64s() : std::vector<int64_t>(axes.size(), kDynamic);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (c && sh[i] < 0) return op_error(ctx.op, "shape must be non-negative");
    out[axes[i]] = sh[i];
  }
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_crop(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  KILN_ASSIGN(auto sh, int_list(ctx.op, ctx.in[1], "shape"));
  KILN_ASSIGN(auto axes, crop_axes(ctx.op, x.rank(), sh.size()));
  Shape os = x.shape();
  std::vector<int64_t> shift(static_cast<size_t>(x.rank()), 0); // out coord - in coord
  for (size_t i = 0; i < axes.size(); ++i) {
    if (sh[i] < 0) return op_error(ctx.op, "shape must be non-negative");
    const int64_t dim = x.shape()[axes[i]];
    os[axes[i]] = sh[i];
    shift[axes[i]] = sh[i] >= dim ? (sh[i] - dim) / 2 : -((dim - sh[i]) / 2);
  }
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), os));
  if (out.numel() > 0) {
    auto st = shape_strides(x.shape());
    std::vector<int64_t> idx(os.size(), 0);
    int64_t i = 0;
    do {
      int64_t off = 0;
      bool inside = true;
      for (size_t d = 0; d < os.size() && inside; ++d) {
        int64_t c = idx[d] - shift[d];
        inside = c >= 0 && c < x.shape()[d];
        off += c * st[d];
      }
      if (inside) copy_elem(x, off, out, i);
      ++i;
    } while (next_index(idx, os));
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

} // namespace

void register_shape_slice(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.slice",
              .min_operands = 3,
              .max_operands = 5,
              .infer = infer_slice,
              .eval = eval_slice});
  r.add(OpDef{.name = "kiln.split",
              .min_operands = 1,
              .max_operands = 2,
              .min_results = 1,
              .max_results = -1,
              .infer = infer_split,
              .eval = eval_split});
  r.add(OpDef{.name = "kiln.pad",
              .min_operands = 2,
              .max_operands = 4,
              .verify = verify_pad,
              .infer = infer_pad,
              .eval = eval_pad});
  r.add(OpDef{.name = "kiln.center_crop_pad",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_crop,
              .eval = eval_crop});
}

} // namespace kiln::shape_ops
