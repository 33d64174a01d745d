// Reductions beyond reduce.cpp: losses, arg / top-k selection, cumulative ops and normalisation
// extras.
//   kiln.nll_loss     one invocation per target element (reduction none) or one invocation
//                     looping over all targets (sum / mean)
//   kiln.arg_reduce   one invocation per output element, a loop along the axis
//   kiln.cumulative   one invocation per element, a loop over the preceding elements
//   kiln.topk         one invocation per input element: its rank in the row; ranks < k write
//   kiln.lp_norm      one invocation per row
//   kiln.softmax      kind "hardmax", and f64 softmax / log_softmax (one invocation per row);
//                     the rest goes to reduce.cpp
//   kiln.normalize    the mean / inv_std_dev results (one invocation per row); result 0 goes to
//                     norm.cpp
//   kiln.batch_norm   training mode (one invocation per channel); inference: norm.cpp
//   kiln.reduce       empty inputs, bool max / min, f64 log_sum(_exp); the rest: reduce.cpp
// The last four extend the lowering registered earlier for the name (compiler.cpp registers
// this family after reduce.cpp and norm.cpp).
#include "compiler/lowering/lower.h"
#include "compiler/definitions/row_reduction.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::compiler {

using namespace kir;

namespace {

ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }
Expr isnan_(const Expr &x) { return call(Intrinsic::isnan, {x}); }
Expr zero(ScalarType t) { return make_const(t, 0); }
Expr one(ScalarType t) { return make_const(t, 1); }

// ---- kiln.nll_loss -----------------------------------------------------------------------------

