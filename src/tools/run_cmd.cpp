// kiln run: imports a model, runs it on a device, writes one .npy per output; optional
// comparison with golden outputs and top-k classes for the demo.
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "frontend/onnx/importer.h"
#include "support/limits.h"
#include "support/narrow.h"
#include "support/npy.h"
#include "tools/device_runner.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fmt/format.h>
#include <numeric>

namespace kiln::tools {

namespace fs = std::filesystem;

// numpy has no narrow dtypes: a .npy of uint8 / int8 (one element a byte, as save_npy writes
// them) stands for an input of a narrow dtype. Its bytes are checked against the dtype.
Result<Tensor> adopt_narrow(const std::string &name, Tensor t, DType want) {
  if (!is_narrow(want) || t.dtype() == want) return t;
  const bool signed_int = want == DType::i4 || want == DType::i2;
  if (t.dtype() != (signed_int ? DType::i8 : DType::u8))
    return Status::error(fmt::format("input '{}': a {} input is given as a .npy of {}, got {}",
                                     name, dtype_name(want), signed_int ? "int8" : "uint8",
                                     dtype_name(t.dtype())));
  Tensor r(want, t.shape());
  const uint8_t *p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!narrow_byte_valid(want, p[i]))
      return Status::error(fmt::format("input '{}': element {} ({}) is out of range for {}", name,
                                       i, t.get_i64(i), dtype_name(want)));
  if (t.nbytes()) std::memcpy(r.raw_mut(), t.raw(), t.nbytes());
  return r;
}

Status save_npy(const std::string &path, const Tensor &t) {
  return write_npy(path, t.dtype(), t.shape(), t.raw(), t.nbytes());
}

double default_range_tolerance(Precision p) {
  switch (p) {
  case Precision::fp32: return 1e-5;
  case Precision::fp16: return 1e-2;
  case Precision::bf16: return 5e-2;
  }
  return 1e-2;
}

