// Data-movement ops. Pure layout ops (reshape, squeeze, unsqueeze, flatten) cost no dispatch:
// the result aliases the operand's buffer. The others copy with one invocation per output
// element and constant-stride index math: transpose, expand, tile, slice, split, concat,
// gather, pad.
#include "compiler/lowering/lower.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::compiler {

using namespace kir;

namespace {

Status lower_alias(LowerCtx &c, const Op &op) {
  c.alias(op.results[0], op.operands[0]);
  return Status::ok();
}

// result[i] = src[index(output coordinates)].
using IndexFn = std::function<Result<Expr>(const std::vector<Expr> &coords)>;

Status lower_copy_map(LowerCtx &c, const Op &op, const Value *src, const Value *dst,
                      const std::string &name, const IndexFn &index) {
  GridKernel g(c, op, name);
  KILN_ASSIGN(BufferVar X, g.in(src));
  KILN_ASSIGN(BufferVar Y, g.out(dst));
  const Shape &os = dst->type.dims;
  return g.finish(shape_numel(os), [&](Expr i) {
    return let_all(g, "c", unflatten(i, os), [&](std::vector<Expr> cs) -> Result<Stmt> {
      KILN_ASSIGN(Expr idx, index(cs));
      return g.store(Y, i, load(X, idx));
    });
  });
}

Status lower_transpose(LowerCtx &c, const Op &op) {
  const Shape &xd = op.operands[0]->type.dims;
  std::vector<int64_t> perm = op.attr_ints("perm");
  if (perm.empty())
    for (int64_t d = static_cast<int64_t>(xd.size()) - 1; d >= 0; --d) perm.push_back(d);
  const auto st = shape_strides(xd);
  return lower_copy_map(c, op, op.operands[0], op.results[0], "transpose",
                        [&](const std::vector<Expr> &cs) -> Result<Expr> {
                          Expr e = i32(0);
                          for (size_t d = 0; d < perm.size(); ++d)
                            if (xd[perm[d]] != 1) e = e + cs[d] * st[perm[d]];
                          return e;
                        });
}

Status lower_expand(LowerCtx &c, const Op &op) {
  return lower_map(c, op, {op.operands[0]},
                   [](const std::vector<Expr> &x) -> Result<Expr> { return x[0]; });
}

Status lower_tile(LowerCtx &c, const Op &op) {
  const Shape &xd = op.operands[0]->type.dims, &yd = op.results[0]->type.dims;
  return lower_copy_map(c, op, op.operands[0], op.results[0], "tile",
                        [&](const std::vector<Expr> &cs) -> Result<Expr> {
                          std::vector<Expr> ic;
                          for (size_t d = 0; d < xd.size(); ++d)
                            ic.push_back(xd[d] == yd[d] ? cs[d] : cs[d] % xd[d]);
                          return flatten(ic, xd);
                        });
}

// ---- slice / split -----------------------------------------------------------------------------

Result<std::vector<int64_t>> ints_of(const Op &op, size_t i, const char *what) {
  const Tensor *t = const_operand(op, i);
  if (!t) return unsupported(op, fmt::format("kiln.slice with non-constant {}", what));
  return t->to_i64s();
}

// ONNX Slice clamping: the first selected index along an axis of size `dim`.
int64_t slice_start(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  return step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
}

Status lower_slice(LowerCtx &c, const Op &op) {
  const Shape &xd = op.operands[0]->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  KILN_ASSIGN(auto starts, ints_of(op, 1, "starts"));
  std::vector<int64_t> axes, steps(starts.size(), 1);
  if (op.operands.size() > 3 && op.operands[3]) {
    KILN_ASSIGN(axes, ints_of(op, 3, "axes"));
  } else {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (op.operands.size() > 4 && op.operands[4]) {
    KILN_ASSIGN(steps, ints_of(op, 4, "steps"));
  }
  std::vector<int64_t> begin(xd.size(), 0), step(xd.size(), 1);
  for (size_t i = 0; i < starts.size() && i < axes.size() && i < steps.size(); ++i) {
    KILN_ASSIGN(int64_t a, norm_axis(op, axes[i], rank));
    begin[a] = slice_start(xd[a], starts[i], steps[i]);
    step[a] = steps[i];
  }
  const auto st = shape_strides(xd);
  return lower_copy_map(c, op, op.operands[0], op.results[0], "slice",
                        [&](const std::vector<Expr> &cs) -> Result<Expr> {
                          Expr e = i32(0);
                          for (size_t d = 0; d < xd.size(); ++d)
                            e = e + (cs[d] * step[d] + begin[d]) * st[d];
                          return e;
                        });
}

Status lower_split(LowerCtx &c, const Op &op) {
  const Shape &xd = op.operands[0]->type.dims;
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(xd.size())));
  const auto st = shape_strides(xd);
  int64_t offset = 0;
  for (const Value *r : op.results) {
    const int64_t off = offset;
    offset += r->type.dims[axis];
    if (shape_numel(r->type.dims) == 0) {
      c.define(r);
      continue;
    }
    KILN_TRY(lower_copy_map(c, op, op.operands[0], r, "split",
                            [&](const std::vector<Expr> &cs) -> Result<Expr> {
                              Expr e = i32(0);
                              for (size_t d = 0; d < xd.size(); ++d)
                                e = e + (static_cast<int64_t>(d) == axis ? cs[d] + off : cs[d]) *
                                            st[d];
                              return e;
                            }));
  }
  return Status::ok();
}

// ---- concat ------------------------------------------------------------------------------------

