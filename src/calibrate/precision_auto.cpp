// --precision auto: the search for the nodes kept in f32 (precision_auto.h).
#include "calibrate/precision_auto.h"

#include "calibrate/reference.h"
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "passes/pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace kiln::calibrate {

namespace {

// max |got - want| over the reference's range (got cast to want's dtype); infinity where a
// non-finite value differs.
double range_error(const Tensor &got, const Tensor &want) {
  const Tensor g = got.dtype() == want.dtype() ? got : got.cast(want.dtype());
  // An unbounded tolerance: the comparison fails only on a non-finite or shape mismatch.
  const RangeCompare c = compare_to_range(g, want, INFINITY);
  return c.ok ? c.max_abs / c.range : INFINITY;
}

} // namespace

Result<AutoPrecision> choose_precision(const std::string &model, const std::vector<Tensor> &inputs,
                                       double max_error, const std::vector<std::string> &passes) {
  // The f32 reference: the imported model as the reference executor runs it.
  KILN_ASSIGN(auto ref, frontend::import_model(model));
  // Its node outputs: the float named results of top-level ops other than constants.
  std::vector<std::string> names;
  for (const auto &op : ref->main()->body.ops) {
    if (op->name() == "kiln.constant") continue;
    for (const Value *r : op->results)
      if (!r->name.empty() && is_float(r->type.dtype) &&
          std::find(names.begin(), names.end(), r->name) == names.end())
        names.push_back(r->name);
  }
  KILN_ASSIGN(ValuesRun want, run_with_values(*ref, inputs, names));

  AutoPrecision a;
  for (;;) {
    KILN_ASSIGN(auto half, frontend::import_model(model));
    KILN_TRY(specialize_inputs(*half, inputs));
    half->keep_f32 = a.f32_nodes;
    KILN_TRY(run_pipeline(*half, passes));
    KILN_ASSIGN(ValuesRun got, run_with_values(*half, inputs, names));
    ++a.runs;
    a.output_errors.clear();
    bool ok = true;
    for (size_t i = 0; i < got.outputs.size(); ++i) {
      a.output_errors.push_back(range_error(got.outputs[i], want.outputs[i]));
      ok = ok && a.output_errors.back() <= max_error;
    }
    std::set<std::string> half_nodes;
    for (const auto &op : half->main()->body.ops)
      for (const Value *r : op->results)
        if (r->type.dtype == DType::f16 && !op->loc.empty() && op->name() != "kiln.constant" &&
            op->name() != "kiln.cast")
          half_nodes.insert(op->loc);
    a.half_nodes = static_cast<int>(half_nodes.size());
    if (ok) return a;
    // The first half node beyond the budget in topological order, else the worst half node.
    std::string pick, worst_loc;
    double worst = -1;
    for (size_t i = 0; i < names.size() && pick.empty(); ++i) {
      const Value *v = got.found[i];
      // A model output made half is read through its cast back to f32, which took its name.
      if (v && v->def && v->def->name() == "kiln.cast" && !v->def->operands.empty() &&
          v->def->operands[0]->type.dtype == DType::f16)
        v = v->def->operands[0];
      if (!v || !v->def || v->type.dtype != DType::f16 || !got.values[i] || !want.values[i])
        continue;
      const std::string &loc = v->def->loc;
      if (loc.empty() || a.f32_nodes.count(loc)) continue;
      const double e = range_error(*got.values[i], *want.values[i]);
      if (e > max_error) pick = loc;
      else if (e > worst) worst = e, worst_loc = loc;
    }
    if (pick.empty()) pick = worst_loc;
    if (pick.empty()) {
      size_t i = 0;
      while (i + 1 < a.output_errors.size() && a.output_errors[i] <= max_error) ++i;
      return Status::error(fmt::format(
          "--precision auto: output {} stays {:.3g} of its range from the f32 reference (budget "
          "{}) with every nameable node in f32",
          i, a.output_errors[i], max_error));
    }
    a.f32_nodes.insert(pick);
  }
}

} // namespace kiln::calibrate
