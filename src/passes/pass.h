// Graph-IR passes: one pass per file, a stable name, run(Module&) -> Status. Pipelines are
// small functions listing passes (pass_manager.cpp).
#pragma once

#include "ir/graph.h"

#include <string>
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
Status run_fold_constants(Module &m); // fold_constants.cpp

// Specialises `main` for concrete input values (specialize.cpp): parameter types become the
// inputs' types, and where a parameter's VALUE decides a result shape (Reshape's shape,
// Expand's shape, Slice's starts, ...) that use is replaced by a constant of the value, so
// that shapes become static. Only such shape uses are replaced: data uses keep reading the
// parameter, and a use is only replaced if the op keeps a non-constant operand (so the device
// still computes it: NonZero on an input stays dynamic rather than being folded). Then types
// are re-inferred and constants folded. The result is valid for inputs with these shapes and
// these shape-operand values only (a JIT specialisation).
Status specialize_inputs(Module &m, const std::vector<Tensor> &inputs);

} // namespace kiln
