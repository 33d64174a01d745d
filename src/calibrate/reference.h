// Reference-executor helpers shared by the kiln CLI (src/tools) and the Python package
// (python/): tensor files, the seeded inputs a model gets where none are given, runs that keep
// named values, and comparisons of results with a reference.
#pragma once

#include "ir/graph.h"
#include "support/status.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::calibrate {

// Loads a .npy or TensorProto .pb file as a tensor.
Result<Tensor> load_tensor_file(const std::string &path);

// Seeded data for an input the user did not give: floats in [-1, 1), integers in [0, 4), bools
// 0 or 1.
Tensor random_input(const TensorType &t, uint32_t seed);

// The inputs of `f` in parameter order: those in `given` (by name), seeded random data
// (random_input, seed 1234 + the parameter's index) for the others, whose names are appended to
// `seeded` when it is set; checked against the signature (check_inputs). Names in `given` that
// are not parameters are ignored. A missing input of dynamic shape is an error that ends with
// `how_to_give` (e.g. "pass --input").
Result<std::vector<Tensor>> seeded_inputs(const Function &f, std::map<std::string, Tensor> given,
                                          std::string_view how_to_give,
                                          std::vector<std::string> *seeded = nullptr);

// A reference-executor run of a module with named values kept (run_with_values).
struct ValuesRun {
  std::vector<Tensor> outputs;
  std::vector<std::optional<Tensor>> values; // per name; unset where the name was not found
  std::vector<const Value *> found;          // per name, the value in the module (or nullptr)
};
// Runs `m`'s main function on `inputs` with the top-level op results named `names` as extra
// results; the module is left as it was.
Result<ValuesRun> run_with_values(Module &m, const std::vector<Tensor> &inputs,
                                  const std::vector<std::string> &names);

// Comparison of a result with golden data: |a - b| <= atol + rtol * |b|, NaN equals NaN.
struct Compare {
  bool ok = true;
  std::string reason;   // dtype / shape mismatch, or "max abs err ..."
  double max_abs = 0, max_rel = 0;
};
Compare compare_tensors(const Tensor &got, const Tensor &want, double rtol, double atol);

// Comparison of a result computed in reduced precision (--precision fp16 | bf16) with the f32
// reference: ok when dtype and shape match, NaN / infinity sit where the reference has them,
// and the largest absolute error is at most tol times the reference's range (max - min of its
// finite values; 1 where that is 0). argmax_*: the flat index of the largest value of each
// (for a classifier's logits, the top-1 class), -1 when there is none.
struct RangeCompare {
  bool ok = true;
  std::string reason; // dtype / shape / NaN mismatch, or the error beyond the tolerance
  double max_abs = 0, range = 0, tol = 0;
  int64_t argmax_got = -1, argmax_want = -1;
};
RangeCompare compare_to_range(const Tensor &got, const Tensor &want, double tol);
// One line: "max abs err E = F of the reference range R (tolerance T), argmax A, reference
// argmax B: OK|MISMATCH ...".
std::string describe(const RangeCompare &c);

} // namespace kiln::calibrate
