// Emitters of the parallel definition: naive (one invocation per element) and blocked (E
// elements per invocation).
#include "compiler/definitions/parallel.h"

#include "compiler/lowering/lower.h"

#include <fmt/format.h>

#include <limits>

namespace kiln::compiler {

using namespace kir;

ParallelShape ParallelDef::shape() const { return {count, loop_iterations(body) != 0}; }

Result<ParallelDef> parallel_def(const Op &op, int64_t count, const std::string &index_name,
                                 const std::function<Result<Stmt>(Expr)> &body) {
  if (count > std::numeric_limits<int32_t>::max())
    return Status::error(fmt::format("{}: {} elements exceed the 32-bit index range of kernels",
                                     op.describe(), count));
  ParallelDef d{count, var(index_name, ScalarType::i32), {}};
  KILN_ASSIGN(d.body, body(d.index));
  return d;
}

ParallelSchedule schedule_parallel(LowerCtx &c, const ParallelDef &d) {
  const ParallelSchedule out =
      pick_parallel(c.target(), c.options().schedule, d.shape(), &c.options().parallel_override);
  c.count_parallel_strategy(out.strategy);
  return out;
}

namespace {

// A grid of `groups` workgroups: along x, split into y above the 65535 a dimension may hold.
std::array<uint32_t, 3> split_grid(uint64_t groups) {
  const uint64_t gy = (groups + 65534) / 65535;
  const uint64_t gx = (groups + gy - 1) / gy;
  return {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy), 1};
}

// One invocation per element: element i = the invocation's global index.
Stmt naive_body(const ParallelDef &d, uint32_t wg, std::array<uint32_t, 3> grid) {
  Expr gid = global_id(0);
  if (grid[1] > 1) gid = gid + global_id(1) * imm_u32(grid[0] * wg);
  return let(d.index, cast(ScalarType::i32, gid), if_then(d.index < d.count, d.body));
}

// E elements per invocation, coalesced: workgroup w covers the wg * E consecutive elements from
// w * wg * E, and invocation t of it handles elements base + t + j * wg for j < E, so at every
// step j neighbouring invocations touch neighbouring elements. The loop's constant extent lets
// the driver unroll it; each element keeps its own bounds check.
Stmt blocked_body(const ParallelDef &d, uint32_t wg, uint32_t e, std::array<uint32_t, 3> grid) {
  Expr group = workgroup_id(0);
  if (grid[1] > 1) group = group + workgroup_id(1) * imm_u32(grid[0]);
  const std::string &name = d.index.as<Var>()->name;
  Expr base = var(name + "_base", ScalarType::i32), j = var(name + "_j", ScalarType::i32);
  Stmt element = let(d.index, base + j * static_cast<int64_t>(wg),
                     if_then(d.index < d.count, d.body));
  return let(base, cast(ScalarType::i32, group * imm_u32(wg * e) + local_id(0)),
             for_loop(j, i32(0), i32(e), element));
}

} // namespace

Status emit_parallel(LowerCtx &c, const Op &op, Kernel k, std::vector<int> buffers,
                     const ParallelDef &d, const ParallelSchedule &s) {
  const uint32_t wg = c.workgroup_size();
  const uint32_t e = s.strategy == ParallelStrategy::blocked ? s.elements : 1;
  const std::array<uint32_t, 3> grid = split_grid((static_cast<uint64_t>(d.count) + wg * e - 1) /
                                                  (wg * e));
  k.workgroup_size[0] = wg;
  k.workgroup_size[1] = k.workgroup_size[2] = 1;
  switch (s.strategy) {
  case ParallelStrategy::naive: k.body = naive_body(d, wg, grid); break;
  case ParallelStrategy::blocked:
    k.body = blocked_body(d, wg, e, grid);
    k.name += fmt::format("_blocked{}", e);
    break;
  }
  return c.dispatch(op, std::move(k), std::move(buffers), grid);
}

} // namespace kiln::compiler
