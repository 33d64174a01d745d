// ONNX converters for convolutions (Conv, ConvTranspose, ConvInteger, DeformConv, Col2Im) and
// pooling (MaxPool, AveragePool, LpPool, global pools, MaxUnpool).
#include "frontend/onnx/convert_nn_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

namespace {

// Copies the window attributes present on the node (same names and meaning in the core ops).
AttrMap window_attrs(const NodeCtx &c) {
  AttrMap a;
  for (const char *n : {"kernel_shape", "strides", "dilations", "pads", "output_padding",
                        "output_shape"})
    if (c.has_attr(n)) a[n] = c.attr_ints(n);
  for (const char *n : {"group", "ceil_mode", "count_include_pad", "storage_order", "offset_group"})
    if (c.has_attr(n)) a[n] = c.attr_int(n, 0);
  if (c.has_attr("auto_pad")) {
    std::string ap = c.attr_str("auto_pad", "NOTSET");
    a["auto_pad"] = ap.empty() ? std::string("NOTSET") : ap;
  }
  return a;
}

std::vector<Value *> inputs(const NodeCtx &c, size_t n) {
  std::vector<Value *> v;
  for (size_t i = 0; i < n; ++i) v.push_back(c.input(i));
  while (!v.empty() && !v.back()) v.pop_back();
  return v;
}

Outs convert_max_pool(NodeCtx &c) {
  const bool idx = c.num_outputs > 1 && c.output_used[1];
  if (!c.has_attr("kernel_shape")) return c.error("attribute 'kernel_shape' is missing");
  return c.op_n("kiln.max_pool", {c.input(0)}, window_attrs(c), idx ? 2 : 1);
}

Outs convert_pool(NodeCtx &c, const char *op) {
  if (!c.has_attr("kernel_shape")) return c.error("attribute 'kernel_shape' is missing");
  AttrMap a = window_attrs(c);
  if (std::string_view(op) == "kiln.lp_pool") {
    int64_t p = c.attr_int("p", 2);
    if (c.opset < 2 && c.has_attr("p")) {
      const double pf = c.attr_float("p", 2.0);
      if (pf != static_cast<double>(static_cast<int64_t>(pf)))
        return c.error(fmt::format("non-integer p {} is not supported", pf));
      p = static_cast<int64_t>(pf);
    }
    a["p"] = p;
  }
  return one(c.op(op, {c.input(0)}, a));
}

Outs convert_global(NodeCtx &c, const char *mode) {
  AttrMap a{{"mode", std::string(mode)}};
  if (std::string_view(mode) == "lp") {
    int64_t p = c.attr_int("p", 2);
    if (c.opset < 2 && c.has_attr("p")) p = static_cast<int64_t>(c.attr_float("p", 2.0));
    a["p"] = p;
  }
  return one(c.op("kiln.global_pool", {c.input(0)}, a));
}

} // namespace

void register_onnx_nn_conv(ConverterTable &t) {
  t.add("", "Conv", [](NodeCtx &c) { return one(c.op("kiln.conv", inputs(c, 3), window_attrs(c))); });
  t.add("", "ConvTranspose", [](NodeCtx &c) {
    return one(c.op("kiln.conv_transpose", inputs(c, 3), window_attrs(c)));
  });
  t.add("", "ConvInteger", [](NodeCtx &c) {
    return one(c.op("kiln.conv_integer", inputs(c, 4), window_attrs(c)));
  });
  t.add("", "DeformConv", [](NodeCtx &c) {
    return one(c.op("kiln.deform_conv", inputs(c, 5), window_attrs(c)));
  });
  t.add("", "Col2Im", [](NodeCtx &c) {
    return one(c.op("kiln.col2im", inputs(c, 3), window_attrs(c)));
  });
  t.add("", "MaxPool", convert_max_pool);
  t.add("", "AveragePool", [](NodeCtx &c) { return convert_pool(c, "kiln.avg_pool"); });
  t.add("", "LpPool", [](NodeCtx &c) { return convert_pool(c, "kiln.lp_pool"); });
  t.add("", "GlobalAveragePool", [](NodeCtx &c) { return convert_global(c, "avg"); });
  t.add("", "GlobalMaxPool", [](NodeCtx &c) { return convert_global(c, "max"); });
  t.add("", "GlobalLpPool", [](NodeCtx &c) { return convert_global(c, "lp"); });
  t.add("", "MaxUnpool", [](NodeCtx &c) {
    return one(c.op("kiln.max_unpool", inputs(c, 3), window_attrs(c)));
  });
}

} // namespace kiln::onnx_fe