namespace {

struct RunArgs {
  std::string model, device = "cpu-ref", output_dir;
  std::vector<std::string> inputs, golden;
  int top = 0;
  int time = 0; // --time N
  double rtol = 1e-4, atol = 1e-5;
  Precision precision = Precision::fp32;
  double range_tol = -1; // --range-tol; < 0: default_range_tolerance(precision)
  compiler::ScheduleMode schedule = compiler::ScheduleMode::automatic;
  compiler::RowReductionSchedule row_reduction;
  compiler::WindowSchedule window;
  int winograd = 4;
  compiler::ParallelSchedule parallel;
};

Status parse_binding(const std::string &s, std::string &name, std::string &file) {
  auto p = s.find('=');
  if (p == std::string::npos || p == 0)
    return Status::error(fmt::format("'{}' is not NAME=FILE", s));
  name = s.substr(0, p);
  file = s.substr(p + 1);
  return Status::ok();
}

Status run(const RunArgs &a) {
  KILN_ASSIGN(auto runner, DeviceRunner::open(a.device));
  CompileOptions opts = cli_compile_options();
  opts.schedule = a.schedule;
  opts.row_reduction_override = a.row_reduction;
  opts.window_override = a.window;
  opts.winograd = a.winograd;
  opts.parallel_override = a.parallel;
  opts.precision = a.precision;
  const bool reduced = a.precision != Precision::fp32;
  const double range_tol = a.range_tol >= 0 ? a.range_tol : default_range_tolerance(a.precision);
  if (reduced && runner->is_reference())
    return Status::error(fmt::format("--precision {}: cpu-ref runs a model in its own dtypes; "
                                     "precision applies to compiled devices (cpu, vulkan)",
                                     precision_name(a.precision)));
  runner->set_compile_options(opts);
  runner->set_timed_calls(a.time);
  std::map<std::string, Tensor> given;
  for (const auto &s : a.inputs) {
    std::string name, file;
    KILN_TRY(parse_binding(s, name, file));
    KILN_ASSIGN(Tensor t, load_tensor_file(file));
    if (given.count(name)) return Status::error(fmt::format("input '{}' is given twice", name));
    given[name] = std::move(t);
  }
  // The signature: from the model (imported) or from the artifact (.kiln).
  const bool is_artifact = fs::path(a.model).extension() == ".kiln";
  std::unique_ptr<Module> module;
  std::vector<uint8_t> artifact;
  std::vector<std::pair<std::string, TensorType>> params;
  std::vector<std::string> out_names;
  if (is_artifact && reduced)
    return Status::error(fmt::format("--precision {}: an artifact keeps the precision it was "
                                     "compiled with (kiln compile --precision)",
                                     precision_name(a.precision)));
  if (is_artifact) {
    if (runner->is_reference())
      return Status::error("an artifact runs on a runtime device (--device vulkan), not cpu-ref");
    std::error_code ec; // file_size also refuses FIFOs and devices before they are opened
    const auto size = fs::file_size(a.model, ec);
    if (ec) return Status::error(fmt::format("{}: cannot read", a.model));
    if (size > static_cast<uint64_t>(limits().max_model_bytes))
      return Status::error(fmt::format("{}: {} bytes is larger than the {}-byte model limit "
                                       "(KILN_MAX_MODEL_BYTES)",
                                       a.model, size, limits().max_model_bytes));
    std::ifstream f(a.model, std::ios::binary);
    if (!f) return Status::error(fmt::format("{}: cannot open", a.model));
    artifact.resize(size);
    f.read(reinterpret_cast<char *>(artifact.data()), static_cast<std::streamsize>(size));
    if (!f) return Status::error(fmt::format("{}: read failed", a.model));
    KILN_ASSIGN(auto sig, runner->artifact_signature(artifact));
    params = sig.inputs;
    for (auto &o : sig.outputs) out_names.push_back(o.first);
  } else {
    KILN_ASSIGN(module, frontend::import_model(a.model));
    for (Value *p : module->main()->body.params) params.push_back({p->name, p->type});
    for (size_t i = 0; i < module->main()->body.results.size(); ++i) {
      const std::string &n = module->main()->body.results[i]->name;
      out_names.push_back(n.empty() ? fmt::format("output{}", i) : n);
    }
  }
  std::vector<Tensor> inputs;
  for (const auto &[pname, ptype] : params) {
    auto it = given.find(pname);
    if (it == given.end())
      return Status::error(fmt::format("input '{}' ({}) is missing; pass --input {}=FILE.npy",
                                       pname, ptype.str(), pname));
    KILN_ASSIGN(Tensor t, adopt_narrow(pname, std::move(it->second), ptype.dtype));
    inputs.push_back(std::move(t));
    given.erase(it);
  }
  if (!given.empty())
    return Status::error(fmt::format("the model has no input named '{}'", given.begin()->first));
  std::vector<Tensor> outputs, reference;
  if (is_artifact) {
    for (size_t i = 0; i < params.size(); ++i)
      if (!(TensorType::of(inputs[i]) == params[i].second))
        return Status::error(fmt::format("input '{}': expected {}, got {}", params[i].first,
                                         params[i].second.str(), TensorType::of(inputs[i]).str()));
    KILN_ASSIGN(outputs, runner->run_artifact(artifact, inputs));
  } else {
    KILN_TRY(check_inputs(*module->main(), inputs));
    // Reduced precision: the f32 model on the reference executor first (run() rewrites it).
    if (reduced) {
      KILN_ASSIGN(reference, execute(*module->main(), inputs));
    }
    KILN_ASSIGN(outputs, runner->run(*module, inputs));
  }

  if (a.time > 0)
    fmt::print("time: {:.3f} ms per call on {} (median of {} calls after the first)\n",
               runner->timed_ms(), a.device, a.time);
  if (!a.output_dir.empty()) fs::create_directories(a.output_dir);
  std::map<std::string, std::string> golden;
  for (const auto &s : a.golden) {
    std::string name, file;
    KILN_TRY(parse_binding(s, name, file));
    golden[name] = file;
  }
  bool all_ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string &name = out_names[i];
    const Tensor &t = outputs[i];
    fmt::print("output '{}': {}\n", name, TensorType::of(t).str());
    if (!a.output_dir.empty()) KILN_TRY(save_npy((fs::path(a.output_dir) / (name + ".npy")).string(), t));
    if (a.top > 0 && t.numel() > 0) {
      std::vector<int64_t> idx(static_cast<size_t>(t.numel()));
      std::iota(idx.begin(), idx.end(), 0);
      int k = std::min<int64_t>(a.top, t.numel());
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                        [&](int64_t x, int64_t y) { return t.get_f64(x) > t.get_f64(y); });
      fmt::print("  top-{}:", k);
      for (int j = 0; j < k; ++j) fmt::print(" class {} ({:.4f})", idx[j], t.get_f64(idx[j]));
      fmt::print("\n");
    }
    if (reduced) {
      RangeCompare c = compare_to_range(t, reference[i], range_tol);
      fmt::print("  vs f32 reference ({}): {}\n", precision_name(a.precision), describe(c));
      all_ok &= c.ok;
    }
    auto g = golden.find(name);
    if (g != golden.end() && (reduced || a.range_tol >= 0)) {
      KILN_ASSIGN(Tensor want, load_tensor_file(g->second));
      RangeCompare c = compare_to_range(t, want, range_tol);
      fmt::print("  vs golden: {}\n", describe(c));
      all_ok &= c.ok;
    } else if (g != golden.end()) {
      KILN_ASSIGN(Tensor want, load_tensor_file(g->second));
      KILN_ASSIGN(want, adopt_narrow(name, std::move(want), t.dtype()));
      Compare c = compare_tensors(t, want, a.rtol, a.atol);
      fmt::print("  vs golden: max abs err {:.3g}, max rel err {:.3g} (rtol {}, atol {}): {}\n",
                 c.max_abs, c.max_rel, a.rtol, a.atol, c.ok ? "OK" : "MISMATCH " + c.reason);
      all_ok &= c.ok;
    }
  }
  if (!all_ok)
    return Status::error(reduced || a.range_tol >= 0
                             ? fmt::format("outputs differ from the {} beyond {} of their range",
                                           reduced ? "f32 reference or golden data"
                                                   : "golden data",
                                           range_tol)
                                 : std::string("outputs differ from the golden data"));
  return Status::ok();
}

} // namespace

