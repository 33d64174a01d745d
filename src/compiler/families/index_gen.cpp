// Index family, generators and masks: kiln.trilu, kiln.eye_like, kiln.one_hot, kiln.range,
// kiln.constant_of_shape, kiln.bitcast and kiln.shrink. One invocation per output element.
#include "compiler/families/index.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::compiler::index {

using namespace kir;

namespace {

// A diagonal offset (any integer type) clamped into [-bound, bound], as an i32: offsets
// beyond the matrix select all or nothing either way.
Expr clamp_offset(const Expr &k, int64_t bound) {
  Expr v = bits(k.type()) < 32 ? cast(ScalarType::i32, k) : k;
  const ScalarType t = v.type();
  if (is_unsigned_int(t)) return cast(ScalarType::i32, min(v, make_const(t, static_cast<double>(bound))));
  v = min(max(v, make_const(t, -static_cast<double>(bound))), make_const(t, static_cast<double>(bound)));
  return cast(ScalarType::i32, v);
}

// The value `v` of a one-element constant tensor as a kernel constant of type t.
Expr const_of(ScalarType t, const Tensor &v) {
  if (t == ScalarType::boolean) return imm_bool(v.get_f64(0) != 0);
  if (is_float(t)) return make_const(t, v.get_f64(0));
  return imm(t, v.get_i64(0));
}

// ---- trilu / eye_like --------------------------------------------------------------------------

Status lower_trilu(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  if (xd.size() < 2) return Status::error(op.describe() + ": input must have rank >= 2");
  const int64_t rows = xd[xd.size() - 2], cols = xd[xd.size() - 1], bound = rows + cols;
  const bool upper = op.attr_int("upper", 1) != 0;
  const Value *kv = op.operands.size() > 1 ? op.operands[1] : nullptr;
  GridKernel g(c, op, upper ? "triu" : "tril");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  Expr k = i32(0);
  if (kv) {
    if (shape_numel(kv->type.dims) != 1)
      return Status::error(op.describe() + ": k must be a scalar");
    if (!is_integer(kv->type.dtype)) return unsupported(op, "kiln.trilu with a non-integer k");
    if (const Tensor *t = const_operand(op, 1)) {
      k = i32(std::clamp<int64_t>(t->get_i64(0), -bound, bound));
    } else {
      KILN_ASSIGN(BufferVar K, g.in(kv));
      k = clamp_offset(load(K, i32(0)), bound);
    }
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    Expr d = i % cols - (i / cols) % rows; // column - row
    Expr keep = upper ? d >= k : d <= k;
    return store(Y, i, select(keep, load(X, i), zero_of(Y.elem)));
  });
}

Status lower_eye_like(LowerCtx &c, const Op &op) {
  const Shape &yd = op.results[0]->type.dims;
  if (yd.size() != 2) return Status::error(op.describe() + ": input must be 2-D");
  const int64_t k = std::clamp<int64_t>(op.attr_int("k", 0), -yd[0] - 1, yd[1] + 1);
  GridKernel g(c, op, "eye_like");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    Expr on = i % yd[1] - i / yd[1] == k;
    return store(Y, i, select(on, make_const(Y.elem, 1), zero_of(Y.elem)));
  });
}

// ---- one_hot -----------------------------------------------------------------------------------

// Whether index value `v` (negative counts from the end; floats truncate) is `coord`.
Expr one_hot_hit(const Expr &v, int64_t depth, const Expr &coord) {
  if (!is_float(v.type())) return index_is(v, depth, coord);
  const ScalarType t = v.type() == ScalarType::f16 ? ScalarType::f32 : v.type();
  Expr k = call(Intrinsic::trunc, {cast(t, v)});
  k = select(k < make_const(t, 0), k + make_const(t, static_cast<double>(depth)), k);
  return k == cast(t, coord);
}

Status lower_one_hot(LowerCtx &c, const Op &op) {
  const Value *iv = op.operands[0], *vv = op.operands[2];
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -1), static_cast<int64_t>(yd.size())));
  if (shape_numel(vv->type.dims) != 2)
    return Status::error(op.describe() + ": values must have two elements");
  if (is_bool(iv->type.dtype)) return unsupported(op, "kiln.one_hot with bool indices");
  const int64_t depth = yd[axis];
  GridKernel g(c, op, "one_hot");
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar V, g.in(vv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      std::vector<Expr> ic = cs;
      ic.erase(ic.begin() + axis);
      Expr hit = one_hot_hit(load(I, flatten(ic, iv->type.dims)), depth, cs[axis]);
      return store(Y, i, load(V, select(hit, i32(1), i32(0))));
    });
  });
}

