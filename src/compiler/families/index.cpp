// Vulkan lowerings: indexing, scatter/gather and data-movement ops. This file holds the
// gathers and scatters; index_gen.cpp and index_move.cpp the rest of the family.
//
// Scatters run one invocation per OUTPUT element, which scans the updates that can address
// it in their order: duplicate indices then resolve exactly as in the reference (the last
// write wins, reductions apply in order) without atomics or races.
#include "compiler/families/index.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace index {

namespace {
// Integers narrower than 32 bits are widened, so that `dim` fits the working type.
Expr widen(const Expr &v) { return bits(v.type()) < 32 ? cast(ScalarType::i32, v) : v; }
} // namespace

Expr clamp_index(const Expr &v, int64_t dim) {
  Expr w = widen(v);
  const ScalarType t = w.type();
  if (is_signed_int(t)) w = select(w < 0, w + dim, w);
  w = min(max(w, make_const(t, 0)), make_const(t, static_cast<double>(dim - 1)));
  return cast(ScalarType::i32, w);
}

Expr index_is(const Expr &v, int64_t dim, const Expr &coord) {
  Expr w = widen(v);
  const ScalarType t = w.type();
  if (is_signed_int(t)) w = select(w < 0, w + dim, w);
  return w == cast(t, coord);
}

Expr zero_of(ScalarType t) { return make_const(t, 0); }

} // namespace index

namespace {

using index::clamp_index;
using index::index_is;

Status need_int_indices(const Op &op, const Value *iv) {
  const DType t = iv->type.dtype;
  if (t != DType::i32 && t != DType::i64)
    return unsupported(op, fmt::format("{} indices of type {}", op.name(), dtype_name(t)));
  return Status::ok();
}

// result = operand 0 (nothing to scatter).
Status lower_copy(LowerCtx &c, const Op &op) {
  return lower_map(c, op, {op.operands[0]},
                   [](const std::vector<Expr> &x) -> Result<Expr> { return x[0]; });
}

// ---- gather_elements / gather_nd ---------------------------------------------------------------

Status lower_gather_elements(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1];
  const Shape &xd = xv->type.dims, &id = iv->type.dims;
  KILN_TRY(need_int_indices(op, iv));
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(xd.size())));
  if (id.size() != xd.size())
    return Status::error(op.describe() + ": indices must have the same rank as the data");
  for (size_t d = 0; d < xd.size(); ++d)
    if (static_cast<int64_t>(d) != axis && id[d] > xd[d])
      return Status::error(op.describe() + ": indices shape exceeds the data shape");
  if (shape_numel(xd) == 0) return unsupported(op, "kiln.gather_elements from an empty tensor");
  GridKernel g(c, op, "gather_elements");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(id), [&](Expr i) {
    return let_all(g, "c", unflatten(i, id), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr k = var(g.fresh("k"), ScalarType::i32);
      cs[axis] = k;
      return let(k, clamp_index(load(I, i), xd[axis]), store(Y, i, load(X, flatten(cs, xd))));
    });
  });
}

struct NdLayout {
  int64_t b = 0, k = 0, batch = 1, per_batch = 1, slice = 1, batch_stride = 1;
};

Result<NdLayout> nd_layout(const Op &op, const Shape &xd, const Shape &id, int64_t b) {
  const int64_t r = static_cast<int64_t>(xd.size()), q = static_cast<int64_t>(id.size());
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return Status::error(op.describe() + ": indices rank or batch_dims out of range");
  NdLayout l;
  l.b = b;
  l.k = id[q - 1];
  if (l.k < 1 || b + l.k > r)
    return Status::error(fmt::format("{}: index tuples of length {} do not fit rank {}",
                                     op.describe(), l.k, r));
  for (int64_t d = 0; d < b; ++d) l.batch *= xd[d];
  for (int64_t d = b; d < q - 1; ++d) l.per_batch *= id[d];
  for (int64_t d = b + l.k; d < r; ++d) l.slice *= xd[d];
  for (int64_t d = b; d < r; ++d) l.batch_stride *= xd[d];
  return l;
}

