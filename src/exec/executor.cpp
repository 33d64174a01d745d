#include "exec/executor.h"

#include "ir/op_registry.h"
#include "support/limits.h"

#include <fmt/format.h>
#include <new>
#include <unordered_map>

namespace kiln {

namespace {

// Value environment with a parent chain for regions (implicit capture of outer values).
struct Env {
  const Env *parent = nullptr;
  std::unordered_map<const Value *, Tensor> vals;

  const Tensor *find(const Value *v) const {
    for (const Env *e = this; e; e = e->parent) {
      auto it = e->vals.find(v);
      if (it != e->vals.end()) return &it->second;
    }
    return nullptr;
  }
};

bool type_matches(const TensorType &t, const Tensor &x) {
  if (t.dtype != x.dtype()) return false;
  if (!t.ranked) return true;
  if (t.dims.size() != x.shape().size()) return false;
  for (size_t i = 0; i < t.dims.size(); ++i)
    if (t.dims[i] >= 0 && t.dims[i] != x.shape()[i]) return false;
  return true;
}

bool has_dynamic_dim(const TensorType &t) {
  for (int64_t d : t.dims)
    if (d < 0) return true;
  return false;
}

// The result types of `op` for the operand values at hand: where a recorded type has dynamic
// dims, the op's shape function is asked again with every operand value known.
std::vector<TensorType> actual_result_types(const Op &op, const std::vector<Tensor> &in,
                                            const std::vector<bool> &absent) {
  std::vector<TensorType> types;
  bool dynamic = false;
  for (const Value *r : op.results) {
    types.push_back(r->type);
    dynamic = dynamic || has_dynamic_dim(r->type);
  }
  if (!dynamic || !op.def->infer || !op.regions.empty()) return types;
  std::vector<TensorType> in_types(in.size());
  InferCtx ctx{op, {}, {}, {}};
  for (size_t i = 0; i < in.size(); ++i) {
    in_types[i] = TensorType::of(in[i]);
    ctx.in.push_back(absent[i] ? nullptr : &in_types[i]);
    ctx.consts.push_back(absent[i] ? nullptr : &in[i]);
  }
  if (op.def->infer(ctx) && ctx.out.size() == types.size()) return ctx.out;
  return types;
}

// Refuses a result larger than the tensor limit before its op allocates it.
Status check_result_bytes(const Op &op, const std::vector<TensorType> &types, int64_t max_bytes) {
  for (size_t i = 0; i < types.size(); ++i) {
    const TensorType &t = types[i];
    if (!t.ranked) continue;
    const int64_t max_elems = max_bytes / static_cast<int64_t>(dtype_size(t.dtype));
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 0) continue;
      n = (d != 0 && n > max_elems / d) ? max_elems + 1 : n * d;
    }
    if (n > max_elems)
      return Status::error(fmt::format("{}: result {} ({}) is larger than the {}-byte tensor "
                                       "limit (KILN_MAX_TENSOR_BYTES)",
                                       op.describe(), i, t.str(), max_bytes));
  }
  return Status::ok();
}

template <class F> void for_each_region_use(const Graph &g, const F &f) {
  for (const auto &op : g.ops) {
    for (Value *v : op->operands)
      if (v) f(v);
    for (const auto &r : op->regions) for_each_region_use(*r, f);
  }
  for (Value *v : g.results) f(v);
}

