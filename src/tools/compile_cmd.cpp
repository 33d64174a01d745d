// kiln compile (model -> .kiln artifact), kiln devices, kiln validate (device vs reference).
#include "calibrate/precision_auto.h"
#include "compiler/compiler.h"
#include "compiler/lowering/kir_stages.h"
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "kiln/kiln.h"
#include "kir/target.h"
#include "passes/pass.h"
#include "tools/device_runner.h"
#include "tools/progress.h"
#include "tools/tools.h"
#include "tools/validate_per_op.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

namespace kiln::tools {

namespace {

using calibrate::AutoPrecision;
using calibrate::choose_precision;

struct CompileArgs {
  std::string model, out, target = "vulkan", stats;
  Precision precision = Precision::fp32;
  bool auto_precision = false;            // --precision auto (precision is then fp16)
  double max_error = 1e-2;                // its budget, relative to each output's range
  std::vector<std::string> inputs;        // its calibration inputs, NAME=FILE.npy
  bool print_ir_after_all = false, time_passes = false;
  std::vector<std::string> print_ir_after;
  std::vector<std::string> disable_passes, enable_passes;
  compiler::ScheduleMode schedule = compiler::ScheduleMode::automatic;
  std::string contraction;
  std::string row_reduction;
  std::string window;
  std::string parallel;
  std::string barriers = "needed";
  int winograd = 4;
  std::string print_kir_after;
};

// Results of the pure layout ops the compiler aliases to their operand's buffer (no storage).
bool is_alias_op(std::string_view name) {
  return name == "kiln.reshape" || name == "kiln.squeeze" || name == "kiln.unsqueeze" ||
         name == "kiln.flatten";
}

// Bytes of every transient tensor, each in its own buffer: the results of all ops except
// constants and aliasing layout ops (parameters are inputs, not op results). What an arena
// without any reuse would need; arena_bytes is to be compared with it.
uint64_t naive_transient_bytes(const Graph &g) {
  uint64_t total = 0;
  for (const auto &op : g.ops) {
    for (const auto &r : op->regions) total += naive_transient_bytes(*r);
    if (op->name() == "kiln.constant" || is_alias_op(op->name())) continue;
    for (const Value *v : op->results)
      if (v->type.is_static())
        total += static_cast<uint64_t>(shape_numel(v->type.dims)) * dtype_size(v->type.dtype);
  }
  return total;
}

// Op results (values computed on the device; constants and aliasing layout ops excluded) and
// constant bytes per dtype: what --precision changed.
nlohmann::json dtype_summary(const Graph &g) {
  std::map<std::string, int64_t> values, constants;
  for (const auto &op : g.ops) {
    if (op->name() == "kiln.constant") {
      for (const Value *v : op->results)
        if (v->type.is_static())
          constants[std::string(dtype_name(v->type.dtype))] +=
              shape_numel(v->type.dims) * static_cast<int64_t>(dtype_size(v->type.dtype));
      continue;
    }
    if (is_alias_op(op->name())) continue;
    for (const Value *v : op->results) ++values[std::string(dtype_name(v->type.dtype))];
  }
  return {{"values", values}, {"constant_bytes", constants}};
}

void print_pass_times(const std::vector<PassTiming> &times) {
  double total = 0;
  fmt::print(stderr, "{:<20} {:>10}\n", "pass", "seconds");
  for (const auto &t : times) {
    fmt::print(stderr, "{:<20} {:>10.4f}\n", t.pass, t.seconds);
    total += t.seconds;
  }
  fmt::print(stderr, "{:<20} {:>10.4f}\n", "total", total);
}

// --precision fp32|fp16|bf16|auto and --max-error (compile, validate): auto is fp16 with the
// nodes that break the budget on calibration inputs kept in f32 (precision_auto.h).
void add_auto_precision_options(CLI::App *cmd, Precision *precision, bool *is_auto,
                                double *max_error) {
  cmd->add_option_function<std::string>(
      "--precision",
      [precision, is_auto](const std::string &s) {
        *is_auto = s == "auto";
        std::optional<Precision> p = parse_precision(*is_auto ? "fp16" : s);
        if (!p)
          throw CLI::ValidationError("--precision",
                                     "expected fp32, fp16, bf16 or auto, got '" + s + "'");
        *precision = *p;
      },
      "fp32 (default): the model's own dtypes; fp16 / bf16: weights and activations stored in "
      "half precision, f32 accumulation, softmax / normalisation / reductions kept f32, inputs "
      "and outputs as declared; auto: fp16, with the nodes that break --max-error on the "
      "calibration inputs kept f32 (chosen on the reference executor, recorded in the artifact)");
  cmd->add_option("--max-error", *max_error,
                  "with --precision auto: largest error allowed at every output, relative to its "
                  "range on the calibration inputs (default 0.01)");
}

// --precision auto: the search on `inputs` through the graph passes `passes` (the fp16
// pipeline the compilation runs; precision_auto.h), its choice printed.
Result<AutoPrecision> search_precision(const std::string &model, const std::vector<Tensor> &inputs,
                                       double max_error, const std::vector<std::string> &passes) {
  if (!(max_error > 0))
    return Status::error(fmt::format("--max-error {}: expected a positive fraction of the "
                                     "output range", max_error));
  KILN_ASSIGN(AutoPrecision ap, choose_precision(model, inputs, max_error, passes));
  std::vector<std::string> quoted, errors;
  for (const std::string &n : ap.f32_nodes)
    if (quoted.size() < 10) quoted.push_back(fmt::format("'{}'", n));
  if (ap.f32_nodes.size() > quoted.size())
    quoted.push_back(fmt::format("and {} more", ap.f32_nodes.size() - quoted.size()));
  for (double e : ap.output_errors) errors.push_back(fmt::format("{:.3g}", e));
  fmt::print("precision auto: {} nodes fp16, {} kept f32{}{} (budget {} of each output's range; "
             "output errors {}; {} reference runs)\n",
             ap.half_nodes, ap.f32_nodes.size(), quoted.empty() ? "" : ": ",
             fmt::join(quoted, ", "),
             max_error, fmt::join(errors, ", "), ap.runs);
  return ap;
}

// The inputs of `f`: NAME=FILE.npy from `specs`, seeded random data for the others (printed),
// checked against the signature.
Result<std::vector<Tensor>> model_inputs(const Function &f, const std::vector<std::string> &specs) {
  std::map<std::string, std::string> files;
  for (const auto &s : specs) {
    auto p = s.find('=');
    if (p == std::string::npos) return Status::error(fmt::format("'{}' is not NAME=FILE", s));
    files[s.substr(0, p)] = s.substr(p + 1);
  }
  std::map<std::string, Tensor> given;
  for (const Value *p : f.body.params)
    if (auto it = files.find(p->name); it != files.end()) {
      KILN_ASSIGN(Tensor t, load_tensor_file(it->second));
      given.emplace(p->name, std::move(t));
    }
  std::vector<std::string> seeded;
  KILN_ASSIGN(std::vector<Tensor> inputs,
              calibrate::seeded_inputs(f, std::move(given), "pass --input", &seeded));
  for (const std::string &name : seeded)
    for (const Value *p : f.body.params)
      if (p->name == name) fmt::print("input '{}': seeded random {}\n", name, p->type.str());
  return inputs;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// The graph passes of `kiln compile`: the target's pipeline (target_pipeline), with the passes
// --enable-pass names put back where precision_pipeline has them and those --disable-pass
// names left out. Either flag must name a pass of precision_pipeline.
Result<std::vector<std::string>> compile_passes(const kir::TargetDesc &t, const CompileArgs &a) {
  const std::vector<std::string> all = precision_pipeline(a.precision);
  const std::vector<std::string> target = target_pipeline(t, a.precision);
  for (const auto &n : a.disable_passes)
    if (!contains(all, n))
      return Status::error(fmt::format("--disable-pass '{}': not a pass of the pipeline ({})", n,
                                       fmt::join(all, ", ")));
  for (const auto &n : a.enable_passes) {
    if (!contains(all, n))
      return Status::error(fmt::format("--enable-pass '{}': not a pass of the pipeline ({})", n,
                                       fmt::join(all, ", ")));
    if (contains(a.disable_passes, n))
      return Status::error(fmt::format("--enable-pass and --disable-pass both name '{}'", n));
  }
  std::vector<std::string> passes;
  for (const auto &n : all)
    if ((contains(target, n) || contains(a.enable_passes, n)) && !contains(a.disable_passes, n))
      passes.push_back(n);
  return passes;
}

Status compile(const CompileArgs &a) {
  auto start = std::chrono::steady_clock::now();
  const kir::TargetDesc *t = kir::find_target(a.target);
  if (!t) return Status::error(fmt::format("unknown target '{}'", a.target));
  KILN_TRY(check_precision(*t, a.precision));
  KILN_ASSIGN(const std::vector<std::string> passes, compile_passes(*t, a));
  // The phase on a terminal; not while IR or pass times are printed to stderr.
  ProgressLine progress;
  const bool quiet = a.print_ir_after_all || !a.print_ir_after.empty() ||
                     !a.print_kir_after.empty() || a.time_passes;
  auto phase = [&](int n, std::string_view what) {
    if (!quiet) progress.update(fmt::format("kiln compile: [{}/4] {}", n, what), true);
  };
  phase(1, "importing the model");
  KILN_ASSIGN(auto module, frontend::import_model(a.model));
  std::optional<CompileOptions::AutoPrecision> chosen;
  if (a.auto_precision) {
    phase(1, "--precision auto: calibration runs on the reference executor");
    KILN_ASSIGN(std::vector<Tensor> inputs, model_inputs(*module->main(), a.inputs));
    progress.clear();
    KILN_ASSIGN(AutoPrecision ap, search_precision(a.model, inputs, a.max_error, passes));
    module->keep_f32 = ap.f32_nodes;
    chosen = CompileOptions::AutoPrecision{a.max_error,
                                           {ap.f32_nodes.begin(), ap.f32_nodes.end()},
                                           ap.half_nodes, ap.output_errors};
  }
  std::vector<PassTiming> times;
  PassInstrumentation pi{.ir_out = &std::cerr,
                         .print_after_all = a.print_ir_after_all,
                         .print_after = a.print_ir_after,
                         .timings = &times};
  phase(2, "graph passes");
  KILN_TRY(run_pipeline(*module, passes, pi));
  if (a.time_passes) print_pass_times(times);
  CompileStats stats;
  CompileOptions opts = cli_compile_options();
  opts.precision = a.precision;
  opts.auto_precision = chosen;
  opts.schedule = a.schedule;
  opts.concurrent_commands = a.barriers == "needed";
  opts.winograd = a.winograd;
  opts.print_kir_after = a.print_kir_after;
  if (!a.contraction.empty() &&
      !compiler::parse_contraction_override(a.contraction, &opts.contraction_override))
    return Status::error(fmt::format("--contraction '{}': expected naive or "
                                     "tiled|registers:TMxTNxTK:RMxRN",
                                     a.contraction));
  if (!a.row_reduction.empty() &&
      !compiler::parse_row_reduction_override(a.row_reduction, &opts.row_reduction_override))
    return Status::error(fmt::format("--row-reduction '{}': expected naive or "
                                     "workgroup_rows:WG (WG a power of two up to 1024)",
                                     a.row_reduction));
  if (!a.window.empty() && !compiler::parse_window_override(a.window, &opts.window_override))
    return Status::error(fmt::format("--window '{}': expected naive or "
                                     "window_rows:R[:guarded] (R from 1 to 16)",
                                     a.window));
  if (!a.parallel.empty() &&
      !compiler::parse_parallel_override(a.parallel, &opts.parallel_override))
    return Status::error(fmt::format("--parallel '{}': expected naive or blocked:E (E = 2, 4 "
                                     "or 8)",
                                     a.parallel));
  phase(3, fmt::format("lowering, code generation for {}", a.target));
  KILN_ASSIGN(auto bytes, compile_to_artifact(*module, *t, opts, &stats));
  phase(4, "writing the artifact");
  std::ofstream f(a.out, std::ios::binary);
  if (!f) return Status::error(fmt::format("{}: cannot write", a.out));
  f.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) return Status::error(fmt::format("{}: write failed", a.out));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.clear();
  fmt::print("{}: {} bytes, target {}, {} dispatches, {} executables, arena {} bytes, constants {} "
             "bytes, {:.2f} s\n",
             a.out, bytes.size(), a.target, stats.dispatches, stats.executables, stats.arena_bytes,
             stats.constant_bytes, secs);
  if (!a.stats.empty()) {
    nlohmann::json j = {{"dispatches", stats.dispatches},      {"copies", stats.copies},
                        {"barriers", stats.barriers},
                        {"executables", stats.executables},    {"arena_bytes", stats.arena_bytes},
                        {"constant_bytes", stats.constant_bytes}, {"compile_seconds", secs},
                        {"artifact_bytes", bytes.size()},
                        {"schedule", compiler::to_string(a.schedule)},
                        {"precision", a.auto_precision ? std::string("auto")
                                                       : std::string(precision_name(a.precision))},
                        {"dtypes", dtype_summary(module->main()->body)},
                        {"contractions", {{"naive", stats.naive_contractions},
                                          {"tiled", stats.tiled_contractions},
                                          {"registers", stats.register_contractions},
                                          {"matrix", stats.matrix_contractions},
                                          {"coop", stats.coop_contractions},
                                          {"split_k", stats.split_k_contractions},
                                          {"shifted_rows", stats.shifted_rows_contractions},
                                          {"tap_major", stats.tap_major_contractions},
                                          {"im2col", stats.im2col_contractions},
                                          {"winograd", stats.winograd_contractions}}},
                        {"row_reductions", {{"naive", stats.naive_row_reductions},
                                            {"workgroup_rows", stats.workgroup_row_reductions}}},
                        {"windows", {{"naive", stats.naive_windows},
                                     {"window_rows", stats.window_rows_windows},
                                     {"whole_rows", stats.whole_rows_windows}}},
                        {"attention", stats.attention},
                        {"parallel", {{"naive", stats.naive_parallel},
                                      {"blocked", stats.blocked_parallel},
                                      {"rows", stats.rows_parallel}}},
                        {"naive_transient_bytes", naive_transient_bytes(module->main()->body)}};
    std::ofstream(a.stats) << j.dump(1) << "\n";
  }
  return Status::ok();
}

Status devices() {
  size_t n = 0;
  kiln_status st = kiln_devices_list(nullptr, 0, &n);
  if (st) {
    std::string msg = kiln_status_message(st);
    kiln_status_free(st);
    return Status::error(msg);
  }
  std::vector<kiln_device_info> infos(n);
  st = kiln_devices_list(infos.data(), infos.size(), &n);
  if (st) {
    std::string msg = kiln_status_message(st);
    kiln_status_free(st);
    return Status::error(msg);
  }
  for (const auto &d : infos) {
    fmt::print("{}: {} ({}, {})\n", d.uri, d.name, d.driver, d.device_type);
    if (std::string(d.driver) != "vulkan") continue;
    fmt::print("  Vulkan {}.{}, subgroup {}, shared memory {} B, {} invocations/workgroup, "
               "storage buffer range {} B\n",
               d.api_version >> 22, (d.api_version >> 12) & 0x3ff, d.subgroup_size,
               d.shared_memory_bytes, d.max_workgroup_invocations, d.max_storage_buffer_range);
    fmt::print("  f16 {} f64 {} i8 {} i16 {} i64 {} storage8 {} storage16 {} coopmat {} "
               "timestamps {}\n",
               d.float16, d.float64, d.int8, d.int16, d.int64, d.storage8, d.storage16,
               d.cooperative_matrix, d.timestamps);
  }
  return Status::ok();
}

struct ValidateArgs {
  std::string model, device = "vulkan";
  std::vector<std::string> inputs;
  double rtol = 1e-4, atol = 1e-5;
  Precision precision = Precision::fp32;
  double range_tol = -1; // < 0: default_range_tolerance(precision)
  compiler::RowReductionSchedule row_reduction;
  compiler::WindowSchedule window;
  compiler::ParallelSchedule parallel;
  compiler::ScheduleMode schedule = compiler::ScheduleMode::automatic;
  int winograd = 4;
  bool per_op = false;
  bool auto_precision = false; // --precision auto (precision is then fp16)
  double max_error = 1e-2;
};


Status validate(const ValidateArgs &a) {
  if (a.per_op && a.device == "cpu-ref")
    return Status::error("--per-op compares a compiled device with the reference executor; "
                         "--device cpu-ref is the reference itself (use cpu or vulkan)");
  KILN_ASSIGN(auto module, frontend::import_model(a.model));
  const Function &f = *module->main();
  KILN_ASSIGN(std::vector<Tensor> inputs, model_inputs(f, a.inputs));
  KILN_ASSIGN(auto want, execute(f, inputs));
  const std::string label = a.auto_precision ? "auto" : std::string(precision_name(a.precision));
  KILN_ASSIGN(auto runner, DeviceRunner::open(a.device));
  if (a.precision != Precision::fp32 && runner->is_reference())
    return Status::error(fmt::format("--precision {}: cpu-ref runs a model in its own dtypes; "
                                     "precision applies to compiled devices (cpu, vulkan)",
                                     label));
  if (a.auto_precision) {
    // The search runs the graph passes the device's compilation will run.
    const kir::TargetDesc *t = kir::find_target(runner->target());
    if (!t) return Status::error(fmt::format("unknown target '{}'", runner->target()));
    KILN_ASSIGN(AutoPrecision ap, search_precision(a.model, inputs, a.max_error,
                                                   target_pipeline(*t, Precision::fp16)));
    module->keep_f32 = ap.f32_nodes;
  }
  CompileOptions opts = cli_compile_options();
  opts.schedule = a.schedule;
  opts.row_reduction_override = a.row_reduction;
  opts.window_override = a.window;
  opts.parallel_override = a.parallel;
  opts.winograd = a.winograd;
  opts.precision = a.precision;
  runner->set_compile_options(opts);
  KILN_ASSIGN(auto got, runner->run(*module, inputs));
  bool ok = true;
  const double tol = a.range_tol >= 0 ? a.range_tol
                     : a.auto_precision ? a.max_error
                                        : default_range_tolerance(a.precision);
  if (a.precision != Precision::fp32) {
    // The f32 model's reference outputs against the device's reduced-precision ones.
    for (size_t i = 0; i < want.size(); ++i) {
      RangeCompare c = compare_to_range(got[i], want[i], tol);
      fmt::print("output '{}' ({} vs f32 reference): {}\n", f.body.results[i]->name, label,
                 describe(c));
      ok &= c.ok;
    }
  } else {
    for (size_t i = 0; i < want.size(); ++i) {
      Compare c = compare_tensors(got[i], want[i], a.rtol, a.atol);
      fmt::print("output '{}': max abs err {:.3g}, max rel err {:.3g}: {}\n",
                 f.body.results[i]->name, c.max_abs, c.max_rel,
                 c.ok ? "OK" : "MISMATCH " + c.reason);
      ok &= c.ok;
    }
  }
  if (a.per_op) {
    // Every node output kept as an output of a second artifact: elementwise epilogues do not
    // fuse across them, so a mismatch of the plain artifact alone points at fusion.
    PerOpOptions po{.model = a.model, .precision = a.precision, .rtol = a.rtol, .atol = a.atol,
                    .range_tol = tol, .keep_f32 = module->keep_f32};
    KILN_ASSIGN(bool per_op_ok, validate_per_op(po, inputs, *runner));
    if (!ok && per_op_ok)
      fmt::print("per-op: no output diverges when every node output is kept: the mismatch "
                 "appears only in the plain artifact (fused epilogues, its own buffer plan)\n");
    ok &= per_op_ok;
  }
  if (ok) return Status::ok();
  if (a.precision != Precision::fp32)
    return Status::error(fmt::format("device '{}' at {} differs from the f32 reference beyond "
                                     "{} of the output range",
                                     a.device, label, tol));
  return Status::error(fmt::format("device '{}' differs from the reference beyond rtol {} atol {}",
                                   a.device, a.rtol, a.atol));
}

void fail_on(const Status &st) {
  if (!st) {
    fmt::print(stderr, "error: {}\n", st.message());
    throw CLI::RuntimeError(1);
  }
}

} // namespace

void add_compile_commands(CLI::App &app) {
  auto c = std::make_shared<CompileArgs>();
  auto *cmd = app.add_subcommand("compile", "Compile a model into a .kiln artifact");
  cmd->add_option("model", c->model, "model file (.onnx, or StableHLO text .mlir)")->required();
  cmd->add_option("-o,--output", c->out, "artifact to write (.kiln)")->required();
  cmd->add_option("--target", c->target,
                  "vulkan, vulkan-lavapipe, vulkan-nvidia, cpu, cpu-x86-64-v2, cpu-x86-64-v3 or "
                  "cpu-x86-64-v4");
  cmd->add_option("--stats", c->stats, "write compile statistics as JSON");
  add_auto_precision_options(cmd, &c->precision, &c->auto_precision, &c->max_error);
  cmd->add_option("--input", c->inputs,
                  "with --precision auto: calibration input NAME=FILE.npy (others get seeded "
                  "random data)");
  add_schedule_option(cmd, &c->schedule);
  cmd->add_option("--contraction", c->contraction,
                  "force a contraction schedule for tuning: naive or "
                  "tiled|registers:TMxTNxTK:RMxRN (e.g. tiled:64x64x16:4x4)");
  cmd->add_option("--row-reduction", c->row_reduction,
                  "force a row-reduction schedule (softmax, norms, reduce) for tuning: naive or "
                  "workgroup_rows:WG; a trailing ! applies it where the table picks naive too");
  cmd->add_option("--window", c->window,
                  "force a window schedule (pooling, depthwise convolution) for tuning: naive or "
                  "window_rows:R[:guarded]; a trailing ! applies it where the table picks naive "
                  "too");
  cmd->add_option("--barriers", c->barriers,
                  "needed (default): independent commands run together, a barrier only before "
                  "one that depends on an earlier one; every: a barrier before every command "
                  "(as --schedule naive)")
      ->check(CLI::IsMember({"needed", "every"}));
  add_winograd_option(cmd, &c->winograd);
  cmd->add_option("--parallel", c->parallel,
                  "force a parallel schedule (elementwise, broadcast, gather, copies) for "
                  "tuning: naive or blocked:E (E = 2, 4, 8); a trailing ! applies it where the "
                  "table picks naive too");
  std::string names;
  for (const auto &n : default_pipeline()) names += (names.empty() ? "" : ", ") + n;
  names += "; with --precision fp16|bf16 also lower-precision-fp16|bf16, dce; then "
           "expand-qlinear";
  if (const kir::TargetDesc *cpu = kir::find_target("cpu"))
    if (std::vector<std::string> left = target_omitted_passes(*cpu); !left.empty())
      names += fmt::format("; the cpu targets leave out {}", fmt::join(left, ", "));
  cmd->add_flag("--print-ir-after-all", c->print_ir_after_all,
                "print the IR to stderr after every graph pass (" + names + ")");
  cmd->add_option("--print-ir-after", c->print_ir_after,
                  "print the IR to stderr after the named pass (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--disable-pass", c->disable_passes,
                  "leave the named pass out of the pipeline (repeatable; e.g. fuse-attention)")
      ->allow_extra_args(false);
  cmd->add_option("--enable-pass", c->enable_passes,
                  "put back a pass the target's pipeline leaves out (repeatable; e.g. "
                  "fuse-attention on the cpu targets)")
      ->allow_extra_args(false);
  std::string stages;
  for (const auto &n : compiler::kir_stage_names()) stages += (stages.empty() ? "" : ", ") + n;
  cmd->add_option("--print-kir-after", c->print_kir_after,
                  "print every kernel (kernel-IR text) to stderr after this stage: " + stages)
      ->check(CLI::IsMember(compiler::kir_stage_names()));
  cmd->add_flag("--time-passes", c->time_passes, "print a table of seconds per pass to stderr");
  cmd->callback([c] { fail_on(compile(*c)); });

  auto *dev = app.add_subcommand("devices", "List devices and the capabilities kiln uses");
  dev->callback([] { fail_on(devices()); });

  auto v = std::make_shared<ValidateArgs>();
  auto *val = app.add_subcommand("validate", "Run on a device and on the reference; compare");
  val->add_option("model", v->model, "model file (.onnx, or StableHLO text .mlir)")->required();
  val->add_option("--device", v->device, "vulkan, vulkan:N or null");
  add_auto_precision_options(val, &v->precision, &v->auto_precision, &v->max_error);
  val->add_option("--range-tol", v->range_tol,
                  "with --precision fp16|bf16|auto: largest error allowed, relative to the "
                  "output's range (default 1e-2 fp16, 5e-2 bf16, --max-error for auto)");
  add_schedule_option(val, &v->schedule);
  add_row_reduction_option(val, &v->row_reduction);
  add_window_option(val, &v->window);
  add_parallel_option(val, &v->parallel);
  add_winograd_option(val, &v->winograd);
  val->add_option("--input", v->inputs, "NAME=FILE.npy (others get seeded random data)");
  val->add_option("--rtol", v->rtol, "relative tolerance");
  val->add_option("--atol", v->atol, "absolute tolerance");
  val->add_flag("--per-op", v->per_op,
                "also compare every node's output (max abs err, SNR, quantisation steps) and "
                "name the first node that diverges");
  val->callback([v] { fail_on(validate(*v)); });
  add_inspect_command(app);
}

} // namespace kiln::tools