Status lower_gather_nd(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1];
  const Shape &xd = xv->type.dims, &id = iv->type.dims;
  KILN_TRY(need_int_indices(op, iv));
  KILN_ASSIGN(NdLayout l, nd_layout(op, xd, id, op.attr_int("batch_dims", 0)));
  if (shape_numel(xd) == 0) return unsupported(op, "kiln.gather_nd from an empty tensor");
  const auto st = shape_strides(xd);
  GridKernel g(c, op, "gather_nd");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(op.results[0]->type.dims), [&](Expr i) -> Result<Stmt> {
    Expr tuple = var(g.fresh("t"), ScalarType::i32);
    Expr off = (tuple / l.per_batch) * l.batch_stride + i % l.slice;
    for (int64_t j = 0; j < l.k; ++j)
      off = off + clamp_index(load(I, tuple * l.k + j), xd[l.b + j]) * st[l.b + j];
    return let(tuple, i / l.slice, store(Y, i, load(X, off)));
  });
}

// ---- scatters ----------------------------------------------------------------------------------

enum class Reduce { none, add, mul, max, min };

Result<Reduce> reduction(const Op &op, DType dt) {
  const std::string r = op.attr_str("reduction", "none");
  Reduce red;
  if (r == "none") red = Reduce::none;
  else if (r == "add") red = Reduce::add;
  else if (r == "mul") red = Reduce::mul;
  else if (r == "max") red = Reduce::max;
  else if (r == "min") red = Reduce::min;
  else return unsupported(op, fmt::format("{} reduction '{}'", op.name(), r));
  if (red != Reduce::none && is_bool(dt))
    return unsupported(op, fmt::format("{} reduction '{}' on bool", op.name(), r));
  return red;
}

// The reference's combination of the current value `a` with update `b` (std::max / min order).
Expr combine(Reduce red, const Expr &a, const Expr &b) {
  switch (red) {
  case Reduce::none: return b;
  case Reduce::add: return a + b;
  case Reduce::mul: return a * b;
  case Reduce::max: return select(a < b, b, a);
  case Reduce::min: return select(b < a, b, a);
  }
  return b;
}

Status lower_scatter_elements(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1], *uv = op.operands[2];
  const Shape &xd = xv->type.dims, &id = iv->type.dims;
  KILN_TRY(need_int_indices(op, iv));
  KILN_ASSIGN(Reduce red, reduction(op, xv->type.dtype));
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(xd.size())));
  if (id.size() != xd.size() || uv->type.dims != id)
    return Status::error(op.describe() + ": indices and updates must match, with the data's rank");
  for (size_t d = 0; d < xd.size(); ++d)
    if (static_cast<int64_t>(d) != axis && id[d] > xd[d])
      return Status::error(op.describe() + ": indices shape exceeds the data shape");
  if (shape_numel(id) == 0) return lower_copy(c, op);
  GridKernel g(c, op, "scatter_elements");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar U, g.in(uv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(xd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, xd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr acc = var(g.fresh("acc"), Y.elem), j = var(g.fresh("j"), ScalarType::i32);
      Expr u = var(g.fresh("u"), ScalarType::i32);
      Expr inside; // the output coordinates lie within the indices' extent off the axis
      for (size_t d = 0; d < xd.size(); ++d)
        if (static_cast<int64_t>(d) != axis && id[d] < xd[d]) {
          Expr in_d = cs[d] < id[d];
          inside = inside.defined() ? logical_and(inside, in_d) : in_d;
        }
      std::vector<Expr> uc = cs;
      uc[axis] = j;
      Stmt upd = if_then(index_is(load(I, u), xd[axis], cs[axis]),
                         assign(acc, combine(red, acc, load(U, u))));
      Stmt scan = for_loop(j, i32(0), i32(id[axis]), let(u, flatten(uc, id), upd));
      if (inside.defined()) scan = if_then(inside, scan);
      return block({declare_var(acc, load(X, i)), scan, store(Y, i, acc)});
    });
  });
}

