// Kernel-IR passes by name, and the pipeline the compiler runs on every kernel.
//
// A pass maps a kernel to a kernel (or an error). The registry is an explicit list
// (kir_pass.cpp), not filled by static constructors. Names:
//   simplify           constant folding and algebraic identities (kir::simplify)
//   unroll-long-loops  unrolls innermost constant loops of >= 1024 iterations by 8
//   verify             checks the kernel (kir::verify); returns it unchanged
// The compiler's pipeline (compiler/lowering/kir_stages.h) is: lower (as lowered), split-bindings
// (compiler-side, needs buffer sizes), then default_kir_pipeline().
#pragma once

#include "kir/kir.h"

#include <functional>
#include <string_view>
#include <vector>

namespace kiln::kir {

struct KirPass {
  const char *name;
  const char *description;
  Result<Kernel> (*run)(const Kernel &k);
};

// Every registered pass, in a fixed order.
const std::vector<KirPass> &all_kir_passes();
// The pass named `name`, or null.
const KirPass *find_kir_pass(std::string_view name);

// What LowerCtx::dispatch runs after split-bindings: simplify, unroll-long-loops, simplify,
// and verify when `verify` is set.
std::vector<const KirPass *> default_kir_pipeline(bool verify);

// Called after each pass with its name and result; an error stops the pipeline.
using KirPassHook = std::function<Status(std::string_view pass, const Kernel &k)>;

// Runs `passes` in order on `k`. A pass error comes back prefixed with "pass NAME: ".
Result<Kernel> run_kir_passes(Kernel k, const std::vector<const KirPass *> &passes,
                              const KirPassHook &after_each = {});

} // namespace kiln::kir
