// compile_to_artifact: the driver of graph IR -> kernels -> SPIR-V -> artifact.
#include "compiler/compiler.h"

#include "compiler/backends.h"
#include "compiler/lowering/lower.h"
#include "ir/op_registry.h"
#include "support/limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace kiln {

namespace compiler {
namespace {

const LoweringTable &lowerings() {
  static const LoweringTable table = [] {
    LoweringTable t;
    add_elementwise_lowerings(t);
    add_matmul_lowerings(t);
    add_conv_lowerings(t);
    add_pool_lowerings(t);
    add_shape_lowerings(t);
    add_reduce_lowerings(t);
    add_norm_lowerings(t);
    add_attention_lowerings(t);
    add_reduce_extension_lowerings(t);
    add_reduce_window_lowerings(t);
    add_seq_lowerings(t);
    add_index_lowerings(t);
    add_sampling_lowerings(t);
    add_conv_transpose_lowerings(t);
    add_quantize_lowerings(t);
    add_resize_lowerings(t);
    add_crop_pad_lowerings(t);
    return t;
  }();
  return table;
}

// The ops that contribute to the results (what run_dce keeps: ops with a used result and
// non-foldable ops), computed without mutating the caller's module.
std::unordered_set<const Op *> live_ops(const Graph &g, std::unordered_set<const Value *> &used) {
  std::unordered_set<const Op *> live;
  used.insert(g.results.begin(), g.results.end());
  for (auto it = g.ops.rbegin(); it != g.ops.rend(); ++it) {
    const Op &op = **it;
    bool keep = !op.def->foldable;
    for (const Value *r : op.results) keep = keep || used.count(r);
    if (!keep) continue;
    live.insert(&op);
    for (const Value *v : op.operands)
      if (v) used.insert(v);
  }
  return live;
}

Status check_static(const Value *v, const std::string &what) {
  if (!v->type.ranked || !v->type.is_static())
    return Status::error(fmt::format("{} has type {}; the Vulkan compiler needs static shapes",
                                     what, v->type.str()));
  // Checked before any buffer is sized from the dims (KILN_MAX_TENSOR_BYTES, docs/LIMITS.md).
  const int64_t max_bytes = limits().max_tensor_bytes;
  const int64_t max_elems = max_bytes / static_cast<int64_t>(dtype_size(v->type.dtype));
  int64_t n = 1;
  for (int64_t d : v->type.dims) n = (d != 0 && n > max_elems / d) ? max_elems + 1 : n * d;
  if (n > max_elems)
    return Status::error(fmt::format("{} ({}) is larger than the {}-byte tensor limit "
                                     "(KILN_MAX_TENSOR_BYTES)",
                                     what, v->type.str(), max_bytes));
  return Status::ok();
}

// Kernels hold the narrow types one a byte (scalar_type): i4 / u4 / i2 / u2 as i8 / u8, which
// reads them exactly, and float8 / float4 / e8m0 as their u8 bit pattern. So a narrow integer
// may only be produced by an op that wraps or clamps to its range (cast, quantize_linear) or
// copies elements; a narrow float may only be copied, decoded by a cast to a float or
// dequantize_linear (a table lookup), or rounded to by a cast or quantize_linear (a step-table
// search, families/narrow_encode.h). Everything else is refused by node, never computed on the
// bytes.
bool moves_elements(std::string_view name) {
  static const std::unordered_set<std::string_view> kMoves = {
      "kiln.reshape",  "kiln.squeeze", "kiln.unsqueeze",      "kiln.flatten",
      "kiln.identity", "kiln.transpose", "kiln.concat",       "kiln.slice",
      "kiln.split",    "kiln.gather",  "kiln.gather_elements", "kiln.gather_nd",
      "kiln.expand",   "kiln.tile",    "kiln.where",          "kiln.depth_to_space",
      "kiln.space_to_depth", "kiln.constant"};
  return kMoves.count(name) != 0;
}

Status check_narrow(const Op &op) {
  const std::string_view n = op.name();
  if (moves_elements(n)) return Status::ok();
  for (const Value *r : op.results) {
    const DType t = r->type.dtype;
    if (is_narrow_int(t) && n != "kiln.cast" && n != "kiln.quantize_linear")
      return Status::error(fmt::format("{}: a {} result has no compiled lowering for this op "
                                       "(only casts, quantize_linear and data movement produce "
                                       "narrow integers on a device)",
                                       op.describe(), dtype_name(t)));
    if (is_narrow_float(t) && n != "kiln.cast" && n != "kiln.quantize_linear")
      return Status::error(fmt::format("{}: a {} result has no compiled lowering for this op "
                                       "(only casts, quantize_linear and data movement produce "
                                       "float8 / float4 / e8m0 on a device)",
                                       op.describe(), dtype_name(t)));
  }
  for (const Value *v : op.operands)
    if (v && is_narrow_float(v->type.dtype) && n != "kiln.cast" &&
        n != "kiln.dequantize_linear" && n != "kiln.quantize_linear")
      return Status::error(fmt::format("{}: a {} operand has no compiled lowering for this op "
                                       "(only casts to a float, quantisation and data movement "
                                       "take float8 / float4 / e8m0 on a device)",
                                       op.describe(), dtype_name(v->type.dtype)));
  return Status::ok();
}

Status lower_op(LowerCtx &c, const Op &op, const std::unordered_set<const Value *> &used) {
  const std::string name(op.name());
  if (name == "kiln.constant") return Status::ok(); // placed on first use
  if (!op.regions.empty() || name == "kiln.if" || name == "kiln.loop" || name == "kiln.scan")
    return Status::error(op.describe() +
                         ": control flow has no Vulkan lowering yet (only straight-line graphs)");
  KILN_TRY(require_static(op));
  for (size_t i = 0; i < op.results.size(); ++i)
    KILN_TRY(check_static(op.results[i], fmt::format("{}: result {}", op.describe(), i)));
  bool all_empty = true;
  for (const Value *r : op.results) all_empty = all_empty && shape_numel(r->type.dims) == 0;
  if (all_empty) { // nothing to compute: empty tensors are never bound
    for (const Value *r : op.results) c.define(r);
    return Status::ok();
  }
  auto it = lowerings().find(name);
  if (it == lowerings().end()) return unsupported(op, name);
  KILN_TRY(it->second(c, op));
  for (size_t i = 0; i < op.results.size(); ++i) {
    const Value *r = op.results[i];
    if (const Epilogue *e = c.epilogue(r)) r = e->result(); // the root itself has no buffer
    if (used.count(r) && !c.has_buffer(r))
      return unsupported(op, fmt::format("result {} of {}", i, name));
  }
  return Status::ok();
}

// Graph results: a transient buffer becomes the output buffer itself; an input, a constant
// or a buffer already serving another output is copied into a fresh output buffer.
void bind_outputs(LowerCtx &c, const Graph &g) {
  Program &p = c.program();
  for (size_t j = 0; j < g.results.size(); ++j) {
    const Value *v = g.results[j];
    const int b = c.buffer_of(v);
    Buffer &buf = p.buffers[static_cast<size_t>(b)];
    if (buf.kind == BufKind::transient) {
      buf.kind = BufKind::output;
      buf.index = static_cast<uint32_t>(j);
      continue;
    }
    Buffer out;
    out.kind = BufKind::output;
    out.index = static_cast<uint32_t>(j);
    out.size = buf.size;
    p.buffers.push_back(std::move(out));
    if (p.buffers.back().size > 0)
      p.commands.push_back(Copy{b, static_cast<int>(p.buffers.size()) - 1});
  }
}

} // namespace
} // namespace compiler

