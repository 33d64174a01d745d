#include "ir/op_registry.h"

#include <fmt/format.h>
#include <algorithm>
#include <set>

namespace kiln {

Status InferCtx::error(const std::string &msg) const {
  return Status::error(fmt::format("{}: {}", op.describe(), msg));
}
Status EvalCtx::error(const std::string &msg) const {
  return Status::error(fmt::format("{}: {}", op.describe(), msg));
}

void OpRegistry::add(OpDef def) {
  std::string name = def.name;
  KILN_ASSERT(!defs_.count(name), "op registered twice");
  defs_[name] = std::make_unique<OpDef>(std::move(def));
}

const OpDef *OpRegistry::find(std::string_view name) const {
  auto it = defs_.find(std::string(name));
  return it == defs_.end() ? nullptr : it->second.get();
}

std::vector<const OpDef *> OpRegistry::all() const {
  std::vector<const OpDef *> v;
  for (auto &[k, d] : defs_) v.push_back(d.get());
  std::sort(v.begin(), v.end(), [](auto *a, auto *b) { return a->name < b->name; });
  return v;
}

Status verify_op(const Op &op) {
  if (!op.def) return Status::error("op without definition");
  const OpDef &d = *op.def;
  int n = static_cast<int>(op.operands.size());
  if (n < d.min_operands || (d.max_operands >= 0 && n > d.max_operands))
    return Status::error(fmt::format("{}: expects {}{} operands, got {}", op.describe(),
                                     d.min_operands,
                                     d.max_operands == d.min_operands ? ""
                                     : d.max_operands < 0 ? " or more"
                                                           : fmt::format(" to {}", d.max_operands),
                                     n));
  int r = static_cast<int>(op.results.size());
  if (r < d.min_results || (d.max_results >= 0 && r > d.max_results))
    return Status::error(fmt::format("{}: expects {} to {} results, got {}", op.describe(),
                                     d.min_results, d.max_results, r));
  if (static_cast<int>(op.regions.size()) != d.num_regions)
    return Status::error(fmt::format("{}: expects {} regions, got {}", op.describe(),
                                     d.num_regions, op.regions.size()));
  for (int i = 0; i < d.min_operands && i < n; ++i)
    if (!op.operands[i])
      return Status::error(fmt::format("{}: operand {} is required", op.describe(), i));
  if (d.verify) KILN_TRY(d.verify(op));
  return Status::ok();
}

static const Tensor *const_of(const Value *v) {
  if (!v || !v->def || v->def->name() != "kiln.constant") return nullptr;
  return v->def->attr_tensor("value");
}

Result<std::vector<TensorType>> infer_types(const Op &op) {
  KILN_TRY(verify_op(op));
  InferCtx ctx{op, {}, {}, {}};
  for (Value *v : op.operands) {
    ctx.in.push_back(v ? &v->type : nullptr);
    ctx.consts.push_back(const_of(v));
  }
  if (!op.def->infer)
    return Status::error(fmt::format("{}: has no shape function", op.describe()));
  KILN_TRY(op.def->infer(ctx));
  return std::move(ctx.out);
}

namespace {

bool compatible(const TensorType &recorded, const TensorType &inferred) {
  if (recorded.dtype != inferred.dtype) return false;
  if (!recorded.ranked || !inferred.ranked) return true;
  if (recorded.dims.size() != inferred.dims.size()) return false;
  for (size_t i = 0; i < recorded.dims.size(); ++i)
    if (recorded.dims[i] >= 0 && inferred.dims[i] >= 0 && recorded.dims[i] != inferred.dims[i])
      return false;
  return true;
}

} // namespace

Status verify_op_and_types(const Op &op) {
  KILN_TRY(verify_op(op));
  if (!op.def->infer) return Status::ok();
  KILN_ASSIGN(auto types, infer_types(op));
  if (types.size() != op.results.size())
    return Status::error(fmt::format("{}: shape function gives {} results, op has {}",
                                     op.describe(), types.size(), op.results.size()));
  for (size_t i = 0; i < types.size(); ++i)
    if (!compatible(op.results[i]->type, types[i]))
      return Status::error(fmt::format("{}: result {} has type {} but the op gives {}",
                                       op.describe(), i, op.results[i]->type.str(),
                                       types[i].str()));
  return Status::ok();
}

namespace {

struct Verifier {
  std::set<const Value *> defined;

  Status graph(const Graph &g) {
    for (Value *p : g.params) defined.insert(p);
    for (auto &op : g.ops) {
      for (size_t i = 0; i < op->operands.size(); ++i) {
        Value *v = op->operands[i];
        if (v && !defined.count(v))
          return Status::error(fmt::format("{}: operand {} is used before it is defined",
                                           op->describe(), i));
      }
      for (auto &r : op->regions) KILN_TRY(graph(*r));
      KILN_TRY(verify_op_and_types(*op));
      for (Value *r : op->results) defined.insert(r);
    }
    for (size_t i = 0; i < g.results.size(); ++i)
      if (!g.results[i] || !defined.count(g.results[i]))
        return Status::error(fmt::format("graph result {} is not defined", i));
    return Status::ok();
  }
};

} // namespace

Status verify_function(const Function &f) {
  Verifier v;
  return v.graph(f.body).with_context(fmt::format("in function @{}", f.name));
}

} // namespace kiln
