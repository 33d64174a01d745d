// The kernel-IR stages of LowerCtx::dispatch, named and instrumented.
//
// Every kernel goes through: "lower" (as the op's lowering built it), "split-bindings" (the
// compiler-side rewrite of bindings larger than the target allows), on the C backend
// "index-ranges" (kir::simplify_index_ranges with the dispatch's grid), then the passes of
// kir::default_kir_pipeline ("simplify", "unroll-long-loops", "simplify", "verify"). After
// each stage, CompileOptions::print_kir_after prints the kernel to stderr and
// CompileOptions::check_kir_round_trip checks that its text parses back to the same text.
#pragma once

#include "compiler/compiler.h"
#include "kir/kir.h"

#include <string>
#include <string_view>
#include <vector>

namespace kiln::compiler {

// The stage names --print-kir-after accepts: lower, split-bindings, index-ranges, each
// kernel-IR pass, all.
std::vector<std::string> kir_stage_names();
bool is_kir_stage(std::string_view name);

// Instrumentation after `stage` for the kernel `k` of `op`.
Status after_kir_stage(const Op &op, std::string_view stage, const kir::Kernel &k,
                       const CompileOptions &o);

// Runs the kernel-IR passes (default_kir_pipeline) on `k`, instrumented; a failure is an
// internal error naming the op and the kernel.
Result<kir::Kernel> run_kir_stages(const Op &op, kir::Kernel k, const CompileOptions &o);

} // namespace kiln::compiler
