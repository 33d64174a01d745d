// ONNX shape and data-movement ops -> kiln core ops (part 1: Shape, Size, Reshape, Transpose,
// Concat, Squeeze, Unsqueeze, Flatten, Expand, Tile, Slice, Split, Gather and Scatter family).
// Part 2 is in convert_shape_2.cpp.
#include "frontend/onnx/convert.h"
#include "frontend/onnx/convert_shape_util.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::onnx_fe {
namespace {

Status need_input(NodeCtx &c, size_t i, const char *what) {
  if (!c.has_input(i)) return c.error(fmt::format("input '{}' is missing", what));
  return Status::ok();
}

// ---- Shape / Size ---------------------------------------------------------------------------

Outs convert_shape(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  const TensorType &t = c.input(0)->type;
  AttrMap a;
  if (c.opset >= 15) {
    if (c.has_attr("start")) a["start"] = c.attr_int("start", 0);
    if (c.has_attr("end")) a["end"] = c.attr_int("end", 0);
  }
  if (t.ranked) {
    // Static dims in range: the result is a constant.
    const int64_t r = t.rank();
    int64_t s = a.count("start") ? std::get<int64_t>(a["start"]) : 0;
    int64_t e = a.count("end") ? std::get<int64_t>(a["end"]) : r;
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = std::clamp<int64_t>(s, 0, r);
    e = std::clamp<int64_t>(e, 0, r);
    std::vector<int64_t> dims(t.dims.begin() + s, t.dims.begin() + std::max(s, e));
    if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; }))
      return std::vector<Value *>{c.builder().i64s(dims)};
  }
  return one(c.op("kiln.shape", {c.input(0)}, std::move(a)));
}

Outs convert_size(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  const TensorType &t = c.input(0)->type;
  if (t.is_static()) {
    int64_t n = 1;
    for (int64_t d : t.dims)
      if (__builtin_mul_overflow(n, d, &n))
        return c.error(fmt::format("the element count of {} overflows int64", t.str()));
    return std::vector<Value *>{c.builder().scalar_i(DType::i64, n)};
  }
  return one(c.op("kiln.size", {c.input(0)}));
}

// ---- Reshape / Squeeze / Unsqueeze / Flatten --------------------------------------------------

Outs convert_reshape(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  KILN_TRY(need_input(c, 1, "shape"));
  AttrMap a;
  if (c.opset >= 14 && c.attr_int("allowzero", 0) != 0) a["allowzero"] = int64_t{1};
  return one(c.op("kiln.reshape", {c.input(0), c.input(1)}, std::move(a)));
}

// Input 0 reshaped to a known static shape (canonical form of Squeeze/Unsqueeze/Flatten).
Outs static_reshape(NodeCtx &c, const Shape &out) {
  return one(c.op("kiln.reshape", {c.input(0), c.builder().i64s(out)}));
}

// Axes from the attribute (before `input_since`) or a constant input; nullopt when dynamic.
Result<std::optional<std::vector<int64_t>>> axes_of(NodeCtx &c, int input_since, size_t idx) {
  if (c.opset < input_since) {
    if (!c.has_attr("axes")) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(c.attr_ints("axes"));
  }
  if (!c.has_input(idx)) return std::optional<std::vector<int64_t>>();
  if (const Tensor *t = c.const_input(idx)) return std::optional<std::vector<int64_t>>(t->to_i64s());
  return std::optional<std::vector<int64_t>>();
}

Outs convert_squeeze(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  KILN_ASSIGN(auto axes, axes_of(c, 13, 1));
  const TensorType &t = c.input(0)->type;
  Value *axes_v = nullptr;
  if (axes) axes_v = c.builder().i64s(*axes);
  else if (c.opset >= 13 && c.has_input(1)) axes_v = c.input(1);
  if (t.is_static() && (axes || !axes_v)) {
    Shape out;
    std::vector<bool> drop(t.dims.size(), !axes);
    if (axes)
      for (int64_t a : *axes) {
        int64_t k = a < 0 ? a + t.rank() : a;
        if (k < 0 || k >= t.rank()) return c.error(fmt::format("axis {} is out of range", a));
        if (t.dims[k] != 1) return c.error(fmt::format("cannot squeeze axis {} of size {}", a, t.dims[k]));
        drop[k] = true;
      }
    for (size_t i = 0; i < t.dims.size(); ++i)
      if (!(drop[i] && t.dims[i] == 1)) out.push_back(t.dims[i]);
    return static_reshape(c, out);
  }
  return one(c.op("kiln.squeeze", {c.input(0), axes_v}));
}