// One kernel: along the concat axis, the output coordinate selects the operand (If chain).
Status lower_concat(LowerCtx &c, const Op &op) {
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(yd.size())));
  GridKernel g(c, op, "concat");
  struct Piece {
    BufferVar buf;
    int64_t begin, end;
    Shape dims;
  };
  std::vector<Piece> pieces;
  int64_t pos = 0;
  for (const Value *v : op.operands) {
    const int64_t len = v->type.dims[axis];
    if (shape_numel(v->type.dims) > 0) {
      KILN_ASSIGN(BufferVar b, g.in(v));
      pieces.push_back({b, pos, pos + len, v->type.dims});
    }
    pos += len;
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Stmt s;
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        std::vector<Expr> ic = cs;
        ic[axis] = cs[axis] - it->begin;
        Stmt st = store(Y, i, load(it->buf, flatten(ic, it->dims)));
        s = s.defined() ? if_then(cs[axis] < it->end, st, s) : st;
      }
      return s;
    });
  });
}

// ---- gather ------------------------------------------------------------------------------------

// Indices are wrapped (negative counts from the end) and clamped into range: a kernel cannot
// report an out-of-range index, so it reads the nearest valid element instead of faulting.
Status lower_gather(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *iv = op.operands[1];
  const Shape &xd = xv->type.dims, &id = iv->type.dims, &yd = op.results[0]->type.dims;
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), static_cast<int64_t>(xd.size())));
  const int64_t dim = xd[axis];
  GridKernel g(c, op, "gather");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar I, g.in(iv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const size_t ni = id.size();
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      std::vector<Expr> icoords(cs.begin() + axis, cs.begin() + axis + static_cast<long>(ni));
      Expr raw = cast(ScalarType::i32, load(I, flatten(icoords, id)));
      Expr k = var(g.fresh("k"), ScalarType::i32);
      Expr wrapped = select(raw < 0, raw + dim, raw);
      Expr clamped = min(max(wrapped, i32(0)), i32(dim - 1));
      std::vector<Expr> xc(cs.begin(), cs.begin() + axis);
      xc.push_back(k);
      xc.insert(xc.end(), cs.begin() + axis + static_cast<long>(ni), cs.end());
      KILN_ASSIGN(Stmt st, g.store(Y, i, load(X, flatten(xc, xd))));
      return let(k, clamped, st);
    });
  });
}

// ---- pad ---------------------------------------------------------------------------------------

Status lower_pad(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const std::string mode = op.attr_str("mode", "constant");
  const Tensor *pads_t = const_operand(op, 1);
  if (!pads_t) return unsupported(op, "kiln.pad with non-constant pads");
  std::vector<int64_t> p = pads_t->to_i64s(), axes;
  if (op.operands.size() > 3 && op.operands[3]) {
    const Tensor *ax = const_operand(op, 3);
    if (!ax) return unsupported(op, "kiln.pad with non-constant axes");
    axes = ax->to_i64s();
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  std::vector<int64_t> begin(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size() && k < p.size(); ++k) {
    KILN_ASSIGN(int64_t a, norm_axis(op, axes[k], rank));
    begin[a] = p[k];
  }
  if (shape_numel(xd) == 0 && mode != "constant")
    return unsupported(op, "kiln.pad of an empty tensor in a non-constant mode");
  const Value *cv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  GridKernel g(c, op, "pad_" + mode);
  BufferVar X{-1, ScalarType::f32}, V{-1, ScalarType::f32};
  if (shape_numel(xd) > 0) {
    KILN_ASSIGN(X, g.in(xv));
  }
  KILN_ASSIGN(ScalarType et, scalar_type(op, xv->type.dtype));
  Expr pad_value = make_const(et, 0);
  if (cv && shape_numel(cv->type.dims) > 0) {
    if (const Tensor *t = const_operand(op, 2)) {
      pad_value = et == ScalarType::boolean ? imm_bool(t->get_f64(0) != 0)
                  : is_float(et)            ? make_const(et, t->get_f64(0))
                                            : imm(et, t->get_i64(0));
    } else {
      KILN_ASSIGN(V, g.in(cv));
      pad_value = load(V, i32(0));
    }
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const auto st = shape_strides(xd);
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr index = i32(0), inside;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t n = xd[d];
        Expr s = cs[d] - begin[d];
        if (mode == "edge") s = min(max(s, i32(0)), i32(n - 1));
        else if (mode == "wrap") s = ((s % n) + n) % n;
        else if (mode == "reflect" && n > 1) {
          const int64_t period = 2 * (n - 1);
          Expr r = ((s % period) + period) % period;
          s = select(r >= n, i32(period) - r, r);
        } else if (mode == "reflect") {
          s = i32(0);
        } else if (yd[d] != n || begin[d] != 0) {
          Expr in_d = logical_and(s >= 0, s < n);
          inside = inside.defined() ? logical_and(inside, in_d) : in_d;
        }
        if (n != 1) index = index + s * st[d];
      }
      if (X.index < 0) return store(Y, i, pad_value);
      if (!inside.defined()) return store(Y, i, load(X, index));
      return if_then(inside, store(Y, i, load(X, index)), store(Y, i, pad_value));
    });
  });
}

} // namespace

void add_shape_lowerings(LoweringTable &t) {
  for (const char *n : {"kiln.reshape", "kiln.squeeze", "kiln.unsqueeze", "kiln.flatten"})
    t[n] = lower_alias;
  t["kiln.transpose"] = lower_transpose;
  t["kiln.expand"] = lower_expand;
  t["kiln.tile"] = lower_tile;
  t["kiln.slice"] = lower_slice;
  t["kiln.split"] = lower_split;
  t["kiln.concat"] = lower_concat;
  t["kiln.gather"] = lower_gather;
  t["kiln.pad"] = lower_pad;
}

} // namespace kiln::compiler
