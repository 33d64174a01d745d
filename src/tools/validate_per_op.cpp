// kiln validate --per-op: every node output of a model on a device against the reference
// executor, and the first node that diverges (validate_per_op.h).
#include "tools/validate_per_op.h"

#include "compiler/compiler.h"
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "frontend/onnx/importer.h"
#include "ir/builder.h"
#include "kir/target.h"
#include "ops/ops.h"
#include "tools/device_runner.h"
#include "tools/tools.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace kiln::tools {

namespace {

// One node output of the model (a named result of a top-level op of the imported graph).
struct Tracked {
  std::string value, node, op_type;
  const Value *ref = nullptr; // in the reference module
  // Quantisation step of the value: 1 for the integers of a quantize op (an error in integer
  // units is in steps), the smallest constant scale of a dequantize op, 0 where none is known.
  double step = 0;
  int device_index = -1; // output of the instrumented artifact, -1: not kept on the device
  std::vector<size_t> reads; // the kept values its computation reads (see frontier())
};

struct Verdict {
  bool ok = true;
  bool nonfinite = false; // a NaN or an infinity where the reference has none (or another)
  double max_abs = 0;     // over the elements finite in both
  std::string snr, steps, detail;
};

// The quantisation step of `v` where its producer says it (see Tracked::step).
double quant_step(const Value *v) {
  const Op &op = *v->def;
  if ((op.name() == "kiln.quantize_linear" || op.name() == "kiln.dynamic_quantize_linear") &&
      v->result_index == 0 && is_integer(v->type.dtype))
    return 1;
  if (op.name() != "kiln.dequantize_linear" || op.operands.size() < 2) return 0;
  const Tensor *scale = Builder::constant_value(op.operands[1]);
  if (!scale || !is_float(scale->dtype())) return 0;
  double step = 0;
  for (int64_t i = 0; i < scale->numel(); ++i) {
    const double s = std::fabs(scale->get_f64(i));
    if (std::isfinite(s) && s > 0 && (step == 0 || s < step)) step = s;
  }
  return step;
}

// The node outputs of `g` in topological order: named results of its ops other than constants
// (a node the importer folded is no computation), each once.
std::vector<Tracked> node_outputs(const Graph &g, const std::map<std::string, std::string> &types) {
  std::vector<Tracked> out;
  std::unordered_set<const Value *> seen;
  for (const auto &op : g.ops) {
    if (op->name() == "kiln.constant") continue;
    for (const Value *r : op->results) {
      if (r->name.empty() || !seen.insert(r).second) continue;
      auto it = types.find(op->loc);
      Tracked t;
      t.value = r->name;
      t.node = op->loc.empty() ? r->name : op->loc;
      t.op_type = it != types.end() ? it->second : std::string(op->name());
      t.ref = r;
      t.step = quant_step(r);
      out.push_back(std::move(t));
    }
  }
  return out;
}

// The kept values (device_index >= 0) that `t` is computed from: its operands, and through
// values that were not kept (a node's inner ops, or values fused away) their operands, up to
// parameters and constants.
std::vector<size_t> frontier(const Tracked &t,
                             const std::unordered_map<const Value *, size_t> &index,
                             const std::vector<Tracked> &all) {
  std::vector<size_t> found;
  std::unordered_set<const Op *> visited;
  std::vector<const Op *> todo{t.ref->def};
  while (!todo.empty()) {
    const Op *op = todo.back();
    todo.pop_back();
    if (!op || !visited.insert(op).second) continue;
    for (const Value *v : op->operands) {
      if (!v) continue;
      auto it = index.find(v);
      if (it != index.end() && all[it->second].device_index >= 0) {
        if (std::find(found.begin(), found.end(), it->second) == found.end())
          found.push_back(it->second);
      } else {
        todo.push_back(v->def);
      }
    }
  }
  return found;
}

// 10 log10(sum want^2 / sum (got - want)^2) in dB over the elements finite in both; "inf" when
// they are equal, "-inf" when a NaN or infinity of one is not in the other (`*nonfinite`).
std::string format_snr(const Tensor &got, const Tensor &want, bool *nonfinite) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) return "n/a";
  double signal = 0, noise = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = got.get_f64(i), b = want.get_f64(i);
    if (std::isfinite(a) && std::isfinite(b)) {
      signal += b * b;
      noise += (a - b) * (a - b);
    } else if (!((std::isnan(a) && std::isnan(b)) || a == b)) {
      *nonfinite = true;
      return "-inf";
    }
  }
  if (noise == 0) return "inf";
  if (signal == 0) return "-inf";
  return fmt::format("{:.1f}", 10 * std::log10(signal / noise));
}

