// Index family, data movement and extensions of other families' ops: kiln.depth_to_space,
// kiln.space_to_depth, kiln.reverse_sequence, kiln.max_unpool, the indices result of
// kiln.max_pool and integer kiln.pow. One invocation per output element.
//
// kiln.max_pool and kiln.pow are registered by pool.cpp / elementwise.cpp (which
// run before this family); the wrappers here delegate to those lowerings and add what they
// leave out.
#include "compiler/families/index.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

namespace kiln::compiler::index {

using namespace kir;

namespace {

// ---- depth_to_space / space_to_depth -----------------------------------------------------------

// Works in "space" coordinates: S = [N, C, H*b, W*b], D = [N, C*b*b, H, W]; for every element
// of the result, the element of the operand it copies.
Status lower_d2s(LowerCtx &c, const Op &op) {
  const bool to_space = op.name() == "kiln.depth_to_space";
  const int64_t b = op.attr_int("blocksize", 0);
  const std::string mode = op.attr_str("mode", "DCR");
  if (b < 1) return Status::error(op.describe() + ": blocksize must be positive");
  if (mode != "DCR" && mode != "CRD") return unsupported(op, "mode " + mode);
  const bool crd = mode == "CRD";
  const Value *xv = op.operands[0], *yv = op.results[0];
  const Shape &S = to_space ? yv->type.dims : xv->type.dims;
  const Shape &D = to_space ? xv->type.dims : yv->type.dims;
  if (S.size() != 4 || D.size() != 4) return Status::error(op.describe() + ": input must be 4-D");
  const int64_t C = S[1];
  GridKernel g(c, op, to_space ? "depth_to_space" : "space_to_depth");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(yv));
  return g.finish(shape_numel(yv->type.dims), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yv->type.dims), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr src;
      if (to_space) { // cs are S coordinates
        Expr bi = cs[2] % b, bj = cs[3] % b;
        Expr dc = crd ? cs[1] * (b * b) + bi * b + bj : (bi * b + bj) * C + cs[1];
        src = flatten({cs[0], dc, cs[2] / b, cs[3] / b}, D);
      } else { // cs are D coordinates
        Expr ch = crd ? cs[1] / (b * b) : cs[1] % C;
        Expr blk = crd ? cs[1] % (b * b) : cs[1] / C;
        src = flatten({cs[0], ch, cs[2] * b + blk / b, cs[3] * b + blk % b}, S);
      }
      return store(Y, i, load(X, src));
    });
  });
}

// ---- reverse_sequence --------------------------------------------------------------------------

Status lower_reverse_sequence(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *lv = op.operands[1];
  const Shape &xd = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  if (rank < 2) return Status::error(op.describe() + ": input must have rank >= 2");
  KILN_ASSIGN(int64_t ba, norm_axis(op, op.attr_int("batch_axis", 1), rank));
  KILN_ASSIGN(int64_t ta, norm_axis(op, op.attr_int("time_axis", 0), rank));
  if (ba == ta) return Status::error(op.describe() + ": batch_axis and time_axis must differ");
  if (lv->type.dims.size() != 1 || lv->type.dims[0] != xd[ba])
    return Status::error(op.describe() + ": sequence_lens must have one entry per batch");
  if (!is_integer(lv->type.dtype)) return unsupported(op, "non-integer sequence_lens");
  const int64_t tst = shape_strides(xd)[ta];
  GridKernel g(c, op, "reverse_sequence");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar L, g.in(lv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(xd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, xd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      // A length outside [0, T] is an error in the reference; clamped here.
      Expr len = var(g.fresh("len"), ScalarType::i32);
      Expr t = cs[ta];
      Expr src = select(t < len, i + (len - 1 - t * 2) * tst, i);
      return let(len, clamp_index(load(L, cs[ba]), xd[ta] + 1), store(Y, i, load(X, src)));
    });
  });
}

// ---- max_unpool --------------------------------------------------------------------------------

// The default unpooled shape: (in - 1) * stride - pads + kernel per spatial dim.
Result<Shape> unpool_default_shape(const Op &op, const Shape &xd) {
  const size_t r = xd.size() - 2;
  const std::vector<int64_t> k = op.attr_ints("kernel_shape");
  if (k.size() != r) return Status::error(op.describe() + ": kernel_shape has the wrong length");
  KILN_ASSIGN(auto st, nn::attr_list(op, "strides", r, 1, 1));
  KILN_ASSIGN(auto pads, nn::attr_list(op, "pads", 2 * r, 0, 0));
  Shape out{xd[0], xd[1]};
  for (size_t i = 0; i < r; ++i)
    out.push_back((xd[i + 2] - 1) * st[i] - pads[i] - pads[i + r] + k[i]);
  return out;
}

