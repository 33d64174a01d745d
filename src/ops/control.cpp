// Control flow: kiln.if, kiln.loop, kiln.scan. Bodies are regions; they may use values of
// the enclosing graph. Semantics follow ONNX If / Loop / Scan (opset 9+ form).
#include "ops/op_util.h"
#include "ops/ops.h"

#include <algorithm>
#include <cstring>

namespace kiln {

namespace {

// The type both a and b fit in: same dtype required; differing dims become dynamic,
// differing ranks make it unranked.
Result<TensorType> join_types(const Op &op, const TensorType &a, const TensorType &b) {
  if (a.dtype != b.dtype)
    return Status::error(fmt::format("{}: branches give {} and {}", op.describe(), a.str(), b.str()));
  if (!a.ranked || !b.ranked || a.dims.size() != b.dims.size())
    return TensorType{a.dtype, {}, false};
  TensorType t = a;
  for (size_t i = 0; i < t.dims.size(); ++i)
    if (a.dims[i] != b.dims[i]) t.dims[i] = kDynamic;
  return t;
}

// Element `t` of `x` along `axis` (that dim removed).
Tensor take_along(const Tensor &x, int64_t axis, int64_t t) {
  Shape s = x.shape();
  int64_t outer = 1, inner = 1, n = s[axis];
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  s.erase(s.begin() + axis);
  Tensor r(x.dtype(), s);
  size_t es = dtype_size(x.dtype());
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(r.raw_mut() + (o * inner) * es, x.raw() + ((o * n + t) * inner) * es, inner * es);
  return r;
}

// Stacks equally shaped tensors along a new `axis`.
Result<Tensor> stack_along(const std::vector<Tensor> &parts, int64_t axis, const TensorType &elem,
                           const Op &op) {
  Shape s;
  if (parts.empty()) {
    if (!elem.is_static())
      return Status::error(fmt::format("{}: zero iterations and the scan output shape is unknown",
                                       op.describe()));
    s = elem.dims;
    s.insert(s.begin() + axis, 0);
    return Tensor(elem.dtype, s);
  }
  s = parts[0].shape();
  for (auto &p : parts)
    if (p.shape() != s || p.dtype() != parts[0].dtype())
      return Status::error(fmt::format("{}: scan output changes shape between iterations", op.describe()));
  int64_t outer = 1, inner = 1, n = static_cast<int64_t>(parts.size());
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis; i < s.size(); ++i) inner *= s[i];
  s.insert(s.begin() + axis, n);
  Tensor r(parts[0].dtype(), s);
  size_t es = dtype_size(r.dtype());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t t = 0; t < n; ++t)
      std::memcpy(r.raw_mut() + ((o * n + t) * inner) * es, parts[t].raw() + (o * inner) * es,
                  inner * es);
  return r;
}

Status eval_if(EvalCtx &ctx) {
  const Tensor &c = ctx.input(0);
  if (c.numel() != 1) return ctx.error("condition must have exactly one element");
  const Graph &branch = *ctx.op.regions[c.get_i64(0) ? 0 : 1];
  KILN_ASSIGN(ctx.out, ctx.run_region(branch, {}));
  return Status::ok();
}

Status infer_if(InferCtx &ctx) {
  const Graph &a = *ctx.op.regions[0], &b = *ctx.op.regions[1];
  if (a.results.size() != b.results.size() || a.results.size() != ctx.op.results.size())
    return ctx.error("branches and the op have different numbers of results");
  for (size_t i = 0; i < a.results.size(); ++i) {
    KILN_ASSIGN(TensorType t, join_types(ctx.op, a.results[i]->type, b.results[i]->type));
    ctx.out.push_back(t);
  }
  return Status::ok();
}

constexpr int64_t kMaxLoopIterations = int64_t(1) << 24;

