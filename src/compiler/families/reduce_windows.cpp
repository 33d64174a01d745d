// Window and small-tensor reductions (nn-style ops registered after reduce_extensions.cpp):
//   kiln.lp_pool      one invocation per output element, loops over the window
//   kiln.global_pool  mode "lp" (one invocation per plane); other modes go to pool.cpp
//   kiln.group_norm   one invocation per (batch, group): two passes for the statistics
//   kiln.lrn          one invocation per element, the channel window unrolled (up to 16)
//   kiln.einsum       one invocation per output element, a loop over the summed labels
//   kiln.det          one invocation per matrix (Leibniz formula, matrices up to 4 x 4)
#include "compiler/lowering/lower.h"
#include "compiler/definitions/row_reduction.h"
#include "compiler/definitions/window.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace kiln::compiler {

using namespace kir;

namespace {

ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }
Expr zero(ScalarType t) { return make_const(t, 0); }

// ---- kiln.lp_pool / kiln.global_pool mode lp ---------------------------------------------------

// |x|^p and the p-th root, with exact forms for p = 1 and 2.
Expr lp_term(const Expr &x, int64_t p) {
  if (p == 2) return x * x;
  Expr a = call(Intrinsic::abs, {x});
  return p == 1 ? a : pow(a, make_const(x.type(), static_cast<double>(p)));
}
Expr lp_root(const Expr &s, int64_t p) {
  if (p == 1) return s;
  if (p == 2) return call(Intrinsic::sqrt, {s});
  return pow(s, make_const(s.type(), 1.0 / static_cast<double>(p)));
}

// kiln.lp_pool as a window definition (a sum of |x|^p, then the p-th root) run by a non-naive
// strategy.
Status lp_pool_window(LowerCtx &c, const Op &op, const nn::Window &w, int64_t p,
                      const WindowSchedule &ws) {
  const Shape &xd = op.operands[0]->type.dims;
  GridKernel g(c, op, "lp_pool");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const int64_t out_size = w.out_size();
  WindowDef d = plane_window(w, xd[0] * xd[1], X, at);
  d.term = [p](const Expr &x) { return lp_term(x, p); };
  d.init = [at](const Expr &) { return zero(at); };
  d.finish = [p](const Expr &acc, const Expr &) { return lp_root(acc, p); };
  d.store = [&g, Y, out_size](const Expr &pl, const Expr &pos, const Expr &v) {
    return g.store(Y, pl * out_size + pos, cast(Y.elem, v));
  };
  return emit_window(g, d, ws);
}

Status lower_lp_pool(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 3) return unsupported(op, "this kiln.lp_pool");
  const int64_t p = op.attr_int("p", 2);
  if (p < 1) return unsupported(op, fmt::format("kiln.lp_pool with p = {}", p));
  KILN_ASSIGN(nn::Window w, nn::make_window(op, op.attr_ints("kernel_shape"),
                                            Shape(xd.begin() + 2, xd.end()), true));
  const WindowSchedule ws = schedule_window(c, window_shape(w, xd[0] * xd[1], false));
  if (ws.strategy != WindowStrategy::naive) return lp_pool_window(c, op, w, p, ws);
  GridKernel g(c, op, "lp_pool");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const int64_t in_size = w.in_size();
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      const Expr plane = cs[0] * xd[1] + cs[1];
      const std::vector<Expr> o(cs.begin() + 2, cs.end());
      Expr acc = var(g.fresh("acc"), at);
      KILN_ASSIGN(Stmt win, window_loops(g, w, o, [&](const std::vector<Expr> &x,
                                                     const std::vector<Expr> &,
                                                     const Expr &inside) -> Result<Stmt> {
        Expr v = cast(at, load(X, plane * in_size + flatten(x, w.in)));
        Stmt upd = assign(acc, acc + lp_term(v, p));
        return inside.defined() ? if_then(inside, upd) : upd;
      }));
      return block({declare_var(acc, zero(at)), win,
                    store(Y, i, cast(Y.elem, lp_root(acc, p)))});
    });
  });
}

