// ONNX RNN, GRU and LSTM -> kiln.rnn.
#include "frontend/onnx/convert_misc_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe::misc {
namespace {

Result<std::vector<Value *>> convert_recurrent(NodeCtx &c, const char *cell, size_t n_in,
                                               int n_out) {
  if (!c.has_input(0) || !is_float(c.input(0)->type.dtype))
    return c.error("X must be a floating-point tensor");
  AttrMap a;
  a["cell"] = std::string(cell);
  a["direction"] = c.attr_str("direction", "forward");
  if (!c.has_attr("hidden_size")) {
    // hidden_size may be omitted: take it from R's last dim.
    const Value *r = c.input(2);
    if (!r || !r->type.ranked || r->type.rank() != 3 || r->type.dims[2] <= 0)
      return c.error("hidden_size is missing and cannot be derived from R");
    a["hidden_size"] = r->type.dims[2];
  } else {
    a["hidden_size"] = c.attr_int("hidden_size", 0);
  }
  if (c.has_attr("activations")) a["activations"] = c.attr_strs("activations");
  if (c.has_attr("activation_alpha")) a["activation_alpha"] = c.attr_floats("activation_alpha");
  if (c.has_attr("activation_beta")) a["activation_beta"] = c.attr_floats("activation_beta");
  if (c.has_attr("clip")) a["clip"] = c.attr_float("clip", 0.0);
  a["layout"] = c.attr_int("layout", 0);
  if (std::string(cell) == "gru") a["linear_before_reset"] = c.attr_int("linear_before_reset", 0);
  if (std::string(cell) == "lstm") a["input_forget"] = c.attr_int("input_forget", 0);
  std::vector<Value *> ops;
  for (size_t i = 0; i < n_in; ++i) ops.push_back(c.input(i));
  if (c.has_input(4) && !is_integer(c.input(4)->type.dtype))
    return c.error("sequence_lens must be an integer tensor");
  KILN_ASSIGN(auto rs, c.op_n("kiln.rnn", ops, a, n_out));
  return used_outputs(c, rs);
}

} // namespace

void register_rnn(ConverterTable &t) {
  t.add("", "RNN", [](NodeCtx &c) { return convert_recurrent(c, "rnn", 6, 2); });
  t.add("", "GRU", [](NodeCtx &c) { return convert_recurrent(c, "gru", 6, 2); });
  t.add("", "LSTM", [](NodeCtx &c) { return convert_recurrent(c, "lstm", 8, 3); });
}

} // namespace kiln::onnx_fe::misc
