// If, Loop and Scan (opset 9+ form): bodies become regions of kiln.if / kiln.loop / kiln.scan.
#include "frontend/onnx/convert.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

namespace {

Result<std::vector<Value *>> convert_if(NodeCtx &c) {
  KILN_ASSIGN(auto then_g, c.import_subgraph("then_branch", {}));
  KILN_ASSIGN(auto else_g, c.import_subgraph("else_branch", {}));
  if (then_g->results.size() != c.num_outputs || else_g->results.size() != c.num_outputs)
    return c.error("branches must produce one value per output");
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(then_g));
  regions.push_back(std::move(else_g));
  auto r = c.builder().create_with_regions("kiln.if", {c.input(0)}, {}, std::move(regions),
                                           static_cast<int>(c.num_outputs));
  if (!r) return c.error(r.status().message());
  return r;
}

Result<std::vector<Value *>> convert_loop(NodeCtx &c) {
  std::vector<TensorType> hints = {TensorType{DType::i64, {}, true},
                                   TensorType{DType::boolean, {}, true}};
  for (size_t i = 2; i < c.in.size(); ++i) {
    if (!c.in[i]) return c.error("loop-carried values cannot be omitted");
    TensorType t = c.in[i]->type;
    // Loop-carried values may change shape between iterations: keep only the rank.
    if (t.ranked) t.dims.assign(t.dims.size(), kDynamic);
    hints.push_back(t);
  }
  KILN_ASSIGN(auto body, c.import_subgraph("body", hints));
  std::vector<Value *> operands = {c.input(0), c.input(1)};
  for (size_t i = 2; i < c.in.size(); ++i) operands.push_back(c.in[i]);
  size_t nres = body->results.size() - 1;
  if (body->results.size() < 1 + (c.in.size() - 2)) return c.error("body has too few outputs");
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(body));
  auto r = c.builder().create_with_regions("kiln.loop", operands, {}, std::move(regions),
                                           static_cast<int>(nres));
  if (!r) return c.error(r.status().message());
  return r;
}

Result<std::vector<Value *>> convert_scan(NodeCtx &c) {
  if (c.opset < 9)
    return c.error("Scan-8 (with batch axis and sequence_lens) is not supported; use opset 9+");
  int64_t m = c.attr_int("num_scan_inputs", 0);
  int64_t n = static_cast<int64_t>(c.in.size()) - m;
  if (m < 1 || n < 0) return c.error("bad num_scan_inputs");
  auto axes = c.attr_ints("scan_input_axes", std::vector<int64_t>(static_cast<size_t>(m), 0));
  if (axes.size() != static_cast<size_t>(m))
    return c.error(fmt::format("scan_input_axes has {} entries for {} scan inputs", axes.size(), m));
  std::vector<TensorType> hints;
  for (int64_t i = 0; i < static_cast<int64_t>(c.in.size()); ++i) {
    if (!c.in[i]) return c.error("Scan inputs cannot be omitted");
    TensorType t = c.in[i]->type;
    if (i >= n) {
      if (!t.ranked) return c.error("scan inputs must have a known rank");
      int64_t ax = axes[static_cast<size_t>(i - n)];
      if (ax < 0) ax += t.rank();
      if (ax < 0 || ax >= t.rank()) return c.error("scan_input_axes out of range");
      t.dims.erase(t.dims.begin() + ax);
    }
    hints.push_back(t);
  }
  KILN_ASSIGN(auto body, c.import_subgraph("body", hints));
  AttrMap attrs;
  attrs["num_scan_inputs"] = m;
  for (const char *k : {"scan_input_axes", "scan_input_directions", "scan_output_axes",
                        "scan_output_directions"})
    if (c.has_attr(k)) attrs[k] = c.attr_ints(k);
  size_t nres = body->results.size();
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(body));
  auto r = c.builder().create_with_regions("kiln.scan", c.in, std::move(attrs), std::move(regions),
                                           static_cast<int>(nres));
  if (!r) return c.error(r.status().message());
  return r;
}

} // namespace

void register_onnx_control(ConverterTable &t) {
  t.add("", "If", convert_if);
  t.add("", "Loop", convert_loop);
  t.add("", "Scan", convert_scan);
}

} // namespace kiln::onnx_fe
