// The ahead-of-time compiler: graph IR (one static-shaped main function) -> kernel IR ->
// SPIR-V -> a .kiln artifact (schema/kiln.fbs) for one Vulkan target.
#pragma once

#include "ir/graph.h"
#include "compiler/schedules/schedule.h"
#include "kir/target.h"
#include "passes/pass.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct CompileOptions {
  // Invocations per workgroup along x for elementwise-style kernels (capped by the target).
  uint32_t workgroup_size = 64;
  // Run kir::verify on every generated kernel (cheap; on by default).
  bool verify_kernels = true;
  // Strategy selection: `automatic` uses the strategy table (compiler/schedules/schedule.cpp), `naive`
  // forces the reference strategy for every kernel (`kiln compile --schedule naive`).
  compiler::ScheduleMode schedule = compiler::ScheduleMode::automatic;
  // A contraction schedule forced on every matmul/gemm/conv the target can run it for
  // (tuning; `kiln compile --contraction`); an empty reason means none.
  compiler::ContractionSchedule contraction_override;
  // A row-reduction schedule (softmax, normalisation, reduce) forced where the table picks a
  // non-naive one, or everywhere the target can run it (`kiln compile --row-reduction`); an
  // empty reason means none.
  compiler::RowReductionSchedule row_reduction_override;
  // A window schedule (pooling, depthwise convolution) forced where the table picks a non-naive
  // one, or everywhere the rules allow it (`kiln compile --window`); an empty reason means none.
  compiler::WindowSchedule window_override;
  // Order commands by dependency and put barriers only before commands that depend on an
  // earlier one (compiler/memory/barriers.cpp); off (`kiln compile --barriers every`) or with
  // --schedule naive, a barrier before every command in lowering order.
  bool concurrent_commands = true;
  // A parallel schedule (elementwise, broadcast, gather, copies) forced where the table picks a
  // non-naive one, or everywhere the rules allow it (`kiln compile --parallel`); an empty
  // reason means none.
  compiler::ParallelSchedule parallel_override;
  // Winograd for the 3x3 stride-1 convolutions the matrix strategy runs (cpu targets) with at
  // least 196 output positions per image (families/conv_winograd.cpp): the output tile, 4
  // (F(4x4, 3x3): 4x fewer multiplications, 2-3x the rounding error of direct summation) or 2
  // (F(2x2, 3x3): 2.25x fewer, rounding like direct summation); 0 (`--winograd off`): shifted
  // rows.
  int winograd = 4;
  // Print each kernel (kernel-IR text, to stderr) after this stage: "lower" (as lowered),
  // "split-bindings", "index-ranges" (C backend), a kernel-IR pass name (kir/kir_pass.h) or "all"; empty: none.
  std::string print_kir_after;
  // After every stage, print each kernel, parse the text back and print it again; a
  // difference is an internal error (kiln's CLI sets it from KILN_CHECK_KIR_ROUND_TRIP=1).
  bool check_kir_round_trip = false;
  // The precision the module was lowered to (`kiln compile --precision`). The caller runs the
  // graph passes (target_pipeline(target, precision), below) that store tensors in it;
  // compile_to_artifact refuses a precision the target cannot run (check_precision) before
  // any lowering.
  Precision precision = Precision::fp32;
  // `kiln compile --precision auto` (precision is then fp16): what the search chose, recorded
  // in the artifact (schema PrecisionChoice; kiln inspect prints it).
  struct AutoPrecision {
    double max_error = 0;
    std::vector<std::string> f32_nodes;
    int half_nodes = 0;
    std::vector<double> output_errors;
  };
  std::optional<AutoPrecision> auto_precision;
};

// Whether target `t` can run a model lowered to precision `p`: fp16 needs f16 arithmetic and
// 16-bit storage (the portable `vulkan` preset has neither); bf16 has no kernel-IR type, so no
// compiled target runs it. The error names the precision, the target and what it lacks.
Status check_precision(const kir::TargetDesc &t, Precision p);

// The graph pipeline for compiling to target `t` at precision `p`, the one every compilation
// for a target runs (kiln compile, run, validate and validate --per-op, conform, the
// --precision auto search, the Python bindings): precision_pipeline(p) (passes/pass.h) less
// the passes of target_omitted_passes(t).
std::vector<std::string> target_pipeline(const kir::TargetDesc &t, Precision p);
// The passes of precision_pipeline that target `t` leaves out: fuse-attention on the cpu
// targets (backend "c": cpu, cpu-x86-64-v2/v3/v4), whose kiln.sdpa kernel was measured slower
// than the unfused kernels at every shape (bench/RESULTS.md, 2026-12-07: 2.5x for
// self-attention of 64 to 512 tokens, 1.45x for 8 queries x 4096 keys, even at 1 query); none
// on the Vulkan targets. `kiln compile --enable-pass NAME` puts one back.
std::vector<std::string> target_omitted_passes(const kir::TargetDesc &t);

// Statistics of the last compilation (optional out-parameter for tools and tests).
struct CompileStats {
  int dispatches = 0;
  int copies = 0;
  int executables = 0;
  int aliased_ops = 0;
  uint64_t arena_bytes = 0;
  uint64_t constant_bytes = 0;
  // Kernels per contraction strategy (matmul, gemm, convolution).
  int naive_contractions = 0;
  int tiled_contractions = 0;
  int register_contractions = 0;
  int matrix_contractions = 0;
  int coop_contractions = 0;
  int split_k_contractions = 0; // tiled contractions among them run as split-K
  int shifted_rows_contractions = 0; // matrix convolutions among them run as shifted rows
  int tap_major_contractions = 0;    // coop convolutions with k tap-major (repacked weights)
  int im2col_contractions = 0;       // ... or as im2col (too few channels for shifted rows)
  int winograd_contractions = 0;     // ... or as Winograd (input transform, batched products, output transform)
  // Row reductions (softmax, normalisation, reduce) per strategy; the split path of long rows
  // is not counted.
  int naive_row_reductions = 0;
  int workgroup_row_reductions = 0;
  // Windows (max / average / Lp pooling, depthwise convolution) per strategy.
  int naive_windows = 0;
  int window_rows_windows = 0;
  int whole_rows_windows = 0; // window_rows windows run as whole rows (cpu: depthwise, max pool)
  // Attention cores (kiln.sdpa, from the fuse-attention pass) run as one fused kernel each.
  int attention = 0;
  // Barriers between commands (a command that waits for all earlier ones); commands between
  // two barriers run together.
  int barriers = 0;
  // Parallel kernels (one or E elements per invocation: elementwise, broadcast, gather, copies
  // and every other kernel over a flat index space) per strategy.
  int naive_parallel = 0;
  int blocked_parallel = 0;
  int rows_parallel = 0; // the C backend's rows of the parallel definition
};

Result<std::vector<uint8_t>> compile_to_artifact(const Module &m, const kir::TargetDesc &t,
                                                 const CompileOptions &o,
                                                 CompileStats *stats = nullptr);

} // namespace kiln