void add_run_command(CLI::App &app) {
  auto a = std::make_shared<RunArgs>();
  auto *cmd = app.add_subcommand("run", "Run a model on a device and write its outputs as .npy");
  cmd->add_option("model", a->model, "model (.onnx, StableHLO .mlir) or artifact (.kiln)")->required();
  cmd->add_option("--device", a->device, "cpu-ref, vulkan, vulkan:N or null");
  add_precision_option(cmd, &a->precision);
  cmd->add_option("--range-tol", a->range_tol,
                  "largest error allowed against the f32 reference (with --precision fp16|bf16) "
                  "and --golden, relative to the output's range (default with --precision: 1e-2 "
                  "fp16, 5e-2 bf16); given, --golden compares this way instead of --rtol/--atol "
                  "(e.g. for an artifact compiled with --precision)");
  add_schedule_option(cmd, &a->schedule);
  add_row_reduction_option(cmd, &a->row_reduction);
  add_window_option(cmd, &a->window);
  add_winograd_option(cmd, &a->winograd);
  add_parallel_option(cmd, &a->parallel);
  cmd->add_option("--input", a->inputs, "NAME=FILE.npy (or .pb), one per model input");
  cmd->add_option("--output-dir", a->output_dir, "folder for one NAME.npy per output");
  cmd->add_option("--golden", a->golden, "NAME=FILE.npy: compare output NAME with golden data");
  cmd->add_option("--rtol", a->rtol, "relative tolerance for --golden");
  cmd->add_option("--atol", a->atol, "absolute tolerance for --golden");
  cmd->add_option("--top", a->top, "print the top-K entries of each output");
  cmd->add_option("--time", a->time,
                  "time N more calls after the first and print the median (runtime devices: "
                  "the loaded artifact's run calls; cpu-ref: the reference executor)");
  cmd->callback([a] {
    Status st = run(*a);
    if (!st) {
      fmt::print(stderr, "error: {}\n", st.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
