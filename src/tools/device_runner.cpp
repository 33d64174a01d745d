#include "tools/device_runner.h"

#include "compiler/compiler.h"
#include "exec/executor.h"
#include "kiln/kiln.h"
#include "kir/target.h"
#include "passes/pass.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

namespace kiln::tools {

namespace {

// Takes ownership of a runtime status; ok for NULL.
Status from_runtime(kiln_status st, const char *what) {
  if (!st) return Status::ok();
  std::string msg = fmt::format("{}: {}", what, kiln_status_message(st));
  kiln_status_free(st);
  return Status::error(msg);
}

struct ModuleGuard {
  kiln_module *m = nullptr;
  ~ModuleGuard() { kiln_module_release(m); }
};

} // namespace

Result<std::vector<uint8_t>> compile_module(Module &m, const std::string &target,
                                            const CompileOptions &o) {
  const kir::TargetDesc *t = kir::find_target(target);
  if (!t) return Status::error(fmt::format("unknown target '{}'", target));
  KILN_TRY(check_precision(*t, o.precision));
  KILN_TRY(run_pipeline(m, target_pipeline(*t, o.precision)));
  return compile_to_artifact(m, *t, o);
}

CompileOptions cli_compile_options() {
  CompileOptions o;
  const char *env = std::getenv("KILN_CHECK_KIR_ROUND_TRIP");
  o.check_kir_round_trip = env != nullptr && std::strcmp(env, "1") == 0;
  return o;
}

void add_precision_option(CLI::App *cmd, Precision *out) {
  cmd->add_option_function<std::string>(
      "--precision",
      [out](const std::string &s) {
        std::optional<Precision> p = parse_precision(s);
        if (!p)
          throw CLI::ValidationError("--precision",
                                     "expected fp32, fp16 or bf16, got '" + s + "'");
        *out = *p;
      },
      "fp32 (default): the model's own dtypes; fp16 / bf16: weights and activations stored in "
      "half precision, f32 accumulation, softmax / normalisation / reductions kept f32, inputs "
      "and outputs as declared");
}

void add_schedule_option(CLI::App *cmd, compiler::ScheduleMode *mode) {
  cmd->add_option_function<std::string>(
      "--schedule",
      [mode](const std::string &s) {
        if (!compiler::parse_schedule_mode(s, mode))
          throw CLI::ValidationError("--schedule", "expected auto or naive, got '" + s + "'");
      },
      "kernel strategies: auto (the strategy table) or naive (reference kernels everywhere)");
}

void add_row_reduction_option(CLI::App *cmd, compiler::RowReductionSchedule *out) {
  cmd->add_option_function<std::string>(
      "--row-reduction",
      [out](const std::string &s) {
        if (!compiler::parse_row_reduction_override(s, out))
          throw CLI::ValidationError("--row-reduction",
                                     "expected naive or workgroup_rows:WG[!], got '" + s + "'");
      },
      "force a row-reduction schedule (softmax, norms, reduce): naive or workgroup_rows:WG; a "
      "trailing ! applies it where the table picks naive too");
}

void add_window_option(CLI::App *cmd, compiler::WindowSchedule *out) {
  cmd->add_option_function<std::string>(
      "--window",
      [out](const std::string &s) {
        if (!compiler::parse_window_override(s, out))
          throw CLI::ValidationError(
              "--window", "expected naive or window_rows:R[:guarded][!], got '" + s + "'");
      },
      "force a window schedule (pooling, depthwise convolution): naive or "
      "window_rows:R[:guarded]; a trailing ! applies it where the table picks naive too");
}

void add_winograd_option(CLI::App *cmd, int *out) {
  cmd->add_option_function<std::string>(
         "--winograd",
         [out](const std::string &s) { *out = s == "f4" ? 4 : s == "f2" ? 2 : 0; },
         "cpu targets: 3x3 stride-1 convolutions of 196+ output positions per image as Winograd "
         "F(4x4, 3x3) (f4, default: 4x fewer multiplications, 2-3x the rounding error of direct "
         "summation), F(2x2, 3x3) (f2: 2.25x fewer, rounds like direct summation) or as "
         "shifted rows (off)")
      ->check(CLI::IsMember({"f2", "f4", "off"}));
}

void add_parallel_option(CLI::App *cmd, compiler::ParallelSchedule *out) {
  cmd->add_option_function<std::string>(
      "--parallel",
      [out](const std::string &s) {
        if (!compiler::parse_parallel_override(s, out))
          throw CLI::ValidationError("--parallel",
                                     "expected naive or blocked:E (E = 2, 4, 8)[!], got '" + s +
                                         "'");
      },
      "force a parallel schedule (elementwise, broadcast, gather, copies): naive or blocked:E; "
      "a trailing ! applies it where the table picks naive too");
}

Result<std::unique_ptr<DeviceRunner>> DeviceRunner::open(const std::string &uri) {
  auto r = std::unique_ptr<DeviceRunner>(new DeviceRunner());
  if (uri == "cpu-ref") return r;
  KILN_TRY(from_runtime(kiln_device_open(uri.c_str(), &r->device_),
                        fmt::format("device '{}'", uri).c_str()));
  kiln_device_info info{};
  KILN_TRY(from_runtime(kiln_device_info_get(r->device_, &info), "device info"));
  r->target_ = kir::target_for_device(info.driver, info.name);
  return r;
}

DeviceRunner::~DeviceRunner() { kiln_device_release(device_); }

Status DeviceRunner::time_calls(const std::function<Status()> &call) {
  std::vector<double> ms;
  for (int i = 0; i < timed_calls_; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    KILN_TRY(call());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    timed_ms_ = ms[ms.size() / 2];
  }
  return Status::ok();
}

Result<std::vector<Tensor>> DeviceRunner::run(Module &m, std::vector<Tensor> inputs) {
  if (is_reference()) {
    KILN_ASSIGN(auto outs, execute(*m.main(), inputs));
    KILN_TRY(time_calls([&]() -> Status { return execute(*m.main(), inputs).status(); }));
    return outs;
  }
  KILN_TRY(specialize_inputs(m, inputs));
  KILN_ASSIGN(auto artifact, compile_module(m, target_, options_));
  return run_artifact(artifact, inputs);
}

Result<DeviceRunner::Signature>
DeviceRunner::artifact_signature(const std::vector<uint8_t> &artifact) {
  if (is_reference()) return Status::error("cpu-ref runs models, not artifacts");
  ModuleGuard mod;
  KILN_TRY(from_runtime(kiln_module_load_memory(device_, artifact.data(), artifact.size(), &mod.m),
                        "load"));
  Signature sig;
  auto get = [&](bool input, size_t i) -> Status {
    kiln_tensor_info info{};
    KILN_TRY(from_runtime(input ? kiln_module_input_info(mod.m, i, &info)
                                : kiln_module_output_info(mod.m, i, &info),
                          "signature"));
    TensorType t{static_cast<DType>(info.dtype), Shape(info.shape, info.shape + info.rank), true};
    (input ? sig.inputs : sig.outputs).push_back({info.name, t});
    return Status::ok();
  };
  for (size_t i = 0; i < kiln_module_input_count(mod.m); ++i) KILN_TRY(get(true, i));
  for (size_t i = 0; i < kiln_module_output_count(mod.m); ++i) KILN_TRY(get(false, i));
  return sig;
}

Result<std::vector<Tensor>> DeviceRunner::run_artifact(const std::vector<uint8_t> &artifact,
                                                       const std::vector<Tensor> &inputs) {
  if (is_reference()) return Status::error("cpu-ref runs models, not artifacts");
  ModuleGuard mod;
  KILN_TRY(from_runtime(kiln_module_load_memory(device_, artifact.data(), artifact.size(), &mod.m),
                        "load"));
  std::vector<kiln_tensor> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    in[i] = kiln_tensor{static_cast<kiln_dtype>(t.dtype()), static_cast<uint32_t>(t.rank()),
                        t.shape().data(), const_cast<std::byte *>(t.raw()), t.nbytes()};
  }
  size_t n_out = kiln_module_output_count(mod.m);
  std::vector<Tensor> outs;
  std::vector<kiln_tensor> out(n_out);
  for (size_t i = 0; i < n_out; ++i) {
    kiln_tensor_info info{};
    KILN_TRY(from_runtime(kiln_module_output_info(mod.m, i, &info), "output info"));
    Shape shape(info.shape, info.shape + info.rank);
    outs.emplace_back(static_cast<DType>(info.dtype), shape);
    // Poison: a kernel that forgets to write an element shows up as NaN / garbage.
    if (outs.back().nbytes()) std::memset(outs.back().raw_mut(), 0xff, outs.back().nbytes());
  }
  for (size_t i = 0; i < n_out; ++i)
    out[i] = kiln_tensor{static_cast<kiln_dtype>(outs[i].dtype()),
                         static_cast<uint32_t>(outs[i].rank()), outs[i].shape().data(),
                         outs[i].raw_mut(), outs[i].nbytes()};
  KILN_TRY(from_runtime(kiln_module_run(mod.m, in.data(), in.size(), out.data(), out.size()), "run"));
  KILN_TRY(time_calls([&] {
    return from_runtime(kiln_module_run(mod.m, in.data(), in.size(), out.data(), out.size()),
                        "run");
  }));
  return outs;
}

} // namespace kiln::tools
