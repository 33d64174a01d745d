// kiln quantize MODEL.onnx -o OUT.onnx: post-training quantisation into a QDQ ONNX model
// (frontend/onnx/quantize.h). Static mode calibrates: the reference executor runs the model on
// every sample of --calibrate DIR (DIR's own NAME.npy files, or those of each subfolder: one
// sample per folder, one file per model input) and records each quantised activation's range,
// min / max over all samples or the --percentile of its values.
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "frontend/onnx/quantize.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace kiln::tools {

namespace {

namespace fs = std::filesystem;

struct QuantizeArgs {
  std::string model, output, mode = "static", calibrate, method = "minmax";
  std::string activations = "u8", weights;
  double percentile = 99.999;
  bool per_tensor = false;
  int64_t block_size = 0;
  std::vector<std::string> op_types, exclude;
};

// The samples of a calibration folder: the folder itself if it holds .npy files, else each of
// its subfolders, in name order.
Result<std::vector<fs::path>> sample_dirs(const std::string &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::error(fmt::format("--calibrate {}: not a folder", dir));
  std::vector<fs::path> subs;
  bool npy_here = false;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) subs.push_back(e.path());
    else if (e.path().extension() == ".npy") npy_here = true;
  }
  if (npy_here) return std::vector<fs::path>{fs::path(dir)};
  std::sort(subs.begin(), subs.end());
  if (subs.empty())
    return Status::error(fmt::format("--calibrate {}: no .npy files and no sample folders", dir));
  return subs;
}

// One sample's inputs: PARAM.npy for every parameter of `f`.
Result<std::vector<Tensor>> sample_inputs(const Function &f, const fs::path &dir) {
  std::vector<Tensor> in;
  for (const Value *p : f.body.params) {
    const fs::path file = dir / (p->name + ".npy");
    std::error_code ec;
    if (!fs::exists(file, ec))
      return Status::error(fmt::format("calibration sample {}: no {}.npy for input '{}'",
                                       dir.string(), p->name, p->name));
    KILN_ASSIGN(Tensor t, load_tensor_file(file.string()));
    in.push_back(std::move(t));
  }
  KILN_TRY(check_inputs(f, in));
  return in;
}

