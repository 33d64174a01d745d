// Reference-executor helpers shared by the CLI and the Python package (reference.h).
#include "calibrate/reference.h"

#include "exec/executor.h"
#include "frontend/onnx/importer.h"
#include "support/npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <random>
#include <unordered_map>

namespace kiln::calibrate {

Result<Tensor> load_tensor_file(const std::string &path) {
  if (path.size() > 3 && path.substr(path.size() - 3) == ".pb") return onnx_fe::read_tensor_pb(path);
  KILN_ASSIGN(NpyArray a, read_npy(path));
  Tensor t(a.dtype, a.shape);
  if (!a.bytes.empty()) std::memcpy(t.raw_mut(), a.bytes.data(), a.bytes.size());
  return t;
}

Tensor random_input(const TensorType &t, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor x(t.dtype, t.dims);
  std::uniform_real_distribution<double> uf(-1.0, 1.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (is_float(t.dtype)) x.set_f64(i, uf(rng));
    else x.set_i64(i, static_cast<int64_t>(rng() % (is_bool(t.dtype) ? 2 : 4)));
  }
  return x;
}

Result<std::vector<Tensor>> seeded_inputs(const Function &f, std::map<std::string, Tensor> given,
                                          std::string_view how_to_give,
                                          std::vector<std::string> *seeded) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < f.body.params.size(); ++i) {
    const Value *p = f.body.params[i];
    auto it = given.find(p->name);
    if (it != given.end()) {
      inputs.push_back(std::move(it->second));
      continue;
    }
    if (!p->type.is_static())
      return Status::error(
          fmt::format("input '{}' has a dynamic shape; {}", p->name, how_to_give));
    inputs.push_back(random_input(p->type, 1234 + static_cast<uint32_t>(i)));
    if (seeded) seeded->push_back(p->name);
  }
  KILN_TRY(check_inputs(f, inputs));
  return inputs;
}

Result<ValuesRun> run_with_values(Module &m, const std::vector<Tensor> &inputs,
                                  const std::vector<std::string> &names) {
  Graph &g = m.main()->body;
  std::unordered_map<std::string, Value *> by_name;
  for (const auto &op : g.ops)
    for (Value *r : op->results)
      if (!r->name.empty() && op->name() != "kiln.constant") by_name.emplace(r->name, r);
  const size_t n_out = g.results.size();
  ValuesRun run;
  std::vector<int> at;
  for (const std::string &n : names) {
    auto it = by_name.find(n);
    run.found.push_back(it == by_name.end() ? nullptr : it->second);
    if (it == by_name.end()) {
      at.push_back(-1);
      continue;
    }
    at.push_back(static_cast<int>(g.results.size()));
    g.results.push_back(it->second);
  }
  auto ran = execute(*m.main(), inputs);
  g.results.resize(n_out); // the module as it was, whatever happened
  if (!ran) return ran.status();
  const std::vector<Tensor> &all = ran.value();
  run.outputs.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_out));
  for (int a : at)
    run.values.push_back(a < 0 ? std::nullopt
                               : std::optional<Tensor>(all[static_cast<size_t>(a)]));
  return run;
}

Compare compare_tensors(const Tensor &got, const Tensor &want, double rtol, double atol) {
  Compare c;
  if (got.dtype() != want.dtype()) {
    c.ok = false;
    c.reason = fmt::format("dtype {} but expected {}", dtype_name(got.dtype()), dtype_name(want.dtype()));
    return c;
  }
  if (got.shape() != want.shape()) {
    c.ok = false;
    c.reason = fmt::format("shape [{}] but expected [{}]", shape_str(got.shape()), shape_str(want.shape()));
    return c;
  }
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    bool ok;
    double err = 0;
    if (is_narrow_float(got.dtype())) {
      // float8 / float4 / e8m0 values are compared exactly (one step of these types is far
      // beyond any tolerance); every NaN pattern matches every other, and -0 matches 0.
      double a = got.get_f64(i), b = want.get_f64(i);
      ok = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!ok && !std::isnan(a) && !std::isnan(b))
        c.max_abs = std::max(c.max_abs, std::fabs(a - b));
    } else if (is_float(got.dtype())) {
      double a = got.get_f64(i), b = want.get_f64(i);
      if (std::isnan(a) || std::isnan(b)) ok = std::isnan(a) && std::isnan(b);
      else if (std::isinf(a) || std::isinf(b)) ok = a == b;
      else {
        err = std::fabs(a - b);
        ok = err <= atol + rtol * std::fabs(b);
        c.max_abs = std::max(c.max_abs, err);
        if (b != 0) c.max_rel = std::max(c.max_rel, err / std::fabs(b));
      }
    } else {
      ok = got.get_i64(i) == want.get_i64(i);
      if (!ok) c.max_abs = std::max(c.max_abs, std::fabs(got.get_f64(i) - want.get_f64(i)));
    }
    if (!ok) {
      ++bad;
      if (first_bad < 0) first_bad = i;
    }
  }
  if (bad) {
    c.ok = false;
    c.reason = fmt::format("{} of {} values differ (max abs err {:.3g}, max rel err {:.3g}; first "
                           "at {}: got {} want {})",
                           bad, got.numel(), c.max_abs, c.max_rel, first_bad,
                           got.get_f64(first_bad), want.get_f64(first_bad));
  }
  return c;
}

RangeCompare compare_to_range(const Tensor &got, const Tensor &want, double tol) {
  RangeCompare c;
  c.tol = tol;
  if (got.dtype() != want.dtype() || got.shape() != want.shape() || !is_float(got.dtype())) {
    Compare e = compare_tensors(got, want, 0, 0);
    c.ok = e.ok;
    c.reason = e.reason;
    c.max_abs = e.max_abs;
    return c;
  }
  double lo = INFINITY, hi = -INFINITY, best_got = -INFINITY, best_want = -INFINITY;
  int64_t special = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_f64(i), b = want.get_f64(i);
    if (std::isfinite(b)) lo = std::min(lo, b), hi = std::max(hi, b);
    if (a > best_got) best_got = a, c.argmax_got = i;
    if (b > best_want) best_want = b, c.argmax_want = i;
    if (std::isfinite(a) && std::isfinite(b)) c.max_abs = std::max(c.max_abs, std::fabs(a - b));
    else if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
      if (special < 0) special = i;
    }
  }
  c.range = hi > lo ? hi - lo : 1.0;
  if (special >= 0) {
    c.ok = false;
    c.reason = fmt::format("element {} is {} but the reference is {}", special,
                           got.get_f64(special), want.get_f64(special));
  } else if (c.max_abs > tol * c.range) {
    c.ok = false;
    c.reason = fmt::format("max abs err {:.3g} is more than {} of the range {:.4g}", c.max_abs, tol,
                           c.range);
  }
  return c;
}

std::string describe(const RangeCompare &c) {
  return fmt::format("max abs err {:.3g} = {:.3g} of the reference range {:.4g} (tolerance {}), "
                     "argmax {}, reference argmax {}: {}",
                     c.max_abs, c.range > 0 ? c.max_abs / c.range : 0.0, c.range, c.tol,
                     c.argmax_got, c.argmax_want, c.ok ? "OK" : "MISMATCH " + c.reason);
}

} // namespace kiln::calibrate