Status check_precision(const kir::TargetDesc &t, Precision p) {
  switch (p) {
  case Precision::fp32: return Status::ok();
  case Precision::fp16:
    if (t.float16 && t.storage16) return Status::ok();
    return Status::error(fmt::format(
        "--precision fp16: target '{}' lacks {} (f16 arithmetic and storage); compile for a "
        "target that offers them (vulkan-lavapipe, vulkan-nvidia, cpu) or use --precision fp32",
        t.name,
        !t.float16 && !t.storage16 ? "shaderFloat16 and storageBuffer16BitAccess"
        : !t.float16               ? "shaderFloat16"
                                   : "storageBuffer16BitAccess"));
  case Precision::bf16:
    return Status::error(fmt::format(
        "--precision bf16: target '{}' cannot run bf16: kiln's kernel IR and its SPIR-V and C "
        "backends have no bf16 type yet (Vulkan would need VK_KHR_shader_bfloat16); use "
        "--precision fp16",
        t.name));
  }
  return Status::ok();
}

std::vector<std::string> target_omitted_passes(const kir::TargetDesc &t) {
  // kiln.sdpa computes scores and p x v as scalars in tiles of up to 4x4 per invocation.
  // Where contractions run on matrix units, unfused is faster: the C backend's matrix
  // microkernels (faster or even at every measured shape) and cooperative matrices
  // (vulkan-nvidia: bert-base s128 batch 8 fp16 3.454 -> 3.052 ms on an H100, same run).
  if (t.backend == "c" || t.cooperative_matrix) return {"fuse-attention"};
  return {};
}

std::vector<std::string> target_pipeline(const kir::TargetDesc &t, Precision p) {
  std::vector<std::string> names = precision_pipeline(p);
  const std::vector<std::string> omitted = target_omitted_passes(t);
  std::erase_if(names, [&](const std::string &n) {
    return std::find(omitted.begin(), omitted.end(), n) != omitted.end();
  });
  return names;
}

