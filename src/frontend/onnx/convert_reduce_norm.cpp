// ONNX normalisations and losses: LayerNormalization, RMSNormalization, BatchNormalization,
// InstanceNormalization, GroupNormalization, LRN, LpNormalization, MeanVarianceNormalization,
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
#include "frontend/onnx/convert.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

void register_onnx_norm(ConverterTable &t);

namespace {

// Number of leading outputs to produce (up to the last used one, at least 1).
int used_outputs(const NodeCtx &c, int max) {
  int n = 1;
  for (size_t i = 0; i < c.output_used.size() && static_cast<int>(i) < max; ++i)
    if (c.output_used[i]) n = static_cast<int>(i) + 1;
  return n;
}

Result<int64_t> input_rank(const NodeCtx &c) {
  const TensorType &t = c.input(0)->type;
  if (!t.ranked) return c.error("the input's rank must be known at import");
  return t.rank();
}

// Axes axis..rank-1 (axis may be negative).
Result<std::vector<int64_t>> trailing_axes(const NodeCtx &c, int64_t axis) {
  KILN_ASSIGN(int64_t rank, input_rank(c));
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return c.error(fmt::format("axis {} is out of range for rank {}", axis, rank));
  std::vector<int64_t> axes;
  for (int64_t d = a; d < rank; ++d) axes.push_back(d);
  return axes;
}

Outs convert_layer_norm(NodeCtx &c, const std::string &kind) {
  KILN_ASSIGN(auto axes, trailing_axes(c, c.attr_int("axis", -1)));
  AttrMap a;
  a["kind"] = kind;
  a["axes"] = axes;
  a["epsilon"] = c.attr_float("epsilon", 1e-5);
  const int nres = kind == "rms" ? 1 : used_outputs(c, 3);
  if (nres > 1) {
    KILN_ASSIGN(DType sd, c.attr_dtype("stash_type", 1));
    a["stats_dtype"] = sd;
  }
  std::vector<Value *> ops{c.input(0), c.input(1)};
  if (kind != "rms") ops.push_back(c.input(2));
  return c.op_n("kiln.normalize", ops, std::move(a), nres);
}

Outs convert_batch_norm(NodeCtx &c) {
  for (size_t i = 0; i < 5; ++i)
    if (!c.has_input(i)) return c.error("BatchNormalization needs 5 inputs");
  if (c.opset < 9 && c.attr_int("spatial", 1) != 1)
    return c.error("spatial = 0 (per-activation statistics) is not supported");
  const bool training = c.opset >= 14 && c.attr_int("training_mode", 0) != 0;
  const int nres = used_outputs(c, 5);
  if (!training && nres > 1)
    return c.error("statistics outputs are only supported with training_mode = 1 (opset >= 14)");
  AttrMap a;
  a["epsilon"] = c.attr_float("epsilon", 1e-5);
  a["momentum"] = c.attr_float("momentum", 0.9);
  a["training"] = int64_t(training ? 1 : 0);
  std::vector<Value *> ops(c.in.begin(), c.in.begin() + 5);
  return c.op_n("kiln.batch_norm", ops, std::move(a), training ? 3 : 1);
}

Outs convert_instance_norm(NodeCtx &c) {
  KILN_ASSIGN(int64_t rank, input_rank(c));
  if (rank < 3) return c.error("the input must have rank >= 3 (N, C, D1, ...)");
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d) axes.push_back(d);
  AttrMap a;
  a["kind"] = std::string("standard");
  a["axes"] = axes;
  a["epsilon"] = c.attr_float("epsilon", 1e-5);
  a["param_axis"] = int64_t(1);
  KILN_ASSIGN(Value *v, c.op("kiln.normalize", {c.input(0), c.input(1), c.input(2)}, std::move(a)));
  return std::vector<Value *>{v};
}

Outs convert_group_norm(NodeCtx &c) {
  if (!c.has_attr("num_groups")) return c.error("attribute 'num_groups' is required");
  AttrMap a;
  a["num_groups"] = c.attr_int("num_groups", 1);
  a["epsilon"] = c.attr_float("epsilon", 1e-5);
  // Opset 18 scales and shifts per group; 21 per channel.
  a["scale_per"] = std::string(c.opset < 21 ? "group" : "channel");
  KILN_ASSIGN(Value *v, c.op("kiln.group_norm", {c.input(0), c.input(1), c.input(2)}, std::move(a)));
  return std::vector<Value *>{v};
}

Outs convert_lrn(NodeCtx &c) {
  if (!c.has_attr("size")) return c.error("attribute 'size' is required");
  AttrMap a;
  a["size"] = c.attr_int("size", 1);
  a["alpha"] = c.attr_float("alpha", 1e-4);
  a["beta"] = c.attr_float("beta", 0.75);
  a["bias"] = c.attr_float("bias", 1.0);
  KILN_ASSIGN(Value *v, c.op("kiln.lrn", {c.input(0)}, std::move(a)));
  return std::vector<Value *>{v};
}

Outs convert_lp_norm(NodeCtx &c) {
  AttrMap a;
  a["axis"] = c.attr_int("axis", -1);
  a["p"] = c.attr_int("p", 2);
  KILN_ASSIGN(Value *v, c.op("kiln.lp_norm", {c.input(0)}, std::move(a)));
  return std::vector<Value *>{v};
}

Outs convert_mvn(NodeCtx &c) {
  if (c.opset < 9) return c.error("MeanVarianceNormalization before opset 9 is not supported");
  AttrMap a;
  a["kind"] = std::string("mvn");
  a["axes"] = c.attr_ints("axes", {0, 2, 3});
  a["epsilon"] = 1e-9;
  KILN_ASSIGN(Value *v, c.op("kiln.normalize", {c.input(0)}, std::move(a)));
  return std::vector<Value *>{v};
}

AttrMap loss_attrs(const NodeCtx &c) {
  AttrMap a;
  a["reduction"] = c.attr_str("reduction", "mean");
  if (c.has_attr("ignore_index")) a["ignore_index"] = c.attr_int("ignore_index", 0);
  return a;
}

Outs convert_nll(NodeCtx &c) {
  KILN_ASSIGN(Value *v, c.op("kiln.nll_loss", {c.input(0), c.input(1), c.input(2)}, loss_attrs(c)));
  return std::vector<Value *>{v};
}

Outs convert_sce(NodeCtx &c) {
  AttrMap s;
  s["kind"] = std::string("log_softmax");
  s["axis"] = int64_t(1);
  KILN_ASSIGN(Value *lp, c.op("kiln.softmax", {c.input(0)}, std::move(s)));
  KILN_ASSIGN(Value *loss, c.op("kiln.nll_loss", {lp, c.input(1), c.input(2)}, loss_attrs(c)));
  return std::vector<Value *>{loss, lp};
}

} // namespace

void register_onnx_norm(ConverterTable &t) {
  t.add("", "LayerNormalization", [](NodeCtx &c) { return convert_layer_norm(c, "standard"); });
  t.add("", "RMSNormalization", [](NodeCtx &c) { return convert_layer_norm(c, "rms"); });
  t.add("", "BatchNormalization", convert_batch_norm);
  t.add("", "InstanceNormalization", convert_instance_norm);
  t.add("", "GroupNormalization", convert_group_norm);
  t.add("", "LRN", convert_lrn);
  t.add("", "LpNormalization", convert_lp_norm);
  t.add("", "MeanVarianceNormalization", convert_mvn);
  t.add("", "NegativeLogLikelihoodLoss", convert_nll);
  t.add("", "SoftmaxCrossEntropyLoss", convert_sce);
}

} // namespace kiln::onnx_fe