Status lower_global_lp_pool(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2) return unsupported(op, "this kiln.global_pool");
  const int64_t p = op.attr_int("p", 2);
  if (p < 1) return unsupported(op, fmt::format("kiln.global_pool with p = {}", p));
  const int64_t S = shape_numel(Shape(xd.begin() + 2, xd.end()));
  GridKernel g(c, op, "global_lp_pool");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(xd[0] * xd[1], [&](Expr i) -> Result<Stmt> {
    Expr acc = var(g.fresh("acc"), at), j = var(g.fresh("j"), ScalarType::i32);
    Stmt upd = assign(acc, acc + lp_term(cast(at, load(X, i * S + j)), p));
    return block({declare_var(acc, zero(at)), for_loop(j, i32(0), i32(S), upd),
                  store(Y, i, cast(Y.elem, lp_root(acc, p)))});
  });
}

// ---- kiln.group_norm ---------------------------------------------------------------------------

// kiln.group_norm with a row-reduction strategy: rows are (image, group) blocks of L
// contiguous elements; the mean and the centred sum of squares as stages, as the naive kernel.
Status group_norm_rows(LowerCtx &c, const Op &op, int64_t rows, int64_t L, int64_t G,
                       int64_t cpg, int64_t sp, bool per_group, double eps,
                       const RowReductionSchedule &rs) {
  GridKernel g(c, op, "group_norm");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar S, g.in(op.operands[1]));
  KILN_ASSIGN(BufferVar B, g.in(op.operands[2]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const Expr n = make_const(at, static_cast<double>(L));
  RowReductionDef d;
  d.rows = rows;
  d.len = L;
  d.acc = at;
  d.base = [L](const Expr &row) { return row * L; };
  d.read = [X, at](const Expr &base, const Expr &r) { return cast(at, load(X, base + r)); };
  d.stages.push_back({ReduceOp::add, false, zero(at),
                      [](const Expr &x, const std::vector<Expr> &) { return x; },
                      [n](const Expr &sum, const std::vector<Expr> &) { return sum / n; }});
  d.stages.push_back({ReduceOp::add, false, zero(at),
                      [](const Expr &x, const std::vector<Expr> &st) {
                        return (x - st[0]) * (x - st[0]);
                      },
                      [n, at, eps](const Expr &sq, const std::vector<Expr> &) {
                        return call(Intrinsic::rsqrt, {sq / n + make_const(at, eps)});
                      }});
  d.write_element = [=](const Expr &base, const Expr &r, const Expr &x,
                        const std::vector<Expr> &st) -> Result<Stmt> {
    Expr gi = (base / L) % G;
    Expr pi = per_group ? gi : gi * cpg + r / sp;
    Expr y = (x - st[0]) * st[1] * cast(at, load(S, pi)) + cast(at, load(B, pi));
    return store(Y, base + r, cast(Y.elem, y));
  };
  return emit_row_reduction(g, d, rs);
}

Status lower_group_norm(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2) return unsupported(op, "this kiln.group_norm");
  const int64_t N = xd[0], C = xd[1], G = op.attr_int("num_groups", 1);
  if (G <= 0 || C % G != 0)
    return Status::error(fmt::format("{}: {} channels do not split into {} groups",
                                     op.describe(), C, G));
  const bool per_group = op.attr_str("scale_per", "channel") == "group";
  const int64_t plen = per_group ? G : C;
  for (size_t k = 1; k <= 2; ++k)
    if (op.operands[k]->type.dims != Shape{plen})
      return Status::error(fmt::format("{}: {} must have shape [{}]", op.describe(),
                                       k == 1 ? "scale" : "bias", plen));
  const int64_t cpg = C / G, sp = shape_numel(Shape(xd.begin() + 2, xd.end())), L = cpg * sp;
  const double eps = op.attr_float("epsilon", 1e-5);
  if (auto xt = scalar_type(op, xv->type.dtype); xt.is_ok()) {
    const RowReductionSchedule rs = schedule_row_reduction(c, {N * G, L, true}, acc_type(*xt));
    if (rs.strategy != RowStrategy::naive)
      return group_norm_rows(c, op, N * G, L, G, cpg, sp, per_group, eps, rs);
  }
  GridKernel g(c, op, "group_norm");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar S, g.in(op.operands[1]));
  KILN_ASSIGN(BufferVar B, g.in(op.operands[2]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const Expr n = make_const(at, static_cast<double>(L));
  return g.finish(N * G, [&](Expr row) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32), gi = var(g.fresh("g"), ScalarType::i32);
    Expr sum = var(g.fresh("sum"), at), sq = var(g.fresh("sq"), at);
    Expr mean = var(g.fresh("mean"), at), inv = var(g.fresh("inv"), at);
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr k = var(g.fresh("k"), ScalarType::i32);
      return for_loop(k, i32(0), i32(L), f(k, cast(at, load(X, base + k))));
    };
    Stmt write = loop([&](Expr k, Expr x) {
      Expr pi = per_group ? gi : gi * cpg + k / sp;
      Expr y = (x - mean) * inv * cast(at, load(S, pi)) + cast(at, load(B, pi));
      return store(Y, base + k, cast(Y.elem, y));
    });
    return let(base, row * L, let(gi, row % G, block({
      declare_var(sum, zero(at)), declare_var(sq, zero(at)),
      loop([&](Expr, Expr x) { return assign(sum, sum + x); }),
      let(mean, sum / n, block({
        loop([&](Expr, Expr x) { return assign(sq, sq + (x - mean) * (x - mean)); }),
        let(inv, call(Intrinsic::rsqrt, {sq / n + make_const(at, eps)}), write)}))})));
  });
}

