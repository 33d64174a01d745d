// Normalisations with statistics computed in double:
//   kiln.normalize  (x, scale?, bias?) -> y [, mean, inv_std_dev]
//       attrs: axes (statistics axes), epsilon, kind ("standard": (x-mean)/sqrt(var+eps);
//       "rms": x/sqrt(mean(x^2)+eps); "mvn": (x-mean)/(sqrt(var)+eps)), param_axis (optional:
//       scale and bias are 1-D along that axis; else they broadcast right-aligned to x),
//       stats_dtype (dtype of the optional mean / inv_std_dev results; default x's).
//       Covers LayerNormalization, RMSNormalization, InstanceNormalization and MVN.
//   kiln.group_norm (x, scale, bias): attrs num_groups, epsilon, scale_per ("channel"|"group").
//   kiln.batch_norm (x, scale, bias, mean, var) -> y [, running_mean, running_var]
//       attrs epsilon, training (0/1), momentum (training only).
#include "ops/reduce_util.h"

#include <algorithm>
#include <cmath>

namespace kiln::reduce_detail {

namespace {

// ---- shared ------------------------------------------------------------------------------------

// For every flat index of `xs`, the flat index into parameter tensor `p` broadcast to `xs`:
// along `param_axis` (p 1-D) when param_axis >= 0, else right-aligned numpy broadcasting.
Result<std::vector<int64_t>> param_offsets(const Op &op, const Shape &xs, const Tensor &p,
                                           int64_t param_axis, const char *what) {
  Shape ps = p.shape();
  if (param_axis >= 0) {
    if (p.rank() != 1 || p.shape()[0] != xs[static_cast<size_t>(param_axis)])
      return Status::error(fmt::format("{}: {} must have shape [{}], got [{}]", op.describe(), what,
                                       xs[static_cast<size_t>(param_axis)], shape_str(p.shape())));
    ps = Shape(xs.size() - static_cast<size_t>(param_axis), 1);
    ps[0] = p.shape()[0];
  } else {
    auto b = broadcast_shapes(xs, ps);
    if (!b || b.value() != xs)
      return Status::error(fmt::format("{}: {} of shape [{}] does not broadcast to the input [{}]",
                                       op.describe(), what, shape_str(ps), shape_str(xs)));
  }
  // Common case (layer norm): p equals x's trailing dims, so the offset is i mod p.numel();
  // signalled by an empty result.
  if (ps.size() <= xs.size() && std::equal(ps.begin(), ps.end(), xs.end() - static_cast<std::ptrdiff_t>(ps.size())))
    return std::vector<int64_t>();
  std::vector<int64_t> offs(static_cast<size_t>(shape_numel(xs)));
  BroadcastIndexer bi(xs, {ps});
  bi.for_each([&](int64_t i, const int64_t *off) { offs[static_cast<size_t>(i)] = off[0]; });
  return offs;
}

// Scale and bias applied through param_offsets (absent: 1 and 0).
struct Affine {
  std::vector<double> scale, bias;
  std::vector<int64_t> soff, boff; // empty: flat index modulo the parameter's size
  double apply(int64_t i, double y) const {
    if (!scale.empty()) y *= scale[at(soff, i, scale.size())];
    if (!bias.empty()) y += bias[at(boff, i, bias.size())];
    return y;
  }
  static size_t at(const std::vector<int64_t> &offs, int64_t i, size_t n) {
    return offs.empty() ? static_cast<size_t>(i) % n : static_cast<size_t>(offs[static_cast<size_t>(i)]);
  }
};

Result<Affine> make_affine(const EvalCtx &ctx, size_t si, size_t bi, int64_t param_axis) {
  Affine a;
  const Shape &xs = ctx.input(0).shape();
  if (ctx.present(si)) {
    KILN_ASSIGN(a.soff, param_offsets(ctx.op, xs, ctx.input(si), param_axis, "scale"));
    a.scale = ctx.input(si).to_f64s();
  }
  if (ctx.present(bi)) {
    KILN_ASSIGN(a.boff, param_offsets(ctx.op, xs, ctx.input(bi), param_axis, "bias"));
    a.bias = ctx.input(bi).to_f64s();
  }
  return a;
}

struct Moments {
  double mean = 0, var = 0, mean_sq = 0;
};

Moments moments(const std::vector<double> &v, int64_t base, const std::vector<int64_t> &inner) {
  Moments m;
  if (inner.empty()) return m;
  const double n = static_cast<double>(inner.size());
  for (int64_t o : inner) {
    double x = v[static_cast<size_t>(base + o)];
    m.mean += x;
    m.mean_sq += x * x;
  }
  m.mean /= n;
  m.mean_sq /= n;
  for (int64_t o : inner) {
    double d = v[static_cast<size_t>(base + o)] - m.mean;
    m.var += d * d;
  }
  m.var /= n;
  return m;
}

// ---- kiln.normalize ----------------------------------------------------------------------------

Status verify_normalize(const Op &op) {
  std::string k = op.attr_str("kind", "");
  if (k != "standard" && k != "rms" && k != "mvn")
    return Status::error(fmt::format("{}: unknown normalisation kind '{}'", op.describe(), k));
  if (k != "standard" && op.results.size() > 1)
    return Status::error(op.describe() + ": only kind 'standard' has mean / inv_std_dev results");
  return Status::ok();
}

Status infer_normalize(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", xt.dtype));
  const DType sd = ctx.op.attr_dtype("stats_dtype", xt.dtype);
  ctx.out = {xt};
  if (!xt.ranked) {
    if (ctx.op.results.size() > 1) return ctx.error("mean / inv_std_dev results need a ranked input");
    return Status::ok();
  }
  KILN_ASSIGN(auto axes, norm_axes(ctx.op, ctx.op.attr_ints("axes"), xt.rank()));
  if (ctx.op.results.size() <= 1) return Status::ok();
  TensorType st{sd, reduced_shape(xt.dims, axes, true), true};
  for (size_t i = 1; i < ctx.op.results.size(); ++i) ctx.out.push_back(st);
  return Status::ok();
}

Status eval_normalize(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(auto axes, norm_axes(op, op.attr_ints("axes"), x.rank()));
  int64_t pax = -1;
  if (op.has_attr("param_axis")) {
    KILN_ASSIGN(pax, norm_axis(op, op.attr_int("param_axis", 0), x.rank()));
  }
  KILN_ASSIGN(Affine af, make_affine(ctx, 1, 2, pax));
  const std::string kind = op.attr_str("kind", "");
  const double eps = op.attr_float("epsilon", 1e-5);
  const DType sd = op.attr_dtype("stats_dtype", x.dtype());
  const Shape ss = reduced_shape(x.shape(), axes, true);
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), x.shape()));
  KILN_ASSIGN(Tensor mean_t, Tensor::allocate(sd, ss));
  KILN_ASSIGN(Tensor inv_t, Tensor::allocate(sd, ss));
  AxisSplit s = split_axes(x.shape(), axes);
  std::vector<double> v = x.to_f64s();
  for (size_t o = 0; o < s.outer.size(); ++o) {
    Moments m = moments(v, s.outer[o], s.inner);
    double center = kind == "rms" ? 0.0 : m.mean;
    double inv = kind == "rms"   ? 1.0 / std::sqrt(m.mean_sq + eps)
                 : kind == "mvn" ? 1.0 / (std::sqrt(m.var) + eps)
                                 : 1.0 / std::sqrt(m.var + eps);
    mean_t.set_f64(static_cast<int64_t>(o), m.mean);
    inv_t.set_f64(static_cast<int64_t>(o), inv);
    for (int64_t in : s.inner) {
      int64_t i = s.outer[o] + in;
      y.set_f64(i, af.apply(i, (v[static_cast<size_t>(i)] - center) * inv));
    }
  }
  ctx.out = {std::move(y)};
  if (op.results.size() > 1) ctx.out.push_back(std::move(mean_t));
  if (op.results.size() > 2) ctx.out.push_back(std::move(inv_t));
  return Status::ok();
}

