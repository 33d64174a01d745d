#include "passes/pattern.h"

#include "ir/op_registry.h"
#include "ops/ops.h"

#include <set>

namespace kiln::pattern {

void count_uses(const Graph &g, UseCounts &uses) {
  for (const auto &op : g.ops) {
    for (const Value *v : op->operands)
      if (v)
        ++uses[v];
    for (const auto &r : op->regions)
      count_uses(*r, uses);
  }
  for (const Value *v : g.results)
    ++uses[v];
}

const Tensor *constant_tensor(const Value *v) {
  if (!v || !v->def || v->def->name() != "kiln.constant")
    return nullptr;
  return v->def->attr_tensor("value");
}

std::unique_ptr<Op> new_constant(Graph &g, Tensor t, const std::string &loc) {
  auto c = std::make_unique<Op>();
  c->def = core_ops().find("kiln.constant");
  KILN_ASSERT(c->def, "kiln.constant is not registered");
  c->loc = loc;
  Value *v = g.new_value(TensorType::of(t), "");
  v->def = c.get();
  c->results.push_back(v);
  c->attrs["value"] = std::move(t);
  return c;
}

std::optional<double> scalar_const(const Value *v, bool float_only) {
  if (!v || !v->def || v->def->name() != "kiln.constant")
    return std::nullopt;
  const Tensor *t = v->def->attr_tensor("value");
  if (!t || t->numel() != 1 || t->dtype() == DType::boolean ||
      (float_only && !is_float(t->dtype())))
    return std::nullopt;
  return t->get_f64(0);
}

void adopt_result(Graph &g, Op &root, Op &op, const std::vector<Op *> &dead, UseCounts &uses) {
  Value *old = root.results[0];
  Value *y = g.new_value(old->type, old->name);
  y->def = &op;
  op.results.push_back(y);
  g.replace_uses(old, y);
  uses[y] = uses[old];
  uses[old] = 0;
  for (const Op *d : std::set<const Op *>(dead.begin(), dead.end()))
    for (const Value *x : d->operands)
      if (x)
        --uses[x];
  for (const Value *x : op.operands)
    ++uses[x];
}

} // namespace kiln::pattern