// got against want with validate's comparison for the precision.
Verdict judge(const PerOpOptions &o, Tensor got, const Tensor &want, double step) {
  if (got.dtype() != want.dtype() && is_float(got.dtype()) && is_float(want.dtype()))
    got = got.cast(want.dtype()); // a value the device holds in half precision
  Verdict v;
  if (o.precision == Precision::fp32) {
    Compare c = compare_tensors(got, want, o.rtol, o.atol);
    v.ok = c.ok;
    v.max_abs = c.max_abs;
    const bool typed = got.dtype() == want.dtype() && got.shape() == want.shape();
    v.detail = typed ? fmt::format("max abs err {:.3g} (tolerance rtol {} atol {})", c.max_abs,
                                   o.rtol, o.atol)
                     : c.reason;
  } else {
    RangeCompare c = compare_to_range(got, want, o.range_tol);
    v.ok = c.ok;
    v.max_abs = c.max_abs;
    const std::string tol =
        fmt::format("tolerance {} of the reference range {:.4g}", c.tol, c.range);
    v.detail = c.ok || c.reason.rfind("max abs err", 0) == 0
                   ? fmt::format("max abs err {:.3g} ({})", c.max_abs, tol)
                   : fmt::format("{} ({})", c.reason, tol);
  }
  v.snr = format_snr(got, want, &v.nonfinite);
  v.steps = step > 0 ? fmt::format("{:.3g}", v.max_abs / step) : "-";
  return v;
}

// KILN_TEST_PERTURB=NODE[:DELTA]: parsed, or empty when unset.
Result<std::pair<std::string, double>> perturb_request() {
  const char *env = std::getenv("KILN_TEST_PERTURB");
  if (!env || !*env) return std::pair<std::string, double>{};
  std::string s = env;
  double delta = 1;
  if (auto p = s.rfind(':'); p != std::string::npos) {
    char *end = nullptr;
    delta = std::strtod(s.c_str() + p + 1, &end);
    if (end == s.c_str() + p + 1 || *end)
      return Status::error(fmt::format("KILN_TEST_PERTURB='{}': expected NODE[:DELTA]", s));
    s.resize(p);
  }
  return std::pair<std::string, double>{s, delta};
}

// The testing hook: `v` + delta replaces `v` everywhere in `g` (graph results included) and
// takes its name; returns the sum.
Result<Value *> perturb(Graph &g, Value *v, double delta) {
  if (!v->def || !is_float(v->type.dtype))
    return Status::error(fmt::format("KILN_TEST_PERTURB: value '{}' is not a float op result",
                                     v->name));
  const auto at = std::find_if(g.ops.begin(), g.ops.end(),
                               [&](const auto &op) { return op.get() == v->def; }) -
                  g.ops.begin() + 1;
  const auto before = static_cast<std::ptrdiff_t>(g.ops.size());
  Builder b(core_ops(), g);
  b.set_loc("KILN_TEST_PERTURB");
  Value *c = b.constant(Tensor::scalar_f64(v->type.dtype, delta));
  KILN_ASSIGN(Value * sum, b.create1("kiln.add", {v, c}));
  // The constant and the add were appended: move them to just after v's producer.
  std::rotate(g.ops.begin() + at, g.ops.begin() + before, g.ops.end());
  g.replace_uses(v, sum);
  sum->def->operands[0] = v;
  sum->name = v->name;
  v->name += ".unperturbed";
  return sum;
}

