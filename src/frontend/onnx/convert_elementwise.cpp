// ONNX elementwise ops -> kiln elementwise core ops (see ops/elementwise.h). The one-to-one
// mappings are tables; ops with versioned or structural semantics are in
// convert_elementwise_misc.cpp.
#include "frontend/onnx/convert_elementwise.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

Result<std::vector<Value *>> single(NodeCtx &c, std::string_view core, std::vector<Value *> ins,
                                    AttrMap attrs) {
  KILN_ASSIGN(Value * v, c.op(core, std::move(ins), std::move(attrs)));
  return std::vector<Value *>{v};
}

namespace {

struct FloatAttr {
  const char *name; // same name on the ONNX node and the core op
  double dflt;
};

struct UnaryMap {
  const char *onnx;
  const char *core;
  std::vector<FloatAttr> attrs;
};

const std::vector<UnaryMap> &unary_maps() {
  static const std::vector<UnaryMap> maps = {
      {"Abs", "kiln.abs", {}},
      {"Neg", "kiln.neg", {}},
      {"Sign", "kiln.sign", {}},
      {"Relu", "kiln.relu", {}},
      {"Exp", "kiln.exp", {}},
      {"Log", "kiln.log", {}},
      {"Sqrt", "kiln.sqrt", {}},
      {"Reciprocal", "kiln.reciprocal", {}},
      {"Sin", "kiln.sin", {}},
      {"Cos", "kiln.cos", {}},
      {"Tan", "kiln.tan", {}},
      {"Asin", "kiln.asin", {}},
      {"Acos", "kiln.acos", {}},
      {"Atan", "kiln.atan", {}},
      {"Sinh", "kiln.sinh", {}},
      {"Cosh", "kiln.cosh", {}},
      {"Asinh", "kiln.asinh", {}},
      {"Acosh", "kiln.acosh", {}},
      {"Atanh", "kiln.atanh", {}},
      {"Erf", "kiln.erf", {}},
      {"Floor", "kiln.floor", {}},
      {"Ceil", "kiln.ceil", {}},
      {"Round", "kiln.round", {}},
      {"Sigmoid", "kiln.sigmoid", {}},
      {"Tanh", "kiln.tanh", {}},
      {"Softplus", "kiln.softplus", {}},
      {"Softsign", "kiln.softsign", {}},
      {"Mish", "kiln.mish", {}},
      {"HardSwish", "kiln.hard_swish", {}},
      {"IsNaN", "kiln.isnan", {}},
      {"Not", "kiln.not", {}},
      {"BitwiseNot", "kiln.bitwise_not", {}},
      {"LeakyRelu", "kiln.leaky_relu", {{"alpha", 0.01}}},
      {"Elu", "kiln.elu", {{"alpha", 1.0}}},
      {"Celu", "kiln.celu", {{"alpha", 1.0}}},
      {"ThresholdedRelu", "kiln.thresholded_relu", {{"alpha", 1.0}}},
      {"Swish", "kiln.swish", {{"alpha", 1.0}}},
      {"Selu", "kiln.selu", {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}}},
      {"HardSigmoid", "kiln.hard_sigmoid", {{"alpha", 0.2}, {"beta", 0.5}}},
      {"Shrink", "kiln.shrink", {{"bias", 0.0}, {"lambd", 0.5}}},
  };
  return maps;
}

struct BinaryMap {
  const char *onnx;
  const char *core;
};

const BinaryMap kBinaryMaps[] = {
    {"Add", "kiln.add"},
    {"Sub", "kiln.sub"},
    {"Mul", "kiln.mul"},
    {"Div", "kiln.div"},
    {"Pow", "kiln.pow"},
    {"PRelu", "kiln.prelu"},
    {"And", "kiln.and"},
    {"Or", "kiln.or"},
    {"Xor", "kiln.xor"},
    {"Equal", "kiln.equal"},
    {"Less", "kiln.less"},
    {"Greater", "kiln.greater"},
    {"LessOrEqual", "kiln.less_equal"},
    {"GreaterOrEqual", "kiln.greater_equal"},
    {"BitwiseAnd", "kiln.bitwise_and"},
    {"BitwiseOr", "kiln.bitwise_or"},
    {"BitwiseXor", "kiln.bitwise_xor"},
};

// Opsets before 7 had an explicit 'broadcast' attribute; with an 'axis' its alignment differs
// from numpy's.
Status check_legacy_broadcast(const NodeCtx &c) {
  if (c.opset < 7 && c.attr_int("broadcast", 0) != 0 && c.has_attr("axis"))
    return c.error("legacy broadcasting with an 'axis' attribute (opset < 7) is not supported");
  return Status::ok();
}

} // namespace

void register_onnx_elementwise(ConverterTable &t) {
  for (const UnaryMap &m : unary_maps()) {
    const UnaryMap *mp = &m;
    t.add("", m.onnx, [mp](NodeCtx &c) -> Result<std::vector<Value *>> {
      AttrMap attrs;
      for (const FloatAttr &a : mp->attrs) attrs[a.name] = c.attr_float(a.name, a.dflt);
      return single(c, mp->core, {c.input(0)}, std::move(attrs));
    });
  }
  for (const BinaryMap &m : kBinaryMaps) {
    const char *core = m.core;
    t.add("", m.onnx, [core](NodeCtx &c) -> Result<std::vector<Value *>> {
      KILN_TRY(check_legacy_broadcast(c));
      return single(c, core, {c.input(0), c.input(1)});
    });
  }
  register_onnx_elementwise_misc(t);
}

} // namespace kiln::onnx_fe