// Each output element scans all indices for the last one naming it (flat indices into the
// default shape; an explicit output_shape keeps the coordinates). Indices out of range are an
// error in the reference; here they write nothing.
Status lower_max_unpool(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  if (xd.size() < 3 || iv->type.dims != xd || yd.size() != xd.size())
    return Status::error(op.describe() + ": indices must have the input's shape, rank >= 3");
  if (!is_integer(iv->type.dtype)) return unsupported(op, "non-integer indices");
  KILN_ASSIGN(Shape dflt, unpool_default_shape(op, xd));
  const int64_t n = shape_numel(xd);
  GridKernel g(c, op, "max_unpool");
  if (n == 0) { // nothing to place: all zeros (an empty tensor is never bound)
    KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
    return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
      return store(Y, i, zero_of(Y.elem));
    });
  }
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr acc = var(g.fresh("acc"), Y.elem), s = var(g.fresh("s"), ScalarType::i32);
      Expr j = var(g.fresh("j"), I.elem);
      Expr inside;
      for (size_t d = 0; d < yd.size(); ++d)
        if (yd[d] > dflt[d]) {
          Expr in_d = cs[d] < dflt[d];
          inside = inside.defined() ? logical_and(inside, in_d) : in_d;
        }
      Stmt scan = let(j, cast(I.elem, flatten(cs, dflt)),
                      for_loop(s, i32(0), i32(n),
                               if_then(load(I, s) == j, assign(acc, load(X, s)))));
      if (inside.defined()) scan = if_then(inside, scan);
      return block({declare_var(acc, zero_of(Y.elem)), scan, store(Y, i, acc)});
    });
  });
}

// ---- max_pool indices --------------------------------------------------------------------------

// The flat index (row-major over the whole input) of the first maximum of each window.
Status lower_pool_indices(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.results[1];
  const Shape &xd = xv->type.dims, &yd = iv->type.dims;
  if (op.attr_int("storage_order", 0) != 0) return unsupported(op, "storage_order 1");
  KILN_ASSIGN(nn::Window w, nn::make_window(op, op.attr_ints("kernel_shape"),
                                            Shape(xd.begin() + 2, xd.end()), true));
  const int64_t in_size = w.in_size();
  GridKernel g(c, op, "max_pool_indices");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(iv));
  const ScalarType at = X.elem == ScalarType::f16 ? ScalarType::f32 : X.elem;
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr base = var(g.fresh("base"), ScalarType::i32);
      const std::vector<Expr> o(cs.begin() + 2, cs.end());
      Expr best = var(g.fresh("best"), at), bk = var(g.fresh("bk"), ScalarType::i32);
      KILN_ASSIGN(Stmt win, window_loops(g, w, o, [&](const std::vector<Expr> &x,
                                                     const std::vector<Expr> &,
                                                     const Expr &inside) -> Result<Stmt> {
        Expr idx = base + flatten(x, w.in);
        Expr v = cast(at, load(X, idx));
        Stmt upd = if_then(logical_or(bk < 0, v > best), block({assign(best, v), assign(bk, idx)}));
        return inside.defined() ? if_then(inside, upd) : upd;
      }));
      // A window entirely in the padding has no maximum: the reference gives the plane start.
      Stmt body = block({declare_var(best, lowest_value(at)), declare_var(bk, i32(-1)), win,
                         store(Y, i, cast(Y.elem, select(bk < 0, base, bk)))});
      return let(base, (cs[0] * xd[1] + cs[1]) * in_size, body);
    });
  });
}

// ---- integer pow -------------------------------------------------------------------------------

// Integer base, float exponent `bf` (f32 or f64): the reference computes pow in double and
// converts to the integer type (NaN gives 0, the i64 range saturates). Integral exponents
// keep the exact integer power `exact`; others go through f32 pow.
Expr float_exponent_pow(const Expr &a, const Expr &bf, const Expr &exact) {
  Expr integral = bf == call(Intrinsic::trunc, {bf});
  Expr fv = pow(cast(ScalarType::f32, a), cast(ScalarType::f32, bf));
  const double lim = 9223371487098961920.0; // the largest f32 below 2^63
  Expr sat = min(max(fv, make_const(ScalarType::f32, -lim)), make_const(ScalarType::f32, lim));
  sat = select(call(Intrinsic::isnan, {fv}), make_const(ScalarType::f32, 0), sat);
  return select(integral, exact, cast(a.type(), cast(ScalarType::i64, sat)));
}