// ---- range / constant_of_shape -----------------------------------------------------------------

Status lower_range(LowerCtx &c, const Op &op) {
  const Value *sv = op.operands[0], *dv = op.operands[2];
  const Shape &yd = op.results[0]->type.dims;
  if (shape_numel(sv->type.dims) != 1 || shape_numel(dv->type.dims) != 1)
    return Status::error(op.describe() + ": start and delta must be scalars");
  GridKernel g(c, op, "range");
  KILN_ASSIGN(BufferVar S, g.in(sv));
  KILN_ASSIGN(BufferVar D, g.in(dv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  if (Y.elem == ScalarType::boolean) return unsupported(op, "kiln.range on bool");
  const ScalarType at = Y.elem == ScalarType::f16 ? ScalarType::f32 : Y.elem;
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    Expr v = cast(at, load(S, i32(0))) + cast(at, i) * cast(at, load(D, i32(0)));
    return store(Y, i, cast(Y.elem, v));
  });
}

Status lower_constant_of_shape(LowerCtx &c, const Op &op) {
  const Tensor *v = op.attr_tensor("value");
  if (!v || v->numel() != 1)
    return Status::error(op.describe() + ": needs a one-element tensor attribute 'value'");
  GridKernel g(c, op, "constant_of_shape");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const Expr value = const_of(Y.elem, *v);
  return g.finish(shape_numel(op.results[0]->type.dims),
                  [&](Expr i) -> Result<Stmt> { return store(Y, i, value); });
}

// ---- bitcast / shrink --------------------------------------------------------------------------

// Same element size: the result shares the operand's bytes. Only a cast to bool computes,
// keeping kiln's invariant that bool bytes are 0 or 1.
Status lower_bitcast(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *yv = op.results[0];
  if (dtype_size(xv->type.dtype) != dtype_size(yv->type.dtype))
    return Status::error(op.describe() + ": element sizes differ");
  if (!is_bool(yv->type.dtype) || is_bool(xv->type.dtype)) {
    c.alias(yv, xv);
    return Status::ok();
  }
  return lower_map(c, op, {xv}, [](const std::vector<Expr> &x) -> Result<Expr> {
    return x[0] != make_const(x[0].type(), 0);
  });
}

// Floats compute in their own type (f16 in f32); integers go through f64 like the reference
// and truncate.
Status lower_shrink(LowerCtx &c, const Op &op) {
  const DType dt = op.operands[0]->type.dtype;
  if (is_bool(dt)) return unsupported(op, "kiln.shrink on bool");
  const double bias = op.attr_float("bias", 0.0), lambd = op.attr_float("lambd", 0.5);
  return lower_map(c, op, {op.operands[0]}, [&](const std::vector<Expr> &x) -> Result<Expr> {
    const ScalarType et = x[0].type();
    const ScalarType at = et == ScalarType::f16 ? ScalarType::f32
                          : is_float(et)        ? et
                                                : ScalarType::f64;
    Expr v = cast(at, x[0]);
    auto k = [&](double d) { return make_const(at, d); };
    Expr zero = is_float(et) ? select(call(Intrinsic::isnan, {v}), v, k(0)) : k(0);
    Expr r = select(v < k(-lambd), v + k(bias), select(v > k(lambd), v - k(bias), zero));
    return cast(et, r);
  });
}

} // namespace

void add_gen_lowerings(LoweringTable &t) {
  t["kiln.trilu"] = lower_trilu;
  t["kiln.eye_like"] = lower_eye_like;
  t["kiln.one_hot"] = lower_one_hot;
  t["kiln.range"] = lower_range;
  t["kiln.constant_of_shape"] = lower_constant_of_shape;
  t["kiln.bitcast"] = lower_bitcast;
  t["kiln.shrink"] = lower_shrink;
}

} // namespace kiln::compiler::index
