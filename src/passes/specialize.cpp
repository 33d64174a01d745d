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

// Whether `op` keeps a non-constant operand. A substitution must leave the op something to
// compute: if every operand became a constant (NonZero's data, Range's bounds), the op would
// be folded away and the device would compute nothing; such an op stays dynamic instead.
bool still_runs(const Op &op) {
  for (const Value *o : op.operands)
    if (o && (!o->def || o->def->name() != "kiln.constant")) return true;
  return false;
}

// The operand values of the open ops, from one reference run.
struct KnownValues {
  std::vector<Value *> wanted;
  std::vector<Tensor> values;
  const Tensor *find(const Value *v) const {
    auto it = std::find(wanted.begin(), wanted.end(), v);
    return v && it != wanted.end() ? &values[static_cast<size_t>(it - wanted.begin())] : nullptr;
  }
};

Result<KnownValues> operand_values(Graph &g, const std::vector<Tensor> &inputs,
                                   const std::vector<Op *> &open) {
  KnownValues k;
  for (Op *op : open)
    for (Value *v : op->operands)
      if (v && (!v->def || v->def->name() != "kiln.constant") &&
          std::find(k.wanted.begin(), k.wanted.end(), v) == k.wanted.end())
        k.wanted.push_back(v);
  std::vector<Value *> saved = g.results;
  g.results = k.wanted;
  auto values = execute_graph(g, inputs);
  g.results = saved;
  KILN_TRY(values.status().with_context("specialising inputs"));
  k.values = std::move(values).value();
  return k;
}

// A kiln.constant op holding `t` (not yet in the graph) for operand `v`.
std::unique_ptr<Op> constant_for(Graph &g, const Value *v, const Tensor &t) {
  auto c = std::make_unique<Op>();
  c->def = core_ops().find("kiln.constant");
  Value *cv = g.new_value(TensorType::of(t), v->name);
  cv->def = c.get();
  c->results.push_back(cv);
  c->attrs["value"] = t;
  return c;
}

// Substitutes known operand values of `op` where that makes its result shapes more known:
// one operand at a time, then (for ops such as Slice that need several) all operands after
// the first together. A loop's trip count and initial condition are always substituted.
Status substitute_op(Graph &g, Op &op, const KnownValues &known,
                     std::vector<std::unique_ptr<Op>> &consts) {
  KILN_ASSIGN(auto types, infer_types(op));
  const bool loop = op.name() == "kiln.loop";
  for (size_t j = 0; j < op.operands.size() && ((loop && j < 2) || !all_static(types)); ++j) {
    Value *v = op.operands[j];
    const Tensor *t = known.find(v);
    if (!t) continue;
    auto c = constant_for(g, v, *t);
    op.operands[j] = c->results[0];
    auto trial = infer_types(op);
    if (trial.is_ok() && ((loop && j < 2) ||
                          (still_runs(op) && known_dims(trial.value()) > known_dims(types)))) {
      types = std::move(trial).value();
      consts.push_back(std::move(c));
    } else {
      op.operands[j] = v;
    }
  }
  if (!all_static(types) && !loop) {
    std::vector<Value *> saved = op.operands;
    std::vector<std::unique_ptr<Op>> group;
    for (size_t j = 1; j < op.operands.size(); ++j)
      if (const Tensor *t = known.find(op.operands[j])) {
        group.push_back(constant_for(g, op.operands[j], *t));
        op.operands[j] = group.back()->results[0];
      }
    auto trial = group.empty() ? types : infer_types(op);
    if (!group.empty() && trial.is_ok() && still_runs(op) &&
        known_dims(trial.value()) > known_dims(types)) {
      types = std::move(trial).value();
      for (auto &c : group) consts.push_back(std::move(c));
    } else {
      op.operands = saved;
    }
  }
  for (size_t i = 0; i < types.size() && i < op.results.size(); ++i)
    op.results[i]->type = types[i];
  return Status::ok();
}

// Replaces operands of the `open` ops by their values (one reference run) where that makes
// result shapes more known (substitute_op), then re-infers every type.
Status substitute_shape_operands(Graph &g, const std::vector<Tensor> &inputs,
                                 const std::vector<Op *> &open) {
  KILN_ASSIGN(KnownValues known, operand_values(g, inputs, open));
  std::vector<std::unique_ptr<Op>> consts;
  for (Op *op : open) KILN_TRY(substitute_op(g, *op, known, consts));
  // Constants go first; then every type downstream is re-inferred.
  for (auto &c : consts) g.ops.insert(g.ops.begin(), std::move(c));
  return reinfer(g).status();
}

// The top-level ops with regions.
std::vector<const Op *> control_ops(const Graph &g) {
  std::vector<const Op *> r;
  for (const auto &op : g.ops)
    if (!op->regions.empty()) r.push_back(op.get());
  return r;
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
  // Lowering control flow brings in ops that may need substitution themselves (a loop nested
  // in a branch); a few rounds cover the nesting seen in practice.
  for (int round = 0; round < 8; ++round) {
    for (auto &op : g.ops)
      if (op->name() == "kiln.loop" && std::find(open.begin(), open.end(), op.get()) == open.end())
        open.push_back(op.get());
    if (!open.empty()) KILN_TRY(substitute_shape_operands(g, inputs, open));
    auto before = control_ops(g);
    if (before.empty()) break;
    KILN_TRY(run_lower_control_flow(m));
    if (control_ops(g) == before) break; // nothing could be lowered
    KILN_ASSIGN(open, reinfer(g));
  }
  KILN_TRY(run_fold_constants(m));
  return run_dce(m);
}

} // namespace kiln