Outs convert_unsqueeze(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  KILN_ASSIGN(auto axes, axes_of(c, 13, 1));
  Value *axes_v = nullptr;
  if (axes) axes_v = c.builder().i64s(*axes);
  else if (c.opset >= 13 && c.has_input(1)) axes_v = c.input(1);
  if (!axes_v) return c.error("axes are required");
  const TensorType &t = c.input(0)->type;
  if (t.is_static() && axes) {
    const int64_t r = t.rank() + static_cast<int64_t>(axes->size());
    std::vector<bool> ins(static_cast<size_t>(r), false);
    for (int64_t a : *axes) {
      int64_t k = a < 0 ? a + r : a;
      if (k < 0 || k >= r || ins[k]) return c.error(fmt::format("axis {} is invalid", a));
      ins[k] = true;
    }
    Shape out;
    size_t j = 0;
    for (int64_t d = 0; d < r; ++d) out.push_back(ins[d] ? 1 : t.dims[j++]);
    return static_reshape(c, out);
  }
  return one(c.op("kiln.unsqueeze", {c.input(0), axes_v}));
}

Outs convert_flatten(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  const TensorType &t = c.input(0)->type;
  int64_t axis = c.attr_int("axis", 1);
  AttrMap a{{"axis", axis}};
  if (t.is_static()) {
    if (axis < 0) axis += t.rank();
    if (axis < 0 || axis > t.rank()) return c.error(fmt::format("axis {} is out of range", axis));
    int64_t p = 1, q = 1;
    bool fits = true; // hostile dims: on overflow kiln.flatten reports it
    for (int64_t d = 0; d < t.rank(); ++d) {
      int64_t &acc = d < axis ? p : q;
      fits = fits && !__builtin_mul_overflow(acc, t.dims[d], &acc);
    }
    if (fits) return static_reshape(c, {p, q});
  }
  return one(c.op("kiln.flatten", {c.input(0)}, std::move(a)));
}

// ---- Transpose / Concat / Expand / Tile -------------------------------------------------------

Outs convert_transpose(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  const TensorType &t = c.input(0)->type;
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (!c.has_attr("perm")) {
    if (!t.ranked) return c.error("default perm needs an input of known rank");
    for (int64_t d = t.rank() - 1; d >= 0; --d) perm.push_back(d);
  }
  return one(c.op("kiln.transpose", {c.input(0)}, {{"perm", perm}}));
}

Outs convert_concat(NodeCtx &c) {
  if (!c.has_attr("axis")) return c.error("attribute 'axis' is required");
  std::vector<Value *> ins;
  for (Value *v : c.in)
    if (v) ins.push_back(v);
  if (ins.empty()) return c.error("needs at least one input");
  return one(c.op("kiln.concat", ins, {{"axis", c.attr_int("axis", 0)}}));
}

Outs convert_binary_shape_op(NodeCtx &c, std::string_view op) {
  KILN_TRY(need_input(c, 0, "input"));
  KILN_TRY(need_input(c, 1, "shape"));
  return one(c.op(op, {c.input(0), c.input(1)}));
}

// ---- Slice / Split ----------------------------------------------------------------------------

Outs convert_slice(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "data"));
  if (c.opset < 10) {
    if (!c.has_attr("starts") || !c.has_attr("ends"))
      return c.error("attributes 'starts' and 'ends' are required");
    Builder &b = c.builder();
    Value *axes = c.has_attr("axes") ? b.i64s(c.attr_ints("axes")) : nullptr;
    return one(c.op("kiln.slice", {c.input(0), b.i64s(c.attr_ints("starts")),
                                   b.i64s(c.attr_ints("ends")), axes}));
  }
  KILN_TRY(need_input(c, 1, "starts"));
  KILN_TRY(need_input(c, 2, "ends"));
  return one(c.op("kiln.slice", {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)}));
}