// Picks the device's value for each tracked node output by name (the name the importer gave
// it survives the passes where the value does), applies the testing hook and makes every one
// found an output of `g`. Prefers a value of the reference's dtype (with --precision, a
// graph output's cast back to f32 carries its name too).
Status keep_as_outputs(Graph &g, std::vector<Tracked> &tracked) {
  std::unordered_map<std::string, std::vector<Value *>> by_name;
  for (const auto &op : g.ops)
    for (Value *r : op->results)
      if (!r->name.empty()) by_name[r->name].push_back(r);
  auto pick = [&](const Tracked &t) -> Value * {
    auto it = by_name.find(t.value);
    if (it == by_name.end()) return nullptr;
    Value *best = nullptr;
    for (Value *v : it->second) {
      if (v->type.dims != t.ref->type.dims) continue;
      if (v->type.dtype == t.ref->type.dtype) return v;
      if (!best) best = v;
    }
    return best;
  };
  std::vector<Value *> found(tracked.size());
  for (size_t i = 0; i < tracked.size(); ++i) found[i] = pick(tracked[i]);
  KILN_ASSIGN(auto req, perturb_request());
  if (!req.first.empty()) {
    size_t i = 0;
    while (i < tracked.size() && tracked[i].node != req.first) ++i;
    if (i == tracked.size() || !found[i])
      return Status::error(fmt::format("KILN_TEST_PERTURB: no output of node '{}' on the device",
                                       req.first));
    KILN_ASSIGN(found[i], perturb(g, found[i], req.second));
  }
  std::unordered_map<const Value *, int> result_index;
  for (size_t i = 0; i < g.results.size(); ++i)
    result_index.emplace(g.results[i], static_cast<int>(i));
  for (size_t i = 0; i < tracked.size(); ++i) {
    if (!found[i]) continue;
    auto [r, fresh] = result_index.emplace(found[i], static_cast<int>(g.results.size()));
    if (fresh) g.results.push_back(found[i]);
    tracked[i].device_index = r->second;
  }
  return Status::ok();
}

std::string pad(const std::string &s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

// The reference values of the node outputs, one per tracked value: `ref` runs with all of them
// as extra results.
Result<std::vector<Tensor>> reference_values(Module &ref, const std::vector<Tracked> &tracked,
                                             const std::vector<Tensor> &inputs) {
  Graph &g = ref.main()->body;
  std::unordered_map<const Value *, size_t> result_index;
  for (size_t i = 0; i < g.results.size(); ++i) result_index.emplace(g.results[i], i);
  std::vector<size_t> pos(tracked.size());
  for (size_t i = 0; i < tracked.size(); ++i) {
    auto [it, fresh] = result_index.emplace(tracked[i].ref, g.results.size());
    if (fresh) g.results.push_back(const_cast<Value *>(tracked[i].ref));
    pos[i] = it->second;
  }
  KILN_ASSIGN(auto all, execute(*ref.main(), inputs));
  std::vector<Tensor> values;
  for (size_t i = 0; i < tracked.size(); ++i) values.push_back(all[pos[i]]);
  return values;
}

// The device's values: the model imported again, specialised and put through the graph passes
// as the plain run does, the node outputs that survived kept as extra outputs
// (keep_as_outputs), compiled for the runner's device and run once.
Result<std::vector<Tensor>> device_values(const PerOpOptions &o, std::vector<Tracked> &tracked,
                                          const std::vector<Tensor> &inputs,
                                          DeviceRunner &runner) {
  KILN_ASSIGN(auto dev, frontend::import_model(o.model));
  KILN_TRY(specialize_inputs(*dev, inputs));
  dev->keep_f32 = o.keep_f32;
  const kir::TargetDesc *target = kir::find_target(runner.target());
  if (!target) return Status::error(fmt::format("unknown target '{}'", runner.target()));
  KILN_TRY(check_precision(*target, o.precision));
  KILN_TRY(run_pipeline(*dev, target_pipeline(*target, o.precision)));
  KILN_TRY(keep_as_outputs(dev->main()->body, tracked));
  auto artifact = compile_to_artifact(*dev, *target, runner.compile_options());
  if (!artifact)
    return artifact.status().with_context("--per-op: the model with every node output kept");
  return runner.run_artifact(artifact.value(), inputs);
}

// One line per node output, in topological order.
void print_table(const PerOpOptions &o, const std::vector<Tracked> &tracked,
                 const std::vector<Verdict> &verdicts) {
  size_t kept = 0, wn = 4, wo = 2, wv = 5;
  for (const Tracked &t : tracked) {
    wn = std::max(wn, t.node.size() + 2);
    wo = std::max(wo, t.op_type.size());
    wv = std::max(wv, t.value.size() + 2);
    kept += t.device_index >= 0;
  }
  const std::string tolerance =
      o.precision == Precision::fp32
          ? fmt::format("rtol {} atol {}", o.rtol, o.atol)
          : fmt::format("{} of each value's range, {} vs f32 reference", o.range_tol,
                        precision_name(o.precision));
  fmt::print("per-op: {} of {} node outputs kept on the device ({})\n", kept, tracked.size(),
             tolerance);
  fmt::print("  {} {} {} {:>12} {:>8} {:>8}\n", pad("node", wn), pad("op", wo), pad("value", wv),
             "max abs err", "SNR dB", "q steps");
  for (size_t i = 0; i < tracked.size(); ++i) {
    const Tracked &t = tracked[i];
    const std::string node = "'" + t.node + "'", value = "'" + t.value + "'";
    if (t.device_index < 0) {
      fmt::print("  {} {} {} {:>12} {:>8} {:>8} not kept (fused or folded away)\n", pad(node, wn),
                 pad(t.op_type, wo), pad(value, wv), "-", "-", "-");
      continue;
    }
    const Verdict &v = verdicts[i];
    const std::string err = v.nonfinite ? "non-finite" : fmt::format("{:.3g}", v.max_abs);
    fmt::print("  {} {} {} {:>12} {:>8} {:>8} {}\n", pad(node, wn), pad(t.op_type, wo),
               pad(value, wv), err, v.snr, v.nonfinite ? "-" : v.steps,
               v.ok ? "OK" : "DIVERGES");
  }
}

// For the tracked value `out` beyond tolerance: the first diverging kept value in topological
// order among those it is computed from (its cone, through Tracked::reads); every kept value
// that one reads comes earlier in the cone, so is within tolerance.
size_t first_divergence(size_t out, const std::vector<Tracked> &tracked,
                        const std::vector<Verdict> &verdicts) {
  std::vector<bool> cone(tracked.size(), false);
  std::vector<size_t> todo{out};
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    if (cone[i]) continue;
    cone[i] = true;
    for (size_t j : tracked[i].reads) todo.push_back(j);
  }
  for (size_t i = 0; i < tracked.size(); ++i)
    if (cone[i] && tracked[i].device_index >= 0 && !verdicts[i].ok) return i;
  return out;
}

} // namespace

