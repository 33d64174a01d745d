// fold-constants: evaluates, with the reference executor's op implementations, every pure op
// whose operands are all constants, and replaces its results by kiln.constant ops. The size cap
// keeps folding from materialising huge tensors (weights built by ConstantOfShape are folded;
// they are what the model means).
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "support/limits.h"

#include <fmt/format.h>

namespace kiln {

namespace {

const Tensor *constant_of(const Value *v) {
  if (!v || !v->def || v->def->name() != "kiln.constant") return nullptr;
  return v->def->attr_tensor("value");
}

Status fold_graph(Graph &g, const OpDef *constant_def) {
  for (size_t k = 0; k < g.ops.size(); ++k) {
    Op &op = *g.ops[k];
    if (op.name() == "kiln.constant" || !op.def->foldable || !op.def->eval || !op.regions.empty() ||
        op.operands.empty() || op.results.empty())
      continue;
    std::vector<Tensor> in;
    std::vector<bool> absent;
    bool all_const = true;
    int64_t bytes = 0;
    for (Value *v : op.operands) {
      const Tensor *t = v ? constant_of(v) : nullptr;
      if (v && !t) all_const = false;
      in.push_back(t ? *t : Tensor());
      absent.push_back(v == nullptr);
    }
    for (Value *r : op.results) {
      if (!r->type.is_static()) all_const = false;
      else bytes += shape_numel(r->type.dims) * static_cast<int64_t>(dtype_size(r->type.dtype));
    }
    if (!all_const || bytes > limits().max_fold_bytes) continue;
    EvalCtx ctx{op, in, {}, nullptr, absent};
    KILN_TRY(op.def->eval(ctx));
    // The folded op becomes the first constant; further results get constants right after.
    std::vector<std::unique_ptr<Op>> consts;
    for (size_t i = 0; i < op.results.size(); ++i) {
      auto c = std::make_unique<Op>();
      c->def = constant_def;
      c->loc = op.loc;
      Value *v = g.new_value(TensorType::of(ctx.out[i]), op.results[i]->name);
      v->def = c.get();
      c->results.push_back(v);
      c->attrs["value"] = std::move(ctx.out[i]);
      g.replace_uses(op.results[i], v);
      consts.push_back(std::move(c));
    }
    g.ops.erase(g.ops.begin() + static_cast<long>(k));
    for (size_t i = 0; i < consts.size(); ++i)
      g.ops.insert(g.ops.begin() + static_cast<long>(k + i), std::move(consts[i]));
    k += consts.size() - 1;
  }
  return Status::ok();
}

} // namespace

Status run_fold_constants(Module &m) {
  const OpDef *constant_def = core_ops().find("kiln.constant");
  KILN_ASSERT(constant_def, "kiln.constant is not registered");
  for (auto &f : m.functions) KILN_TRY(fold_graph(f->body, constant_def).with_context("fold-constants"));
  return Status::ok();
}

} // namespace kiln