Status lower_nll_loss(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *tv = op.operands[1];
  const Value *wv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Shape &xd = xv->type.dims;
  if (xd.size() < 2 || !is_float(xv->type.dtype) || !is_integer(tv->type.dtype))
    return unsupported(op, "this kiln.nll_loss");
  const int64_t C = xd[1], D = shape_numel(Shape(xd.begin() + 2, xd.end()));
  const int64_t NT = shape_numel(tv->type.dims);
  if (C == 0) return unsupported(op, "kiln.nll_loss with zero classes");
  const std::string red = op.attr_str("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean")
    return unsupported(op, "kiln.nll_loss reduction " + red);
  const bool has_ii = op.has_attr("ignore_index");
  const int64_t ii = op.attr_int("ignore_index", 0);
  GridKernel g(c, op, "nll_loss_" + red);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar T, g.in(tv));
  BufferVar W{-1, X.elem};
  if (wv) {
    KILN_ASSIGN(W, g.in(wv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  // body(t, f): f(loss, weight) for target t (both 0 when the target is ignored). The
  // reference errors on a class outside [0, C); the kernel clamps it into range.
  auto term = [&](const Expr &t, const std::function<Stmt(Expr, Expr)> &f) {
    Expr cls = var(g.fresh("cls"), T.elem), ci = var(g.fresh("ci"), ScalarType::i32);
    Expr clamped = cast(ScalarType::i32, min(max(cls, imm(T.elem, 0)), imm(T.elem, C - 1)));
    Expr wt = W.index >= 0 ? cast(at, load(W, ci)) : one(at);
    Expr xi = ((t / D) * C + ci) * D + t % D;
    Expr loss = -cast(at, load(X, xi)) * wt;
    if (has_ii) {
      Expr ign = cls == imm(T.elem, ii);
      loss = select(ign, zero(at), loss);
      wt = select(ign, zero(at), wt);
    }
    return let(cls, load(T, t), let(ci, clamped, f(loss, wt)));
  };
  if (red == "none")
    return g.finish(NT, [&](Expr t) -> Result<Stmt> {
      return term(t, [&](Expr l, Expr) { return store(Y, t, cast(Y.elem, l)); });
    });
  return g.finish(1, [&](Expr) -> Result<Stmt> {
    Expr sum = var(g.fresh("sum"), at), wsum = var(g.fresh("wsum"), at);
    Expr t = var(g.fresh("t"), ScalarType::i32);
    Stmt acc = term(t, [&](Expr l, Expr w) {
      return block({assign(sum, sum + l), assign(wsum, wsum + w)});
    });
    Expr result = red == "sum" ? sum : sum / wsum;
    return block({declare_var(sum, zero(at)), declare_var(wsum, zero(at)),
                  for_loop(t, i32(0), i32(NT), acc), store(Y, i32(0), cast(Y.elem, result))});
  });
}

// ---- kiln.arg_reduce ---------------------------------------------------------------------------

// a < b in the order of arg_reduce: NaN is the largest value for argmax, the smallest for argmin.
Expr arg_less(const Expr &a, const Expr &b, bool mx) {
  if (!is_float(a.type())) return a < b;
  Expr na = isnan_(a), nb = isnan_(b);
  Expr nan_case = mx ? logical_and(logical_not(na), nb) : logical_and(na, logical_not(nb));
  return select(logical_or(na, nb), nan_case, a < b);
}

Status lower_arg_reduce(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (is_bool(xv->type.dtype)) return unsupported(op, "kiln.arg_reduce on bool");
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(xd.size())));
  if (xd.empty() || xd[static_cast<size_t>(axis)] == 0)
    return unsupported(op, "kiln.arg_reduce along an empty axis");
  const bool mx = op.attr_str("kind", "") == "max";
  const bool last = op.attr_int("select_last_index", 0) != 0;
  const AxisSplit s = split_axes(xd, {axis});
  GridKernel g(c, op, mx ? "argmax" : "argmin");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr best = var(g.fresh("best"), at), arg = var(g.fresh("arg"), ScalarType::i32);
    Expr r = var(g.fresh("r"), ScalarType::i32), x = var(g.fresh("x"), at);
    Expr take = mx ? arg_less(best, x, mx) : arg_less(x, best, mx);
    if (last) take = logical_or(take, logical_and(logical_not(arg_less(best, x, mx)),
                                                  logical_not(arg_less(x, best, mx))));
    Stmt upd = let(x, cast(at, load(X, base + s.red_offset(r))),
                   if_then(take, block({assign(best, x), assign(arg, r)})));
    return let(base, s.kept_offset(o),
               block({declare_var(best, cast(at, load(X, base))), declare_var(arg, i32(0)),
                      for_loop(r, i32(1), i32(s.inner() - 1), upd),
                      store(Y, o, cast(Y.elem, arg))}));
  });
}

// ---- kiln.cumulative ---------------------------------------------------------------------------

