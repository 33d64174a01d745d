// Data movement: constant, iota, broadcast_in_dim, reshape, transpose, reverse, concatenate,
// slice, pad, get_dimension_size.
#include "frontend/stablehlo/convert.h"

#include <algorithm>
#include <fmt/format.h>
#include <numeric>

namespace kiln::stablehlo_fe {

namespace {

Outs convert_constant(OpCtx &c) {
  const Attr *v = c.attr("value");
  if (!v || v->kind != Attr::Kind::Dense) return c.error("constant without a dense 'value'");
  if (v->dense.dtype() != c.result_dtype() || v->dense.shape() != c.result_dims())
    return c.error(fmt::format("constant value has type tensor<{}x{}> but the op declares {}",
                               shape_str(v->dense.shape()), dtype_name(v->dense.dtype()),
                               TensorType{c.result_dtype(), c.result_dims()}.str()));
  return one(c.b.constant(v->dense));
}

Outs convert_iota(OpCtx &c) {
  KILN_ASSIGN(int64_t dim, c.int_attr("iota_dimension"));
  const Shape &dims = c.result_dims();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) return c.error("iota_dimension is out of range");
  const DType dt = c.result_dtype();
  if (is_bool(dt)) return c.error("iota of i1 is not supported");
  KILN_ASSIGN(Value * r, c.iota(dims, dim, dt));
  c.state.iota_dim[r] = dim;
  return one(r);
}

// broadcast_in_dim: operand dim i goes to result dim dims[i] (size 1 or equal); the operand is
// transposed into increasing order, reshaped to the result rank and expanded.
Outs convert_broadcast_in_dim(OpCtx &c) {
  Value *x = c.in.at(0);
  KILN_ASSIGN(std::vector<int64_t> bd, c.ints("broadcast_dimensions"));
  const Shape &out = c.result_dims();
  const int64_t r = x->type.rank();
  if (static_cast<int64_t>(bd.size()) != r) return c.error("broadcast_dimensions must name every operand dim");
  std::vector<int64_t> order(r);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return bd[a] < bd[b]; });
  for (int64_t i = 0; i < r; ++i) {
    if (bd[i] < 0 || bd[i] >= static_cast<int64_t>(out.size()))
      return c.error("broadcast_dimensions out of range");
    if (i > 0 && bd[order[i]] == bd[order[i - 1]]) return c.error("repeated broadcast dimension");
    const int64_t d = x->type.dims[i];
    if (d != 1 && d != out[bd[i]]) return c.error("operand dim does not match the result");
  }
  KILN_ASSIGN(x, c.transpose(x, order));
  Shape s(out.size(), 1);
  for (int64_t i = 0; i < r; ++i) s[bd[order[i]]] = x->type.dims[i];
  KILN_ASSIGN(Value * y, c.reshape(x, s));
  KILN_ASSIGN(y, c.expand(y, out));
  auto it = c.state.iota_dim.find(c.in[0]);
  if (it != c.state.iota_dim.end()) c.state.iota_dim[y] = bd[it->second];
  return std::vector<Value *>{y};
}

Outs convert_reshape(OpCtx &c) { return one(c.reshape(c.in.at(0), c.result_dims())); }

Outs convert_transpose(OpCtx &c) {
  KILN_ASSIGN(std::vector<int64_t> perm, c.ints("permutation"));
  if (static_cast<int64_t>(perm.size()) != c.rank(0)) return c.error("permutation has the wrong length");
  return one(c.transpose(c.in[0], perm));
}

Outs convert_reverse(OpCtx &c) {
  Value *x = c.in.at(0);
  KILN_ASSIGN(std::vector<int64_t> dims, c.ints("dimensions"));
  if (dims.empty()) return std::vector<Value *>{x};
  std::vector<int64_t> st, en, ax, step;
  for (int64_t d : dims) {
    if (d < 0 || d >= x->type.rank()) return c.error("reverse dimension out of range");
    const int64_t n = x->type.dims[d];
    st.push_back(n - 1);
    en.push_back(-n - 1);
    ax.push_back(d);
    step.push_back(-1);
  }
  return one(c.make("kiln.slice", {x, c.i64s(st), c.i64s(en), c.i64s(ax), c.i64s(step)}));
}

Outs convert_concatenate(OpCtx &c) {
  KILN_ASSIGN(int64_t dim, c.int_attr("dimension"));
  if (c.in.size() == 1) return std::vector<Value *>{c.in[0]};
  return one(c.make("kiln.concat", c.in, {{"axis", dim}}));
}

Outs convert_slice(OpCtx &c) {
  Value *x = c.in.at(0);
  KILN_ASSIGN(std::vector<int64_t> st, c.ints("start_indices"));
  KILN_ASSIGN(std::vector<int64_t> lim, c.ints("limit_indices"));
  KILN_ASSIGN(std::vector<int64_t> step, c.ints_or("strides", std::vector<int64_t>(st.size(), 1)));
  const int64_t r = x->type.rank();
  if (static_cast<int64_t>(st.size()) != r || static_cast<int64_t>(lim.size()) != r ||
      static_cast<int64_t>(step.size()) != r)
    return c.error("slice attributes must have one entry per dim");
  for (int64_t d = 0; d < r; ++d)
    if (st[d] < 0 || lim[d] < st[d] || lim[d] > x->type.dims[d] || step[d] < 1)
      return c.error(fmt::format("slice [{}:{}:{}] is invalid for dim {} of size {}", st[d], lim[d],
                                 step[d], d, x->type.dims[d]));
  return one(c.slice(x, st, lim, step));
}

Outs convert_pad(OpCtx &c) {
  Value *x = c.in.at(0), *v = c.in.at(1);
  const size_t r = static_cast<size_t>(x->type.rank());
  KILN_ASSIGN(std::vector<int64_t> lo, c.ints("edge_padding_low"));
  KILN_ASSIGN(std::vector<int64_t> hi, c.ints("edge_padding_high"));
  KILN_ASSIGN(std::vector<int64_t> in, c.ints_or("interior_padding", std::vector<int64_t>(r, 0)));
  if (lo.size() != r || hi.size() != r || in.size() != r)
    return c.error("pad attributes must have one entry per dim");
  return one(c.pad_interior(x, lo, hi, in, v));
}

Outs convert_get_dimension_size(OpCtx &c) {
  KILN_ASSIGN(int64_t d, c.int_attr("dimension"));
  if (d < 0 || d >= c.rank(0)) return c.error("dimension out of range");
  return one(c.scalar_int(c.result_dtype(), c.dims(0)[d]));
}

Outs convert_identity(OpCtx &c) { return c.in; }

} // namespace

void register_shape(ConverterTable &t) {
  t.add("stablehlo.constant", convert_constant);
  t.add("stablehlo.iota", convert_iota);
  t.add("stablehlo.broadcast_in_dim", convert_broadcast_in_dim);
  t.add("stablehlo.reshape", convert_reshape);
  t.add("stablehlo.transpose", convert_transpose);
  t.add("stablehlo.reverse", convert_reverse);
  t.add("stablehlo.concatenate", convert_concatenate);
  t.add("stablehlo.slice", convert_slice);
  t.add("stablehlo.pad", convert_pad);
  t.add("stablehlo.get_dimension_size", convert_get_dimension_size);
  t.add("stablehlo.optimization_barrier", convert_identity);
}

} // namespace kiln::stablehlo_fe
