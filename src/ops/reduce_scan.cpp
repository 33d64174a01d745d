// Along-an-axis ops of the reduce family: kiln.softmax (softmax, log_softmax, hardmax),
// kiln.cumulative (running sum / product) and kiln.topk.
#include "ops/reduce_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace kiln::reduce_detail {

namespace {

// ---- kiln.softmax ------------------------------------------------------------------------------
// attrs: kind ("softmax" | "log_softmax" | "hardmax"), axis, flatten_trailing (0/1: normalise
// jointly over dims axis..rank-1, the pre-opset-13 ONNX semantics).

Status verify_softmax(const Op &op) {
  std::string k = op.attr_str("kind", "");
  if (k != "softmax" && k != "log_softmax" && k != "hardmax")
    return Status::error(fmt::format("{}: unknown softmax kind '{}'", op.describe(), k));
  return Status::ok();
}

Status infer_softmax(InferCtx &ctx) {
  KILN_TRY(expect_float(ctx.op, "input", ctx.type(0).dtype));
  if (ctx.type(0).ranked) KILN_TRY(norm_axis(ctx.op, ctx.op.attr_int("axis", -1), ctx.type(0).rank()).status());
  return infer_same_as(ctx, 0);
}

void softmax_row(const std::string &kind, const std::vector<double> &v, int64_t base,
                 const std::vector<int64_t> &inner, Tensor &r) {
  if (inner.empty()) return;
  double m = -INFINITY;
  size_t arg = 0;
  for (size_t k = 0; k < inner.size(); ++k) {
    double x = v[static_cast<size_t>(base + inner[k])];
    if (x > m || (std::isnan(x) && !std::isnan(m))) {
      m = x;
      arg = k;
    }
  }
  if (kind == "hardmax") {
    for (size_t k = 0; k < inner.size(); ++k) r.set_f64(base + inner[k], k == arg ? 1.0 : 0.0);
    return;
  }
  double s = 0;
  for (int64_t o : inner) s += std::exp(v[static_cast<size_t>(base + o)] - m);
  const double ls = std::log(s);
  for (int64_t o : inner) {
    double x = v[static_cast<size_t>(base + o)] - m;
    r.set_f64(base + o, kind == "softmax" ? std::exp(x) / s : x - ls);
  }
}

Status eval_softmax(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), x.rank()));
  std::vector<int64_t> axes{axis};
  if (ctx.op.attr_int("flatten_trailing", 0))
    for (int64_t d = axis + 1; d < x.rank(); ++d) axes.push_back(d);
  KILN_ASSIGN(Tensor r, Tensor::allocate(x.dtype(), x.shape()));
  AxisSplit s = split_axes(x.shape(), axes);
  std::vector<double> v = x.to_f64s();
  const std::string kind = ctx.op.attr_str("kind", "");
  for (int64_t o : s.outer) softmax_row(kind, v, o, s.inner, r);
  ctx.out = {std::move(r)};
  return Status::ok();
}

// ---- kiln.cumulative ---------------------------------------------------------------------------
// operands: x, axis (0-D or 1-element integer); attrs: kind ("sum" | "prod"), exclusive, reverse.

Status verify_cumulative(const Op &op) {
  std::string k = op.attr_str("kind", "");
  if (k != "sum" && k != "prod")
    return Status::error(fmt::format("{}: unknown cumulative kind '{}'", op.describe(), k));
  return Status::ok();
}

Status infer_cumulative(InferCtx &ctx) {
  if (is_bool(ctx.type(0).dtype))
    return ctx.error("cumulative sum / product of a bool tensor is not supported");
  if (!is_integer(ctx.type(1).dtype)) return ctx.error("axis must be an integer tensor");
  return infer_same_as(ctx, 0);
}

Status eval_cumulative(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(int64_t a, scalar_int_operand(ctx.op, ctx.input(1), "axis"));
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, a, x.rank()));
  const bool prod = ctx.op.attr_str("kind", "") == "prod";
  const bool excl = ctx.op.attr_int("exclusive", 0) != 0;
  const bool rev = ctx.op.attr_int("reverse", 0) != 0;
  KILN_ASSIGN(Tensor r, Tensor::allocate(x.dtype(), x.shape()));
  AxisSplit s = split_axes(x.shape(), {axis});
  const bool fl = is_float(x.dtype());
  const size_t n = s.inner.size();
  for (int64_t base : s.outer) {
    double facc = prod ? 1 : 0;
    int64_t iacc = prod ? 1 : 0;
    for (size_t j = 0; j < n; ++j) {
      int64_t off = base + s.inner[rev ? n - 1 - j : j];
      if (excl) fl ? r.set_f64(off, facc) : r.set_i64(off, iacc);
      if (fl) facc = prod ? facc * x.get_f64(off) : facc + x.get_f64(off);
      else iacc = prod ? wrap_mul(iacc, x.get_i64(off)) : wrap_add(iacc, x.get_i64(off));
      if (!excl) fl ? r.set_f64(off, facc) : r.set_i64(off, iacc);
    }
  }
  ctx.out = {std::move(r)};
  return Status::ok();
}