// ---- kiln.lrn ----------------------------------------------------------------------------------

Status lower_lrn(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2) return unsupported(op, "this kiln.lrn");
  const int64_t size = op.attr_int("size", 1);
  if (size <= 0) return unsupported(op, "kiln.lrn with a non-positive size");
  const double alpha = op.attr_float("alpha", 1e-4), beta = op.attr_float("beta", 0.75);
  const double bias = op.attr_float("bias", 1.0);
  const int64_t C = xd[1], sp = shape_numel(Shape(xd.begin() + 2, xd.end()));
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  GridKernel g(c, op, "lrn");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  // x / d^beta; beta = 0.75 (AlexNet's, GoogLeNet's) as x * r * sqrt(r), r = rsqrt(d), which
  // a C compiler vectorises where pow is a library call per element.
  // Stores y[i] = x[i] / d^beta, d = bias + alpha / size * sq; beta 0.75 as x * r * sqrt(r),
  // r = rsqrt(d) bound once.
  auto store_scaled = [&](const Expr &i, const Expr &sq) {
    const Expr x = cast(at, load(X, i));
    const Expr d = make_const(at, bias) + make_const(at, alpha / static_cast<double>(size)) * sq;
    if (beta != 0.75) return store(Y, i, cast(Y.elem, x / pow(d, make_const(at, beta))));
    const Expr r = var(g.fresh("r"), at);
    return let(r, call(Intrinsic::rsqrt, {d}),
               store(Y, i, cast(Y.elem, x * r * call(Intrinsic::sqrt, {r}))));
  };
  if (size <= 16) {
    // The window unrolled, no loop: channel ch + j read clamped into [0, C) and counted only
    // inside, so each term is one unconditional load (constant offset along a row of the
    // parallel table's rows) and the kernel is one vectorisable loop per plane.
    return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
      Expr ch = var(g.fresh("ch"), ScalarType::i32);
      Expr sq;
      for (int64_t j = -lo; j <= hi; ++j) {
        Expr cj = min(max(ch + j, i32(0)), i32(C - 1));
        Expr e = cast(at, load(X, i + (cj - ch) * sp));
        Expr term = j == 0 ? e * e : select(logical_and(ch + j >= 0, ch + j < C), e * e, zero(at));
        sq = sq.defined() ? sq + term : term;
      }
      const Expr sum = var(g.fresh("sq"), at);
      return let(ch, (i / sp) % C, let(sum, sq, store_scaled(i, sum)));
    });
  }
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    Expr ch = var(g.fresh("ch"), ScalarType::i32), base = var(g.fresh("base"), ScalarType::i32);
    Expr first = var(g.fresh("lo"), ScalarType::i32), sq = var(g.fresh("sq"), at);
    Expr k = var(g.fresh("k"), ScalarType::i32);
    Expr e = cast(at, load(X, base + k * sp));
    Stmt loop = for_loop(k, first, min(ch + hi, i32(C - 1)) + 1 - first,
                         assign(sq, sq + e * e));
    return let(ch, (i / sp) % C,
               let(base, i - ch * sp,
                   let(first, max(ch - lo, i32(0)),
                       block({declare_var(sq, zero(at)), loop, store_scaled(i, sq)}))));
  });
}

