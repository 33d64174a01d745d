// Smaller normalisations and the loss of the family:
//   kiln.lrn (x): attrs size, alpha, beta, bias; across channels (axis 1).
//   kiln.lp_norm (x): attrs axis, p (1 or 2); x / ||x||_p along axis.
//   kiln.nll_loss (log_prob [N, C, d...], target [N, d...] int, weight? [C]):
//       attrs reduction ("none" | "sum" | "mean"), ignore_index (optional).
#include "ops/reduce_util.h"

#include <cmath>

namespace kiln::reduce_detail {

namespace {

// ---- kiln.lrn ----------------------------------------------------------------------------------

Status infer_lrn(InferCtx &ctx) {
  KILN_TRY(expect_float(ctx.op, "input", ctx.type(0).dtype));
  if (ctx.op.attr_int("size", 0) <= 0) return ctx.error("size must be positive");
  if (ctx.type(0).ranked && ctx.type(0).rank() < 2) return ctx.error("input must have rank >= 2");
  return infer_same_as(ctx, 0);
}

Status eval_lrn(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2");
  const int64_t size = ctx.op.attr_int("size", 1);
  const double alpha = ctx.op.attr_float("alpha", 1e-4), beta = ctx.op.attr_float("beta", 0.75);
  const double bias = ctx.op.attr_float("bias", 1.0);
  const int64_t c = x.shape()[1];
  const int64_t sp = c ? x.numel() / std::max<int64_t>(x.shape()[0] * c, 1) : 0;
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  std::vector<double> v = x.to_f64s();
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), x.shape()));
  for (int64_t n = 0; n < x.shape()[0]; ++n)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < sp; ++s) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
          double e = v[static_cast<size_t>((n * c + k) * sp + s)];
          sq += e * e;
        }
        int64_t i = (n * c + ch) * sp + s;
        y.set_f64(i, v[static_cast<size_t>(i)] /
                         std::pow(bias + alpha / static_cast<double>(size) * sq, beta));
      }
  ctx.out = {std::move(y)};
  return Status::ok();
}

// ---- kiln.lp_norm ------------------------------------------------------------------------------

Status infer_lp_norm(InferCtx &ctx) {
  KILN_TRY(expect_float(ctx.op, "input", ctx.type(0).dtype));
  int64_t p = ctx.op.attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.error(fmt::format("p must be 1 or 2, got {}", p));
  if (ctx.type(0).ranked) KILN_TRY(norm_axis(ctx.op, ctx.op.attr_int("axis", -1), ctx.type(0).rank()).status());
  return infer_same_as(ctx, 0);
}

Status eval_lp_norm(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), x.rank()));
  const bool l1 = ctx.op.attr_int("p", 2) == 1;
  std::vector<double> v = x.to_f64s();
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), x.shape()));
  AxisSplit s = split_axes(x.shape(), {axis});
  for (int64_t base : s.outer) {
    double acc = 0;
    for (int64_t o : s.inner) {
      double e = v[static_cast<size_t>(base + o)];
      acc += l1 ? std::fabs(e) : e * e;
    }
    const double norm = l1 ? acc : std::sqrt(acc);
    // A zero norm gives zeros (as ONNX's reference implementation does), not 0/0 = NaN.
    for (int64_t o : s.inner)
      y.set_f64(base + o, norm == 0 ? 0.0 : v[static_cast<size_t>(base + o)] / norm);
  }
  ctx.out = {std::move(y)};
  return Status::ok();
}

// ---- kiln.nll_loss -----------------------------------------------------------------------------

Status verify_nll(const Op &op) {
  std::string r = op.attr_str("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean")
    return Status::error(fmt::format("{}: unknown reduction '{}'", op.describe(), r));
  return Status::ok();
}

Status infer_nll(InferCtx &ctx) {
  const TensorType &it = ctx.type(0), &tt = ctx.type(1);
  KILN_TRY(expect_float(ctx.op, "input", it.dtype));
  if (!is_integer(tt.dtype)) return ctx.error("target must be an integer tensor");
  if (it.ranked && it.rank() < 2) return ctx.error("input must have rank >= 2 (N, C, ...)");
  if (it.ranked && tt.ranked && tt.rank() != it.rank() - 1)
    return ctx.error("target must have rank one less than input");
  if (ctx.op.attr_str("reduction", "mean") != "none") ctx.out = {TensorType{it.dtype, {}, true}};
  else ctx.out = {TensorType{it.dtype, tt.dims, tt.ranked}};
  return Status::ok();
}

Status check_nll_shapes(const EvalCtx &ctx) {
  const Shape &is = ctx.input(0).shape(), &ts = ctx.input(1).shape();
  bool ok = is.size() >= 2 && ts.size() == is.size() - 1 && ts[0] == is[0];
  for (size_t d = 1; ok && d < ts.size(); ++d) ok = ts[d] == is[d + 1];
  if (!ok)
    return ctx.error(fmt::format("input [{}] and target [{}] do not match (N, C, d...) / (N, d...)",
                                 shape_str(is), shape_str(ts)));
  if (ctx.present(2) && (ctx.input(2).rank() != 1 || ctx.input(2).numel() != is[1]))
    return ctx.error(fmt::format("weight must have shape [{}]", is[1]));
  return Status::ok();
}

Status eval_nll(EvalCtx &ctx) {
  KILN_TRY(check_nll_shapes(ctx));
  const Tensor &in = ctx.input(0), &tg = ctx.input(1);
  const int64_t c = in.shape()[1], nt = tg.numel();
  const int64_t d = nt ? nt / in.shape()[0] : 0;
  const bool has_ii = ctx.op.has_attr("ignore_index");
  const int64_t ii = ctx.op.attr_int("ignore_index", 0);
  std::vector<double> w = ctx.present(2) ? ctx.input(2).to_f64s() : std::vector<double>();
  const std::string red = ctx.op.attr_str("reduction", "mean");
  KILN_ASSIGN(Tensor loss, Tensor::allocate(in.dtype(), red == "none" ? tg.shape() : Shape{}));
  double sum = 0, wsum = 0;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t cls = tg.get_i64(t);
    double l = 0, wt = 0;
    if (!(has_ii && cls == ii)) {
      if (cls < 0 || cls >= c)
        return ctx.error(fmt::format("target value {} is out of range [0, {})", cls, c));
      wt = w.empty() ? 1.0 : w[static_cast<size_t>(cls)];
      l = -in.get_f64(((t / d) * c + cls) * d + t % d) * wt;
    }
    if (red == "none") loss.set_f64(t, l);
    sum += l;
    wsum += wt;
  }
  if (red == "sum") loss.set_f64(0, sum);
  if (red == "mean") loss.set_f64(0, sum / wsum);
  ctx.out = {std::move(loss)};
  return Status::ok();
}

} // namespace

void register_norm_misc(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.lrn",
      .min_operands = 1,
      .max_operands = 1,
      .infer = infer_lrn,
      .eval = eval_lrn,
  });
  r.add(OpDef{
      .name = "kiln.lp_norm",
      .min_operands = 1,
      .max_operands = 1,
      .infer = infer_lp_norm,
      .eval = eval_lp_norm,
  });
  r.add(OpDef{
      .name = "kiln.nll_loss",
      .min_operands = 2,
      .max_operands = 3,
      .verify = verify_nll,
      .infer = infer_nll,
      .eval = eval_nll,
  });
}

} // namespace kiln::reduce_detail
