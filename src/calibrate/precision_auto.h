// kiln compile --precision auto --max-error E (and kiln.compile(precision='auto') in Python):
// which nodes stay in f32 so that a model lowered to fp16 meets an error budget on calibration
// inputs.
#pragma once

#include "ir/graph.h"
#include "support/status.h"

#include <set>
#include <string>
#include <vector>

namespace kiln::calibrate {

struct AutoPrecision {
  std::set<std::string> f32_nodes;   // kept in f32 (Module::keep_f32): source node names
  std::vector<double> output_errors; // per model output: max abs error / the reference's range
  int half_nodes = 0;                // nodes that run in half precision at the choice
  int runs = 0;                      // reference-executor runs of the search
};

// The reference executor runs `model` on `inputs` in f32, recording every node output; then,
// repeatedly, the model as `kiln compile --precision fp16` lowers it (the graph passes
// `passes`: the target's fp16 pipeline, target_pipeline in compiler/compiler.h, whose
// lower-precision-fp16 keeps the chosen nodes in f32), also on the reference executor (which
// computes each half op in f32 and rounds its result, as the compiled kernels do).
// While a model output's error exceeds `max_error` of its range, the first node in topological
// order that runs in half precision and whose own output is beyond the budget (else the half
// node with the largest error) joins the f32 set. Ends when every output is within the budget;
// an error when a half node that the search cannot name (no source location) keeps it beyond.
Result<AutoPrecision> choose_precision(const std::string &model, const std::vector<Tensor> &inputs,
                                       double max_error, const std::vector<std::string> &passes);

} // namespace kiln::calibrate
