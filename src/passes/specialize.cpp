// specialize_inputs: see pass.h.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "exec/executor.h"
#include "passes/pass.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln {

namespace {

// Number of known dims over all results (unranked counts as none).
int64_t known_dims(const std::vector<TensorType> &ts) {
  int64_t n = 0;
  for (const auto &t : ts) {
    if (!t.ranked) continue;
    n += 1; // knowing the rank counts
    for (int64_t d : t.dims) n += d >= 0;
  }
  return n;
}

bool all_static(const std::vector<TensorType> &ts) {
  for (const auto &t : ts)
    if (!t.is_static()) return false;
  return true;
}


// Re-infers every op's result types in order; returns the ops whose results stay non-static.
Result<std::vector<Op *>> reinfer(Graph &g) {
  std::vector<Op *> open;
  for (auto &p : g.ops) {
    Op &op = *p;
    if (op.name() == "kiln.constant") continue;
    KILN_ASSIGN(auto types, infer_types(op));
    if (!all_static(types)) open.push_back(&op);
    for (size_t i = 0; i < types.size() && i < op.results.size(); ++i) op.results[i]->type = types[i];
  }
  return open;
}

} // namespace

Status specialize_inputs(Module &m, const std::vector<Tensor> &inputs) {
  Function *f = m.main();
  if (!f) return Status::error("module has no main function");
  Graph &g = f->body;
  if (inputs.size() != g.params.size())
    return Status::error(fmt::format("expected {} inputs, got {}", g.params.size(), inputs.size()));
  for (size_t i = 0; i < g.params.size(); ++i) g.params[i]->type = TensorType::of(inputs[i]);
  KILN_ASSIGN(auto open, reinfer(g));

  if (!open.empty()) {
    // The concrete values of the open ops' operands, from one reference run.
    std::vector<Value *> wanted;
    for (Op *op : open)
      for (Value *v : op->operands)
        if (v && (!v->def || v->def->name() != "kiln.constant") &&
            std::find(wanted.begin(), wanted.end(), v) == wanted.end())
          wanted.push_back(v);
    std::vector<Value *> saved = g.results;
    g.results = wanted;
    auto values = execute_graph(g, inputs);
    g.results = saved;
    KILN_TRY(values.status().with_context("specialising inputs"));

    // Substitute an operand's value where that makes the op's result shapes more known.
    const OpDef *constant_def = core_ops().find("kiln.constant");
    std::vector<std::unique_ptr<Op>> consts;
    for (Op *op : open) {
      KILN_ASSIGN(auto types, infer_types(*op));
      for (size_t j = 0; j < op->operands.size() && !all_static(types); ++j) {
        Value *v = op->operands[j];
        auto it = std::find(wanted.begin(), wanted.end(), v);
        if (!v || it == wanted.end()) continue;
        auto c = std::make_unique<Op>();
        c->def = constant_def;
        Value *cv = g.new_value(v->type, v->name);
        cv->def = c.get();
        c->results.push_back(cv);
        c->attrs["value"] = values.value()[static_cast<size_t>(it - wanted.begin())];
        cv->type = TensorType::of(*c->attr_tensor("value"));
        op->operands[j] = cv;
        // A substitution must leave the op something to compute: if every operand became a
        // constant (NonZero's data, Range's bounds), the op would be folded away and the
        // device would compute nothing; such an op stays dynamic instead.
        bool still_runs = false;
        for (const Value *o : op->operands)
          if (o && (!o->def || o->def->name() != "kiln.constant")) still_runs = true;
        auto trial = infer_types(*op);
        if (still_runs && trial.is_ok() && known_dims(trial.value()) > known_dims(types)) {
          types = std::move(trial).value();
          consts.push_back(std::move(c));
        } else {
          op->operands[j] = v;
        }
      }
      for (size_t i = 0; i < types.size() && i < op->results.size(); ++i)
        op->results[i]->type = types[i];
    }
    // Constants go first; then every type downstream is re-inferred.
    for (auto &c : consts) g.ops.insert(g.ops.begin(), std::move(c));
    KILN_TRY(reinfer(g).status());
  }
  KILN_TRY(run_fold_constants(m));
  return run_dce(m);
}

} // namespace kiln
