// Quantisation calibration on the reference executor (quantize_calibration.h).
#include "calibrate/quantize_calibration.h"

#include "calibrate/reference.h"
#include "exec/executor.h"
#include "frontend/model_import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

namespace kiln::calibrate {

namespace {

namespace fs = std::filesystem;

// The samples of a calibration folder: the folder itself if it holds .npy files, else each of
// its subfolders, in name order.
Result<std::vector<fs::path>> sample_dirs(const std::string &dir, const std::string &label) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::error(fmt::format("{}: not a folder", label));
  std::vector<fs::path> subs;
  bool npy_here = false;
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory()) subs.push_back(e.path());
    else if (e.path().extension() == ".npy") npy_here = true;
  }
  if (npy_here) return std::vector<fs::path>{fs::path(dir)};
  std::sort(subs.begin(), subs.end());
  if (subs.empty())
    return Status::error(fmt::format("{}: no .npy files and no sample folders", label));
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

} // namespace

Result<Calibration> calibrate_activations(const std::string &model,
                                          const std::vector<std::string> &names,
                                          const CalibrationOptions &o) {
  if (o.dir.empty())
    return Status::error("static quantisation needs calibration inputs: " + o.missing);
  KILN_ASSIGN(auto dirs,
              sample_dirs(o.dir, o.label.empty() ? "--calibrate " + o.dir : o.label));
  KILN_ASSIGN(auto m, frontend::import_model(model));
  const Function &f = *m->main();
  const bool pct = o.percentile;
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
  Calibration c;
  c.samples = dirs.size();
  for (const auto &n : names) {
    auto it = stats.find(n);
    if (it == stats.end() || !it->second.seen)
      return Status::error(fmt::format("activation '{}' was not computed by the calibration runs "
                                       "(not a float value of the main graph)", n));
    c.ranges[n] = it->second.range(pct, o.percent);
  }
  return c;
}

Result<QuantizeResult> quantize_model(const std::string &model, const std::string &out,
                                      const onnx_fe::QuantizeOptions &q,
                                      const CalibrationOptions &c) {
  KILN_ASSIGN(auto names, onnx_fe::quantize_activation_names(model, q));
  QuantizeResult r;
  Calibration cal;
  if (!names.empty()) {
    KILN_ASSIGN(cal, calibrate_activations(model, names, c));
  }
  r.calibrated = names.size();
  r.samples = cal.samples;
  KILN_ASSIGN(r.summary, onnx_fe::quantize_file(model, out, q, cal.ranges));
  return r;
}

std::optional<DType> parse_quant_type(std::string_view s) {
  if (s == "u8" || s == "uint8") return DType::u8;
  if (s == "i8" || s == "int8") return DType::i8;
  if (s == "i4" || s == "int4") return DType::i4;
  return std::nullopt;
}

} // namespace kiln::calibrate