// ---- kiln.group_norm ---------------------------------------------------------------------------

Status infer_group_norm(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", xt.dtype));
  if (ctx.op.attr_int("num_groups", 0) <= 0) return ctx.error("num_groups must be positive");
  std::string per = ctx.op.attr_str("scale_per", "channel");
  if (per != "channel" && per != "group")
    return ctx.error(fmt::format("scale_per must be 'channel' or 'group', got '{}'", per));
  if (xt.ranked && xt.rank() < 2) return ctx.error("input must have rank >= 2 (N, C, ...)");
  return infer_same_as(ctx, 0);
}

Status eval_group_norm(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2 (N, C, ...)");
  const int64_t n = x.shape()[0], c = x.shape()[1], g = ctx.op.attr_int("num_groups", 1);
  if (g <= 0 || c % g != 0)
    return ctx.error(fmt::format("{} channels do not split into {} groups", c, g));
  const bool per_group = ctx.op.attr_str("scale_per", "channel") == "group";
  const int64_t plen = per_group ? g : c;
  for (size_t i = 1; i <= 2; ++i)
    if (ctx.input(i).numel() != plen || ctx.input(i).rank() != 1)
      return ctx.error(fmt::format("{} must have shape [{}], got [{}]", i == 1 ? "scale" : "bias",
                                   plen, shape_str(ctx.input(i).shape())));
  std::vector<double> sc = ctx.input(1).to_f64s(), bs = ctx.input(2).to_f64s(), v = x.to_f64s();
  const int64_t cpg = c / g, sp = c ? x.numel() / std::max<int64_t>(n * c, 1) : 0;
  const double eps = ctx.op.attr_float("epsilon", 1e-5);
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), x.shape()));
  std::vector<int64_t> inner(static_cast<size_t>(cpg * sp));
  for (size_t i = 0; i < inner.size(); ++i) inner[i] = static_cast<int64_t>(i);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t gi = 0; gi < g; ++gi) {
      const int64_t base = (b * c + gi * cpg) * sp;
      Moments m = moments(v, base, inner);
      const double inv = 1.0 / std::sqrt(m.var + eps);
      for (int64_t k = 0; k < cpg * sp; ++k) {
        const size_t p = static_cast<size_t>(per_group ? gi : gi * cpg + k / sp);
        const int64_t i = base + k;
        y.set_f64(i, (v[static_cast<size_t>(i)] - m.mean) * inv * sc[p] + bs[p]);
      }
    }
  }
  ctx.out = {std::move(y)};
  return Status::ok();
}

