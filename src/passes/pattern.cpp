#include "passes/pattern.h"

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

std::optional<double> scalar_const(const Value *v, bool float_only) {
  if (!v || !v->def || v->def->name() != "kiln.constant")
    return std::nullopt;
  const Tensor *t = v->def->attr_tensor("value");
  if (!t || t->numel() != 1 || t->dtype() == DType::boolean ||
      (float_only && !is_float(t->dtype())))
    return std::nullopt;
  return t->get_f64(0);
}

} // namespace kiln::pattern
