// kiln.reduce (one invocation per output element, a loop over the reduced elements) and
// kiln.softmax / log_softmax (one invocation per row: max, sum of exp, write); reductions and
// rows of kSplitMin or more elements are split across invocations in partial stages.
#include "compiler/lowering/lower.h"
#include "compiler/definitions/row_reduction.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::compiler {

using namespace kir;

namespace {

Expr offset_of(const Expr &flat, const Shape &dims, const std::vector<int64_t> &st) {
  if (st == shape_strides(dims)) return flat; // contiguous: the flat index is the offset
  auto cs = unflatten(flat, dims);
  Expr e = i32(0);
  for (size_t d = 0; d < dims.size(); ++d)
    if (dims[d] != 1) e = e + cs[d] * st[d];
  return e;
}

} // namespace

Expr AxisSplit::kept_offset(const Expr &o) const { return offset_of(o, kept, kept_st); }
Expr AxisSplit::red_offset(const Expr &r) const { return offset_of(r, red, red_st); }

AxisSplit split_axes(const Shape &dims, const std::vector<int64_t> &reduced_axes) {
  AxisSplit s;
  const auto st = shape_strides(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool red = std::find(reduced_axes.begin(), reduced_axes.end(),
                               static_cast<int64_t>(d)) != reduced_axes.end();
    (red ? s.red : s.kept).push_back(dims[d]);
    (red ? s.red_st : s.kept_st).push_back(st[d]);
  }
  return s;
}

