// ONNX converters of the misc family: Attention, RotaryEmbedding, LinearAttention,
// CausalConvWithState and the training optimisers (RNNs and signal ops are in
// convert_misc_rnn.cpp / convert_misc_signal.cpp).
#include "frontend/onnx/convert_misc_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {
namespace {

Status expect_float_input(const NodeCtx &c, size_t i, const char *what) {
  if (!c.has_input(i)) return c.error(fmt::format("input {} ({}) is required", i, what));
  if (!is_float(c.input(i)->type.dtype))
    return c.error(fmt::format("{} of dtype {} is not supported", what,
                               dtype_name(c.input(i)->type.dtype)));
  return Status::ok();
}

Outs convert_attention(NodeCtx &c) {
  for (size_t i = 0; i < 3; ++i) KILN_TRY(expect_float_input(c, i, "Q/K/V"));
  AttrMap a;
  for (const char *n : {"q_num_heads", "kv_num_heads", "is_causal", "qk_matmul_output_mode"})
    if (c.has_attr(n)) a[n] = c.attr_int(n, 0);
  if (c.has_attr("scale")) a["scale"] = c.attr_float("scale", 1.0);
  if (c.has_attr("softcap")) a["softcap"] = c.attr_float("softcap", 0.0);
  for (const char *n : {"left_window_size", "right_window_size"})
    if (c.attr_int(n, -1) != -1) return c.error(fmt::format("attribute {} is not supported", n));
  if (c.has_attr("softmax_precision")) {
    // The reference computes in double, at least as precise as any requested precision.
    KILN_ASSIGN(DType sp, c.attr_dtype("softmax_precision"));
    if (!is_float(sp)) return c.error("softmax_precision must be a float type");
  }
  std::vector<Value *> ops;
  for (size_t i = 0; i < 7; ++i) ops.push_back(c.input(i));
  KILN_ASSIGN(auto rs, c.op_n("kiln.attention", ops, a, 4));
  return onnx_fe::misc::used_outputs(c, rs);
}

Outs convert_rotary(NodeCtx &c) {
  KILN_TRY(expect_float_input(c, 0, "input"));
  AttrMap a;
  for (const char *n : {"interleaved", "rotary_embedding_dim", "num_heads"})
    if (c.has_attr(n)) a[n] = c.attr_int(n, 0);
  KILN_ASSIGN(Value * v, c.op("kiln.rotary_embedding",
                             {c.input(0), c.input(1), c.input(2), c.input(3)}, a));
  return std::vector<Value *>{v};
}

Outs convert_linear_attention(NodeCtx &c) {
  for (size_t i = 0; i < 3; ++i) KILN_TRY(expect_float_input(c, i, "query/key/value"));
  AttrMap a;
  if (!c.has_attr("q_num_heads") || !c.has_attr("kv_num_heads"))
    return c.error("q_num_heads and kv_num_heads are required");
  a["q_num_heads"] = c.attr_int("q_num_heads", 0);
  a["kv_num_heads"] = c.attr_int("kv_num_heads", 0);
  a["scale"] = c.attr_float("scale", 0.0);
  a["update_rule"] = c.attr_str("update_rule", "gated_delta");
  std::vector<Value *> ops;
  for (size_t i = 0; i < 6; ++i) ops.push_back(c.input(i));
  KILN_ASSIGN(auto rs, c.op_n("kiln.linear_attention", ops, a, 2));
  return onnx_fe::misc::used_outputs(c, rs);
}

Outs convert_causal_conv(NodeCtx &c) {
  KILN_TRY(expect_float_input(c, 0, "input"));
  AttrMap a;
  a["activation"] = c.attr_str("activation", "none");
  KILN_ASSIGN(auto rs, c.op_n("kiln.causal_conv_with_state",
                              {c.input(0), c.input(1), c.input(2), c.input(3)}, a, 2));
  return onnx_fe::misc::used_outputs(c, rs);
}

// Adagrad / Adam / Momentum: R, T, then groups of tensors; results in ONNX order.
Outs convert_optimizer(NodeCtx &c, const char *core, int per_group,
                       std::initializer_list<const char *> float_attrs) {
  const size_t n_in = c.in.size();
  if (n_in < 2 + static_cast<size_t>(per_group) || (n_in - 2) % per_group != 0)
    return c.error(fmt::format("expected R, T and groups of {} inputs", per_group));
  for (Value *v : c.in)
    if (!v) return c.error("optional inputs are not supported");
  const size_t n = (n_in - 2) / per_group;
  AttrMap a;
  for (const char *name : float_attrs)
    if (c.has_attr(name)) a[name] = c.attr_float(name, 0.0);
  if (c.has_attr("mode")) a["mode"] = c.attr_str("mode", "standard");
  const int n_out = static_cast<int>(n) * (per_group - 1);
  KILN_ASSIGN(auto rs, c.op_n(core, c.in, a, n_out));
  return onnx_fe::misc::used_outputs(c, rs);
}

} // namespace

void register_onnx_misc(ConverterTable &t) {
  t.add("", "Attention", convert_attention);
  t.add("", "RotaryEmbedding", convert_rotary);
  t.add("", "LinearAttention", convert_linear_attention);
  t.add("", "CausalConvWithState", convert_causal_conv);
  const std::string tr = "ai.onnx.preview.training";
  t.add(tr, "Adagrad", [](NodeCtx &c) {
    return convert_optimizer(c, "kiln.adagrad", 3, {"decay_factor", "epsilon", "norm_coefficient"});
  });
  t.add(tr, "Adam", [](NodeCtx &c) {
    return convert_optimizer(c, "kiln.adam", 4,
                             {"alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"});
  });
  t.add(tr, "Momentum", [](NodeCtx &c) {
    if (!c.has_attr("alpha") || !c.has_attr("beta") || !c.has_attr("mode") ||
        !c.has_attr("norm_coefficient"))
      return Outs(c.error("alpha, beta, mode and norm_coefficient are required"));
    return convert_optimizer(c, "kiln.momentum", 3, {"alpha", "beta", "norm_coefficient"});
  });
  misc::register_rnn(t);
  misc::register_signal(t);
}

} // namespace kiln::onnx_fe