// The axis is a constant or, from a graph input, loaded in the kernel (the reference errors on
// an axis out of range; the kernel clamps it into range).
Status lower_cumulative(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (xd.empty()) return unsupported(op, "kiln.cumulative of a scalar");
  const Tensor *axis_t = const_operand(op, 1);
  if (shape_numel(op.operands[1]->type.dims) != 1)
    return unsupported(op, "kiln.cumulative whose axis is not a single value");
  const bool prod = op.attr_str("kind", "") == "prod";
  const bool excl = op.attr_int("exclusive", 0) != 0, rev = op.attr_int("reverse", 0) != 0;
  const auto strides = shape_strides(xd);
  GridKernel g(c, op, prod ? "cumprod" : "cumsum");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  if (X.elem == ScalarType::boolean) return unsupported(op, "kiln.cumulative on bool");
  Expr n, st, axis, axis_value; // axis: the runtime axis (undefined when constant)
  if (axis_t) {
    KILN_ASSIGN(int64_t a, norm_axis(op, axis_t->to_i64s()[0], rank));
    n = i32(xd[static_cast<size_t>(a)]);
    st = i32(strides[static_cast<size_t>(a)]);
  } else {
    KILN_ASSIGN(BufferVar A, g.in(op.operands[1]));
    axis = var(g.fresh("axis"), ScalarType::i32);
    n = i32(xd.back());
    st = i32(1);
    for (int64_t d = rank - 2; d >= 0; --d) {
      n = select(axis == d, i32(xd[static_cast<size_t>(d)]), n);
      st = select(axis == d, i32(strides[static_cast<size_t>(d)]), st);
    }
    Expr raw = cast(ScalarType::i32, load(A, i32(0)));
    axis_value = min(max(select(raw < 0, raw + rank, raw), i32(0)), i32(rank - 1));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    Expr pos = var(g.fresh("pos"), ScalarType::i32), base = var(g.fresh("base"), ScalarType::i32);
    Expr nv = var(g.fresh("n"), ScalarType::i32), sv = var(g.fresh("st"), ScalarType::i32);
    Expr acc = var(g.fresh("acc"), at), j = var(g.fresh("j"), ScalarType::i32);
    // The elements combined into position pos: [0, pos] or [pos, n) (without pos if exclusive).
    Expr begin = rev ? (excl ? pos + 1 : pos) : i32(0);
    Expr extent = rev ? nv - begin : (excl ? pos : pos + 1);
    Expr x = cast(at, load(X, base + j * sv));
    Stmt loop = for_loop(j, begin, extent, assign(acc, prod ? acc * x : acc + x));
    Stmt s = let(nv, n, let(sv, st, let(pos, (i / sv) % nv, let(base, i - pos * sv, block({
        declare_var(acc, prod ? one(at) : zero(at)), loop, store(Y, i, cast(Y.elem, acc))})))));
    return axis.defined() ? let(axis, axis_value, s) : s;
  });
}

// ---- kiln.topk ---------------------------------------------------------------------------------

// Whether a comes before b in the result (largest: descending; NaN above every number).
Expr topk_before(const Expr &a, const Expr &b, bool largest) {
  auto less = [](const Expr &p, const Expr &q) {
    if (!is_float(p.type())) return p < q;
    return logical_or(logical_and(logical_not(isnan_(p)), isnan_(q)), p < q);
  };
  return largest ? less(b, a) : less(a, b);
}

Status lower_topk(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), static_cast<int64_t>(xd.size())));
  if (xd.empty()) return unsupported(op, "kiln.topk of a scalar");
  const bool largest = op.attr_int("largest", 1) != 0;
  const int64_t n = xd[static_cast<size_t>(axis)], k = yd[static_cast<size_t>(axis)];
  const int64_t st = shape_strides(xd)[static_cast<size_t>(axis)];
  GridKernel g(c, op, "topk");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  if (X.elem == ScalarType::boolean) return unsupported(op, "kiln.topk on bool");
  KILN_ASSIGN(BufferVar V, g.out(op.results[0]));
  KILN_ASSIGN(BufferVar I, g.out(op.results[1]));
  const ScalarType at = acc_type(X.elem);
  // Ranks are a permutation of [0, n) within a row (ties: lower index first), so every
  // output element is written by exactly one invocation.
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    Expr pos = var(g.fresh("pos"), ScalarType::i32), base = var(g.fresh("base"), ScalarType::i32);
    Expr xi = var(g.fresh("xi"), at), cnt = var(g.fresh("cnt"), ScalarType::i32);
    Expr j = var(g.fresh("j"), ScalarType::i32), xj = var(g.fresh("xj"), at);
    Expr ahead = logical_or(topk_before(xj, xi, largest),
                            logical_and(logical_not(topk_before(xi, xj, largest)), j < pos));
    Stmt count = for_loop(j, i32(0), i32(n),
                          let(xj, cast(at, load(X, base + j * st)),
                              if_then(ahead, assign(cnt, cnt + 1))));
    Expr oi = (i / (st * n)) * (st * k) + cnt * st + i % st;
    Stmt write = if_then(cnt < k, block({store(V, oi, load(X, i)),
                                         store(I, oi, cast(I.elem, pos))}));
    return let(pos, (i / st) % n,
               let(base, i - pos * st,
                   let(xi, cast(at, load(X, i)),
                       block({declare_var(cnt, i32(0)), count, write}))));
  });
}

