// Control flow: while -> kiln.loop (the condition region is evaluated before the loop and at the
// end of every iteration, so any while is exact, not only counted loops; lower-control-flow
// unrolls counted ones for the compiler), if / case -> kiln.if.
#include "frontend/stablehlo/convert.h"

#include <fmt/format.h>

namespace kiln::stablehlo_fe {

namespace {

constexpr int64_t kLoopLimit = int64_t(1) << 24; // = kMaxLoopIterations of ops/control.cpp

// Builds a region graph: `params` become its parameters, `fill` converts ops into it (the
// builder points at the new graph meanwhile) and returns its results.
Result<std::unique_ptr<Graph>> build_region(
    OpCtx &c, const std::vector<TensorType> &params,
    const std::function<Result<std::vector<Value *>>(const std::vector<Value *> &)> &fill) {
  auto g = std::make_unique<Graph>();
  std::vector<Value *> ps;
  for (size_t i = 0; i < params.size(); ++i) ps.push_back(g->add_param(params[i], fmt::format("p{}", i)));
  Graph &saved = c.b.graph();
  const std::string loc = c.b.loc();
  c.b.set_graph(*g);
  auto r = fill(ps);
  c.b.set_graph(saved);
  c.b.set_loc(loc);
  if (!r) return r.status();
  g->results = r.value();
  return g;
}

Result<Value *> single_pred(OpCtx &c, Result<std::vector<Value *>> r) {
  if (!r) return r.status();
  if (r->size() != 1 || (*r)[0]->type.dtype != DType::boolean || (*r)[0]->type.rank() != 0)
    return c.error("the condition region must return one tensor<i1>");
  return (*r)[0];
}

Outs convert_while(OpCtx &c) {
  if (c.op.regions.size() != 2) return c.error("while needs a cond and a body region");
  const Block &cond = c.op.regions[0], &body = c.op.regions[1];
  KILN_ASSIGN(Value * first, single_pred(c, c.inline_block(cond, c.in)));
  std::vector<TensorType> params = {TensorType{DType::i64, {}}, TensorType{DType::boolean, {}}};
  for (Value *v : c.in) params.push_back(v->type);
  KILN_ASSIGN(auto g, build_region(c, params, [&](const std::vector<Value *> &ps) -> Outs {
                std::vector<Value *> carried(ps.begin() + 2, ps.end());
                KILN_ASSIGN(std::vector<Value *> next, c.inline_block(body, carried));
                if (next.size() != carried.size())
                  return c.error("while body returns the wrong number of values");
                KILN_ASSIGN(Value * more, single_pred(c, c.inline_block(cond, next)));
                std::vector<Value *> res = {more};
                res.insert(res.end(), next.begin(), next.end());
                return res;
              }));
  // kiln.loop needs a trip count: the executor's iteration limit, which the loop reports as an
  // error if the condition is still true when it is reached (never a silently truncated loop).
  std::vector<Value *> operands = {c.scalar_int(DType::i64, kLoopLimit), first};
  operands.insert(operands.end(), c.in.begin(), c.in.end());
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(g));
  auto r = c.b.create_with_regions("kiln.loop", operands, {}, std::move(regions),
                                   static_cast<int>(c.in.size()));
  if (!r) return c.error(r.status().message());
  return r;
}

Result<std::unique_ptr<Graph>> branch(OpCtx &c, const Block &blk) {
  if (!blk.arg_names.empty()) return c.error("branch regions take no arguments");
  return build_region(c, {}, [&](const std::vector<Value *> &) { return c.inline_block(blk, {}); });
}

Outs make_if(OpCtx &c, Value *pred, std::unique_ptr<Graph> then_g, std::unique_ptr<Graph> else_g) {
  const size_t n = c.op.results.size();
  if (then_g->results.size() != n || else_g->results.size() != n)
    return c.error("branches must return one value per result");
  std::vector<std::unique_ptr<Graph>> regions;
  regions.push_back(std::move(then_g));
  regions.push_back(std::move(else_g));
  auto r = c.b.create_with_regions("kiln.if", {pred}, {}, std::move(regions), static_cast<int>(n));
  if (!r) return c.error(r.status().message());
  return r;
}

Outs convert_if(OpCtx &c) {
  if (c.op.regions.size() != 2 || c.in.size() != 1) return c.error("if needs a predicate and two regions");
  KILN_ASSIGN(auto t, branch(c, c.op.regions[0]));
  KILN_ASSIGN(auto e, branch(c, c.op.regions[1]));
  return make_if(c, c.in[0], std::move(t), std::move(e));
}

// case(index): branch i for index i, the last branch for any index out of range; built as a
// chain of kiln.if from the last branch up.
Outs convert_case(OpCtx &c) {
  const size_t n = c.op.regions.size();
  if (n == 0 || c.in.size() != 1) return c.error("case needs an index and at least one branch");
  Value *index = c.in[0];
  if (!is_integer(index->type.dtype) || index->type.rank() != 0) return c.error("case index must be an integer scalar");
  if (n == 1) return c.inline_block(c.op.regions[0], {});
  KILN_ASSIGN(auto tail, branch(c, c.op.regions[n - 1]));
  for (size_t k = n - 1; k-- > 0;) {
    KILN_ASSIGN(Value * eq, c.make("kiln.equal", {index, c.scalar_int(index->type.dtype, static_cast<int64_t>(k))}));
    KILN_ASSIGN(auto head, branch(c, c.op.regions[k]));
    if (k == 0) return make_if(c, eq, std::move(head), std::move(tail));
    // Wrap "if (index == k) head else tail" as the new tail region.
    std::unique_ptr<Graph> prev = std::move(tail);
    Graph *prev_raw = prev.get();
    std::unique_ptr<Graph> head_g = std::move(head);
    KILN_ASSIGN(tail, build_region(c, {}, [&](const std::vector<Value *> &) -> Outs {
                  std::vector<std::unique_ptr<Graph>> regions;
                  regions.push_back(std::move(head_g));
                  regions.push_back(std::move(prev));
                  auto r = c.b.create_with_regions("kiln.if", {eq}, {}, std::move(regions),
                                                   static_cast<int>(prev_raw->results.size()));
                  if (!r) return c.error(r.status().message());
                  return r;
                }));
  }
  return c.error("internal: case lowering fell through");
}

} // namespace

void register_control(ConverterTable &t) {
  t.add("stablehlo.while", convert_while);
  t.add("stablehlo.if", convert_if);
  t.add("stablehlo.case", convert_case);
}

} // namespace kiln::stablehlo_fe
