// Emitters of the parallel definition: naive (one invocation per element) and blocked (E
// elements per invocation).
#include "compiler/definitions/parallel.h"

#include "compiler/lowering/lower.h"

#include <fmt/format.h>

#include <algorithm>
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

namespace {

// Whether `e` is the index variable `name` under additions, subtractions, multiplications and
// casts only (a dividend of the index itself, not of a coordinate already divided out).
bool linear_in(const Expr &e, const std::string &name) {
  if (const Var *v = e.as<Var>()) return v->name == name;
  if (const Cast *c = e.as<Cast>()) return linear_in(c->value, name);
  if (const Binary *b = e.as<Binary>())
    if (b->op == BinOp::add || b->op == BinOp::sub || b->op == BinOp::mul)
      return linear_in(b->a, name) || linear_in(b->b, name);
  return false;
}

// The constant divisors the body applies to its flat index (unflatten's strides).
class IndexDivisors : public Visitor {
public:
  explicit IndexDivisors(std::string name) : name_(std::move(name)) {}
  using Visitor::visit;
  std::vector<int64_t> divisors;
  void visit(const Binary *n) override {
    if (n->op == BinOp::div || n->op == BinOp::mod)
      if (const IntImm *c = n->b.as<IntImm>(); c && c->value > 1 && linear_in(n->a, name_))
        divisors.push_back(c->value);
    Visitor::visit(n);
  }

private:
  std::string name_;
};

// The rows strategy's row length L: the largest divisor the body applies to its index that
// divides the element count and is a multiple or a divisor of every other one, so that within
// a row of L elements every coordinate but the fastest ones is constant (per-channel operands,
// a concat's source, a broadcast's row). 0 when there is none (the body never divides its
// index: the naive kernel's loop is already one run) or when rows would be too long to spread.
int64_t row_length(const ParallelDef &d) {
  IndexDivisors v(d.index.as<Var>()->name);
  v.visit(d.body);
  int64_t best = 0;
  for (int64_t L : v.divisors) {
    if (L <= best || d.count % L != 0 || L > 65536) continue;
    bool ok = true;
    for (int64_t o : v.divisors) ok = ok && (L % o == 0 || o % L == 0);
    if (ok) best = L;
  }
  return best;
}

} // namespace

ParallelSchedule schedule_parallel(LowerCtx &c, const ParallelDef &d) {
  ParallelSchedule out =
      pick_parallel(c.target(), c.options().schedule, d.shape(), &c.options().parallel_override);
  if (out.strategy == ParallelStrategy::rows) {
    out.row = row_length(d);
    if (out.row == 0) {
      out.strategy = ParallelStrategy::naive;
      out.reason += " (no row length: naive)";
    }
  }
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

// Rows (the C backend, one invocation per workgroup): the index space as rows of L elements;
// a workgroup takes R consecutive rows (about 8k elements), each one loop over its L elements:
// index = o * L + u. The index-range pass (kir::simplify_index_ranges, run at dispatch) then
// finds the coordinates the body divides out of the index constant along the row (o) and the
// rest linear in u, so the C compiler vectorises the loop: per-channel operands (a batch
// normalisation), a concat's source, a broadcast row. No bounds check: L divides the count.
Stmt rows_body(const ParallelDef &d, int64_t L, int64_t R, std::array<uint32_t, 3> grid) {
  const int64_t rows = d.count / L;
  Expr group = workgroup_id(0);
  if (grid[1] > 1) group = group + workgroup_id(1) * imm_u32(grid[0]);
  const std::string &name = d.index.as<Var>()->name;
  const Expr w = var(name + "_w", ScalarType::i32), r = var(name + "_r", ScalarType::i32),
             o = var(name + "_o", ScalarType::i32), u = var(name + "_u", ScalarType::i32);
  Stmt row = for_loop(u, i32(0), i32(L), let(d.index, o * L + u, d.body));
  const Expr count = rows % R == 0 ? i32(R) : min(i32(R), i32(rows) - w * R);
  return let(w, cast(ScalarType::i32, group),
             for_loop(r, i32(0), count, let(o, w * R + r, row)));
}

} // namespace

Status emit_parallel(LowerCtx &c, const Op &op, Kernel k, std::vector<int> buffers,
                     const ParallelDef &d, const ParallelSchedule &s) {
  if (s.strategy == ParallelStrategy::rows) {
    const int64_t rows = d.count / s.row;
    const int64_t R = std::clamp<int64_t>(8192 / s.row, 1, rows);
    const std::array<uint32_t, 3> grid = split_grid(static_cast<uint64_t>((rows + R - 1) / R));
    k.workgroup_size[0] = k.workgroup_size[1] = k.workgroup_size[2] = 1;
    k.body = rows_body(d, s.row, R, grid);
    k.name += "_rows";
    return c.dispatch(op, std::move(k), std::move(buffers), grid);
  }
  const uint32_t wg = c.workgroup_size();
  const uint32_t e = s.strategy == ParallelStrategy::blocked ? s.elements : 1;
  const std::array<uint32_t, 3> grid = split_grid((static_cast<uint64_t>(d.count) + wg * e - 1) /
                                                  (wg * e));
  k.workgroup_size[0] = wg;
  k.workgroup_size[1] = k.workgroup_size[2] = 1;
  switch (s.strategy) {
  case ParallelStrategy::naive:
  case ParallelStrategy::rows: k.body = naive_body(d, wg, grid); break;
  case ParallelStrategy::blocked:
    k.body = blocked_body(d, wg, e, grid);
    k.name += fmt::format("_blocked{}", e);
    break;
  }
  return c.dispatch(op, std::move(k), std::move(buffers), grid);
}

} // namespace kiln::compiler