Status infer_loop(InferCtx &ctx) {
  const Graph &body = *ctx.op.regions[0];
  size_t n = ctx.in.size() - 2;
  if (body.params.size() != n + 2 || body.results.size() < n + 1)
    return ctx.error("body has the wrong number of parameters or results");
  for (size_t i = 0; i < n; ++i) {
    KILN_ASSIGN(TensorType t, join_types(ctx.op, ctx.type(i + 2), body.results[i + 1]->type));
    ctx.out.push_back(t);
  }
  for (size_t i = n + 1; i < body.results.size(); ++i) {
    TensorType t = body.results[i]->type;
    if (t.ranked) t.dims.insert(t.dims.begin(), kDynamic);
    ctx.out.push_back(t);
  }
  return Status::ok();
}

Status eval_loop(EvalCtx &ctx) {
  const Graph &body = *ctx.op.regions[0];
  size_t n = ctx.in.size() - 2;
  size_t k = body.results.size() - 1 - n;
  int64_t trip = ctx.present(0) ? ctx.input(0).get_i64(0) : kMaxLoopIterations;
  bool cond = ctx.present(1) ? ctx.input(1).get_i64(0) != 0 : true;
  if (!ctx.present(0) && !ctx.present(1)) return ctx.error("a loop without trip count or condition never ends");
  if (trip > kMaxLoopIterations) return ctx.error(fmt::format("trip count {} exceeds the limit {}", trip, kMaxLoopIterations));
  std::vector<Tensor> vals(ctx.in.begin() + 2, ctx.in.end());
  std::vector<std::vector<Tensor>> scans(k);
  int64_t i = 0;
  for (; i < trip && cond; ++i) {
    std::vector<Tensor> params;
    params.push_back(Tensor::scalar_i64(DType::i64, i));
    params.push_back(Tensor::scalar_i64(DType::boolean, 1));
    for (auto &v : vals) params.push_back(v);
    KILN_ASSIGN(auto res, ctx.run_region(body, std::move(params)));
    cond = res[0].get_i64(0) != 0;
    for (size_t j = 0; j < n; ++j) vals[j] = std::move(res[1 + j]);
    for (size_t j = 0; j < k; ++j) scans[j].push_back(std::move(res[1 + n + j]));
  }
  if (i == kMaxLoopIterations && cond) return ctx.error("loop exceeded the iteration limit");
  ctx.out = std::move(vals);
  for (size_t j = 0; j < k; ++j) {
    KILN_ASSIGN(Tensor t, stack_along(scans[j], 0, body.results[1 + n + j]->type, ctx.op));
    ctx.out.push_back(std::move(t));
  }
  return Status::ok();
}

