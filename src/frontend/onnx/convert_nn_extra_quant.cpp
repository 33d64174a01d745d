// ONNX converters for quantisation: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,
// QLinearMatMul, QLinearConv. QuantizeLinear / DequantizeLinear take the float8, float4 and
// int4 / uint4 / int2 / uint2 types (kiln.quantize_linear checks the combination).
#include "frontend/onnx/convert_nn_extra_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

namespace {

// axis / block_size, checked for the opset that introduced them.
Result<AttrMap> quant_attrs(NodeCtx &c) {
  AttrMap a{{"axis", c.attr_int("axis", 1)}};
  const int64_t block = c.attr_int("block_size", 0);
  if (block < 0) return c.error("block_size must be >= 0");
  if (block > 0) a["block_size"] = block;
  return a;
}

Outs convert_quantize(NodeCtx &c) {
  KILN_ASSIGN(AttrMap a, quant_attrs(c));
  if (c.has_attr("output_dtype") && c.attr_int("output_dtype", 0) != 0) {
    KILN_ASSIGN(DType dt, c.attr_dtype("output_dtype"));
    if (c.has_input(2) && c.input(2)->type.dtype != dt)
      return c.error("output_dtype does not match the zero point's dtype");
    a["output_dtype"] = dt;
  }
  const int64_t sat = c.attr_int("saturate", 1);
  if (sat != 0 && sat != 1) return c.error(fmt::format("saturate must be 0 or 1, got {}", sat));
  if (sat == 0) a["saturate"] = int64_t(0);
  if (c.has_attr("precision") && c.attr_int("precision", 0) != 0)
    return c.error("attribute 'precision' is not supported");
  return one(c.op("kiln.quantize_linear", {c.input(0), c.input(1), c.input(2)}, a));
}

Outs convert_dequantize(NodeCtx &c) {
  KILN_ASSIGN(AttrMap a, quant_attrs(c));
  if (c.has_attr("output_dtype") && c.attr_int("output_dtype", 0) != 0) {
    KILN_ASSIGN(DType dt, c.attr_dtype("output_dtype"));
    if (dt != c.input(1)->type.dtype)
      return c.error("output_dtype different from the scale's dtype is not supported");
  }
  return one(c.op("kiln.dequantize_linear", {c.input(0), c.input(1), c.input(2)}, a));
}

Outs convert_dynamic_quantize(NodeCtx &c) {
  return c.op_n("kiln.dynamic_quantize_linear", {c.input(0)}, {}, 3);
}

Outs convert_qlinear_matmul(NodeCtx &c) {
  std::vector<Value *> ops;
  for (size_t i = 0; i < 8; ++i) {
    if (!c.has_input(i)) return c.error(fmt::format("input {} is required", i));
    ops.push_back(c.input(i));
  }
  return one(c.op("kiln.qlinear_matmul", ops));
}

Outs convert_qlinear_conv(NodeCtx &c) {
  std::vector<Value *> ops;
  for (size_t i = 0; i < 8; ++i) {
    if (!c.has_input(i)) return c.error(fmt::format("input {} is required", i));
    ops.push_back(c.input(i));
  }
  if (c.has_input(8)) ops.push_back(c.input(8));
  const Value *w = c.input(3);
  if (!w->type.ranked || w->type.rank() < 3) return c.error("weight must have rank >= 3");
  const size_t r = static_cast<size_t>(w->type.rank() - 2);
  AttrMap a{{"group", c.attr_int("group", 1)},
            {"strides", c.attr_ints("strides", std::vector<int64_t>(r, 1))},
            {"dilations", c.attr_ints("dilations", std::vector<int64_t>(r, 1))},
            {"pads", c.attr_ints("pads", std::vector<int64_t>(2 * r, 0))},
            {"auto_pad", c.attr_str("auto_pad", "NOTSET")}};
  if (c.has_attr("kernel_shape")) {
    std::vector<int64_t> ks = c.attr_ints("kernel_shape");
    for (size_t d = 0; d < ks.size() && d < r; ++d)
      if (w->type.dims[d + 2] >= 0 && ks[d] != w->type.dims[d + 2])
        return c.error("kernel_shape does not match the weight's shape");
    if (ks.size() != r) return c.error("kernel_shape does not match the weight's rank");
  }
  return one(c.op("kiln.qlinear_conv", ops, a));
}

} // namespace

void register_onnx_nn_extra_quant(ConverterTable &t) {
  t.add("", "QuantizeLinear", convert_quantize);
  t.add("", "DequantizeLinear", convert_dequantize);
  t.add("", "DynamicQuantizeLinear", convert_dynamic_quantize);
  t.add("", "QLinearMatMul", convert_qlinear_matmul);
  t.add("", "QLinearConv", convert_qlinear_conv);
}

} // namespace kiln::onnx_fe
