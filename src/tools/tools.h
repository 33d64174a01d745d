// Subcommands of the kiln CLI (one file each).
#pragma once

#include "ir/tensor.h"
#include "passes/pass.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace kiln {
struct TensorType;
}

namespace kiln::tools {

void add_run_command(CLI::App &app);
void add_conform_command(CLI::App &app);
void add_opt_command(CLI::App &app);
void add_compile_commands(CLI::App &app); // compile, devices, validate
void add_inspect_command(CLI::App &app);
void add_bench_command(CLI::App &app);
void add_quantize_command(CLI::App &app); // quantize_cmd.cpp

// kiln opt on kernel-IR text (opt_kir.cpp): whether the input is kernel IR (a .kir file, or
// kernel-IR passes named), and its processing: parse, run `passes`, print.
bool is_kir_input(const std::string &file, const std::vector<std::string> &kir_passes);
std::string kir_pass_help();
Result<std::string> process_kir(const std::string &file, const std::string &text,
                                const std::vector<std::string> &passes, bool verify_only);

// kiln inspect --graph (inspect_graph.cpp): the compiled program of an artifact the runtime has
// verified as a Graphviz picture at `path`: .dot (the DOT text), .svg (rendered by Graphviz's
// `dot`, which must be on PATH) or .html (that SVG in a self-contained page).
Status write_artifact_graph(const std::vector<uint8_t> &verified_artifact, const std::string &path);

// Seeded data for an input the user did not give: floats in [-1, 1), integers in [0, 4), bools
// 0 or 1 (compile_cmd.cpp).
Tensor random_input(const TensorType &t, uint32_t seed);

// A reference-executor run of a module with named values kept (run_with_values).
struct ValuesRun {
  std::vector<Tensor> outputs;
  std::vector<std::optional<Tensor>> values; // per name; unset where the name was not found
  std::vector<const Value *> found;          // per name, the value in the module (or nullptr)
};
// Runs `m`'s main function on `inputs` with the top-level op results named `names` as extra
// results (precision_auto.cpp); the module is left as it was.
Result<ValuesRun> run_with_values(Module &m, const std::vector<Tensor> &inputs,
                                  const std::vector<std::string> &names);

// Loads a .npy or TensorProto .pb file as a tensor.
Result<Tensor> load_tensor_file(const std::string &path);
Status save_npy(const std::string &path, const Tensor &t);

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
// The default tolerance relative to the output range for a precision: fp16 1e-2, bf16 5e-2
// (8 bits of mantissa), fp32 1e-5.
double default_range_tolerance(Precision p);

} // namespace kiln::tools
