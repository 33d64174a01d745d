#include "ir/builder.h"

#include <fmt/format.h>

namespace kiln {

const Tensor *Builder::constant_value(const Value *v) {
  if (!v || !v->def || v->def->name() != "kiln.constant") return nullptr;
  return v->def->attr_tensor("value");
}

Value *Builder::constant(Tensor t, std::string name) {
  const OpDef *def = ops_->find("kiln.constant");
  KILN_ASSERT(def, "kiln.constant is not registered");
  TensorType type = TensorType::of(t);
  AttrMap attrs;
  attrs["value"] = std::move(t);
  Op *op = g_->append(def, {}, {type}, std::move(attrs));
  op->loc = loc_;
  op->results[0]->name = std::move(name);
  return op->results[0];
}

Result<std::vector<Value *>> Builder::create(std::string_view name, std::vector<Value *> operands,
                                             AttrMap attrs, int num_results) {
  return create_with_regions(name, std::move(operands), std::move(attrs), {}, num_results);
}

Result<Value *> Builder::create1(std::string_view name, std::vector<Value *> operands,
                                 AttrMap attrs) {
  KILN_ASSIGN(auto rs, create(name, std::move(operands), std::move(attrs), 1));
  return rs[0];
}

Result<std::vector<Value *>> Builder::create_with_regions(
    std::string_view name, std::vector<Value *> operands, AttrMap attrs,
    std::vector<std::unique_ptr<Graph>> regions, int num_results) {
  const OpDef *def = ops_->find(name);
  if (!def) return Status::error(fmt::format("unknown core op '{}'", name));
  // Build a detached op first so that the shape function can see it.
  auto op = std::make_unique<Op>();
  op->def = def;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  op->regions = std::move(regions);
  op->loc = loc_;
  for (int i = 0; i < num_results; ++i) op->results.push_back(nullptr);
  KILN_ASSIGN(auto types, infer_types(*op));
  if (static_cast<int>(types.size()) != num_results)
    return Status::error(fmt::format("{}: gives {} results, {} expected", op->describe(),
                                     types.size(), num_results));

  // Fold when every operand is a constant and the results are small. DequantizeLinear stays:
  // passes/fuse_qdq.cpp needs the quantised weights of a QDQ group (fold-constants folds what
  // is left when a model is compiled).
  bool foldable = def->foldable && def->eval && op->regions.empty() && !op->operands.empty() &&
                  def->name != "kiln.dequantize_linear";
  for (Value *v : op->operands)
    if (v && !constant_value(v)) foldable = false;
  for (auto &t : types)
    if (!t.is_static() || shape_numel(t.dims) > fold_limit_) foldable = false;
  if (foldable) {
    std::vector<Tensor> in;
    std::vector<bool> absent;
    for (Value *v : op->operands) {
      in.push_back(v ? *constant_value(v) : Tensor());
      absent.push_back(v == nullptr);
    }
    EvalCtx ctx{*op, in, {}, nullptr, absent};
    Status st = def->eval(ctx);
    if (st.is_ok() && ctx.out.size() == types.size()) {
      std::vector<Value *> res;
      for (size_t i = 0; i < ctx.out.size(); ++i) {
        if (!(TensorType::of(ctx.out[i]) == types[i]))
          return Status::error(fmt::format("{}: reference result {} has type {}, shape function "
                                           "says {}",
                                           op->describe(), i, TensorType::of(ctx.out[i]).str(),
                                           types[i].str()));
        res.push_back(constant(std::move(ctx.out[i])));
      }
      return res;
    }
    if (!st.is_ok()) return st;
  }

  Graph &g = *g_;
  Op *raw = g.append(def, {}, {}, {});
  raw->operands = std::move(op->operands);
  raw->attrs = std::move(op->attrs);
  raw->regions = std::move(op->regions);
  for (auto &r : raw->regions) r->parent = raw;
  raw->loc = loc_;
  std::vector<Value *> res;
  for (int i = 0; i < num_results; ++i) {
    Value *v = g.new_value(std::move(types[i]), {});
    v->def = raw;
    v->result_index = i;
    raw->results.push_back(v);
    res.push_back(v);
  }
  return res;
}

} // namespace kiln
