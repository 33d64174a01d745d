// kiln.max_pool, kiln.avg_pool (the window definition: naive = one output element per
// invocation with loops over the window, or the scheduled strategy) and kiln.global_pool
// (avg / max over the spatial dims: a row reduction of contiguous planes, whose naive strategy
// is one invocation per plane).
#include "compiler/definitions/row_reduction.h"
#include "compiler/definitions/window.h"
#include "compiler/lowering/lower.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }

// kiln.max_pool / kiln.avg_pool as a window definition run by a non-naive strategy.
Status pool_window(LowerCtx &c, const Op &op, const nn::Window &w, bool is_max, bool count_pad,
                   const WindowSchedule &ws) {
  const Shape &xd = op.operands[0]->type.dims;
  GridKernel g(c, op, is_max ? "max_pool" : "avg_pool");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const int64_t out_size = w.out_size();
  WindowDef d = plane_window(w, xd[0] * xd[1], X, at);
  d.combine = is_max ? WindowDef::Combine::max : WindowDef::Combine::sum;
  d.init = [is_max, at](const Expr &) { return is_max ? lowest_value(at) : make_const(at, 0); };
  if (!is_max) {
    d.count = count_pad ? WindowDef::Count::padded : WindowDef::Count::inside;
    d.finish = [at](const Expr &acc, const Expr &cnt) {
      return select(cnt > 0, acc / cast(at, cnt), make_const(at, 0));
    };
  }
  d.store = [&g, Y, out_size](const Expr &p, const Expr &pos, const Expr &v) {
    return g.store(Y, p * out_size + pos, cast(Y.elem, v));
  };
  return emit_window(g, d, ws);
}

Status lower_pool(LowerCtx &c, const Op &op) {
  const bool is_max = op.name() == "kiln.max_pool";
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  if (!is_float(xv->type.dtype)) return unsupported(op, fmt::format("{} on integers", op.name()));
  if (op.attr_int("storage_order", 0) != 0) return unsupported(op, "storage_order 1");
  KILN_ASSIGN(nn::Window w, nn::make_window(op, op.attr_ints("kernel_shape"),
                                            Shape(xd.begin() + 2, xd.end()), true));
  const bool count_pad = op.attr_int("count_include_pad", 0) != 0;
  const WindowSchedule ws = schedule_window(c, window_shape(w, xd[0] * xd[1], false));
  if (ws.strategy != WindowStrategy::naive) return pool_window(c, op, w, is_max, count_pad, ws);
  GridKernel g(c, op, is_max ? "max_pool" : "avg_pool");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  const int64_t in_size = w.in_size();
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      const Expr plane = cs[0] * xd[1] + cs[1];
      const std::vector<Expr> o(cs.begin() + 2, cs.end());
      Expr acc = var(g.fresh("acc"), at);
      Expr cnt = var(g.fresh("cnt"), ScalarType::i32);
      KILN_ASSIGN(Stmt win, window_loops(g, w, o, [&](const std::vector<Expr> &x,
                                                     const std::vector<Expr> &,
                                                     const Expr &inside) -> Result<Stmt> {
        Expr v = cast(at, load(X, plane * in_size + flatten(x, w.in)));
        Stmt upd = is_max ? assign(acc, select(v > acc, v, acc))
                          : block({assign(acc, acc + v), assign(cnt, cnt + 1)});
        if (!inside.defined()) return upd;
        Stmt other;
        if (!is_max && count_pad) { // padding counts; the ceil_mode overhang does not
          Expr padded;
          for (int64_t d = 0; d < w.rank(); ++d) {
            Expr cd = logical_and(x[d] >= -w.pad_begin[d], x[d] < w.in[d] + w.pad_end[d]);
            padded = padded.defined() ? logical_and(padded, cd) : cd;
          }
          other = if_then(padded, assign(cnt, cnt + 1));
        }
        return if_then(inside, upd, other);
      }));
      Expr result = acc;
      if (!is_max)
        result = select(cnt > 0, acc / cast(at, cnt), make_const(at, 0));
      return block({declare_var(acc, is_max ? lowest_value(at) : make_const(at, 0)),
                    declare_var(cnt, i32(0)), win, store(Y, i, cast(Y.elem, result))});
    });
  });
}

// kiln.global_pool (avg, max) as a row-reduction definition run by a non-naive strategy: one
// row per plane, the max ignoring NaN as the naive kernel does.
Status global_pool_rows(LowerCtx &c, const Op &op, bool is_max, int64_t planes, int64_t S,
                        const RowReductionSchedule &rs) {
  GridKernel g(c, op, std::string("global_") + (is_max ? "max" : "avg") + "_pool");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  RowReductionDef d;
  d.rows = planes;
  d.len = S;
  d.acc = at;
  d.base = [S](const Expr &row) { return row * S; };
  d.read = [X, at](const Expr &base, const Expr &r) { return cast(at, load(X, base + r)); };
  RowStage st;
  st.op = is_max ? ReduceOp::max : ReduceOp::add;
  st.identity = is_max ? lowest_value(at) : make_const(at, 0);
  st.term = [](const Expr &x, const std::vector<Expr> &) { return x; };
  if (!is_max)
    st.finish = [at, S](const Expr &acc, const std::vector<Expr> &) {
      return acc / make_const(at, static_cast<double>(S));
    };
  d.stages.push_back(std::move(st));
  d.write_row = [Y](const Expr &row, const std::vector<Expr> &stats) -> Result<Stmt> {
    return store(Y, row, cast(Y.elem, stats[0]));
  };
  return emit_row_reduction(g, d, rs);
}

Status lower_global_pool(LowerCtx &c, const Op &op) {
  const std::string mode = op.attr_str("mode", "avg");
  if (mode != "avg" && mode != "max") return unsupported(op, "kiln.global_pool mode " + mode);
  const Value *xv = op.operands[0];
  if (!is_float(xv->type.dtype)) return unsupported(op, "kiln.global_pool on integers");
  const Shape &xd = xv->type.dims;
  const int64_t S = shape_numel(Shape(xd.begin() + 2, xd.end()));
  const int64_t planes = xd[0] * xd[1];
  if (auto xt = scalar_type(op, xv->type.dtype); xt.is_ok()) {
    const RowReductionSchedule rs = schedule_row_reduction(c, {planes, S, true}, acc_type(*xt));
    if (rs.strategy != RowStrategy::naive)
      return global_pool_rows(c, op, mode == "max", planes, S, rs);
  }
  GridKernel g(c, op, "global_" + mode + "_pool");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.finish(planes, [&](Expr i) -> Result<Stmt> {
    Expr acc = var(g.fresh("acc"), at);
    Expr j = var(g.fresh("j"), ScalarType::i32);
    Expr v = cast(at, load(X, i * S + j));
    Stmt upd = mode == "max" ? assign(acc, select(v > acc, v, acc)) : assign(acc, acc + v);
    Expr result = mode == "max" ? acc : acc / make_const(at, static_cast<double>(S));
    return block({declare_var(acc, mode == "max" ? lowest_value(at) : make_const(at, 0)),
                  for_loop(j, i32(0), i32(S), upd), store(Y, i, cast(Y.elem, result))});
  });
}

} // namespace

void add_pool_lowerings(LoweringTable &t) {
  t["kiln.max_pool"] = lower_pool;
  t["kiln.avg_pool"] = lower_pool;
  t["kiln.global_pool"] = lower_global_pool;
}

} // namespace kiln::compiler