Result<bool> validate_per_op(const PerOpOptions &o, const std::vector<Tensor> &inputs,
                             DeviceRunner &runner) {
  std::map<std::string, std::string> types;
  if (!frontend::is_stablehlo_path(o.model) && !frontend::is_tflite_path(o.model) &&
      !frontend::is_nnef_path(o.model)) {
    KILN_ASSIGN(types, onnx_fe::node_op_types(o.model));
  }
  KILN_ASSIGN(auto ref, frontend::import_model(o.model));
  const Graph &rg = ref->main()->body;
  const std::vector<Value *> outputs = rg.results;
  std::vector<Tracked> tracked = node_outputs(rg, types);
  KILN_ASSIGN(auto want, reference_values(*ref, tracked, inputs));
  KILN_ASSIGN(auto got, device_values(o, tracked, inputs, runner));

  std::vector<Verdict> verdicts(tracked.size());
  for (size_t i = 0; i < tracked.size(); ++i)
    if (tracked[i].device_index >= 0)
      verdicts[i] = judge(o, got[static_cast<size_t>(tracked[i].device_index)], want[i],
                          tracked[i].step);
  print_table(o, tracked, verdicts);

  std::unordered_map<const Value *, size_t> index;
  for (size_t i = 0; i < tracked.size(); ++i) index.emplace(tracked[i].ref, i);
  for (Tracked &t : tracked)
    if (t.device_index >= 0) t.reads = frontier(t, index, tracked);
  bool ok = true;
  for (const Value *r : outputs) {
    auto it = index.find(r);
    if (it == index.end() || tracked[it->second].device_index < 0 || verdicts[it->second].ok)
      continue;
    ok = false;
    const size_t f = first_divergence(it->second, tracked, verdicts);
    fmt::print("output '{}': first divergence: node '{}' ({}): {}\n", r->name, tracked[f].node,
               tracked[f].op_type, verdicts[f].detail);
  }
  const auto diverging = std::count_if(verdicts.begin(), verdicts.end(),
                                       [](const Verdict &v) { return !v.ok; });
  if (ok && diverging > 0)
    fmt::print("per-op: {} node output(s) beyond tolerance, but every model output is within it\n",
               diverging);
  return ok;
}

} // namespace kiln::tools
