// kiln.depth_to_space, kiln.space_to_depth, kiln.compress, kiln.nonzero, kiln.unique,
// kiln.reverse_sequence.
#include "ops/shape_util.h"

#include <algorithm>
#include <numeric>

namespace kiln::shape_ops {
namespace {

// ---- depth_to_space / space_to_depth ------------------------------------------------------

struct D2S {
  bool to_space = true; // depth_to_space
  bool crd = false;
  int64_t b = 1;
};

Result<D2S> d2s_params(const Op &op) {
  D2S p;
  p.to_space = op.name() == "kiln.depth_to_space";
  p.b = op.attr_int("blocksize", 0);
  if (p.b < 1) return op_error(op, "blocksize must be positive");
  std::string mode = op.attr_str("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return op_error(op, fmt::format("mode '{}' is not supported", mode));
  p.crd = mode == "CRD";
  return p;
}

Result<Shape> d2s_shape(const Op &op, const D2S &p, const Shape &x) {
  if (x.size() != 4) return op_error(op, "input must be 4-D (NCHW)");
  // blocksize is an attribute (up to INT64_MAX): its square and the scaled dims are checked.
  const std::optional<int64_t> bb = checked_mul(p.b, p.b);
  if (!bb) return overflow_error(op, fmt::format("blocksize^2 ({}^2)", p.b));
  std::optional<Status> err;
  auto mul = [&](int64_t d, int64_t f, int i) {
    if (d < 0) return kDynamic;
    const std::optional<int64_t> r = checked_mul(d, f);
    if (!r && !err) err = overflow_error(op, fmt::format("dimension {} ({} x {})", i, d, f));
    return r.value_or(0);
  };
  Shape out;
  if (p.to_space) {
    if (x[1] >= 0 && x[1] % *bb != 0) return op_error(op, "channels are not divisible by blocksize^2");
    out = {x[0], x[1] < 0 ? kDynamic : x[1] / *bb, mul(x[2], p.b, 2), mul(x[3], p.b, 3)};
  } else {
    if ((x[2] >= 0 && x[2] % p.b != 0) || (x[3] >= 0 && x[3] % p.b != 0))
      return op_error(op, "height and width must be divisible by blocksize");
    out = {x[0], mul(x[1], *bb, 1), x[2] < 0 ? kDynamic : x[2] / p.b,
           x[3] < 0 ? kDynamic : x[3] / p.b};
  }
  if (err) return *err;
  return out;
}

Status eval_d2s(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  KILN_ASSIGN(D2S p, d2s_params(ctx.op));
  KILN_ASSIGN(Shape os, d2s_shape(ctx.op, p, x.shape()));
  Tensor out(x.dtype(), os);
  // Work in "space" coordinates: S = the spatial tensor [N, C, H*b, W*b], D = depth tensor.
  const Shape &S = p.to_space ? os : x.shape();
  const Shape &D = p.to_space ? x.shape() : os;
  const int64_t b = p.b, C = S[1];
  int64_t si = 0;
  for (int64_t n = 0; n < S[0]; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < S[2]; ++h)
        for (int64_t w = 0; w < S[3]; ++w, ++si) {
          const int64_t i = h % b, j = w % b;
          const int64_t dc = p.crd ? c * b * b + i * b + j : (i * b + j) * C + c;
          const int64_t di = ((n * D[1] + dc) * D[2] + h / b) * D[3] + w / b;
          if (p.to_space) copy_elem(x, di, out, si);
          else copy_elem(x, si, out, di);
        }
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- compress -------------------------------------------------------------------------------

Status infer_compress(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (!ctx.op.has_attr("axis")) {
    ctx.out = {TensorType{x.dtype, {kDynamic}}};
    return Status::ok();
  }
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  Shape out = x.dims;
  out[axis] = kDynamic;
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_compress(EvalCtx &ctx) {
  Tensor x = ctx.in[0];
  const Tensor &cond = ctx.in[1];
  if (cond.rank() != 1) return op_error(ctx.op, "condition must be 1-D");
  int64_t axis = 0;
  if (ctx.op.has_attr("axis")) {
    KILN_ASSIGN(axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
  } else {
    x = x.reshaped({x.numel()});
  }
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (cond.get_f64(i) == 0) continue;
    if (i >= dim) return op_error(ctx.op, "condition selects beyond the axis length");
    keep.push_back(i);
  }
  Shape os = x.shape();
  os[axis] = static_cast<int64_t>(keep.size());
  Tensor out(x.dtype(), os);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= os[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= os[d];
  const int64_t k = os[axis];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j)
      copy_elems(x, (o * dim + keep[j]) * inner, out, (o * k + j) * inner, inner);
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- nonzero --------------------------------------------------------------------------------

Status eval_nonzero(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.get_f64(i) != 0) hits.push_back(i);
  const int64_t r = static_cast<int64_t>(shape.size()), n = static_cast<int64_t>(hits.size());
  Tensor out(DType::i64, {r, n});
  int64_t *p = out.data_mut<int64_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = hits[k];
    for (int64_t d = r - 1; d >= 0; --d) {
      p[d * n + k] = rem % shape[d];
      rem /= shape[d];
    }
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- unique ---------------------------------------------------------------------------------

struct UniqueLayout {
  int64_t outer = 1, items = 1, inner = 1; // data viewed as [outer, items, inner]
};

// Item keys compared lexicographically: floats as double, integers as int64.
template <class K>
std::vector<std::vector<K>> item_keys(const Tensor &x, const UniqueLayout &l) {
  std::vector<std::vector<K>> keys(static_cast<size_t>(l.items));
  for (int64_t it = 0; it < l.items; ++it)
    for (int64_t o = 0; o < l.outer; ++o)
      for (int64_t j = 0; j < l.inner; ++j) {
        const int64_t off = (o * l.items + it) * l.inner + j;
        if constexpr (std::is_same_v<K, double>) keys[it].push_back(x.get_f64(off));
        else keys[it].push_back(x.get_i64(off));
      }
  return keys;
}

// Groups equal items: returns, per unique item in output order, its first occurrence, and per
// item its unique index; counts per unique item.
template <class K>
void group_items(const std::vector<std::vector<K>> &keys, bool sorted, std::vector<int64_t> &first,
                 std::vector<int64_t> &inverse, std::vector<int64_t> &counts) {
  const int64_t n = static_cast<int64_t>(keys.size());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  std::vector<int64_t> group(static_cast<size_t>(n));
  std::vector<int64_t> gfirst, gcount;
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || keys[order[k]] != keys[order[k - 1]]) {
      gfirst.push_back(order[k]);
      gcount.push_back(0);
    }
    group[order[k]] = static_cast<int64_t>(gfirst.size()) - 1;
    ++gcount.back();
  }
  std::vector<int64_t> pos(gfirst.size()); // group -> output position
  std::iota(pos.begin(), pos.end(), 0);
  if (!sorted) {
    std::vector<int64_t> by_first(gfirst.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(),
              [&](int64_t a, int64_t b) { return gfirst[a] < gfirst[b]; });
    for (size_t k = 0; k < by_first.size(); ++k) pos[by_first[k]] = static_cast<int64_t>(k);
  }
  first.assign(gfirst.size(), 0);
  counts.assign(gfirst.size(), 0);
  for (size_t g = 0; g < gfirst.size(); ++g) {
    first[pos[g]] = gfirst[g];
    counts[pos[g]] = gcount[g];
  }
  inverse.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) inverse[k] = pos[group[k]];
}

Status infer_unique(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  Shape y{kDynamic};
  int64_t items = kDynamic;
  if (ctx.op.has_attr("axis")) {
    if (!x.ranked) {
      ctx.out = {TensorType{x.dtype, {}, false}, TensorType{DType::i64, {kDynamic}},
                 TensorType{DType::i64, {kDynamic}}, TensorType{DType::i64, {kDynamic}}};
      ctx.out.resize(ctx.op.results.size());
      return Status::ok();
    }
    KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
    y = x.dims;
    y[axis] = kDynamic;
    items = x.dims[axis];
  } else if (x.ranked && all_static(x.dims)) {
    const std::optional<int64_t> n = checked_numel(x.dims);
    if (!n) return overflow_error(ctx.op, fmt::format("the element count of [{}]", shape_str(x.dims)));
    items = *n;
  }
  ctx.out = {TensorType{x.dtype, y}, TensorType{DType::i64, {kDynamic}},
             TensorType{DType::i64, {items}}, TensorType{DType::i64, {kDynamic}}};
  ctx.out.resize(ctx.op.results.size());
  return Status::ok();
}

Status eval_unique(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  UniqueLayout l;
  int64_t axis = -1;
  if (ctx.op.has_attr("axis")) {
    KILN_ASSIGN(axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), x.rank()));
    for (int64_t d = 0; d < axis; ++d) l.outer *= x.shape()[d];
    l.items = x.shape()[axis];
    for (int64_t d = axis + 1; d < x.rank(); ++d) l.inner *= x.shape()[d];
  } else {
    l.items = x.numel();
  }
  const bool sorted = ctx.op.attr_int("sorted", 1) != 0;
  std::vector<int64_t> first, inverse, counts;
  if (is_float(x.dtype())) group_items(item_keys<double>(x, l), sorted, first, inverse, counts);
  else group_items(item_keys<int64_t>(x, l), sorted, first, inverse, counts);
  const int64_t u = static_cast<int64_t>(first.size());
  Shape ys{u};
  if (axis >= 0) {
    ys = x.shape();
    ys[axis] = u;
  }
  Tensor y(x.dtype(), ys);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t k = 0; k < u; ++k)
      copy_elems(x, (o * l.items + first[k]) * l.inner, y, (o * u + k) * l.inner, l.inner);
  ctx.out = {std::move(y), Tensor::from_i64s(first), Tensor::from_i64s(inverse),
             Tensor::from_i64s(counts)};
  ctx.out.resize(ctx.op.results.size());
  return Status::ok();
}

