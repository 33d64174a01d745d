// kiln.normalize (layer / rms / instance / mvn normalisation: one invocation per row, two
// passes for the statistics) and kiln.batch_norm in inference mode (elementwise).
#include "compiler/lowering/lower.h"
#include "compiler/definitions/row_reduction.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }

// Index into a parameter tensor (scale / bias) for element `idx` of x.
Expr param_index(const Expr &idx, const Shape &xd, const Shape &ps, int64_t pax) {
  if (pax >= 0) {
    const auto st = shape_strides(xd);
    return (idx / st[pax]) % xd[pax];
  }
  Shape trimmed = ps;
  while (!trimmed.empty() && trimmed.front() == 1) trimmed.erase(trimmed.begin());
  if (trimmed.size() <= xd.size() &&
      std::equal(trimmed.begin(), trimmed.end(), xd.end() - static_cast<long>(trimmed.size())))
    return trimmed.empty() ? i32(0) : idx % shape_numel(trimmed);
  return broadcast_index(unflatten(idx, xd), ps);
}

// What the normalisation needs from its op.
struct NormArgs {
  std::string kind;
  AxisSplit s;
  int64_t pax = -1;
  double eps = 1e-5;
  const Value *scale = nullptr, *bias = nullptr;
};

// kiln.normalize over contiguous rows with a row-reduction strategy: the mean and the centred
// sum of squares (standard, mvn) or the sum of squares (rms) as stages, as the naive kernel.
Status normalize_rows(LowerCtx &c, const Op &op, const NormArgs &a,
                      const RowReductionSchedule &rs) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  GridKernel g(c, op, "normalize_" + a.kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar S{-1, X.elem}, B{-1, X.elem};
  if (a.scale) {
    KILN_ASSIGN(S, g.in(a.scale));
  }
  if (a.bias) {
    KILN_ASSIGN(B, g.in(a.bias));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const Expr n = make_const(at, static_cast<double>(a.s.inner()));
  const Expr eps = make_const(at, a.eps);
  RowReductionDef d;
  d.rows = a.s.outer();
  d.len = a.s.inner();
  d.contiguous = row_shape(a.s).contiguous;
  d.acc = at;
  d.base = [&a](const Expr &row) { return a.s.kept_offset(row); };
  d.read = [X, at](const Expr &base, const Expr &r) { return cast(at, load(X, base + r)); };
  const Expr zero = make_const(at, 0);
  const bool rms = a.kind == "rms", mvn = a.kind == "mvn";
  auto inv = [n, eps, at, mvn](const Expr &sq, const std::vector<Expr> &) {
    return mvn ? make_const(at, 1) / (call(Intrinsic::sqrt, {sq / n}) + eps)
               : call(Intrinsic::rsqrt, {sq / n + eps});
  };
  if (!rms)
    d.stages.push_back({ReduceOp::add, false, zero,
                        [](const Expr &x, const std::vector<Expr> &) { return x; },
                        [n](const Expr &sum, const std::vector<Expr> &) { return sum / n; }});
  d.stages.push_back({ReduceOp::add, false, zero,
                      [rms](const Expr &x, const std::vector<Expr> &st) {
                        Expr dx = rms ? x : x - st[0];
                        return dx * dx;
                      },
                      inv});
  d.write_element = [&, S, B, Y, rms](const Expr &base, const Expr &r, const Expr &x,
                                      const std::vector<Expr> &st) -> Result<Stmt> {
    Expr idx = base + r;
    Expr y = rms ? x * st[0] : (x - st[0]) * st[1];
    if (S.index >= 0) y = y * cast(at, load(S, param_index(idx, xd, a.scale->type.dims, a.pax)));
    if (B.index >= 0) y = y + cast(at, load(B, param_index(idx, xd, a.bias->type.dims, a.pax)));
    return store(Y, idx, cast(Y.elem, y));
  };
  return emit_row_reduction(g, d, rs);
}

Status lower_normalize(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (!is_float(xv->type.dtype)) return unsupported(op, "kiln.normalize on integers");
  const std::string kind = op.attr_str("kind", "");
  if (kind != "standard" && kind != "rms" && kind != "mvn")
    return unsupported(op, "kiln.normalize kind " + kind);
  std::vector<int64_t> axes = op.attr_ints("axes");
  for (int64_t &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  int64_t pax = -1;
  if (op.has_attr("param_axis")) {
    KILN_ASSIGN(pax, norm_axis(op, op.attr_int("param_axis", 0), rank));
  }
  const double eps = op.attr_float("epsilon", 1e-5);
  const AxisSplit s = split_axes(xd, axes);
  const Value *sv = op.operands.size() > 1 ? op.operands[1] : nullptr;
  const Value *bv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  if (auto xt = scalar_type(op, xv->type.dtype); xt.is_ok()) {
    const RowReductionSchedule rs = schedule_row_reduction(c, row_shape(s), acc_type(*xt));
    if (rs.strategy != RowStrategy::naive)
      return normalize_rows(c, op, {kind, s, pax, eps, sv, bv}, rs);
  }
  GridKernel g(c, op, "normalize_" + kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar S{-1, X.elem}, B{-1, X.elem};
  if (sv) {
    KILN_ASSIGN(S, g.in(sv));
  }
  if (bv) {
    KILN_ASSIGN(B, g.in(bv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const Expr n = make_const(at, static_cast<double>(s.inner()));
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      Expr idx = base + s.red_offset(r);
      return for_loop(r, i32(0), i32(s.inner()), f(idx, cast(at, load(X, idx))));
    };
    Expr sum = var(g.fresh("sum"), at), sq = var(g.fresh("sq"), at);
    Expr mean = var(g.fresh("mean"), at), inv = var(g.fresh("inv"), at);
    std::vector<Stmt> body{declare_var(sum, make_const(at, 0)), declare_var(sq, make_const(at, 0))};
    Expr center = make_const(at, 0), inv_value;
    if (kind == "rms") {
      body.push_back(loop([&](Expr, Expr x) { return assign(sq, sq + x * x); }));
      inv_value = call(Intrinsic::rsqrt, {sq / n + make_const(at, eps)});
    } else {
      body.push_back(loop([&](Expr, Expr x) { return assign(sum, sum + x); }));
      body.push_back(loop([&](Expr, Expr x) {
        Expr d = x - sum / n;
        return assign(sq, sq + d * d);
      }));
      center = mean;
      inv_value = kind == "mvn"
                      ? make_const(at, 1) / (call(Intrinsic::sqrt, {sq / n}) + make_const(at, eps))
                      : call(Intrinsic::rsqrt, {sq / n + make_const(at, eps)});
    }
    Stmt write = loop([&](Expr idx, Expr x) {
      Expr y = (x - center) * inv;
      if (S.index >= 0) y = y * cast(at, load(S, param_index(idx, xd, sv->type.dims, pax)));
      if (B.index >= 0) y = y + cast(at, load(B, param_index(idx, xd, bv->type.dims, pax)));
      return store(Y, idx, cast(Y.elem, y));
    });
    body.push_back(let(mean, sum / n, let(inv, inv_value, write)));
    return let(base, s.kept_offset(o), block(body));
  });
}

Status lower_batch_norm(LowerCtx &c, const Op &op) {
  if (op.attr_int("training", 0) != 0) return unsupported(op, "kiln.batch_norm in training mode");
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2) return unsupported(op, "this kiln.batch_norm");
  const int64_t C = xd[1], inner = shape_numel(Shape(xd.begin() + 2, xd.end()));
  const double eps = op.attr_float("epsilon", 1e-5);
  GridKernel g(c, op, "batch_norm");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  std::vector<BufferVar> p;
  for (size_t k = 1; k <= 4; ++k) {
    KILN_ASSIGN(BufferVar b, g.in(op.operands[k]));
    p.push_back(b);
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    Expr ch = var(g.fresh("ch"), ScalarType::i32);
    auto prm = [&](int k) { return cast(at, load(p[k], ch)); };
    Expr y = (cast(at, load(X, i)) - prm(2)) *
                 call(Intrinsic::rsqrt, {prm(3) + make_const(at, eps)}) * prm(0) + prm(1);
    return let(ch, C == 1 ? i32(0) : (inner == 1 ? i : i / inner) % C,
               store(Y, i, cast(Y.elem, y)));
  });
}

} // namespace

void add_norm_lowerings(LoweringTable &t) {
  t["kiln.normalize"] = lower_normalize;
  t["kiln.batch_norm"] = lower_batch_norm;
}

} // namespace kiln::compiler