Status lower_scatter_nd(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1], *uv = op.operands[2];
  const Shape &xd = xv->type.dims, &id = iv->type.dims;
  KILN_TRY(need_int_indices(op, iv));
  KILN_ASSIGN(Reduce red, reduction(op, xv->type.dtype));
  KILN_ASSIGN(NdLayout l, nd_layout(op, xd, id, 0));
  Shape ud(id.begin(), id.end() - 1);
  ud.insert(ud.end(), xd.begin() + l.k, xd.end());
  if (uv->type.dims != ud)
    return Status::error(fmt::format("{}: updates must have shape [{}]", op.describe(),
                                     shape_str(ud)));
  if (l.per_batch == 0) return lower_copy(c, op);
  const Shape prefix(xd.begin(), xd.begin() + l.k);
  GridKernel g(c, op, "scatter_nd");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar U, g.in(uv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(xd), [&](Expr i) {
    std::vector<Expr> vals = unflatten(i / l.slice, prefix);
    vals.push_back(i % l.slice);
    return let_all(g, "c", vals, [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr acc = var(g.fresh("acc"), Y.elem), t = var(g.fresh("t"), ScalarType::i32);
      Expr hit;
      for (int64_t j = 0; j < l.k; ++j) {
        Expr h = index_is(load(I, t * l.k + j), xd[j], cs[j]);
        hit = hit.defined() ? logical_and(hit, h) : h;
      }
      Stmt upd = if_then(hit, assign(acc, combine(red, acc, load(U, t * l.slice + cs[l.k]))));
      return block({declare_var(acc, load(X, i)), for_loop(t, i32(0), i32(l.per_batch), upd),
                    store(Y, i, acc)});
    });
  });
}

// ---- tensor_scatter (KV-cache update) ----------------------------------------------------------

// The write position of batch b from write_indices (native type) as an i32: circular mode
// reduces it modulo the cache length; linear mode clamps it into [-len, len], which keeps
// every valid position and maps invalid ones (an error in the reference) to no write.
Expr write_start(const Expr &w, int64_t len, bool circular) {
  Expr v = bits(w.type()) < 32 ? cast(ScalarType::i32, w) : w;
  const ScalarType t = v.type();
  if (circular) {
    Expr m = make_const(t, static_cast<double>(len));
    v = is_signed_int(t) ? ((v % m) + m) % m : v % m;
  } else {
    v = min(max(v, make_const(t, -static_cast<double>(len))), make_const(t, static_cast<double>(len)));
  }
  return cast(ScalarType::i32, v);
}

Status lower_tensor_scatter(LowerCtx &c, const Op &op) {
  const Value *pv = op.operands[0], *uv = op.operands[1];
  const Value *wv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Shape &pd = pv->type.dims, &ud = uv->type.dims;
  const int64_t r = static_cast<int64_t>(pd.size());
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", -2), r));
  const bool circular = op.attr_str("mode", "linear") == "circular";
  if (axis == 0 || ud.size() != pd.size())
    return Status::error(op.describe() + ": bad axis or update rank");
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && ud[d] != pd[d])
      return Status::error(op.describe() + ": update differs from past_cache off the axis");
  const int64_t len = pd[axis], n = ud[axis];
  if (n > len) return Status::error(op.describe() + ": update is longer than the cache");
  if (wv && !is_integer(wv->type.dtype))
    return unsupported(op, "kiln.tensor_scatter with non-integer write_indices");
  if (shape_numel(ud) == 0) return lower_copy(c, op);
  GridKernel g(c, op, circular ? "tensor_scatter_circular" : "tensor_scatter");
  KILN_ASSIGN(BufferVar P, g.in(pv));
  KILN_ASSIGN(BufferVar U, g.in(uv));
  BufferVar W{-1, ScalarType::i64};
  if (wv) {
    if (shape_numel(wv->type.dims) != pd[0])
      return Status::error(op.describe() + ": write_indices must have one entry per batch");
    KILN_ASSIGN(W, g.in(wv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(pd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, pd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr w = W.index >= 0 ? write_start(load(W, cs[0]), len, circular) : i32(0);
      Expr t = var(g.fresh("t"), ScalarType::i32);
      Expr tv = circular ? (cs[axis] - w + len) % len : cs[axis] - w;
      std::vector<Expr> uc = cs;
      uc[axis] = t;
      Stmt s = if_then(logical_and(t >= 0, t < n), store(Y, i, load(U, flatten(uc, ud))),
                       store(Y, i, load(P, i)));
      return let(t, tv, s);
    });
  });
}

} // namespace

void add_index_lowerings(LoweringTable &t) {
  t["kiln.gather_elements"] = lower_gather_elements;
  t["kiln.gather_nd"] = lower_gather_nd;
  t["kiln.scatter_elements"] = lower_scatter_elements;
  t["kiln.scatter_nd"] = lower_scatter_nd;
  t["kiln.tensor_scatter"] = lower_tensor_scatter;
  index::add_gen_lowerings(t);
  index::add_move_lowerings(t);
}

} // namespace kiln::compiler
