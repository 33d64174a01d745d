// ONNX nn converters: contractions here; convolutions and pooling in convert_nn_conv.cpp and
// convert_nn_pool.cpp.
#include "frontend/onnx/convert_nn_internal.h"

namespace kiln::onnx_fe {

namespace {

Outs convert_gemm(NodeCtx &c) {
  if (c.opset < 7 && c.has_input(2) && c.attr_int("broadcast", 0) == 0 && c.input(2)->type.ranked &&
      c.input(0)->type.ranked && c.input(2)->type.rank() != 2)
    return c.error("C must be 2-D when 'broadcast' is 0");
  AttrMap a{{"trans_a", c.attr_int("transA", 0)},
            {"trans_b", c.attr_int("transB", 0)},
            {"alpha", c.attr_float("alpha", 1.0)},
            {"beta", c.attr_float("beta", 1.0)}};
  std::vector<Value *> ops{c.input(0), c.input(1)};
  if (c.has_input(2)) ops.push_back(c.input(2));
  return one(c.op("kiln.gemm", ops, a));
}

} // namespace

void register_onnx_nn(ConverterTable &t) {
  t.add("", "MatMul", [](NodeCtx &c) { return one(c.op("kiln.matmul", {c.input(0), c.input(1)})); });
  t.add("", "MatMulInteger", [](NodeCtx &c) {
    return one(c.op("kiln.matmul_integer", {c.input(0), c.input(1), c.input(2), c.input(3)}));
  });
  t.add("", "Gemm", convert_gemm);
  t.add("", "Einsum", [](NodeCtx &c) -> Outs {
    if (!c.has_attr("equation")) return c.error("attribute 'equation' is missing");
    return one(c.op("kiln.einsum", c.in, {{"equation", c.attr_str("equation", "")}}));
  });
  t.add("", "Det", [](NodeCtx &c) { return one(c.op("kiln.det", {c.input(0)})); });
  register_onnx_nn_conv(t);
  register_onnx_nn_extra(t);
}

} // namespace kiln::onnx_fe