// ---- kiln.lp_norm ------------------------------------------------------------------------------

// kiln.lp_norm over contiguous rows with a row-reduction strategy: the norm as one stage.
Status lp_norm_rows(LowerCtx &c, const Op &op, const AxisSplit &s, int64_t p,
                    const RowReductionSchedule &rs) {
  GridKernel g(c, op, "lp_norm");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  RowReductionDef d;
  d.rows = s.outer();
  d.len = s.inner();
  d.acc = at;
  d.base = [&s](const Expr &row) { return s.kept_offset(row); };
  d.read = [X, at](const Expr &base, const Expr &r) { return cast(at, load(X, base + r)); };
  d.stages.push_back({ReduceOp::add, false, zero(at),
                      [p](const Expr &x, const std::vector<Expr> &) {
                        return p == 1 ? call(Intrinsic::abs, {x}) : x * x;
                      },
                      [p](const Expr &acc, const std::vector<Expr> &) {
                        return p == 1 ? acc : call(Intrinsic::sqrt, {acc});
                      }});
  // A zero norm gives zeros, as the reference does.
  d.write_element = [Y, at](const Expr &base, const Expr &r, const Expr &x,
                            const std::vector<Expr> &st) -> Result<Stmt> {
    return store(Y, base + r,
                 cast(Y.elem, select(st[0] == zero(at), zero(at), x / st[0])));
  };
  return emit_row_reduction(g, d, rs);
}

Status lower_lp_norm(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype)) return unsupported(op, "kiln.lp_norm on integers");
  const int64_t p = op.attr_int("p", 2);
  if (p != 1 && p != 2) return unsupported(op, fmt::format("kiln.lp_norm with p = {}", p));
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), static_cast<int64_t>(xd.size())));
  const AxisSplit s = split_axes(xd, {axis});
  if (auto xt = scalar_type(op, xv->type.dtype); xt.is_ok()) {
    const RowReductionSchedule rs = schedule_row_reduction(c, row_shape(s), acc_type(*xt));
    if (rs.strategy != RowStrategy::naive) return lp_norm_rows(c, op, s, p, rs);
  }
  GridKernel g(c, op, "lp_norm");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32), acc = var(g.fresh("acc"), at);
    Expr norm = var(g.fresh("norm"), at);
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      Expr idx = base + s.red_offset(r);
      return for_loop(r, i32(0), i32(s.inner()), f(idx, cast(at, load(X, idx))));
    };
    Stmt sum = loop([&](Expr, Expr x) {
      return assign(acc, acc + (p == 1 ? call(Intrinsic::abs, {x}) : x * x));
    });
    // A zero norm gives zeros, as the reference does.
    Stmt write = loop([&](Expr idx, Expr x) {
      return store(Y, idx, cast(Y.elem, select(norm == zero(at), zero(at), x / norm)));
    });
    return let(base, s.kept_offset(o),
               block({declare_var(acc, zero(at)), sum,
                      let(norm, p == 1 ? acc : call(Intrinsic::sqrt, {acc}), write)}));
  });
}

// ---- kiln.softmax kind hardmax -----------------------------------------------------------------

Status lower_hardmax(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (!is_float(xv->type.dtype)) return unsupported(op, "hardmax on integers");
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), rank));
  std::vector<int64_t> axes{axis};
  if (op.attr_int("flatten_trailing", 0))
    for (int64_t d = axis + 1; d < rank; ++d) axes.push_back(d);
  const AxisSplit s = split_axes(xd, axes);
  GridKernel g(c, op, "hardmax");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr m = var(g.fresh("m"), at), arg = var(g.fresh("arg"), ScalarType::i32);
    Expr r = var(g.fresh("r"), ScalarType::i32), x = var(g.fresh("x"), at);
    Expr take = logical_or(x > m, logical_and(isnan_(x), logical_not(isnan_(m))));
    Stmt find = for_loop(r, i32(0), i32(s.inner()),
                         let(x, cast(at, load(X, base + s.red_offset(r))),
                             if_then(take, block({assign(m, x), assign(arg, r)}))));
    Expr w = var(g.fresh("w"), ScalarType::i32);
    Stmt write = for_loop(w, i32(0), i32(s.inner()),
                          store(Y, base + s.red_offset(w),
                                select(w == arg, one(Y.elem), zero(Y.elem))));
    return let(base, s.kept_offset(o),
               block({declare_var(m, lowest_value(at)), declare_var(arg, i32(0)), find, write}));
  });
}