Result<std::vector<Tensor>> run_graph(const Graph &g, std::vector<Tensor> params,
                                      const Env *outer, const ExecOptions &opt) {
  Env env;
  env.parent = outer;
  if (params.size() != g.params.size())
    return Status::error(fmt::format("region expects {} values, got {}", g.params.size(),
                                     params.size()));
  for (size_t i = 0; i < params.size(); ++i) env.vals[g.params[i]] = std::move(params[i]);

  // Last use of each value in this graph, so that intermediates are released early.
  // Values used inside an op's regions count as uses by that op.
  std::unordered_map<const Value *, size_t> last_use;
  for (size_t k = 0; k < g.ops.size(); ++k) {
    for (Value *v : g.ops[k]->operands)
      if (v) last_use[v] = k;
    for (const auto &r : g.ops[k]->regions)
      for_each_region_use(*r, [&](const Value *v) { last_use[v] = k; });
  }
  for (Value *v : g.results) last_use[v] = g.ops.size();

  RegionRunner runner = [&](const Graph &region, std::vector<Tensor> ps) {
    return run_graph(region, std::move(ps), &env, opt);
  };

  for (size_t k = 0; k < g.ops.size(); ++k) {
    const Op &op = *g.ops[k];
    std::vector<Tensor> in;
    std::vector<bool> absent;
    in.reserve(op.operands.size());
    for (Value *v : op.operands) {
      if (!v) {
        in.emplace_back();
        absent.push_back(true);
        continue;
      }
      const Tensor *t = env.find(v);
      if (!t) return Status::error(fmt::format("{}: operand has no value", op.describe()));
      in.push_back(*t);
      absent.push_back(false);
    }
    if (!op.def->eval)
      return Status::error(fmt::format("{}: has no reference implementation", op.describe()));
    KILN_TRY(check_result_bytes(op, actual_result_types(op, in, absent), limits().max_tensor_bytes));
    EvalCtx ctx{op, in, {}, runner, absent};
    try {
      KILN_TRY(op.def->eval(ctx));
    } catch (const std::bad_alloc &) {
      return Status::error(fmt::format("{}: out of memory", op.describe()));
    }
    if (ctx.out.size() != op.results.size())
      return Status::error(fmt::format("{}: produced {} results, expected {}", op.describe(),
                                       ctx.out.size(), op.results.size()));
    for (size_t i = 0; i < ctx.out.size(); ++i) {
      if (opt.check_types && !type_matches(op.results[i]->type, ctx.out[i]))
        return Status::error(fmt::format("{}: result {} is {} but its type is {}", op.describe(),
                                         i, TensorType::of(ctx.out[i]).str(),
                                         op.results[i]->type.str()));
      env.vals[op.results[i]] = std::move(ctx.out[i]);
    }
    for (Value *v : op.operands) {
      auto it = last_use.find(v);
      if (v && it != last_use.end() && it->second == k) env.vals.erase(v);
    }
  }
  std::vector<Tensor> out;
  for (Value *r : g.results) {
    const Tensor *t = env.find(r);
    if (!t) return Status::error("graph result has no value");
    out.push_back(*t);
  }
  return out;
}

} // namespace

Status check_inputs(const Function &f, const std::vector<Tensor> &inputs) {
  const auto &ps = f.body.params;
  if (inputs.size() != ps.size())
    return Status::error(fmt::format("expected {} inputs, got {}", ps.size(), inputs.size()));
  for (size_t i = 0; i < ps.size(); ++i) {
    const std::string name = ps[i]->name.empty() ? fmt::format("#{}", i) : ps[i]->name;
    if (!inputs[i].valid())
      return Status::error(fmt::format("input '{}' has no value", name));
    if (!type_matches(ps[i]->type, inputs[i]))
      return Status::error(fmt::format("input '{}': expected {}, got {}", name,
                                       ps[i]->type.str(), TensorType::of(inputs[i]).str()));
  }
  return Status::ok();
}

Result<std::vector<Tensor>> execute(const Function &f, std::vector<Tensor> inputs,
                                    const ExecOptions &opt) {
  KILN_TRY(check_inputs(f, inputs));
  return run_graph(f.body, std::move(inputs), nullptr, opt);
}

Result<std::vector<Tensor>> execute_graph(const Graph &g, std::vector<Tensor> params,
                                          const ExecOptions &opt) {
  return run_graph(g, std::move(params), nullptr, opt);
}

} // namespace kiln