// Scan attributes, normalised.
struct ScanSpec {
  size_t n_state = 0, n_scan_in = 0, n_scan_out = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

Result<ScanSpec> scan_spec(const Op &op, const std::vector<const TensorType *> &in) {
  ScanSpec s;
  const Graph &body = *op.regions[0];
  s.n_scan_in = static_cast<size_t>(op.attr_int("num_scan_inputs", 0));
  if (s.n_scan_in < 1 || s.n_scan_in > in.size())
    return Status::error(op.describe() + ": bad num_scan_inputs");
  s.n_state = in.size() - s.n_scan_in;
  if (body.params.size() != in.size() || body.results.size() < s.n_state)
    return Status::error(op.describe() + ": body signature does not match the operands");
  s.n_scan_out = body.results.size() - s.n_state;
  s.in_axes = op.attr_ints("scan_input_axes", std::vector<int64_t>(s.n_scan_in, 0));
  s.in_dirs = op.attr_ints("scan_input_directions", std::vector<int64_t>(s.n_scan_in, 0));
  s.out_axes = op.attr_ints("scan_output_axes", std::vector<int64_t>(s.n_scan_out, 0));
  s.out_dirs = op.attr_ints("scan_output_directions", std::vector<int64_t>(s.n_scan_out, 0));
  if (s.in_axes.size() != s.n_scan_in || s.in_dirs.size() != s.n_scan_in ||
      s.out_axes.size() != s.n_scan_out || s.out_dirs.size() != s.n_scan_out)
    return Status::error(op.describe() + ": scan axis/direction lists have the wrong length");
  for (size_t i = 0; i < s.n_scan_in; ++i) {
    const TensorType *t = in[s.n_state + i];
    if (!t->ranked) return Status::error(op.describe() + ": scan inputs must be ranked");
    KILN_ASSIGN(s.in_axes[i], norm_axis(op, s.in_axes[i], t->rank()));
  }
  for (size_t i = 0; i < s.n_scan_out; ++i) {
    const TensorType &t = body.results[s.n_state + i]->type;
    if (!t.ranked) return Status::error(op.describe() + ": scan outputs must be ranked");
    KILN_ASSIGN(s.out_axes[i], norm_axis(op, s.out_axes[i], t.rank() + 1));
  }
  return s;
}

Status infer_scan(InferCtx &ctx) {
  KILN_ASSIGN(ScanSpec s, scan_spec(ctx.op, ctx.in));
  const Graph &body = *ctx.op.regions[0];
  int64_t len = ctx.type(s.n_state).dims[s.in_axes[0]];
  for (size_t i = 0; i < s.n_state; ++i) ctx.out.push_back(ctx.type(i));
  for (size_t i = 0; i < s.n_scan_out; ++i) {
    TensorType t = body.results[s.n_state + i]->type;
    t.dims.insert(t.dims.begin() + s.out_axes[i], len);
    ctx.out.push_back(t);
  }
  return Status::ok();
}

Status eval_scan(EvalCtx &ctx) {
  std::vector<TensorType> types;
  for (auto &t : ctx.in) types.push_back(TensorType::of(t));
  std::vector<const TensorType *> tp;
  for (auto &t : types) tp.push_back(&t);
  KILN_ASSIGN(ScanSpec s, scan_spec(ctx.op, tp));
  const Graph &body = *ctx.op.regions[0];
  int64_t len = ctx.input(s.n_state).shape()[s.in_axes[0]];
  for (size_t i = 1; i < s.n_scan_in; ++i)
    if (ctx.input(s.n_state + i).shape()[s.in_axes[i]] != len)
      return ctx.error("scan inputs have different sequence lengths");
  std::vector<Tensor> state(ctx.in.begin(), ctx.in.begin() + s.n_state);
  std::vector<std::vector<Tensor>> outs(s.n_scan_out);
  for (int64_t t = 0; t < len; ++t) {
    std::vector<Tensor> params = state;
    for (size_t i = 0; i < s.n_scan_in; ++i)
      params.push_back(take_along(ctx.input(s.n_state + i), s.in_axes[i], s.in_dirs[i] ? len - 1 - t : t));
    KILN_ASSIGN(auto res, ctx.run_region(body, std::move(params)));
    for (size_t i = 0; i < s.n_state; ++i) state[i] = std::move(res[i]);
    for (size_t i = 0; i < s.n_scan_out; ++i) outs[i].push_back(std::move(res[s.n_state + i]));
  }
  ctx.out = std::move(state);
  for (size_t i = 0; i < s.n_scan_out; ++i) {
    if (s.out_dirs[i]) std::reverse(outs[i].begin(), outs[i].end());
    KILN_ASSIGN(Tensor r, stack_along(outs[i], s.out_axes[i], body.results[s.n_state + i]->type, ctx.op));
    ctx.out.push_back(std::move(r));
  }
  return Status::ok();
}

} // namespace

void register_control_ops(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.if", .min_operands = 1, .max_operands = 1, .min_results = 0,
              .max_results = -1, .num_regions = 2, .verify = {}, .infer = infer_if,
              .eval = eval_if, .foldable = false});
  r.add(OpDef{.name = "kiln.loop", .min_operands = 2, .max_operands = -1, .min_results = 0,
              .max_results = -1, .num_regions = 1, .verify = {}, .infer = infer_loop,
              .eval = eval_loop, .foldable = false});
  r.add(OpDef{.name = "kiln.scan", .min_operands = 1, .max_operands = -1, .min_results = 0,
              .max_results = -1, .num_regions = 1, .verify = {}, .infer = infer_scan,
              .eval = eval_scan, .foldable = false});
}

} // namespace kiln