namespace {

// How a kiln.reduce kind accumulates: acc = combine(acc, term(x)) over the reduced elements x
// from init, then finish(acc). Partial accumulators of a split reduction combine the same way.
struct Accumulation {
  Expr init;
  std::function<Expr(Expr)> term = [](Expr x) { return x; };
  std::function<Expr(Expr, Expr)> combine = [](Expr a, Expr x) { return a + x; };
  std::function<Expr(Expr)> finish = [](Expr a) { return a; };
};

// The accumulation of `kind` in type `at` over `n` elements (log_sum_exp has none: it needs a
// second pass).
Result<Accumulation> accumulation(const Op &op, const std::string &kind, ScalarType at,
                                  bool float_input, int64_t n) {
  Accumulation a;
  a.init = make_const(at, kind == "prod" ? 1 : 0);
  if (kind == "sum") {
  } else if (kind == "mean") {
    a.finish = [at, n](Expr acc) { return acc / make_const(at, static_cast<double>(n)); };
  } else if (kind == "log_sum") {
    a.finish = [](Expr acc) { return call(Intrinsic::log, {acc}); };
  } else if (kind == "prod") {
    a.combine = [](Expr acc, Expr x) { return acc * x; };
  } else if (kind == "max" || kind == "min") {
    // As the reference: a NaN anywhere makes the result NaN (a NaN accumulator never compares
    // greater or less, so it stays).
    const bool is_max = kind == "max";
    a.init = is_max ? lowest_value(at) : highest_value(at);
    a.combine = [is_max, float_input](Expr acc, Expr x) {
      Expr better = is_max ? x > acc : x < acc;
      if (float_input) better = better || call(Intrinsic::isnan, {x});
      return select(better, x, acc);
    };
  } else if (kind == "l1") {
    a.term = [at](Expr x) {
      if (is_float(at)) return call(Intrinsic::abs, {x});
      return is_unsigned_int(at) ? x : select(x < make_const(at, 0), -x, x);
    };
  } else if (kind == "l2" || kind == "sum_square") {
    a.term = [](Expr x) { return x * x; };
    if (kind == "l2") a.finish = [](Expr acc) { return call(Intrinsic::sqrt, {acc}); };
  } else {
    return unsupported(op, "kiln.reduce kind '" + kind + "'");
  }
  return a;
}

// Reductions of at least kSplitMin elements per output run as several kernels: each invocation
// of a partial stage accumulates kChunk elements or fewer (interleaved, so neighbouring
// invocations read neighbouring addresses) into a scratch buffer of partials; stages repeat
// until fewer than kSplitMin partials per output remain, which a last kernel combines. More
// parallelism on GPUs, less rounding error than one long sum, and per-invocation loops stay
// short (llvmpipe stops loops after 65,535 iterations in total).
constexpr int64_t kSplitMin = kRowSplitMin;
constexpr int64_t kChunk = 256;

// What the first partial stage reads: base(o) is computed once per output (let-bound) and
// value(base, o, r) is element r of output o, after the accumulation's term.
struct StageInput {
  std::function<Expr(Expr)> base;
  std::function<Expr(Expr, Expr, Expr)> value;
};
// Binds the first stage's buffers to its kernel.
using BindInput = std::function<Result<StageInput>(GridKernel &)>;

int scratch_of(LowerCtx &c, int64_t count, ScalarType t) {
  return c.new_scratch(static_cast<uint64_t>(count) * static_cast<uint64_t>(storage_bytes(t)));
}

// Partial stages over `n` >= kSplitMin elements per output until fewer than kSplitMin partials
// per output remain. Returns the scratch buffer holding [outer, n] partials (n updated).
Result<int> partial_stages(LowerCtx &c, const Op &op, const std::string &name, int64_t outer,
                           int64_t &n, const Accumulation &a, ScalarType at,
                           const BindInput &first) {
  int src = -1; // the scratch buffer of partials; -1: the first stage's input
  while (src < 0 || n >= kSplitMin) {
    const int64_t parts = (n + kChunk - 1) / kChunk;
    const int64_t chunk = (n + parts - 1) / parts; // parts * chunk >= n, less than parts over
    const int dst = scratch_of(c, outer * parts, at);
    GridKernel g(c, op, name + "_partial");
    StageInput in;
    if (src < 0) {
      KILN_ASSIGN(in, first(g));
    } else {
      BufferVar prev = g.scratch(src, at, false);
      const int64_t m = n;
      in.base = [m](Expr o) { return o * m; };
      in.value = [prev](Expr base, Expr, Expr r) { return load(prev, base + r); };
    }
    BufferVar out = g.scratch(dst, at, true);
    KILN_TRY(g.finish(outer * parts, [&](Expr i) -> Result<Stmt> {
      Expr o = var(g.fresh("o"), ScalarType::i32), p = var(g.fresh("p"), ScalarType::i32);
      Expr base = var(g.fresh("base"), ScalarType::i32), acc = var(g.fresh("acc"), at);
      Expr j = var(g.fresh("j"), ScalarType::i32), r = var(g.fresh("r"), ScalarType::i32);
      Stmt step = assign(acc, a.combine(acc, in.value(base, o, r)));
      if (parts * chunk != n) step = if_then(r < n, step);
      Stmt loop = for_loop(j, i32(0), i32(chunk), let(r, p + j * parts, step));
      return let(o, i / parts,
                 let(p, i % parts,
                     let(base, in.base(o),
                         block({declare_var(acc, a.init), loop, store(out, i, acc)}))));
    }));
    src = dst;
    n = parts;
  }
  return src;
}

// One invocation per output combining its `n` partials in scratch buffer `src`; write(g, o, v)
// binds what it needs and stores v, the finished value of output o.
using WriteFn = std::function<Result<Stmt>(GridKernel &, Expr, Expr)>;
Status combine_partials(LowerCtx &c, const Op &op, const std::string &name, int64_t outer,
                        int64_t n, int src, const Accumulation &a, ScalarType at,
                        const WriteFn &write) {
  GridKernel g(c, op, name);
  BufferVar in = g.scratch(src, at, false);
  return g.finish(outer, [&](Expr o) -> Result<Stmt> {
    Expr acc = var(g.fresh("acc"), at), j = var(g.fresh("j"), ScalarType::i32);
    Stmt loop = for_loop(j, i32(0), i32(n), assign(acc, a.combine(acc, load(in, o * n + j))));
    KILN_ASSIGN(Stmt w, write(g, o, a.finish(acc)));
    return block({declare_var(acc, a.init), loop, w});
  });
}

// A term of element value v of output o.
using TermFn = std::function<Expr(Expr, Expr)>;

// The first stage reading operand `x` (split as `s`, elements cast to `at`) through the term
// that term_of(g) binds and returns.
BindInput operand_input(const AxisSplit &s, const Value *x, ScalarType at,
                        std::function<Result<TermFn>(GridKernel &)> term_of) {
  return [&s, x, at, term_of = std::move(term_of)](GridKernel &g) -> Result<StageInput> {
    KILN_ASSIGN(BufferVar X, g.in(x));
    KILN_ASSIGN(TermFn term, term_of(g));
    return StageInput{[&s](Expr o) { return s.kept_offset(o); },
                      [X, &s, at, term](Expr base, Expr o, Expr r) {
                        return term(cast(at, load(X, base + s.red_offset(r))), o);
                      }};
  };
}

// The reduction of each output's elements of `x` (split as `s`) to a new scratch buffer of
// [outer] finished values; term_of(g) binds what the term needs and returns it.
Result<int> split_to_scratch(LowerCtx &c, const Op &op, const std::string &name,
                             const AxisSplit &s, const Value *x, const Accumulation &a,
                             ScalarType at,
                             const std::function<Result<TermFn>(GridKernel &)> &term_of) {
  int64_t n = s.inner();
  KILN_ASSIGN(const int src, partial_stages(c, op, name, s.outer(), n, a, at,
                                            operand_input(s, x, at, term_of)));
  const int dst = scratch_of(c, s.outer(), at);
  KILN_TRY(combine_partials(c, op, name, s.outer(), n, src, a, at,
                            [&](GridKernel &g, Expr o, Expr v) -> Result<Stmt> {
                              return store(g.scratch(dst, at, true), o, v);
                            }));
  return dst;
}

// Max of each output's elements ignoring NaN (as the one-kernel softmax and log-sum-exp), to a
// scratch buffer of [outer] values.
Result<int> split_max(LowerCtx &c, const Op &op, const std::string &name, const AxisSplit &s,
                      const Value *x, ScalarType at) {
  KILN_ASSIGN(Accumulation mx, accumulation(op, "max", at, false, s.inner()));
  return split_to_scratch(c, op, name + "_max", s, x, mx, at, [](GridKernel &) -> Result<TermFn> {
    return TermFn([](Expr v, Expr) { return v; });
  });
}

// Sum over each output's elements of exp(x - m[o]), m the scratch buffer `m`.
Result<int> split_sum_exp(LowerCtx &c, const Op &op, const std::string &name, const AxisSplit &s,
                          const Value *x, ScalarType at, int m) {
  KILN_ASSIGN(Accumulation sum, accumulation(op, "sum", at, false, s.inner()));
  return split_to_scratch(c, op, name + "_sum_exp", s, x, sum, at,
                          [&](GridKernel &g) -> Result<TermFn> {
                            BufferVar M = g.scratch(m, at, false);
                            return TermFn([M](Expr v, Expr o) {
                              return call(Intrinsic::exp, {v - load(M, o)});
                            });
                          });
}

Expr finite_or_zero(Expr m) {
  return select(call(Intrinsic::isinf, {m}), make_const(m.type(), 0), m);
}

Status lower_split_reduce(LowerCtx &c, const Op &op, const AxisSplit &s, const Accumulation &a,
                          ScalarType at) {
  const Value *xv = op.operands[0];
  const std::string name = "reduce_" + op.attr_str("kind", "");
  int64_t n = s.inner();
  auto term = [&a](GridKernel &) -> Result<TermFn> {
    return TermFn([&a](Expr v, Expr) { return a.term(v); });
  };
  KILN_ASSIGN(const int src, partial_stages(c, op, name, s.outer(), n, a, at,
                                            operand_input(s, xv, at, term)));
  return combine_partials(c, op, name, s.outer(), n, src, a, at,
                          [&](GridKernel &g, Expr o, Expr v) -> Result<Stmt> {
                            KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
                            return store(Y, o, cast(Y.elem, v));
                          });
}

// log(sum(exp(x - m))) + m with m the row's max (0 when infinite), as max, sum-of-exp and a
// combining kernel that writes the result.
Status lower_split_log_sum_exp(LowerCtx &c, const Op &op, const AxisSplit &s, ScalarType at) {
  const Value *xv = op.operands[0];
  KILN_ASSIGN(const int m, split_max(c, op, "reduce_log_sum_exp", s, xv, at));
  KILN_ASSIGN(Accumulation sum, accumulation(op, "sum", at, false, s.inner()));
  int64_t n = s.inner();
  auto term = [&](GridKernel &g) -> Result<TermFn> {
    BufferVar M = g.scratch(m, at, false);
    return TermFn([M](Expr v, Expr o) {
      return call(Intrinsic::exp, {v - finite_or_zero(load(M, o))});
    });
  };
  KILN_ASSIGN(const int src, partial_stages(c, op, "reduce_log_sum_exp", s.outer(), n, sum, at,
                                            operand_input(s, xv, at, term)));
  return combine_partials(c, op, "reduce_log_sum_exp", s.outer(), n, src, sum, at,
                          [&](GridKernel &g, Expr o, Expr v) -> Result<Stmt> {
                            BufferVar M = g.scratch(m, at, false);
                            KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
                            Expr r = call(Intrinsic::log, {v}) + finite_or_zero(load(M, o));
                            return store(Y, o, cast(Y.elem, r));
                          });
}

// The rows of `x` (split as `s`, read as `at`) as a row-reduction definition whose stages and
// writes the caller adds; `X` is x's bound buffer.
RowReductionDef rows_of(const AxisSplit &s, const BufferVar &X, ScalarType at) {
  RowReductionDef d;
  d.rows = s.outer();
  d.len = s.inner();
  d.contiguous = row_shape(s).contiguous;
  d.acc = at;
  d.base = [&s](const Expr &row) { return s.kept_offset(row); };
  d.read = [X, at](const Expr &base, const Expr &r) { return cast(at, load(X, base + r)); };
  return d;
}

// The max of the row ignoring NaN elements (as the one-invocation softmax and log-sum-exp).
RowStage max_stage(ScalarType at) {
  return {ReduceOp::max, false, lowest_value(at),
          [](const Expr &x, const std::vector<Expr> &) { return x; }, nullptr};
}

// kiln.reduce over contiguous rows with a row-reduction strategy (`a` unused for log_sum_exp).
Status reduce_rows(LowerCtx &c, const Op &op, const AxisSplit &s, const Accumulation &a,
                   ScalarType at, const RowReductionSchedule &rs) {
  const std::string kind = op.attr_str("kind", "");
  GridKernel g(c, op, "reduce_" + kind);
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  RowReductionDef d = rows_of(s, X, at);
  if (kind == "log_sum_exp") {
    d.stages.push_back(max_stage(at));
    d.stages.push_back({ReduceOp::add, false, make_const(at, 0),
                        [](const Expr &x, const std::vector<Expr> &st) {
                          return call(Intrinsic::exp, {x - finite_or_zero(st[0])});
                        },
                        nullptr});
    d.write_row = [Y](const Expr &row, const std::vector<Expr> &st) -> Result<Stmt> {
      return store(Y, row, cast(Y.elem, call(Intrinsic::log, {st[1]}) + finite_or_zero(st[0])));
    };
  } else {
    RowStage st;
    st.op = kind == "prod" ? ReduceOp::mul
            : kind == "max" ? ReduceOp::max
            : kind == "min" ? ReduceOp::min
                            : ReduceOp::add;
    st.nan_sticky = kind == "max" || kind == "min";
    st.identity = a.init;
    st.term = [&a](const Expr &x, const std::vector<Expr> &) { return a.term(x); };
    st.finish = [&a](const Expr &acc, const std::vector<Expr> &) { return a.finish(acc); };
    d.stages.push_back(std::move(st));
    d.write_row = [Y](const Expr &row, const std::vector<Expr> &st) -> Result<Stmt> {
      return store(Y, row, cast(Y.elem, st[0]));
    };
  }
  return emit_row_reduction(g, d, rs);
}

// Softmax / log-softmax over contiguous rows with a row-reduction strategy.
Status softmax_rows(LowerCtx &c, const Op &op, const AxisSplit &s, ScalarType at, bool log,
                    const RowReductionSchedule &rs) {
  GridKernel g(c, op, log ? "log_softmax" : "softmax");
  KILN_ASSIGN(BufferVar X, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  RowReductionDef d = rows_of(s, X, at);
  d.stages.push_back(max_stage(at));
  d.stages.push_back({ReduceOp::add, false, make_const(at, 0),
                      [](const Expr &x, const std::vector<Expr> &st) {
                        return call(Intrinsic::exp, {x - st[0]});
                      },
                      nullptr});
  d.write_element = [Y, log](const Expr &base, const Expr &r, const Expr &x,
                             const std::vector<Expr> &st) -> Result<Stmt> {
    Expr y = log ? (x - st[0]) - call(Intrinsic::log, {st[1]})
                 : call(Intrinsic::exp, {x - st[0]}) / st[1];
    return store(Y, base + r, cast(Y.elem, y));
  };
  return emit_row_reduction(g, d, rs);
}

Status lower_reduce(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const std::string kind = op.attr_str("kind", "");
  std::vector<int64_t> axes;
  if (op.operands.size() > 1 && op.operands[1]) {
    const Tensor *t = const_operand(op, 1);
    if (!t) return unsupported(op, "kiln.reduce with non-constant axes");
    axes = t->to_i64s();
  }
  if (axes.empty()) {
    if (op.attr_int("noop_with_empty_axes", 0)) {
      c.alias(op.results[0], xv);
      return Status::ok();
    }
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  for (int64_t &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  const DType dt = xv->type.dtype;
  const bool int_ok = kind == "sum" || kind == "max" || kind == "min" || kind == "prod" ||
                      kind == "sum_square" || kind == "l1";
  if (is_bool(dt) || (!is_float(dt) && !int_ok))
    return unsupported(op, fmt::format("kiln.reduce '{}' on {}", kind, dtype_name(dt)));
  const AxisSplit s = split_axes(xd, axes);
  KILN_ASSIGN(const ScalarType xt, scalar_type(op, dt));
  const ScalarType at = xt == ScalarType::f16 ? ScalarType::f32 : xt;
  Accumulation a;
  if (kind == "log_sum_exp") {
    if (s.inner() >= kSplitMin) return lower_split_log_sum_exp(c, op, s, at);
  } else {
    KILN_ASSIGN(a, accumulation(op, kind, at, is_float(dt), s.inner()));
    if (s.inner() >= kSplitMin) return lower_split_reduce(c, op, s, a, at);
  }
  const RowReductionSchedule rs = schedule_row_reduction(c, row_shape(s), at);
  if (rs.strategy != RowStrategy::naive) return reduce_rows(c, op, s, a, at, rs);
  GridKernel g(c, op, "reduce_" + kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr acc = var(g.fresh("acc"), at), mx = var(g.fresh("mx"), at);
    // A loop over the reduced elements (fresh variable per loop): body(x) with x the element.
    auto over = [&](const std::function<Stmt(Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      return for_loop(r, i32(0), i32(s.inner()), f(cast(at, load(X, base + s.red_offset(r)))));
    };
    if (kind == "log_sum_exp") {
      Expr safe_m = finite_or_zero(mx);
      return let(base, s.kept_offset(o),
                 block({declare_var(mx, lowest_value(at)),
                        over([&](Expr x) { return assign(mx, select(x > mx, x, mx)); }),
                        declare_var(acc, make_const(at, 0)),
                        over([&](Expr x) {
                          return assign(acc, acc + call(Intrinsic::exp, {x - safe_m}));
                        }),
                        store(Y, o, cast(Y.elem, call(Intrinsic::log, {acc}) + safe_m))}));
    }
    return let(base, s.kept_offset(o),
               block({declare_var(acc, a.init),
                      over([&](Expr x) { return assign(acc, a.combine(acc, a.term(x))); }),
                      store(Y, o, cast(Y.elem, a.finish(acc)))}));
  });
}

// Rows of kSplitMin or more elements: the row max and the sum of exp(x - max) as split
// reductions, then one invocation per kChunk (interleaved) elements of a row writing them.
Status lower_split_softmax(LowerCtx &c, const Op &op, const AxisSplit &s, ScalarType at,
                           bool log) {
  const Value *xv = op.operands[0];
  const std::string name = log ? "log_softmax" : "softmax";
  KILN_ASSIGN(const int m, split_max(c, op, name, s, xv, at));
  KILN_ASSIGN(const int sum, split_sum_exp(c, op, name, s, xv, at, m));
  const int64_t n = s.inner(), parts = (n + kChunk - 1) / kChunk;
  const int64_t chunk = (n + parts - 1) / parts;
  GridKernel g(c, op, name);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar M = g.scratch(m, at, false), S = g.scratch(sum, at, false);
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(s.outer() * parts, [&](Expr i) -> Result<Stmt> {
    Expr o = var(g.fresh("o"), ScalarType::i32), p = var(g.fresh("p"), ScalarType::i32);
    Expr base = var(g.fresh("base"), ScalarType::i32), mx = var(g.fresh("mx"), at);
    Expr total = var(g.fresh("sum"), at), j = var(g.fresh("j"), ScalarType::i32);
    Expr r = var(g.fresh("r"), ScalarType::i32), idx = var(g.fresh("idx"), ScalarType::i32);
    Expr x = cast(at, load(X, idx));
    Expr y = log ? (x - mx) - call(Intrinsic::log, {total}) : call(Intrinsic::exp, {x - mx}) / total;
    Stmt step = let(idx, base + s.red_offset(r), store(Y, idx, cast(Y.elem, y)));
    if (parts * chunk != n) step = if_then(r < n, step);
    Stmt loop = for_loop(j, i32(0), i32(chunk), let(r, p + j * parts, step));
    return let(o, i / parts,
               let(p, i % parts,
                   let(base, s.kept_offset(o),
                       let(mx, load(M, o), let(total, load(S, o), loop)))));
  });
}

Status lower_softmax(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const std::string kind = op.attr_str("kind", "");
  if (kind != "softmax" && kind != "log_softmax") return unsupported(op, "kiln.softmax kind " + kind);
  if (!is_float(xv->type.dtype)) return unsupported(op, "kiln.softmax on integers");
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), rank));
  std::vector<int64_t> axes{axis};
  if (op.attr_int("flatten_trailing", 0))
    for (int64_t d = axis + 1; d < rank; ++d) axes.push_back(d);
  const AxisSplit s = split_axes(xd, axes);
  KILN_ASSIGN(const ScalarType xt, scalar_type(op, xv->type.dtype));
  const ScalarType at = xt == ScalarType::f16 ? ScalarType::f32 : xt;
  if (s.inner() >= kSplitMin) return lower_split_softmax(c, op, s, at, kind == "log_softmax");
  const RowReductionSchedule rs = schedule_row_reduction(c, row_shape(s), at);
  if (rs.strategy != RowStrategy::naive)
    return softmax_rows(c, op, s, at, kind == "log_softmax", rs);
  GridKernel g(c, op, kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(s.outer(), [&](Expr o) -> Result<Stmt> {
    Expr base = var(g.fresh("base"), ScalarType::i32);
    Expr mx = var(g.fresh("mx"), at), sum = var(g.fresh("sum"), at);
    // loop(f): for each element of the row, f(index, value).
    auto loop = [&](const std::function<Stmt(Expr, Expr)> &f) {
      Expr r = var(g.fresh("r"), ScalarType::i32);
      Expr idx = base + s.red_offset(r);
      return for_loop(r, i32(0), i32(s.inner()), f(idx, cast(at, load(X, idx))));
    };
    return let(base, s.kept_offset(o),
               block({declare_var(mx, lowest_value(at)),
                      loop([&](Expr, Expr x) { return assign(mx, select(x > mx, x, mx)); }),
                      declare_var(sum, make_const(at, 0)),
                      loop([&](Expr, Expr x) {
                        return assign(sum, sum + call(Intrinsic::exp, {x - mx}));
                      }),
                      loop([&](Expr idx, Expr x) {
                        Expr y = kind == "softmax" ? call(Intrinsic::exp, {x - mx}) / sum
                                                   : (x - mx) - call(Intrinsic::log, {sum});
                        return store(Y, idx, cast(Y.elem, y));
                      })}));
  });
}

} // namespace

void add_reduce_lowerings(LoweringTable &t) {
  t["kiln.reduce"] = lower_reduce;
  t["kiln.softmax"] = lower_softmax;
}

} // namespace kiln::compiler
