// Subcommands of the kiln CLI (one file each).
#pragma once

#include "calibrate/reference.h"
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

// The helpers the Python package shares (src/calibrate/reference.h): tensor files, seeded
// inputs, runs with named values kept, comparisons with a reference.
using calibrate::Compare;
using calibrate::compare_tensors;
using calibrate::compare_to_range;
using calibrate::describe;
using calibrate::load_tensor_file;
using calibrate::random_input;
using calibrate::RangeCompare;
using calibrate::run_with_values;
using calibrate::ValuesRun;

Status save_npy(const std::string &path, const Tensor &t);

// The default tolerance relative to the output range for a precision: fp16 1e-2, bf16 5e-2
// (8 bits of mantissa), fp32 1e-5.
double default_range_tolerance(Precision p);

} // namespace kiln::tools
