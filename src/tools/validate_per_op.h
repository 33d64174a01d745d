// kiln validate --per-op (validate_per_op.cpp): a device's value of every ONNX node output
// against the reference executor's, and the first node that diverges.
#pragma once

#include "ir/tensor.h"
#include "passes/pass.h"

#include <set>
#include <string>
#include <vector>

namespace kiln::tools {

class DeviceRunner;

struct PerOpOptions {
  std::string model;
  Precision precision = Precision::fp32;
  // The tolerances of kiln validate: rtol / atol for fp32, a fraction of each value's reference
  // range for fp16 / bf16 (tools.h, compare_tensors and compare_to_range).
  double rtol = 1e-4, atol = 1e-5, range_tol = 1e-2;
  std::set<std::string> keep_f32; // --precision auto: the nodes its search kept in f32
};

// Imports `o.model` twice: the reference executor runs the first copy with every named op
// result (the outputs of the model's nodes) recorded; the second is specialised for `inputs`,
// put through the graph passes of the device's target for o.precision (target_pipeline), and
// every named value that survived them becomes an extra output of the artifact compiled for
// `runner`'s device (with its compile options) and run once. Prints one line per node output
// (max abs err, SNR, error in quantisation steps where a scale is known) and, for each model
// output beyond tolerance, the first node in topological order whose value diverges while the
// values it reads do not.
// Returns whether every model output of that run is within tolerance.
//
// Testing hook: KILN_TEST_PERTURB=NODE[:DELTA] adds DELTA (default 1) to the first output of
// node NODE in the device's graph (an extra kiln.add there), so that tests can plant a
// divergence; nothing else reads it.
Result<bool> validate_per_op(const PerOpOptions &o, const std::vector<Tensor> &inputs,
                             DeviceRunner &runner);

} // namespace kiln::tools