// ---- reverse_sequence -------------------------------------------------------------------------

Status eval_reverse_sequence(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0], &lens = ctx.in[1];
  if (x.rank() < 2) return op_error(ctx.op, "input must have rank >= 2");
  KILN_ASSIGN(int64_t ba, norm_axis(ctx.op, ctx.op.attr_int("batch_axis", 1), x.rank()));
  KILN_ASSIGN(int64_t ta, norm_axis(ctx.op, ctx.op.attr_int("time_axis", 0), x.rank()));
  if (ba == ta) return op_error(ctx.op, "batch_axis and time_axis must differ");
  const Shape &s = x.shape();
  if (lens.rank() != 1 || lens.numel() != s[ba])
    return op_error(ctx.op, "sequence_lens must be 1-D with one entry per batch");
  for (int64_t i = 0; i < lens.numel(); ++i)
    if (lens.get_i64(i) < 0 || lens.get_i64(i) > s[ta])
      return op_error(ctx.op, "sequence length out of range");
  Tensor out(x.dtype(), s);
  if (x.numel() > 0) {
    auto st = shape_strides(s);
    std::vector<int64_t> idx(s.size(), 0);
    int64_t i = 0;
    do {
      const int64_t len = lens.get_i64(idx[ba]), t = idx[ta];
      const int64_t src = t < len ? i + (len - 1 - 2 * t) * st[ta] : i;
      copy_elem(x, src, out, i++);
    } while (next_index(idx, s));
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

} // namespace

