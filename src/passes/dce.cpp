// dce: removes ops none of whose results are used, in every graph and region.
#include "ir/op_registry.h"
#include "passes/pass.h"

#include <unordered_set>

namespace kiln {

namespace {

void collect_uses(const Graph &g, std::unordered_set<const Value *> &used) {
  for (auto &op : g.ops) {
    for (Value *v : op->operands)
      if (v) used.insert(v);
    for (auto &r : op->regions) collect_uses(*r, used);
  }
  for (Value *v : g.results) used.insert(v);
}

bool dce_graph(Graph &g, const std::unordered_set<const Value *> &used) {
  size_t before = g.ops.size();
  g.erase_ops_if([&](const Op &op) {
    if (!op.def->foldable) return false;
    for (Value *r : op.results)
      if (used.count(r)) return false;
    return true;
  });
  bool changed = g.ops.size() != before;
  for (auto &op : g.ops)
    for (auto &r : op->regions) changed |= dce_graph(*r, used);
  return changed;
}

} // namespace

Status run_dce(Module &m) {
  for (auto &f : m.functions) {
    bool changed = true;
    while (changed) {
      std::unordered_set<const Value *> used;
      collect_uses(f->body, used);
      changed = dce_graph(f->body, used);
    }
  }
  return Status::ok();
}

} // namespace kiln
