// Crop / pad ops: kiln.center_crop_pad (one invocation per output element:
// the centred input element, or zero where the output extends past the input).
#include "compiler/lowering/lower.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

// Output coordinate minus input coordinate along each axis (ONNX CenterCropPad: a crop drops
// floor((dim - size) / 2) leading elements, a pad adds floor((size - dim) / 2) leading zeros).
Result<std::vector<int64_t>> crop_shifts(const Op &op) {
  const Shape &xd = op.operands[0]->type.dims, &yd = op.results[0]->type.dims;
  const int64_t rank = static_cast<int64_t>(xd.size());
  const Tensor *shape_t = const_operand(op, 1);
  if (!shape_t) return unsupported(op, "kiln.center_crop_pad with a non-constant shape");
  const std::vector<int64_t> sh = shape_t->to_i64s();
  std::vector<int64_t> axes = op.attr_ints("axes");
  if (!op.has_attr("axes"))
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if (axes.size() != sh.size())
    return Status::error(fmt::format("{}: shape has {} entries for {} axes", op.describe(),
                                     sh.size(), axes.size()));
  std::vector<int64_t> shift(static_cast<size_t>(rank), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    KILN_ASSIGN(int64_t a, norm_axis(op, axes[k], rank));
    if (sh[k] != yd[a]) return Status::error(op.describe() + ": result type disagrees with shape");
    const int64_t dim = xd[a];
    shift[a] = sh[k] >= dim ? (sh[k] - dim) / 2 : -((dim - sh[k]) / 2);
  }
  return shift;
}

Status lower_center_crop_pad(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  KILN_ASSIGN(auto shift, crop_shifts(op));
  KILN_ASSIGN(ScalarType et, scalar_type(op, xv->type.dtype));
  const Expr zero = et == ScalarType::boolean ? imm_bool(false) : make_const(et, 0);
  GridKernel g(c, op, "center_crop_pad");
  BufferVar X{-1, et};
  if (shape_numel(xd) > 0) {
    KILN_ASSIGN(X, g.in(xv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const auto st = shape_strides(xd);
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      if (X.index < 0) return store(Y, i, zero);
      Expr index = i32(0), inside;
      for (size_t d = 0; d < xd.size(); ++d) {
        Expr s = shift[d] == 0 ? cs[d] : cs[d] - shift[d];
        if (shift[d] > 0 || yd[d] > xd[d]) { // the output reaches past the input here
          Expr in_d = logical_and(s >= 0, s < xd[d]);
          inside = inside.defined() ? logical_and(inside, in_d) : in_d;
        }
        if (xd[d] != 1) index = index + s * st[d];
      }
      if (!inside.defined()) return store(Y, i, load(X, index));
      return if_then(inside, store(Y, i, load(X, index)), store(Y, i, zero));
    });
  });
}

} // namespace

void add_crop_pad_lowerings(LoweringTable &t) { t["kiln.center_crop_pad"] = lower_center_crop_pad; }

} // namespace kiln::compiler