// ---- kiln.softmax / log_softmax on f64 -----------------------------------------------------------

// Sums and differences in f64, exp and log in f32 (Vulkan has no f64 exp / log): the
// arguments are bounded (x - max <= 0, sum >= 1), so the f32 rounding stays near 1e-7.
Status lower_softmax_f64(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const std::string kind = op.attr_str("kind", "");
  if (kind != "softmax" && kind != "log_softmax") return unsupported(op, "kiln.softmax kind " + kind);
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), rank));
  std::vector<int64_t> axes{axis};
  if (op.attr_int("flatten_trailing", 0))
    for (int64_t d = axis + 1; d < rank; ++d) axes.push_back(d);
  const AxisSplit s = split_axes(xd, axes);
  GridKernel g(c, op, kind + "_f64");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType dt = ScalarType::f64, ft = ScalarType::f32;
  auto f32_call = [&](Intrinsic f, const Expr &x) { return cast(dt, call(f, {cast(ft, x)})); };
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr mx = var(g.fresh("mx"), dt), sum = var(g.fresh("sum"), dt);
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      Expr idx = base + s.red_offset(r);
      return for_loop(r, i32(0), i32(s.inner()), f(idx, load(X, idx)));
    };
    return let(base, s.kept_offset(o),
               block({declare_var(mx, lowest_value(dt)),
                      loop([&](Expr, Expr x) { return assign(mx, select(x > mx, x, mx)); }),
                      declare_var(sum, zero(dt)),
                      loop([&](Expr, Expr x) {
                        return assign(sum, sum + f32_call(Intrinsic::exp, x - mx));
                      }),
                      loop([&](Expr idx, Expr x) {
                        Expr y = kind == "softmax" ? f32_call(Intrinsic::exp, x - mx) / sum
                                                   : (x - mx) - f32_call(Intrinsic::log, sum);
                        return store(Y, idx, y);
                      })}));
  });
}

// ---- kiln.normalize: mean / inv_std_dev results ------------------------------------------------

Status lower_normalize_stats(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const std::string kind = op.attr_str("kind", "");
  if (!is_float(xv->type.dtype) || (kind != "standard" && kind != "rms" && kind != "mvn"))
    return unsupported(op, "the statistics results of this kiln.normalize");
  std::vector<int64_t> axes = op.attr_ints("axes");
  for (int64_t &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  const double eps = op.attr_float("epsilon", 1e-5);
  const AxisSplit s = split_axes(xd, axes);
  GridKernel g(c, op, "normalize_stats");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar M, g.out(op.results[1]));
  BufferVar Inv{-1, M.elem};
  if (op.results.size() > 2) {
    KILN_ASSIGN(Inv, g.out(op.results[2]));
  }
  const ScalarType at = acc_type(X.elem);
  const Expr n = make_const(at, static_cast<double>(s.inner()));
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32), mean = var(g.fresh("mean"), at);
    Expr sum = var(g.fresh("sum"), at), sq = var(g.fresh("sq"), at), ss = var(g.fresh("ss"), at);
    auto loop = [&](const std::function<Stmt(Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      return for_loop(r, i32(0), i32(s.inner()), f(cast(at, load(X, base + s.red_offset(r)))));
    };
    Expr e = make_const(at, eps);
    Expr inv = kind == "rms"   ? call(Intrinsic::rsqrt, {ss / n + e})
               : kind == "mvn" ? one(at) / (call(Intrinsic::sqrt, {sq / n}) + e)
                               : call(Intrinsic::rsqrt, {sq / n + e});
    std::vector<Stmt> stores{store(M, o, cast(M.elem, mean))};
    if (Inv.index >= 0) stores.push_back(store(Inv, o, cast(Inv.elem, inv)));
    return let(base, s.kept_offset(o),
               block({declare_var(sum, zero(at)), declare_var(sq, zero(at)),
                      declare_var(ss, zero(at)),
                      loop([&](Expr x) { return block({assign(sum, sum + x),
                                                       assign(ss, ss + x * x)}); }),
                      let(mean, sum / n,
                          block({loop([&](Expr x) { return assign(sq, sq + (x - mean) * (x - mean)); }),
                                 block(stores)}))}));
  });
}