// ---- kiln.einsum -------------------------------------------------------------------------------

// The equation resolved against the operand ranks. Labels 0..51 are 'A'..'Z', 'a'..'z';
// 52.. are the '...' dims, outermost first.
struct Equation {
  std::vector<std::vector<int>> in; // per operand, the label of each dim
  std::vector<int> out;
  std::vector<int64_t> size; // per label; -1 unused
};

int letter(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + (ch - 'a');
  return -1;
}

// Labels of one term; '...' becomes `ell` labels 52 + nell - ell ... (right-aligned).
Result<std::vector<int>> term_labels(const Op &op, const std::string &term, int64_t rank,
                                     int64_t nell_total, bool is_out) {
  std::vector<int> letters;
  int64_t at = -1;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      at = static_cast<int64_t>(letters.size());
      i += 2;
      continue;
    }
    const int l = letter(term[i]);
    if (l < 0) return unsupported(op, "this kiln.einsum equation");
    letters.push_back(l);
  }
  const int64_t ell = is_out ? nell_total : rank - static_cast<int64_t>(letters.size());
  if (ell < 0 || (at < 0 && ell != 0 && !is_out)) return unsupported(op, "this kiln.einsum equation");
  if (at < 0) return letters;
  std::vector<int> labels(letters.begin(), letters.begin() + at);
  for (int64_t e = 0; e < ell; ++e) labels.push_back(static_cast<int>(52 + nell_total - ell + e));
  labels.insert(labels.end(), letters.begin() + at, letters.end());
  return labels;
}

Result<Equation> parse_equation(const Op &op) {
  std::string eq;
  for (char ch : op.attr_str("equation", ""))
    if (ch != ' ') eq += ch;
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms{""};
  for (char ch : eq.substr(0, arrow)) {
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  }
  if (terms.size() != op.operands.size()) return unsupported(op, "this kiln.einsum equation");
  int64_t nell = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    int64_t letters = 0;
    for (char ch : terms[k]) letters += letter(ch) >= 0;
    if (terms[k].find("...") != std::string::npos)
      nell = std::max(nell, static_cast<int64_t>(op.operands[k]->type.dims.size()) - letters);
  }
  Equation e;
  e.size.assign(static_cast<size_t>(52 + nell), -1);
  for (size_t k = 0; k < terms.size(); ++k) {
    const Shape &d = op.operands[k]->type.dims;
    KILN_ASSIGN(auto labels, term_labels(op, terms[k], static_cast<int64_t>(d.size()), nell, false));
    for (size_t j = 0; j < labels.size(); ++j) {
      int64_t &s = e.size[static_cast<size_t>(labels[j])];
      if (s == -1 || s == 1) s = d[j];
      else if (d[j] != s && !(labels[j] >= 52 && d[j] == 1))
        return unsupported(op, "kiln.einsum with mismatched label sizes");
    }
    e.in.push_back(labels);
  }
  for (int l = 52; l < 52 + nell; ++l)
    if (e.size[static_cast<size_t>(l)] == -1) e.size[static_cast<size_t>(l)] = 1;
  if (arrow != std::string::npos) {
    KILN_ASSIGN(e.out, term_labels(op, eq.substr(arrow + 2), 0, nell, true));
    for (int l : e.out)
      if (e.size[static_cast<size_t>(l)] == -1) return unsupported(op, "this kiln.einsum equation");
  } else {
    std::vector<int> count(52, 0);
    for (auto &t : e.in)
      for (int l : t)
        if (l < 52) ++count[static_cast<size_t>(l)];
    for (int l = 52; l < 52 + nell; ++l) e.out.push_back(l);
    for (int l = 0; l < 52; ++l)
      if (count[static_cast<size_t>(l)] == 1) e.out.push_back(l);
  }
  return e;
}