Result<std::vector<uint8_t>> compile_to_artifact(const Module &m, const kir::TargetDesc &t,
                                                 const CompileOptions &o, CompileStats *stats) {
  using namespace compiler;
  KILN_TRY(check_precision(t, o.precision));
  const Function *f = m.main();
  if (!f) return Status::error("the module has no function 'main'");
  const Graph &g = f->body;
  if (g.results.empty())
    return Status::error("the module's function 'main' has no outputs: there is nothing to "
                         "compile");
  Program p;
  p.target = t.name;
  p.precision_mode = std::string(precision_name(o.precision));
  if (o.auto_precision) {
    p.precision_mode = "auto";
    p.max_error = o.auto_precision->max_error;
    p.f32_nodes = o.auto_precision->f32_nodes;
    p.half_nodes = static_cast<uint32_t>(o.auto_precision->half_nodes);
    p.output_errors = o.auto_precision->output_errors;
  }
  KILN_ASSIGN(std::unique_ptr<target::Backend> backend, create_backend(t));
  LowerCtx c(p, t, o, *backend);
  for (size_t i = 0; i < g.params.size(); ++i) {
    const Value *v = g.params[i];
    const std::string nm = v->name.empty() ? fmt::format("input{}", i) : v->name;
    KILN_TRY(check_static(v, fmt::format("input {} ('{}')", i, nm)));
    p.inputs.push_back({nm, v->type.dtype, v->type.dims});
    c.bind_input(v, static_cast<uint32_t>(i));
  }
  for (size_t j = 0; j < g.results.size(); ++j) {
    const Value *v = g.results[j];
    const std::string nm = v->name.empty() ? fmt::format("output{}", j) : v->name;
    KILN_TRY(check_static(v, fmt::format("output {} ('{}')", j, nm)));
    p.outputs.push_back({nm, v->type.dtype, v->type.dims});
  }
  std::unordered_set<const Value *> used;
  const auto live = live_ops(g, used);
  c.set_fusion(plan_fusion(g, live));
  int aliased = 0;
  for (const auto &op : g.ops)
    if (live.count(op.get())) KILN_TRY(check_narrow(*op)); // fused ones included
  for (const auto &op : g.ops) {
    if (!live.count(op.get()) || c.absorbed(op.get())) continue;
    const size_t before = p.commands.size();
    KILN_TRY(lower_op(c, *op, used));
    aliased += p.commands.size() == before && op->name() != "kiln.constant";
  }
  bind_outputs(c, g);
  {
    std::vector<target::Payload *> payloads;
    for (Executable &e : p.executables) payloads.push_back(&e.code);
    KILN_ASSIGN(p.native_library, backend->link(payloads));
  }
  // The reference schedule keeps today's order and a barrier before every command.
  if (o.concurrent_commands && o.schedule != ScheduleMode::naive) schedule_barriers(p);
  hoist_init_commands(p);
  plan_memory(p);
  if (stats) {
    *stats = {};
    for (const Command &cmd : p.commands)
      (std::holds_alternative<Dispatch>(cmd) ? stats->dispatches : stats->copies)++;
    stats->executables = static_cast<int>(p.executables.size());
    stats->aliased_ops = aliased;
    stats->arena_bytes = p.arena_bytes;
    for (const Buffer &b : p.buffers)
      if (b.kind == BufKind::constant) stats->constant_bytes += b.size;
    stats->naive_contractions = c.strategy_count(Strategy::naive);
    stats->tiled_contractions = c.strategy_count(Strategy::tiled);
    stats->register_contractions = c.strategy_count(Strategy::registers);
    stats->matrix_contractions = c.strategy_count(Strategy::matrix);
    stats->coop_contractions = c.strategy_count(Strategy::coop);
    stats->split_k_contractions = c.split_k_count();
    stats->shifted_rows_contractions = c.shifted_rows_count();
    stats->tap_major_contractions = c.tap_major_count();
    stats->im2col_contractions = c.im2col_count();
    stats->winograd_contractions = c.winograd_count();
    stats->whole_rows_windows = c.whole_rows_count();
    stats->attention = c.attention_count();
    stats->naive_row_reductions = c.row_strategy_count(RowStrategy::naive);
    stats->workgroup_row_reductions = c.row_strategy_count(RowStrategy::workgroup_rows);
    stats->naive_windows = c.window_strategy_count(WindowStrategy::naive);
    stats->window_rows_windows = c.window_strategy_count(WindowStrategy::window_rows);
    stats->barriers = p.waits.empty() ? std::max<int>(0, static_cast<int>(p.commands.size()) - 1)
                                      : static_cast<int>(std::count(p.waits.begin() + 1,
                                                                    p.waits.end(), 1));
    stats->naive_parallel = c.parallel_strategy_count(ParallelStrategy::naive);
    stats->blocked_parallel = c.parallel_strategy_count(ParallelStrategy::blocked);
    stats->rows_parallel = c.parallel_strategy_count(ParallelStrategy::rows);
  }
  return write_artifact(p);
}

} // namespace kiln