// Range statistics of one activation over all samples.
struct Stat {
  double lo = INFINITY, hi = -INFINITY;
  std::vector<float> all; // percentile: every finite value
  bool seen = false;
  void add(const Tensor &t, bool keep) {
    const Tensor f = t.dtype() == DType::f32 ? t : t.cast(DType::f32);
    const float *p = f.data<float>();
    seen = true;
    for (int64_t i = 0; i < f.numel(); ++i) {
      if (!std::isfinite(p[i])) continue;
      lo = std::min<double>(lo, p[i]), hi = std::max<double>(hi, p[i]);
      if (keep) all.push_back(p[i]);
    }
  }
  onnx_fe::ActRange range(bool percentile, double pct) {
    if (!percentile || all.empty()) return {std::isfinite(lo) ? lo : 0, std::isfinite(hi) ? hi : 0};
    const size_t n = all.size();
    const auto at = [&](double q) {
      const size_t k = std::min(n - 1, static_cast<size_t>(std::llround(q * static_cast<double>(n - 1))));
      std::nth_element(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
      return static_cast<double>(all[k]);
    };
    return {at(1 - pct / 100), at(pct / 100)};
  }
};

Result<std::map<std::string, onnx_fe::ActRange>> calibrate(const QuantizeArgs &a,
                                                           const std::vector<std::string> &names) {
  if (a.calibrate.empty())
    return Status::error("static quantisation needs calibration inputs: --calibrate DIR "
                         "(or --mode dynamic / weight-only)");
  KILN_ASSIGN(auto dirs, sample_dirs(a.calibrate));
  KILN_ASSIGN(auto m, frontend::import_model(a.model));
  const Function &f = *m->main();
  const bool pct = a.method == "percentile";
  std::map<std::string, Stat> stats;
  for (const auto &d : dirs) {
    KILN_ASSIGN(auto in, sample_inputs(f, d));
    KILN_ASSIGN(ValuesRun run, run_with_values(*m, in, names));
    for (size_t i = 0; i < names.size(); ++i) {
      if (run.values[i]) {
        stats[names[i]].add(*run.values[i], pct);
        continue;
      }
      for (size_t k = 0; k < f.body.params.size(); ++k) // a graph input
        if (f.body.params[k]->name == names[i]) stats[names[i]].add(in[k], pct);
    }
  }
  std::map<std::string, onnx_fe::ActRange> ranges;
  for (const auto &n : names) {
    auto it = stats.find(n);
    if (it == stats.end() || !it->second.seen)
      return Status::error(fmt::format("activation '{}' was not computed by the calibration runs "
                                       "(not a float value of the main graph)", n));
    ranges[n] = it->second.range(pct, a.percentile);
  }
  fmt::print("calibrated {} activations on {} sample{} ({})\n", names.size(), dirs.size(),
             dirs.size() == 1 ? "" : "s",
             pct ? fmt::format("percentile {}", a.percentile) : std::string("min/max"));
  return ranges;
}

Result<DType> qtype(const std::string &s) {
  if (s == "u8" || s == "uint8") return DType::u8;
  if (s == "i8" || s == "int8") return DType::i8;
  if (s == "i4" || s == "int4") return DType::i4;
  return Status::error(fmt::format("'{}' is not a quantised type (u8, i8, i4)", s));
}

Status run_quantize(const QuantizeArgs &a) {
  onnx_fe::QuantizeOptions o;
  if (a.mode == "static") o.mode = onnx_fe::QuantMode::static_qdq;
  else if (a.mode == "dynamic") o.mode = onnx_fe::QuantMode::dynamic;
  else if (a.mode == "weight-only") o.mode = onnx_fe::QuantMode::weight_only;
  else return Status::error(fmt::format("--mode {}: static, dynamic or weight-only", a.mode));
  KILN_ASSIGN(o.activations, qtype(a.activations));
  KILN_ASSIGN(o.weights, qtype(a.weights.empty() ? std::string("i8") : a.weights));
  o.per_channel = !a.per_tensor;
  o.block_size = a.block_size;
  if (!a.op_types.empty()) o.op_types = {a.op_types.begin(), a.op_types.end()};
  o.exclude = {a.exclude.begin(), a.exclude.end()};
  if (a.method != "minmax" && a.method != "percentile")
    return Status::error(fmt::format("--method {}: minmax or percentile", a.method));
  if (!(a.percentile > 50 && a.percentile <= 100))
    return Status::error("--percentile must be in (50, 100]");
  KILN_ASSIGN(auto names, onnx_fe::quantize_activation_names(a.model, o));
  std::map<std::string, onnx_fe::ActRange> ranges;
  if (!names.empty()) {
    KILN_ASSIGN(ranges, calibrate(a, names));
  }
  KILN_ASSIGN(auto s, onnx_fe::quantize_file(a.model, a.output, o, ranges));
  fmt::print("quantized {} nodes ({} mode): {} weights, {} -> {} bytes; {} activations\n", s.nodes,
             a.mode, s.weights, s.weight_bytes_before, s.weight_bytes_after, s.activations);
  if (s.opset_to != s.opset_from)
    fmt::print("opset upgraded from {} to {}\n", s.opset_from, s.opset_to);
  for (const auto &k : s.skipped) fmt::print("left in float: {}\n", k);
  fmt::print("wrote {}\n", a.output);
  return Status::ok();
}

} // namespace

void add_quantize_command(CLI::App &app) {
  auto a = std::make_shared<QuantizeArgs>();
  auto *cmd = app.add_subcommand("quantize", "Post-training quantisation of an ONNX model into a "
                                             "QDQ ONNX model (runs in kiln and ONNX Runtime)");
  cmd->add_option("model", a->model, "model (.onnx)")->required();
  cmd->add_option("-o,--output", a->output, "quantised model to write (.onnx)")->required();
  cmd->add_option("--mode", a->mode,
                  "static (default: calibrated activations and weights), dynamic (weights; "
                  "activations quantised per call) or weight-only");
  cmd->add_option("--calibrate", a->calibrate,
                  "folder of calibration inputs: INPUT.npy files, or one subfolder of them per "
                  "sample (static mode)");
  cmd->add_option("--method", a->method, "calibration: minmax (default) or percentile");
  cmd->add_option("--percentile", a->percentile,
                  "with --method percentile: the range kept, in percent (default 99.999)");
  cmd->add_option("--activations", a->activations,
                  "static activations: u8 (default, asymmetric) or i8 (symmetric)");
  cmd->add_option("--weights", a->weights,
                  "i8 (default, symmetric), u8 (asymmetric) or, weight-only, i4");
  cmd->add_flag("--per-tensor", a->per_tensor, "one weight scale per tensor (default: per channel)");
  cmd->add_option("--block-size", a->block_size,
                  "weight-only: one scale per block of this many along the reduction axis");
  cmd->add_option("--op-types", a->op_types, "ops to quantise (default Conv MatMul Gemm)");
  cmd->add_option("--exclude", a->exclude, "node names to leave in float");
  cmd->callback([a] {
    if (Status st = run_quantize(*a); !st) {
      fmt::print(stderr, "error: {}\n", st.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
