// Subcommands of the kiln CLI (one file each).
#pragma once

#include "ir/tensor.h"

#include <map>
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

} // namespace kiln::tools
