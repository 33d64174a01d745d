// Graph-IR passes: one pass per file, a stable name, run(Module&) -> Status. Pipelines are
// small functions listing passes (pass_manager.cpp).
#pragma once

#include "ir/graph.h"

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct Pass {
  std::string name;        // stable, kebab-case: "dce"
  std::string description;
  Status (*run)(Module &m);
};

// Every registered pass, in a fixed order.
const std::vector<Pass> &all_passes();
const Pass *find_pass(std::string_view name);

Status run_dce(Module &m);            // dce.cpp
Status run_fuse_composites(Module &m); // fuse_composites.cpp
Status run_fuse_attention(Module &m); // fuse_attention.cpp
Status run_fold_constants(Module &m); // fold_constants.cpp
Status run_canonicalize(Module &m);   // canonicalize.cpp
Status run_cse(Module &m);            // cse.cpp
Status run_fold_batch_norm(Module &m); // fold_batch_norm.cpp
Status run_fuse_qdq(Module &m);        // fuse_qdq.cpp (run by frontend::import_model)
Status run_expand_qlinear(Module &m); // expand_qlinear.cpp (last in target_pipeline)
Status run_lower_precision_fp16(Module &m); // lower_precision.cpp
Status run_lower_precision_bf16(Module &m); // lower_precision.cpp

// Precision of a compiled model (`kiln compile --precision`): fp32 compiles the model in its
// own dtypes; fp16 / bf16 store the f32 tensors of the ops the policy table allows in half
// precision (lower_precision.cpp), accumulate contractions and pooling in f32, keep softmax,
// normalisation, reductions and range-sensitive ops in f32, and keep the model's inputs and
// outputs as declared (casts at the boundaries).
enum class Precision { fp32, fp16, bf16 };
std::optional<Precision> parse_precision(std::string_view s); // "fp32" | "fp16" | "bf16"
std::string_view precision_name(Precision p);
// What lower-precision does with an op (by core op name): half, or f32 (kept; every op not
// listed is kept), and the table's reason.
enum class PrecisionPolicy { half, f32 };
PrecisionPolicy precision_policy(std::string_view op);
std::string_view precision_policy_reason(std::string_view op);
std::vector<std::string_view> precision_policy_ops(); // every op the table lists, in its order
// default_pipeline(), then for fp16 / bf16 lower-precision-fp16|bf16 and dce, then
// expand-qlinear. Independent of
// the target: a compilation for a target runs target_pipeline(target, p) (compiler/compiler.h),
// this less the passes the target is better without (fuse-attention on the cpu targets).
std::vector<std::string> precision_pipeline(Precision p);

// What run_pipeline does around each pass (pipeline.cpp).
struct PassTiming {
  std::string pass;
  double seconds = 0;
};
struct PassInstrumentation {
  std::ostream *ir_out = nullptr;       // where printed IR goes (nothing is printed without it)
  bool print_after_all = false;         // print the module after every pass
  std::vector<std::string> print_after; // ... or after these passes
  bool verify_each = true;              // verify_function on every function after each pass
  std::vector<PassTiming> *timings = nullptr; // if set, one entry per pass run is appended
};

// The graph pipeline: fold-constants, fold-batch-norm, canonicalize, cse, fuse-composites,
// fuse-attention, dce (a target may leave passes out: target_pipeline, compiler/compiler.h).
const std::vector<std::string> &default_pipeline();
// Runs the named passes in order with the instrumentation. An unknown name (in `passes` or in
// print_after) is an error before any pass runs; a failed verification names the pass after
// which it failed.
Status run_pipeline(Module &m, const std::vector<std::string> &passes,
                    const PassInstrumentation &pi = {});
Status run_pipeline(Module &m, const PassInstrumentation &pi = {}); // default_pipeline()

// lower-control-flow (lower_control_flow.cpp): turns the control flow of `main` into
// straight-line ops where that is exact, for the device compiler (the reference executor runs
// control flow as it is). kiln.if with a constant condition becomes its taken branch; with a
// device condition, both branches are inlined (they are side-effect free) and each result is
// a kiln.where, provided the branches' results have identical static types. kiln.loop with a
// constant trip count and/or initial condition whose body condition becomes a constant after
// inlining and folding is unrolled (scan outputs stacked with kiln.unsqueeze + kiln.concat);
// kiln.scan with static sequence lengths is unrolled with one kiln.gather per step. At most
// 1024 iterations per op and 100k cloned ops in all; ops beyond that, or with a condition that
// depends on data, stay (the compiler then reports them). Run by specialize_inputs, which
// makes trip counts and conditions constants first; it is not part of the cpu-ref path.
Status run_lower_control_flow(Module &m);

// Specialises `main` for concrete input values (specialize.cpp): parameter types become the
// inputs' types, and where a parameter's VALUE decides a result shape (Reshape's shape,
// Expand's shape, Slice's starts, ...) that use is replaced by a constant of the value, so
// that shapes become static. Only such shape uses are replaced: data uses keep reading the
// parameter, and a use is only replaced if the op keeps a non-constant operand (so the device
// still computes it: NonZero on an input stays dynamic rather than being folded). Then types
// are re-inferred and constants folded. The result is valid for inputs with these shapes and
// these shape-operand values only (a JIT specialisation). Control flow is then lowered
// (run_lower_control_flow): a kiln.loop's trip count and initial condition count as shape
// operands (they decide the number of iterations), and once control flow is inlined the
// substitution runs again on the ops it brought in.
Status specialize_inputs(Module &m, const std::vector<Tensor> &inputs);

} // namespace kiln
