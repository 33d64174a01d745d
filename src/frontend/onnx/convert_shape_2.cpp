// ONNX shape and data-movement ops -> kiln core ops (part 2: Pad, Range, ConstantOfShape,
// OneHot, Trilu, DepthToSpace, SpaceToDepth, Compress, NonZero, Unique, ReverseSequence,
// EyeLike, CenterCropPad).
#include "frontend/onnx/convert_shape_util.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {
namespace {

Status need_inputs(NodeCtx &c, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!c.has_input(i)) return c.error(fmt::format("input {} is missing", i));
  return Status::ok();
}

Outs convert_pad(NodeCtx &c) {
  KILN_TRY(need_inputs(c, 1));
  const std::string mode = c.attr_str("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && !(mode == "wrap" && c.opset >= 19))
    return c.error(fmt::format("pad mode '{}' is not supported", mode));
  AttrMap a{{"mode", mode}};
  if (c.opset < 11) {
    if (!c.has_attr("pads")) return c.error("attribute 'pads' is required");
    Builder &b = c.builder();
    Value *value = b.scalar_f(c.input(0)->type.dtype, c.attr_float("value", 0.0));
    return one(c.op("kiln.pad", {c.input(0), b.i64s(c.attr_ints("pads")), value}, std::move(a)));
  }
  KILN_TRY(need_inputs(c, 2));
  std::vector<Value *> ins{c.input(0), c.input(1), c.input(2)};
  if (c.opset >= 18 && c.has_input(3)) ins.push_back(c.input(3));
  return one(c.op("kiln.pad", ins, std::move(a)));
}

Outs convert_constant_of_shape(NodeCtx &c) {
  KILN_TRY(need_inputs(c, 1));
  Tensor value(DType::f32, {1});
  if (c.has_attr("value")) {
    KILN_ASSIGN(value, c.attr_tensor("value"));
    if (value.numel() != 1) return c.error("attribute 'value' must have one element");
  }
  return one(c.op("kiln.constant_of_shape", {c.input(0)}, {{"value", value.reshaped({})}}));
}

Outs convert_depth_space(NodeCtx &c, std::string_view op) {
  KILN_TRY(need_inputs(c, 1));
  if (!c.has_attr("blocksize")) return c.error("attribute 'blocksize' is required");
  AttrMap a{{"blocksize", c.attr_int("blocksize", 0)}};
  if (op == "kiln.depth_to_space") a["mode"] = c.attr_str("mode", "DCR");
  return one(c.op(op, {c.input(0)}, std::move(a)));
}

Outs convert_compress(NodeCtx &c) {
  KILN_TRY(need_inputs(c, 2));
  AttrMap a;
  if (c.has_attr("axis")) a["axis"] = c.attr_int("axis", 0);
  return one(c.op("kiln.compress", {c.input(0), c.input(1)}, std::move(a)));
}

Outs convert_unique(NodeCtx &c) {
  KILN_TRY(need_inputs(c, 1));
  AttrMap a{{"sorted", c.attr_int("sorted", 1)}};
  if (c.has_attr("axis")) a["axis"] = c.attr_int("axis", 0);
  const int n = static_cast<int>(std::max<size_t>(c.num_outputs, 1));
  if (n > 4) return c.error("has more than four outputs");
  return c.op_n("kiln.unique", {c.input(0)}, std::move(a), n);
}

Outs convert_eye_like(NodeCtx &c) {
  KILN_TRY(need_inputs(c, 1));
  AttrMap a{{"k", c.attr_int("k", 0)}};
  DType dt = c.input(0)->type.dtype;
  if (c.has_attr("dtype")) {
    KILN_ASSIGN(dt, c.attr_dtype("dtype"));
  }
  a["dtype"] = dt;
  return one(c.op("kiln.eye_like", {c.input(0)}, std::move(a)));
}

Outs convert_simple(NodeCtx &c, std::string_view op, size_t nreq, size_t nmax, AttrMap a) {
  KILN_TRY(need_inputs(c, nreq));
  std::vector<Value *> ins;
  for (size_t i = 0; i < nmax; ++i) ins.push_back(c.input(i));
  while (ins.size() > nreq && !ins.back()) ins.pop_back();
  return one(c.op(op, ins, std::move(a)));
}

} // namespace

void register_onnx_shape_2(ConverterTable &t) {
  t.add("", "Pad", convert_pad);
  t.add("", "ConstantOfShape", convert_constant_of_shape);
  t.add("", "DepthToSpace", [](NodeCtx &c) { return convert_depth_space(c, "kiln.depth_to_space"); });
  t.add("", "SpaceToDepth", [](NodeCtx &c) { return convert_depth_space(c, "kiln.space_to_depth"); });
  t.add("", "Compress", convert_compress);
  t.add("", "Unique", convert_unique);
  t.add("", "EyeLike", convert_eye_like);
  t.add("", "Range", [](NodeCtx &c) { return convert_simple(c, "kiln.range", 3, 3, {}); });
  t.add("", "NonZero", [](NodeCtx &c) { return convert_simple(c, "kiln.nonzero", 1, 1, {}); });
  t.add("", "OneHot", [](NodeCtx &c) {
    return convert_simple(c, "kiln.one_hot", 3, 3, {{"axis", c.attr_int("axis", -1)}});
  });
  t.add("", "Trilu", [](NodeCtx &c) {
    return convert_simple(c, "kiln.trilu", 1, 2, {{"upper", c.attr_int("upper", 1)}});
  });
  t.add("", "ReverseSequence", [](NodeCtx &c) {
    return convert_simple(c, "kiln.reverse_sequence", 2, 2,
                          {{"batch_axis", c.attr_int("batch_axis", 1)},
                           {"time_axis", c.attr_int("time_axis", 0)}});
  });
  t.add("", "TensorScatter", [](NodeCtx &c) {
    return convert_simple(c, "kiln.tensor_scatter", 2, 3,
                          {{"axis", c.attr_int("axis", -2)},
                           {"mode", c.attr_str("mode", "linear")}});
  });
  t.add("", "CenterCropPad", [](NodeCtx &c) {
    AttrMap a;
    if (c.has_attr("axes")) a["axes"] = c.attr_ints("axes");
    return convert_simple(c, "kiln.center_crop_pad", 2, 2, std::move(a));
  });
}

} // namespace kiln::onnx_fe