Status lower_einsum(LowerCtx &c, const Op &op) {
  KILN_ASSIGN(Equation e, parse_equation(op));
  const Shape &yd = op.results[0]->type.dims;
  Shape od;
  for (int l : e.out) od.push_back(e.size[static_cast<size_t>(l)]);
  if (od != yd) return unsupported(op, "kiln.einsum whose result shape differs from the equation");
  std::vector<int> summed;
  Shape sd;
  for (size_t l = 0; l < e.size.size(); ++l)
    if (e.size[l] != -1 && std::find(e.out.begin(), e.out.end(), static_cast<int>(l)) == e.out.end()) {
      summed.push_back(static_cast<int>(l));
      sd.push_back(e.size[l]);
    }
  const int64_t nsum = shape_numel(sd);
  GridKernel g(c, op, "einsum");
  std::vector<BufferVar> ins;
  for (const Value *v : op.operands) {
    KILN_ASSIGN(BufferVar b, g.in(v));
    ins.push_back(b);
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  if (Y.elem == ScalarType::boolean) return unsupported(op, "kiln.einsum on bool");
  const ScalarType at = acc_type(Y.elem);
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> oc) -> Result<Stmt> {
      Expr r = var(g.fresh("r"), ScalarType::i32), acc = var(g.fresh("acc"), at);
      std::vector<Expr> coord(e.size.size());
      for (size_t j = 0; j < e.out.size(); ++j) coord[static_cast<size_t>(e.out[j])] = oc[j];
      const std::vector<Expr> sc = unflatten(r, sd);
      for (size_t j = 0; j < summed.size(); ++j) coord[static_cast<size_t>(summed[j])] = sc[j];
      Expr prod;
      for (size_t k = 0; k < ins.size(); ++k) {
        const Shape &d = op.operands[k]->type.dims;
        const auto st = shape_strides(d);
        Expr off = i32(0);
        for (size_t j = 0; j < d.size(); ++j)
          if (d[j] != 1) off = off + coord[static_cast<size_t>(e.in[k][j])] * st[j];
        Expr v = cast(at, load(ins[k], off));
        prod = prod.defined() ? prod * v : v;
      }
      return block({declare_var(acc, zero(at)), for_loop(r, i32(0), i32(nsum), assign(acc, acc + prod)),
                    store(Y, i, cast(Y.elem, acc))});
    });
  });
}

// ---- kiln.det ----------------------------------------------------------------------------------

Status lower_det(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2 || xd[xd.size() - 1] != xd[xd.size() - 2])
    return unsupported(op, "this kiln.det");
  const int64_t n = xd.back();
  if (n > 4) return unsupported(op, fmt::format("kiln.det of {} x {} matrices (at most 4 x 4)", n, n));
  GridKernel g(c, op, "det");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(shape_numel(Shape(xd.begin(), xd.end() - 2)), [&](Expr b) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    // Leibniz: sum over permutations s of sign(s) * prod_r a[r][s(r)].
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    Expr sum = zero(at);
    do {
      int inversions = 0;
      for (size_t a = 0; a < perm.size(); ++a)
        for (size_t q = a + 1; q < perm.size(); ++q) inversions += perm[a] > perm[q];
      Expr term;
      for (int64_t r = 0; r < n; ++r) {
        Expr v = cast(at, load(X, base + (r * n + perm[static_cast<size_t>(r)])));
        term = term.defined() ? term * v : v;
      }
      if (!term.defined()) term = make_const(at, 1);
      sum = inversions % 2 ? sum - term : sum + term;
    } while (std::next_permutation(perm.begin(), perm.end()));
    return let(base, b * (n * n), store(Y, b, cast(Y.elem, sum)));
  });
}

} // namespace

void add_reduce_window_lowerings(LoweringTable &t) {
  t["kiln.lp_pool"] = lower_lp_pool;
  t["kiln.group_norm"] = lower_group_norm;
  t["kiln.lrn"] = lower_lrn;
  t["kiln.einsum"] = lower_einsum;
  t["kiln.det"] = lower_det;
  // kiln.global_pool mode lp; the other modes keep the lowering of pool.cpp.
  auto it = t.find("kiln.global_pool");
  LowerFn prev = it == t.end() ? LowerFn() : it->second;
  t["kiln.global_pool"] = [prev](LowerCtx &c, const Op &op) -> Status {
    if (op.attr_str("mode", "avg") == "lp") return lower_global_lp_pool(c, op);
    if (!prev) return unsupported(op, "kiln.global_pool");
    return prev(c, op);
  };
}

} // namespace kiln::compiler