// ---- kiln.reduce: the cases reduce.cpp leaves out -----------------------------------------------

// An empty input reduced to a non-empty result: every element is the reduction's identity
// (the reference's value for an empty set).
Status lower_reduce_empty(LowerCtx &c, const Op &op, const std::string &kind) {
  GridKernel g(c, op, "reduce_empty_" + kind);
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType t = Y.elem;
  const bool fl = is_float(t);
  Expr v = zero(t);
  if (kind == "max") v = lowest_value(t);
  else if (kind == "min") v = highest_value(t);
  else if (kind == "prod") v = one(t);
  else if (kind == "mean" && fl) v = make_const(t, std::nan(""));
  else if ((kind == "log_sum" || kind == "log_sum_exp") && fl) v = lowest_value(t);
  else if (kind != "sum" && kind != "l1" && kind != "l2" && kind != "sum_square")
    return unsupported(op, fmt::format("kiln.reduce '{}' of an empty {} tensor", kind, to_string(t)));
  return g.finish(shape_numel(op.results[0]->type.dims),
                  [&](Expr i) -> Result<Stmt> { return store(Y, i, v); });
}

// The reduced axes of a kiln.reduce (constant axes operand, or all axes).
Result<std::vector<int64_t>> reduce_axes(const Op &op) {
  const int64_t rank = static_cast<int64_t>(op.operands[0]->type.dims.size());
  std::vector<int64_t> axes;
  if (op.operands.size() > 1 && op.operands[1]) {
    const Tensor *t = const_operand(op, 1);
    if (!t) return unsupported(op, "kiln.reduce with non-constant axes");
    axes = t->to_i64s();
  }
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  return axes;
}

// max / min of bool tensors: any / all.
Status lower_reduce_bool(LowerCtx &c, const Op &op, const std::string &kind) {
  const Value *xv = op.operands[0];
  if (kind != "max" && kind != "min") return unsupported(op, "kiln.reduce '" + kind + "' on bool");
  KILN_ASSIGN(auto axes, reduce_axes(op));
  const AxisSplit s = split_axes(xv->type.dims, axes);
  GridKernel g(c, op, "reduce_bool_" + kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const bool any = kind == "max";
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr acc = var(g.fresh("acc"), ScalarType::boolean), r = var(g.fresh("r"), ScalarType::i32);
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr x = load(X, base + s.red_offset(r));
    return let(base, s.kept_offset(o),
               block({declare_var(acc, imm_bool(!any)),
                      for_loop(r, i32(0), i32(s.inner()),
                               assign(acc, any ? logical_or(acc, x) : logical_and(acc, x))),
                      store(Y, o, acc)}));
  });
}

