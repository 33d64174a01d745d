// The reference executor: runs any graph-IR function on the CPU by calling each op's reference
// implementation in order. Simple and obviously correct; it is the golden reference where no
// test data exists, the engine behind constant folding and the device "cpu-ref".
#pragma once

#include "ir/graph.h"

namespace kiln {

struct ExecOptions {
  // Check every result against its op's static result type (catches shape-function bugs).
  bool check_types = true;
};

// Runs `f` on `inputs` (one per parameter, dtype and static dims must match).
Result<std::vector<Tensor>> execute(const Function &f, std::vector<Tensor> inputs,
                                    const ExecOptions &opt = {});
// Runs a graph with the given parameter values; `outer` resolves captured values.
Result<std::vector<Tensor>> execute_graph(const Graph &g, std::vector<Tensor> params,
                                          const ExecOptions &opt = {});

// Checks that `inputs` match the function's parameters (count, dtype, static dims) and says
// which input is wrong and what was expected.
Status check_inputs(const Function &f, const std::vector<Tensor> &inputs);

} // namespace kiln
