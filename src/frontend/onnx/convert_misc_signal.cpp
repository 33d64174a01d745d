// ONNX signal ops -> kiln.dft / kiln.stft / kiln.window / kiln.mel_weight_matrix.
#include "frontend/onnx/convert_misc_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe::misc {
namespace {

Status float_input(const NodeCtx &c, size_t i) {
  if (!c.has_input(i) || !is_float(c.input(i)->type.dtype))
    return c.error(fmt::format("input {} must be a floating-point tensor", i));
  return Status::ok();
}

Status int_input(const NodeCtx &c, size_t i) {
  if (c.has_input(i) && !is_integer(c.input(i)->type.dtype))
    return c.error(fmt::format("input {} must be an integer tensor", i));
  return Status::ok();
}

Outs convert_dft(NodeCtx &c) {
  KILN_TRY(float_input(c, 0));
  KILN_TRY(int_input(c, 1));
  AttrMap a;
  a["inverse"] = c.attr_int("inverse", 0);
  a["onesided"] = c.attr_int("onesided", 0);
  std::vector<Value *> ops{c.input(0), c.input(1)};
  if (c.opset >= 20) {
    KILN_TRY(int_input(c, 2));
    a["axis"] = int64_t(-2);
    ops.push_back(c.input(2));
  } else {
    a["axis"] = c.attr_int("axis", 1);
  }
  KILN_ASSIGN(Value * v, c.op("kiln.dft", ops, a));
  return std::vector<Value *>{v};
}

Outs convert_stft(NodeCtx &c) {
  KILN_TRY(float_input(c, 0));
  KILN_TRY(int_input(c, 1));
  KILN_TRY(int_input(c, 3));
  if (c.has_input(2)) KILN_TRY(float_input(c, 2));
  AttrMap a;
  a["onesided"] = c.attr_int("onesided", 1);
  KILN_ASSIGN(Value * v, c.op("kiln.stft", {c.input(0), c.input(1), c.input(2), c.input(3)}, a));
  return std::vector<Value *>{v};
}

Outs convert_window(NodeCtx &c, const char *kind) {
  KILN_TRY(int_input(c, 0));
  AttrMap a;
  a["kind"] = std::string(kind);
  a["periodic"] = c.attr_int("periodic", 1);
  KILN_ASSIGN(DType dt, c.attr_dtype("output_datatype", 1));
  a["dtype"] = dt;
  KILN_ASSIGN(Value * v, c.op("kiln.window", {c.input(0)}, a));
  return std::vector<Value *>{v};
}

Outs convert_mel(NodeCtx &c) {
  for (size_t i = 0; i < 3; ++i) KILN_TRY(int_input(c, i));
  KILN_TRY(float_input(c, 3));
  KILN_TRY(float_input(c, 4));
  AttrMap a;
  KILN_ASSIGN(DType dt, c.attr_dtype("output_datatype", 1));
  a["dtype"] = dt;
  KILN_ASSIGN(Value * v, c.op("kiln.mel_weight_matrix",
                             {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)}, a));
  return std::vector<Value *>{v};
}

} // namespace

void register_signal(ConverterTable &t) {
  t.add("", "DFT", convert_dft);
  t.add("", "STFT", convert_stft);
  t.add("", "HannWindow", [](NodeCtx &c) { return convert_window(c, "hann"); });
  t.add("", "HammingWindow", [](NodeCtx &c) { return convert_window(c, "hamming"); });
  t.add("", "BlackmanWindow", [](NodeCtx &c) { return convert_window(c, "blackman"); });
  t.add("", "MelWeightMatrix", convert_mel);
}

} // namespace kiln::onnx_fe::misc