// ---- kiln.batch_norm ---------------------------------------------------------------------------

Status infer_batch_norm(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", xt.dtype));
  if (xt.ranked && xt.rank() < 2) return ctx.error("input must have rank >= 2 (N, C, ...)");
  const bool training = ctx.op.attr_int("training", 0) != 0;
  if (ctx.op.results.size() != (training ? 3u : 1u))
    return ctx.error("batch_norm has 1 result (inference) or 3 results (training)");
  ctx.out = {xt};
  if (training) {
    TensorType st{ctx.type(3).dtype, {xt.ranked ? xt.dims[1] : kDynamic}, true};
    ctx.out.push_back(st);
    ctx.out.push_back(st);
  }
  return Status::ok();
}

Status eval_batch_norm(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2 (N, C, ...)");
  const int64_t c = x.shape()[1];
  for (size_t i = 1; i <= 4; ++i)
    if (ctx.input(i).rank() != 1 || ctx.input(i).numel() != c)
      return ctx.error(fmt::format("operand {} must have shape [{}], got [{}]", i, c,
                                   shape_str(ctx.input(i).shape())));
  const bool training = ctx.op.attr_int("training", 0) != 0;
  const double eps = ctx.op.attr_float("epsilon", 1e-5);
  const double mom = ctx.op.attr_float("momentum", 0.9);
  std::vector<double> sc = ctx.input(1).to_f64s(), bs = ctx.input(2).to_f64s();
  std::vector<double> mean = ctx.input(3).to_f64s(), var = ctx.input(4).to_f64s();
  std::vector<double> v = x.to_f64s();
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != 1) axes.push_back(d);
  AxisSplit s = split_axes(x.shape(), axes); // outer: one offset per channel
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), x.shape()));
  Tensor rm(ctx.input(3).dtype(), {c}), rv(ctx.input(3).dtype(), {c});
  for (size_t ch = 0; ch < s.outer.size(); ++ch) {
    double mu = mean[ch], va = var[ch];
    if (training) {
      Moments m = moments(v, s.outer[ch], s.inner);
      rm.set_f64(static_cast<int64_t>(ch), mu * mom + m.mean * (1 - mom));
      rv.set_f64(static_cast<int64_t>(ch), va * mom + m.var * (1 - mom));
      mu = m.mean;
      va = m.var;
    }
    const double inv = 1.0 / std::sqrt(va + eps);
    for (int64_t in : s.inner) {
      int64_t i = s.outer[ch] + in;
      y.set_f64(i, (v[static_cast<size_t>(i)] - mu) * inv * sc[ch] + bs[ch]);
    }
  }
  ctx.out = {std::move(y)};
  if (training) {
    ctx.out.push_back(std::move(rm));
    ctx.out.push_back(std::move(rv));
  }
  return Status::ok();
}

} // namespace

void register_norm_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.normalize",
      .min_operands = 1,
      .max_operands = 3,
      .min_results = 1,
      .max_results = 3,
      .verify = verify_normalize,
      .infer = infer_normalize,
      .eval = eval_normalize,
  });
  r.add(OpDef{
      .name = "kiln.group_norm",
      .min_operands = 3,
      .max_operands = 3,
      .infer = infer_group_norm,
      .eval = eval_group_norm,
  });
  r.add(OpDef{
      .name = "kiln.batch_norm",
      .min_operands = 5,
      .max_operands = 5,
      .min_results = 1,
      .max_results = 3,
      .infer = infer_batch_norm,
      .eval = eval_batch_norm,
  });
}

} // namespace kiln::reduce_detail
