// Running graph-IR modules on a device from the CLI: "cpu-ref" is the reference executor;
// anything else is a runtime device URI ("vulkan", "vulkan:N", "null"): the module is compiled
// in-process for that device's target and run through the C API.
#pragma once

#include "compiler/compiler.h"
#include "ir/graph.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

struct kiln_device;
namespace CLI {
class App;
}

namespace kiln::tools {

class DeviceRunner {
public:
  static Result<std::unique_ptr<DeviceRunner>> open(const std::string &uri);
  // Options of the in-process compilation run() does (e.g. `--schedule naive`).
  void set_compile_options(const CompileOptions &o) { options_ = o; }
  const CompileOptions &compile_options() const { return options_; }
  // With n > 0, run() and run_artifact() time n more calls after the first one (on cpu-ref:
  // the executor; on a runtime device: kiln_module_run of the loaded module) and keep the
  // median in timed_ms().
  void set_timed_calls(int n) { timed_calls_ = n; }
  double timed_ms() const { return timed_ms_; }
  ~DeviceRunner();

  bool is_reference() const { return device_ == nullptr; }
  // The compile target of the device: a preset chosen from what the device is.
  const std::string &target() const { return target_; }
  // Runs `m` on `inputs` (already checked against the params). On a runtime device the
  // module is first specialised for these inputs (specialize_inputs: static shapes, folded
  // constants; this mutates `m`) and compiled.
  Result<std::vector<Tensor>> run(Module &m, std::vector<Tensor> inputs);
  // Loads and runs an artifact; outputs are poisoned before the run.
  Result<std::vector<Tensor>> run_artifact(const std::vector<uint8_t> &artifact,
                                           const std::vector<Tensor> &inputs);

  // Names and types of an artifact's inputs and outputs (loads it on this device).
  struct Signature {
    std::vector<std::pair<std::string, TensorType>> inputs, outputs;
  };
  Result<Signature> artifact_signature(const std::vector<uint8_t> &artifact);

private:
  Status time_calls(const std::function<Status()> &call);

  kiln_device *device_ = nullptr;
  std::string target_;
  CompileOptions options_;
  int timed_calls_ = 0;
  double timed_ms_ = 0;
};

// Compiles `m` for a target preset, as `kiln compile` does (the target's graph pipeline for
// o.precision, target_pipeline in compiler/compiler.h, runs first, which mutates `m`).
Result<std::vector<uint8_t>> compile_module(Module &m, const std::string &target,
                                            const CompileOptions &o = {});

// Adds `--precision fp32|fp16|bf16` to a subcommand, parsed into `out`; any other value is a
// usage error naming the choices.
void add_precision_option(CLI::App *cmd, Precision *out);

// Adds `--schedule auto|naive` to a subcommand, parsed into `mode`.
void add_schedule_option(CLI::App *cmd, compiler::ScheduleMode *mode);
// Adds `--row-reduction naive|workgroup_rows:WG[!]` (compiler/schedules/schedule.h), parsed
// into `out`.
void add_row_reduction_option(CLI::App *cmd, compiler::RowReductionSchedule *out);
// Adds `--window naive|window_rows:R[:guarded][!]` (pooling, depthwise convolution), parsed
// into `out`.
void add_window_option(CLI::App *cmd, compiler::WindowSchedule *out);
// Adds `--parallel naive|blocked:E[!]` (elementwise, broadcast, gather, copies), parsed into
// `out`.
void add_parallel_option(CLI::App *cmd, compiler::ParallelSchedule *out);

// Adds `--winograd f2|f4|off` (cpu targets' 3x3 convolutions; CompileOptions::winograd),
// parsed into `out` as the output tile (2, 4) or 0.
void add_winograd_option(CLI::App *cmd, int *out);

// The compile options of kiln's commands: defaults, plus check_kir_round_trip when the
// environment has KILN_CHECK_KIR_ROUND_TRIP=1.
CompileOptions cli_compile_options();

} // namespace kiln::tools
