// Fusion groups: elementwise epilogues absorbed into the kernel of their producer.
#include "compiler/lowering/lower.h"

#include "ir/builder.h"

namespace kiln::compiler {

namespace {

// Ops with one result whose lowering stores every element of it through GridKernel::store,
// so that an epilogue can be applied to it.
bool is_producer(const Op &op) {
  static const std::unordered_set<std::string_view> kNames = {
      "kiln.conv",      "kiln.matmul", "kiln.gemm",  "kiln.cast",  "kiln.expand",
      "kiln.transpose", "kiln.tile",   "kiln.slice", "kiln.gather", "kiln.sdpa"};
  return kNames.count(op.name()) != 0 || is_epilogue_op(op);
}

bool is_static(const Value *v) { return v->type.ranked && v->type.is_static(); }

// Producers whose kernel stores every element through GridKernel::store with the flat index
// of the element in the result, so that the store may go to another position (the attention
// core's head-merge transpose included).
bool is_contraction(const Op &op) {
  return op.name() == "kiln.matmul" || op.name() == "kiln.gemm" || op.name() == "kiln.conv" ||
         op.name() == "kiln.sdpa";
}

// Data-movement ops that keep the row-major order of the elements (lowered as aliases).
bool is_reshape(const Op &op) {
  return op.name() == "kiln.reshape" || op.name() == "kiln.squeeze" ||
         op.name() == "kiln.unsqueeze" || op.name() == "kiln.flatten";
}

// The data-movement ops a contraction's store absorbs after `cur` (the last value of its
// elementwise chain): the longest chain of reshapes and transposes, each the only user of the
// previous value, cut after its last transpose (a trailing reshape stays an alias of the
// transpose's buffer; a chain without transpose is left alone).
std::vector<const Op *> plan_moves(const Value *cur, std::unordered_map<const Value *, int> &uses,
                                   const std::unordered_map<const Value *, const Op *> &user) {
  std::vector<const Op *> moves;
  size_t keep = 0;
  while (uses[cur] == 1) {
    const Op &step = *user.at(cur);
    const bool transpose = step.name() == "kiln.transpose";
    if ((!transpose && !is_reshape(step)) || !step.regions.empty() || step.results.size() != 1 ||
        step.operands.empty() || step.operands[0] != cur)
      break;
    const Value *r = step.results[0];
    if (!is_static(r) || r->type.dtype != cur->type.dtype ||
        shape_numel(r->type.dims) != shape_numel(cur->type.dims))
      break;
    moves.push_back(&step);
    if (transpose) keep = moves.size();
    cur = r;
  }
  moves.resize(keep);
  return moves;
}

// The root of the fusion group whose last value is `v` (an existing epilogue's root, or `v`
// itself when a producer computes it and absorbs nothing), or nullptr when no producer's
// kernel computes `v`.
const Value *group_root(const FusionPlan &plan, const Value *v) {
  for (const auto &[root, e] : plan.epilogue_of)
    if (e.stored() == v) return e.concat ? nullptr : root;
  if (!v->def || plan.absorbed.count(v->def) || !is_producer(*v->def) ||
      v->def->results.size() != 1)
    return nullptr;
  return v;
}

// Lets the producers of every operand of `cat` store into its result in place, when each
// operand is used only by `cat` and computed by a producer's kernel.
void place_concat(FusionPlan &plan, const Op &cat,
                  std::unordered_map<const Value *, int> &uses) {
  const Value *y = cat.results[0];
  if (cat.results.size() != 1 || !is_static(y) || y->type.dims.empty()) return;
  const int64_t rank = static_cast<int64_t>(y->type.dims.size());
  int64_t axis = cat.attr_int("axis", 0);
  axis = axis < 0 ? axis + rank : axis;
  if (axis < 0 || axis >= rank) return;
  std::vector<const Value *> roots;
  for (const Value *x : cat.operands) {
    if (!x || uses[x] != 1 || !is_static(x) || shape_numel(x->type.dims) == 0 ||
        x->type.dtype != y->type.dtype)
      return;
    const Value *r = group_root(plan, x);
    if (!r || !is_static(r) || shape_numel(r->type.dims) == 0) return;
    roots.push_back(r);
  }
  std::vector<Epilogue *> es;
  for (const Value *r : roots) {
    Epilogue &e = plan.epilogue_of[r];
    e.root = r;
    es.push_back(&e);
  }
  int64_t offset = 0;
  for (size_t j = 0; j < es.size(); ++j) {
    es[j]->concat = &cat;
    es[j]->axis = axis;
    es[j]->offset = offset;
    offset += cat.operands[j]->type.dims[static_cast<size_t>(axis)];
  }
  plan.absorbed.insert(&cat);
}

} // namespace

FusionPlan plan_fusion(const Graph &g, const std::unordered_set<const Op *> &live) {
  std::unordered_map<const Op *, size_t> pos;
  std::unordered_map<const Value *, int> uses;
  std::unordered_map<const Value *, const Op *> user;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const Op *op = g.ops[k].get();
    pos[op] = k;
    if (!live.count(op)) continue;
    for (const Value *v : op->operands)
      if (v) ++uses[v], user[v] = op;
  }
  for (const Value *v : g.results) uses[v] += 2; // a graph result needs its own buffer
  // Other operands of an epilogue step must be available when the producer runs: an absorbed
  // op's value is computed at its producer's position.
  auto available_before = [&](const Value *v, size_t p) {
    return !v->def || Builder::constant_value(v) || pos.at(v->def) < p;
  };
  FusionPlan plan;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    const Op &p = *g.ops[k];
    if (!live.count(&p) || plan.absorbed.count(&p) || !is_producer(p) || p.results.size() != 1)
      continue;
    const Value *root = p.results[0];
    if (!is_static(root) || shape_numel(root->type.dims) == 0) continue;
    Epilogue e;
    e.root = root;
    const Value *cur = root;
    while (uses[cur] == 1) {
      const Op &step = *user.at(cur);
      if (!is_epilogue_op(step) || !step.regions.empty()) break;
      const Value *r = step.results[0];
      if (!is_static(r) || r->type.dims != root->type.dims) break;
      bool ok = true;
      for (const Value *x : step.operands)
        ok = ok && x && is_static(x) && (x == cur || available_before(x, k));
      if (!ok) break;
      e.chain.push_back(&step);
      plan.absorbed.insert(&step);
      pos[&step] = k;
      cur = r;
    }
    if (is_contraction(p)) e.moves = plan_moves(cur, uses, user);
    for (const Op *step : e.moves) {
      plan.absorbed.insert(step);
      pos[step] = k;
    }
    if (!e.chain.empty() || !e.moves.empty()) plan.epilogue_of.emplace(root, std::move(e));
  }
  for (const auto &op : g.ops)
    if (live.count(op.get()) && op->name() == "kiln.concat") place_concat(plan, *op, uses);
  return plan;
}

} // namespace kiln::compiler