// log_sum / log_sum_exp of f64 tensors: sums in f64, exp and log in f32 (Vulkan has no f64
// exp / log), well within the f64 comparisons' tolerance for these bounded arguments.
Status lower_reduce_log_f64(LowerCtx &c, const Op &op, const std::string &kind) {
  const Value *xv = op.operands[0];
  KILN_ASSIGN(auto axes, reduce_axes(op));
  const AxisSplit s = split_axes(xv->type.dims, axes);
  GridKernel g(c, op, "reduce_f64_" + kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType dt = ScalarType::f64, ft = ScalarType::f32;
  auto f32_call = [&](Intrinsic f, const Expr &x) { return cast(dt, call(f, {cast(ft, x)})); };
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr acc = var(g.fresh("acc"), dt), m = var(g.fresh("m"), dt), sm = var(g.fresh("sm"), dt);
    auto loop = [&](const std::function<Stmt(Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      return for_loop(r, i32(0), i32(s.inner()), f(load(X, base + s.red_offset(r))));
    };
    std::vector<Stmt> body{declare_var(acc, zero(dt)), declare_var(m, zero(dt))};
    if (kind == "log_sum_exp") {
      body.push_back(assign(m, lowest_value(dt)));
      body.push_back(loop([&](Expr x) { return assign(m, select(x > m, x, m)); }));
      // An infinite maximum: sum exp(x) directly (inf or 0), as the reference returns m.
      body.push_back(assign(m, select(call(Intrinsic::isinf, {m}), zero(dt), m)));
    }
    body.push_back(loop([&](Expr x) {
      return assign(acc, acc + (kind == "log_sum" ? x : f32_call(Intrinsic::exp, x - m)));
    }));
    body.push_back(let(sm, f32_call(Intrinsic::log, acc) + m, store(Y, o, sm)));
    return let(base, s.kept_offset(o), block(body));
  });
}

Status lower_reduce_extra(LowerCtx &c, const Op &op, const LowerFn &prev) {
  const Value *av = op.operands.size() > 1 ? op.operands[1] : nullptr;
  if (av && av->type.ranked && av->type.is_static() && shape_numel(av->type.dims) == 0) {
    // An axes operand without elements means no axes: lower the op without it.
    Op same;
    same.def = op.def;
    same.operands = {op.operands[0]};
    same.results = op.results;
    same.attrs = op.attrs;
    same.loc = op.loc;
    return lower_reduce_extra(c, same, prev);
  }
  const std::string kind = op.attr_str("kind", "");
  const bool noop = op.attr_int("noop_with_empty_axes", 0) != 0 && !av;
  if (!noop && shape_numel(op.operands[0]->type.dims) == 0) return lower_reduce_empty(c, op, kind);
  if (!noop && is_bool(op.operands[0]->type.dtype)) return lower_reduce_bool(c, op, kind);
  if (!noop && op.operands[0]->type.dtype == DType::f64 &&
      (kind == "log_sum" || kind == "log_sum_exp"))
    return lower_reduce_log_f64(c, op, kind);
  if (!prev) return unsupported(op, "kiln.reduce");
  return prev(c, op);
}

// ---- kiln.batch_norm in training mode ----------------------------------------------------------

