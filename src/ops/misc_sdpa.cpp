// kiln.sdpa: the core of scaled dot-product attention, as the fuse-attention pass
// (passes/fuse_attention.cpp) finds it written out in a graph:
//
//   y = softmax(scale * (q x k^T) [+ mask], last axis) x v
//
// operands  q [..., Sq, D], k [..., Skv, D], v [..., Skv, Dv] (the same leading dims, f32 or
//           f16, one dtype), optional mask of a float dtype broadcast (numpy, right-aligned)
//           to the scores [..., Sq, Skv]
// attrs     scale (float, default 1), zero_nan_rows (0/1, default 0: a query row whose
//           probabilities are NaN, e.g. every key masked with -inf, gives zeros instead of
//           NaN, as PyTorch's export writes with where(isnan(p), 0, p))
// result    y [..., Sq, Dv], q's dtype
//
// The reference computes in double with kiln.softmax's numerics (max, exp(x - max), sum) and
// rounds once at the end; the unfused graph rounds the scores and the probabilities to the
// operand dtype in between, so the two agree within float (f32) or half (f16) tolerance.
#include "ops/misc_internal.h"

namespace kiln::misc {
namespace {

Status verify_sdpa(const Op &op) {
  const int64_t z = op.attr_int("zero_nan_rows", 0);
  if (z != 0 && z != 1)
    return Status::error(op.describe() + ": zero_nan_rows must be 0 or 1");
  const double s = op.attr_float("scale", 1.0);
  if (!std::isfinite(s))
    return Status::error(op.describe() + ": scale must be finite");
  return Status::ok();
}

bool dims_differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

Status infer_sdpa(InferCtx &ctx) {
  const TensorType &q = ctx.type(0), &k = ctx.type(1), &v = ctx.type(2);
  if (!q.ranked || !k.ranked || !v.ranked)
    return ctx.error("q, k and v must be ranked");
  const int64_t r = q.rank();
  if (r < 2 || k.rank() != r || v.rank() != r)
    return ctx.error("q, k and v must have one rank of at least 2");
  KILN_TRY(expect_float(ctx.op, "q", q.dtype));
  if (q.dtype != DType::f32 && q.dtype != DType::f16)
    return ctx.error(fmt::format("q has dtype {}; expected f32 or f16", dtype_name(q.dtype)));
  if (k.dtype != q.dtype || v.dtype != q.dtype)
    return ctx.error("q, k and v differ in dtype");
  const auto ur = static_cast<size_t>(r);
  for (size_t d = 0; d + 2 < ur; ++d)
    if (dims_differ(q.dims[d], k.dims[d]) || dims_differ(q.dims[d], v.dims[d]))
      return ctx.error("q, k and v differ in their leading dims");
  if (dims_differ(q.dims[ur - 1], k.dims[ur - 1]))
    return ctx.error("q and k differ in the head size (last dim)");
  if (dims_differ(k.dims[ur - 2], v.dims[ur - 2]))
    return ctx.error("k and v differ in the number of keys");
  if (ctx.present(3)) {
    const TensorType &m = ctx.type(3);
    if (!m.ranked || m.rank() > r)
      return ctx.error("mask must be ranked, of rank <= q's");
    KILN_TRY(expect_float(ctx.op, "mask", m.dtype));
    Shape scores(q.dims.begin(), q.dims.end() - 1);
    scores.push_back(k.dims[ur - 2]);
    const size_t off = ur - static_cast<size_t>(m.rank());
    for (size_t d = 0; d < m.dims.size(); ++d)
      if (m.dims[d] != 1 && dims_differ(m.dims[d], scores[off + d]))
        return ctx.error(fmt::format("mask {} does not broadcast to the scores", m.str()));
  }
  Shape y = q.dims;
  y[ur - 1] = v.dims[ur - 1];
  ctx.out = {TensorType{q.dtype, y, true}};
  return Status::ok();
}

Status eval_sdpa(EvalCtx &ctx) {
  const Tensor &Q = ctx.input(0), &K = ctx.input(1), &V = ctx.input(2);
  const size_t r = Q.shape().size();
  const int64_t Sq = Q.shape()[r - 2], D = Q.shape()[r - 1], Skv = K.shape()[r - 2],
                Dv = V.shape()[r - 1];
  const int64_t batch = shape_numel(Shape(Q.shape().begin(), Q.shape().end() - 2));
  const double scale = ctx.op.attr_float("scale", 1.0);
  const bool zero_nan = ctx.op.attr_int("zero_nan_rows", 0) != 0;
  const std::vector<double> q = Q.to_f64s(), k = K.to_f64s(), v = V.to_f64s();
  // The mask's strides over the scores' dims (0 where it broadcasts).
  std::vector<double> mask;
  std::vector<int64_t> mst(r, 0);
  Shape scores(Q.shape().begin(), Q.shape().end() - 1);
  scores.push_back(Skv);
  if (ctx.present(3)) {
    const Tensor &M = ctx.input(3);
    mask = M.to_f64s();
    const size_t off = r - M.shape().size();
    const auto st = shape_strides(M.shape());
    for (size_t d = 0; d < M.shape().size(); ++d)
      mst[off + d] = M.shape()[d] == 1 ? 0 : st[d];
  }
  std::vector<double> y(static_cast<size_t>(batch * Sq * Dv), 0.0), s(static_cast<size_t>(Skv));
  Shape bdims(scores.begin(), scores.end() - 2);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t moff = 0; // the mask's offset of batch entry b
    for (int64_t d = static_cast<int64_t>(bdims.size()) - 1, rest = b; d >= 0; --d) {
      moff += (rest % bdims[static_cast<size_t>(d)]) * mst[static_cast<size_t>(d)];
      rest /= bdims[static_cast<size_t>(d)];
    }
    for (int64_t i = 0; i < Sq; ++i) {
      const double *qi = &q[static_cast<size_t>((b * Sq + i) * D)];
      double m = -INFINITY;
      for (int64_t j = 0; j < Skv; ++j) {
        const double *kj = &k[static_cast<size_t>((b * Skv + j) * D)];
        double dot = 0;
        for (int64_t e = 0; e < D; ++e)
          dot += qi[e] * kj[e];
        double x = dot * scale;
        if (!mask.empty())
          x += mask[static_cast<size_t>(moff + i * mst[r - 2] + j * mst[r - 1])];
        s[static_cast<size_t>(j)] = x;
        if (x > m || (std::isnan(x) && !std::isnan(m)))
          m = x;
      }
      double sum = 0;
      for (double &x : s)
        sum += (x = std::exp(x - m));
      double *yi = &y[static_cast<size_t>((b * Sq + i) * Dv)];
      if (std::isnan(sum) && zero_nan)
        continue; // every probability of the row is NaN
      for (int64_t j = 0; j < Skv; ++j) {
        const double p = s[static_cast<size_t>(j)] / sum;
        const double *vj = &v[static_cast<size_t>((b * Skv + j) * Dv)];
        for (int64_t e = 0; e < Dv; ++e)
          yi[e] += p * vj[e];
      }
    }
  }
  Shape ys = Q.shape();
  ys[r - 1] = Dv;
  ctx.out = {tensor_from_f64(y, ys, Q.dtype())};
  return Status::ok();
}

} // namespace

void register_sdpa_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.sdpa",
      .min_operands = 3,
      .max_operands = 4,
      .verify = verify_sdpa,
      .infer = infer_sdpa,
      .eval = eval_sdpa,
  });
}

} // namespace kiln::misc