Outs convert_split(NodeCtx &c) {
  KILN_TRY(need_input(c, 0, "input"));
  const int n = static_cast<int>(c.num_outputs);
  if (n < 1) return c.error("needs at least one output");
  const int64_t axis = c.attr_int("axis", 0);
  Value *split = nullptr;
  if (c.opset < 13) {
    if (c.has_attr("split")) split = c.builder().i64s(c.attr_ints("split"));
  } else {
    split = c.input(1);
  }
  if (c.opset >= 18 && !split) {
    if (!c.has_attr("num_outputs")) return c.error("needs 'split' or 'num_outputs'");
    if (c.attr_int("num_outputs", 0) != n)
      return c.error("num_outputs differs from the number of outputs");
  }
  const TensorType &t = c.input(0)->type;
  if (!split && c.opset < 18 && t.ranked) {
    int64_t a = axis < 0 ? axis + t.rank() : axis;
    if (a >= 0 && a < t.rank() && t.dims[a] >= 0 && t.dims[a] % n != 0)
      return c.error("the axis is not divisible into equal parts");
  }
  return c.op_n("kiln.split", {c.input(0), split}, {{"axis", axis}}, n);
}

// ---- Gather / Scatter -----------------------------------------------------------------------

Outs convert_gather_like(NodeCtx &c, std::string_view op, int nin, AttrMap a) {
  for (int i = 0; i < nin; ++i) KILN_TRY(need_input(c, static_cast<size_t>(i), "operand"));
  std::vector<Value *> ins(c.in.begin(), c.in.begin() + nin);
  return one(c.op(op, ins, std::move(a)));
}

AttrMap reduction_attr(NodeCtx &c) {
  AttrMap a;
  if (c.opset >= 16) a["reduction"] = c.attr_str("reduction", "none");
  return a;
}

} // namespace

void register_onnx_shape(ConverterTable &t) {
  t.add("", "Shape", convert_shape);
  t.add("", "Size", convert_size);
  t.add("", "Reshape", convert_reshape);
  t.add("", "Squeeze", convert_squeeze);
  t.add("", "Unsqueeze", convert_unsqueeze);
  t.add("", "Flatten", convert_flatten);
  t.add("", "Transpose", convert_transpose);
  t.add("", "Concat", convert_concat);
  t.add("", "Expand", [](NodeCtx &c) { return convert_binary_shape_op(c, "kiln.expand"); });
  t.add("", "Tile", [](NodeCtx &c) { return convert_binary_shape_op(c, "kiln.tile"); });
  t.add("", "Slice", convert_slice);
  t.add("", "Split", convert_split);
  t.add("", "Gather", [](NodeCtx &c) {
    return convert_gather_like(c, "kiln.gather", 2, {{"axis", c.attr_int("axis", 0)}});
  });
  t.add("", "GatherElements", [](NodeCtx &c) {
    return convert_gather_like(c, "kiln.gather_elements", 2, {{"axis", c.attr_int("axis", 0)}});
  });
  t.add("", "GatherND", [](NodeCtx &c) {
    return convert_gather_like(c, "kiln.gather_nd", 2,
                               {{"batch_dims", c.attr_int("batch_dims", 0)}});
  });
  auto scatter_elements = [](NodeCtx &c) {
    AttrMap a = reduction_attr(c);
    a["axis"] = c.attr_int("axis", 0);
    return convert_gather_like(c, "kiln.scatter_elements", 3, std::move(a));
  };
  t.add("", "ScatterElements", scatter_elements);
  t.add("", "Scatter", scatter_elements);
  t.add("", "ScatterND", [](NodeCtx &c) {
    return convert_gather_like(c, "kiln.scatter_nd", 3, reduction_attr(c));
  });
  register_onnx_shape_2(t);
}

} // namespace kiln::onnx_fe