// One invocation per channel: batch statistics over N and the spatial dims, then y and the
// running statistics (the reference's population variance).
Status lower_batch_norm_training(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (!is_float(xv->type.dtype) || xd.size() < 2 || op.results.size() != 3)
    return unsupported(op, "this kiln.batch_norm in training mode");
  const int64_t N = xd[0], C = xd[1], S = shape_numel(Shape(xd.begin() + 2, xd.end()));
  for (size_t k = 1; k <= 4; ++k)
    if (op.operands[k]->type.dims != Shape{C})
      return Status::error(fmt::format("{}: operand {} must have shape [{}]", op.describe(), k, C));
  const double eps = op.attr_float("epsilon", 1e-5), mom = op.attr_float("momentum", 0.9);
  GridKernel g(c, op, "batch_norm_training");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  std::vector<BufferVar> p;
  for (size_t k = 1; k <= 4; ++k) {
    KILN_ASSIGN(BufferVar b, g.in(op.operands[k]));
    p.push_back(b);
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  KILN_ASSIGN(BufferVar RM, g.out(op.results[1]));
  KILN_ASSIGN(BufferVar RV, g.out(op.results[2]));
  const ScalarType at = acc_type(X.elem);
  const Expr cnt = make_const(at, static_cast<double>(N * S));
  return g.finish(C, [&](Expr ch) -> Result<Stmt> {
    Expr sum = var(g.fresh("sum"), at), sq = var(g.fresh("sq"), at);
    Expr mean = var(g.fresh("mean"), at), var_ = var(g.fresh("var"), at);
    Expr inv = var(g.fresh("inv"), at);
    // loop(f): f(index, value) over the channel's elements.
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr n = var(g.fresh("n"), ScalarType::i32), j = var(g.fresh("j"), ScalarType::i32);
      Expr idx = (n * C + ch) * S + j;
      return for_loop(n, i32(0), i32(N),
                      for_loop(j, i32(0), i32(S), f(idx, cast(at, load(X, idx)))));
    };
    auto prm = [&](int k) { return cast(at, load(p[static_cast<size_t>(k)], ch)); };
    Expr m = make_const(at, mom), m1 = make_const(at, 1 - mom);
    Stmt write = loop([&](Expr idx, Expr x) {
      return store(Y, idx, cast(Y.elem, (x - mean) * inv * prm(0) + prm(1)));
    });
    return block({
        declare_var(sum, zero(at)), declare_var(sq, zero(at)),
        loop([&](Expr, Expr x) { return assign(sum, sum + x); }),
        let(mean, sum / cnt, block({
            loop([&](Expr, Expr x) { return assign(sq, sq + (x - mean) * (x - mean)); }),
            let(var_, sq / cnt, let(inv, call(Intrinsic::rsqrt, {var_ + make_const(at, eps)}), block({
                write, store(RM, ch, cast(RM.elem, prm(2) * m + mean * m1)),
                store(RV, ch, cast(RV.elem, prm(3) * m + var_ * m1))})))}))});
  });
}

// Replaces the lowering of `name` by `mine` for the ops `claims` selects; the lowering
// registered before (if any) keeps the others.
void extend(LoweringTable &t, const std::string &name, std::function<bool(const Op &)> claims,
            LowerFn mine) {
  auto it = t.find(name);
  LowerFn prev = it == t.end() ? LowerFn() : it->second;
  t[name] = [=](LowerCtx &c, const Op &op) -> Status {
    if (claims(op)) return mine(c, op);
    if (!prev) return unsupported(op, name);
    return prev(c, op);
  };
}

} // namespace

void add_reduce_extension_lowerings(LoweringTable &t) {
  t["kiln.nll_loss"] = lower_nll_loss;
  t["kiln.arg_reduce"] = lower_arg_reduce;
  t["kiln.cumulative"] = lower_cumulative;
  t["kiln.topk"] = lower_topk;
  t["kiln.lp_norm"] = lower_lp_norm;
  extend(t, "kiln.softmax", [](const Op &op) { return op.attr_str("kind", "") == "hardmax"; },
         lower_hardmax);
  extend(t, "kiln.softmax",
         [](const Op &op) {
           return op.operands[0]->type.dtype == DType::f64 && op.attr_str("kind", "") != "hardmax";
         },
         lower_softmax_f64);
  // kiln.normalize: result 0 by the lowering of norm.cpp, then the statistics.
  auto it = t.find("kiln.normalize");
  LowerFn prev = it == t.end() ? LowerFn() : it->second;
  t["kiln.normalize"] = [prev](LowerCtx &c, const Op &op) -> Status {
    if (!prev) return unsupported(op, "kiln.normalize");
    KILN_TRY(prev(c, op));
    if (op.results.size() > 1) return lower_normalize_stats(c, op);
    return Status::ok();
  };
  extend(t, "kiln.batch_norm",
         [](const Op &op) { return op.attr_int("training", 0) != 0; }, lower_batch_norm_training);
  auto red = t.find("kiln.reduce");
  LowerFn prev_reduce = red == t.end() ? LowerFn() : red->second;
  t["kiln.reduce"] = [prev_reduce](LowerCtx &c, const Op &op) {
    return lower_reduce_extra(c, op, prev_reduce);
  };
}

} // namespace kiln::compiler