// ---- kiln.topk ---------------------------------------------------------------------------------
// operands: x, k (0-D or 1-element integer); attrs: axis, largest, sorted. Results: values and
// i64 indices. Ties keep the lower index first; NaN orders above every number.

Status infer_topk(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  if (is_bool(xt.dtype)) return ctx.error("top-k of a bool tensor is not supported");
  if (!is_integer(ctx.type(1).dtype)) return ctx.error("k must be an integer tensor");
  if (!xt.ranked) {
    ctx.out = {TensorType{xt.dtype, {}, false}, TensorType{DType::i64, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), xt.rank()));
  Shape dims = xt.dims;
  dims[static_cast<size_t>(axis)] = kDynamic;
  if (const Tensor *k = const_operand(ctx, 1)) {
    KILN_ASSIGN(int64_t kv, scalar_int_operand(ctx.op, *k, "k"));
    int64_t n = xt.dims[static_cast<size_t>(axis)];
    if (kv < 0 || (n >= 0 && kv > n))
      return ctx.error(fmt::format("k = {} is out of range for an axis of size {}", kv, n));
    dims[static_cast<size_t>(axis)] = kv;
  }
  ctx.out = {TensorType{xt.dtype, dims, true}, TensorType{DType::i64, dims, true}};
  return Status::ok();
}

// Sorted order (first k) of one row: indices into `inner`.
std::vector<int64_t> topk_order(const Tensor &x, int64_t base, const std::vector<int64_t> &inner,
                                bool largest) {
  std::vector<int64_t> idx(inner.size());
  std::iota(idx.begin(), idx.end(), 0);
  const DType dt = x.dtype();
  auto at = [&](int64_t i) { return base + inner[static_cast<size_t>(i)]; };
  if (is_float(dt)) {
    std::vector<double> v(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) v[i] = x.get_f64(at(static_cast<int64_t>(i)));
    auto less = [](double a, double b) { return (!std::isnan(a) && std::isnan(b)) || a < b; };
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t i, int64_t j) {
      return largest ? less(v[size_t(j)], v[size_t(i)]) : less(v[size_t(i)], v[size_t(j)]);
    });
  } else {
    std::vector<int64_t> v(idx.size());
    for (size_t i = 0; i < idx.size(); ++i) v[i] = x.get_i64(at(static_cast<int64_t>(i)));
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t i, int64_t j) {
      return largest ? int_less(dt, v[size_t(j)], v[size_t(i)]) : int_less(dt, v[size_t(i)], v[size_t(j)]);
    });
  }
  return idx;
}

Status eval_topk(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", -1), x.rank()));
  KILN_ASSIGN(int64_t k, scalar_int_operand(ctx.op, ctx.input(1), "k"));
  const int64_t n = x.shape()[static_cast<size_t>(axis)];
  if (k < 0 || k > n)
    return ctx.error(fmt::format("k = {} is out of range for an axis of size {}", k, n));
  Shape os = x.shape();
  os[static_cast<size_t>(axis)] = k;
  KILN_ASSIGN(Tensor vals, Tensor::allocate(x.dtype(), os));
  KILN_ASSIGN(Tensor inds, Tensor::allocate(DType::i64, os));
  AxisSplit si = split_axes(x.shape(), {axis});
  AxisSplit so = split_axes(os, {axis});
  const size_t es = dtype_size(x.dtype());
  const bool largest = ctx.op.attr_int("largest", 1) != 0;
  for (size_t o = 0; o < si.outer.size(); ++o) {
    std::vector<int64_t> order = topk_order(x, si.outer[o], si.inner, largest);
    for (int64_t j = 0; j < k; ++j) {
      int64_t src = si.outer[o] + si.inner[static_cast<size_t>(order[size_t(j)])];
      int64_t dst = so.outer[o] + so.inner[static_cast<size_t>(j)];
      std::memcpy(vals.raw_mut() + dst * es, x.raw() + src * es, es);
      inds.data_mut<int64_t>()[dst] = order[size_t(j)];
    }
  }
  ctx.out = {std::move(vals), std::move(inds)};
  return Status::ok();
}

} // namespace

void register_scan_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.softmax",
      .min_operands = 1,
      .max_operands = 1,
      .verify = verify_softmax,
      .infer = infer_softmax,
      .eval = eval_softmax,
  });
  r.add(OpDef{
      .name = "kiln.cumulative",
      .min_operands = 2,
      .max_operands = 2,
      .verify = verify_cumulative,
      .infer = infer_cumulative,
      .eval = eval_cumulative,
  });
  r.add(OpDef{
      .name = "kiln.topk",
      .min_operands = 2,
      .max_operands = 2,
      .min_results = 2,
      .max_results = 2,
      .infer = infer_topk,
      .eval = eval_topk,
  });
}

} // namespace kiln::reduce_detail