void register_shape_misc(OpRegistry &r) {
  for (const char *name : {"kiln.depth_to_space", "kiln.space_to_depth"})
    r.add(OpDef{.name = name,
                .min_operands = 1,
                .max_operands = 1,
                .verify = [](const Op &op) { return d2s_params(op).status(); },
                .infer =
                    [](InferCtx &ctx) -> Status {
                      if (unranked_result(ctx, 0, ctx.type(0).dtype)) return Status::ok();
                      KILN_ASSIGN(D2S p, d2s_params(ctx.op));
                      KILN_ASSIGN(Shape s, d2s_shape(ctx.op, p, ctx.type(0).dims));
                      ctx.out = {TensorType{ctx.type(0).dtype, s}};
                      return Status::ok();
                    },
                .eval = eval_d2s});
  r.add(OpDef{.name = "kiln.compress",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_compress,
              .eval = eval_compress});
  r.add(OpDef{.name = "kiln.nonzero",
              .min_operands = 1,
              .max_operands = 1,
              .infer =
                  [](InferCtx &ctx) {
                    int64_t r = ctx.type(0).ranked ? std::max<int64_t>(ctx.type(0).rank(), 1)
                                                   : kDynamic;
                    ctx.out = {TensorType{DType::i64, {r, kDynamic}}};
                    return Status::ok();
                  },
              .eval = eval_nonzero});
  r.add(OpDef{.name = "kiln.unique",
              .min_operands = 1,
              .max_operands = 1,
              .min_results = 1,
              .max_results = 4,
              .infer = infer_unique,
              .eval = eval_unique});
  r.add(OpDef{.name = "kiln.reverse_sequence",
              .min_operands = 2,
              .max_operands = 2,
              .infer = [](InferCtx &ctx) { return infer_same_as(ctx, 0); },
              .eval = eval_reverse_sequence});
}

} // namespace kiln::shape_ops
