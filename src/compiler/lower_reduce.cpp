// kiln.reduce (one invocation per output element, a loop over the reduced elements) and
// kiln.softmax / log_softmax (one invocation per row: max, sum of exp, write).
#include "compiler/lower.h"

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
constexpr int64_t kSplitMin = 8192;
constexpr int64_t kChunk = 256;

Status lower_split_reduce(LowerCtx &c, const Op &op, const AxisSplit &s, const Accumulation &a,
                          ScalarType at) {
  const Value *xv = op.operands[0];
  const std::string kind = op.attr_str("kind", "");
  const int64_t outer = s.outer();
  int64_t n = s.inner(); // elements (then partials) per output
  int src = -1;          // the scratch buffer of partials ([outer, n]); -1: the operand
  while (n >= kSplitMin) {
    const int64_t parts = (n + kChunk - 1) / kChunk;
    const int64_t chunk = (n + parts - 1) / parts; // parts * chunk >= n, less than parts over
    const int dst = c.new_scratch(static_cast<uint64_t>(outer * parts) *
                                  static_cast<uint64_t>(storage_bytes(at)));
    GridKernel g(c, op, "reduce_" + kind + "_partial");
    BufferVar in;
    if (src < 0) {
      KILN_ASSIGN(in, g.in(xv));
    } else {
      in = g.scratch(src, at, false);
    }
    BufferVar out = g.scratch(dst, at, true);
    KILN_TRY(g.finish(outer * parts, [&](Expr i) -> Result<Stmt> {
      Expr o = var(g.fresh("o"), ScalarType::i32), p = var(g.fresh("p"), ScalarType::i32);
      Expr base = var(g.fresh("base"), ScalarType::i32), acc = var(g.fresh("acc"), at);
      Expr j = var(g.fresh("j"), ScalarType::i32), r = var(g.fresh("r"), ScalarType::i32);
      Expr x = src < 0 ? a.term(cast(at, load(in, base + s.red_offset(r)))) : load(in, base + r);
      Stmt step = assign(acc, a.combine(acc, x));
      if (parts * chunk != n) step = if_then(r < n, step);
      Stmt loop = for_loop(j, i32(0), i32(chunk), let(r, p + j * parts, step));
      return let(o, i / parts,
                 let(p, i % parts,
                     let(base, src < 0 ? s.kept_offset(o) : o * n,
                         block({declare_var(acc, a.init), loop, store(out, i, acc)}))));
    }));
    src = dst;
    n = parts;
  }
  GridKernel g(c, op, "reduce_" + kind);
  BufferVar in = g.scratch(src, at, false);
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(outer, [&](Expr o) -> Result<Stmt> {
    Expr acc = var(g.fresh("acc"), at), j = var(g.fresh("j"), ScalarType::i32);
    Stmt loop = for_loop(j, i32(0), i32(n), assign(acc, a.combine(acc, load(in, o * n + j))));
    return block({declare_var(acc, a.init), loop, store(Y, o, cast(Y.elem, a.finish(acc)))});
  });
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
  if (kind != "log_sum_exp") {
    KILN_ASSIGN(a, accumulation(op, kind, at, is_float(dt), s.inner()));
    if (s.inner() >= kSplitMin) return lower_split_reduce(c, op, s, a, at);
  }
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
      Expr safe_m = select(call(Intrinsic::isinf, {mx}), make_const(at, 0), mx);
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
  GridKernel g(c, op, kind);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = X.elem == ScalarType::f16 ? ScalarType::f32 : X.elem;
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