// base^exp with wrapping, by square-and-multiply over the exponent's bits; a negative exponent
// gives the truncated 1 / base^-exp (1 for base 1, +-1 for base -1, else 0).
Status lower_int_pow(LowerCtx &c, const Op &op) {
  const Value *av = op.operands[0], *bv = op.operands[1];
  const Shape &yd = op.results[0]->type.dims;
  if (is_bool(av->type.dtype) || is_bool(bv->type.dtype)) return unsupported(op, "kiln.pow on bool");
  GridKernel g(c, op, "int_pow");
  KILN_ASSIGN(BufferVar A, g.in(av));
  KILN_ASSIGN(BufferVar B, g.in(bv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType t = Y.elem;
  const bool float_exp = is_float(B.elem);
  const ScalarType ft = B.elem == ScalarType::f64 ? ScalarType::f64 : ScalarType::f32;
  ScalarType et = float_exp ? ScalarType::i64 : B.elem;
  if (bits(et) < 32) et = is_signed_int(et) ? ScalarType::i32 : ScalarType::u32;
  const bool broadcast = av->type.dims != yd || bv->type.dims != yd;
  return g.finish(shape_numel(yd), [&](Expr i) {
    auto kernel = [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr a = var(g.fresh("a"), t), e = var(g.fresh("e"), et), bf = var(g.fresh("bf"), ft);
      Expr r = var(g.fresh("r"), t), p = var(g.fresh("p"), t), k = var(g.fresh("k"), et);
      Expr bit = var(g.fresh("bit"), ScalarType::i32);
      Expr one = make_const(et, 1), zero = make_const(et, 0);
      Stmt step = block({if_then((k & one) != zero, assign(r, r * p)), assign(p, p * p),
                         assign(k, k >> one)});
      Expr result = r;
      if (is_signed_int(et)) {
        Expr t1 = make_const(t, 1), t0 = make_const(t, 0);
        Expr neg = select(a == t1, t1, t0);
        if (is_signed_int(t))
          neg = select(a == make_const(t, -1), select((e & one) != zero, -t1, t1), neg);
        result = select(e < zero, neg, r);
      }
      if (float_exp) result = float_exponent_pow(a, bf, result);
      Expr ea = cs.empty() ? i : broadcast_index(cs, av->type.dims);
      Expr eb = cs.empty() ? i : broadcast_index(cs, bv->type.dims);
      Stmt s = block({declare_var(r, make_const(t, 1)), declare_var(p, a), declare_var(k, e),
                      for_loop(bit, i32(0), i32(bits(et)), step), store(Y, i, result)});
      if (!float_exp) return let(a, load(A, ea), let(e, cast(et, load(B, eb)), s));
      const double lim = 4611686018427387904.0; // 2^62: beyond, every power wraps or saturates
      Expr tr = call(Intrinsic::trunc, {bf});
      Expr ev = cast(et, min(max(tr, make_const(ft, -lim)), make_const(ft, lim)));
      return let(a, load(A, ea), let(bf, cast(ft, load(B, eb)), let(e, ev, s)));
    };
    if (!broadcast) return kernel({});
    return let_all(g, "c", unflatten(i, yd), kernel);
  });
}

} // namespace

void add_move_lowerings(LoweringTable &t) {
  t["kiln.depth_to_space"] = lower_d2s;
  t["kiln.space_to_depth"] = lower_d2s;
  t["kiln.reverse_sequence"] = lower_reverse_sequence;
  t["kiln.max_unpool"] = lower_max_unpool;
  LowerFn pool = t.count("kiln.max_pool") ? t["kiln.max_pool"] : LowerFn();
  t["kiln.max_pool"] = [pool](LowerCtx &c, const Op &op) -> Status {
    if (!pool) return unsupported(op, "kiln.max_pool");
    KILN_TRY(pool(c, op));
    return op.results.size() > 1 ? lower_pool_indices(c, op) : Status::ok();
  };
  LowerFn pow = t.count("kiln.pow") ? t["kiln.pow"] : LowerFn();
  t["kiln.pow"] = [pow](LowerCtx &c, const Op &op) -> Status {
    if (is_integer(op.operands[0]->type.dtype)) return lower_int_pow(c, op);
    if (!pow) return unsupported(op, "kiln.pow");
    return pow(c, op);
  };
}

} // namespace kiln::compiler::index
