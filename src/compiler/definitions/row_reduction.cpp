// The workgroup_rows strategy: workgroup (x, y) of the grid owns row y * GX + x. Each stage,
// every invocation accumulates elements lid, lid + WG, lid + 2 WG, ... of the row, the
// subgroup combines its invocations' values (SubgroupReduce), the first invocation of each
// subgroup leaves the subgroup's value in a shared array, and after a barrier every invocation
// combines the num_subgroups values itself (in the same order, so all hold the same statistic;
// each stage has its own array, so no second barrier is needed). Then every invocation writes
// its strided elements from the statistics (or invocation 0 writes the row's result). Rows of
// at most kCachedMax elements per invocation are loaded once into registers; longer rows are
// read again in every stage. The subgroup size is read at run time (subgroup_id,
// num_subgroups), so the kernel is correct for any size the device picks.
#include "compiler/definitions/row_reduction.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

Expr combine(const RowStage &s, const Expr &acc, const Expr &x) {
  switch (s.op) {
  case ReduceOp::add: return acc + x;
  case ReduceOp::mul: return acc * x;
  case ReduceOp::max:
  case ReduceOp::min: {
    Expr better = s.op == ReduceOp::max ? x > acc : x < acc;
    if (s.nan_sticky) better = better || call(Intrinsic::isnan, {x});
    return select(better, x, acc);
  }
  }
  return acc;
}

namespace {

constexpr int64_t kMaxGroups = 65535;
constexpr int64_t kCachedMax = 8;
constexpr size_t kMaxStages = 3;

Expr as_i32(Expr e) { return cast(ScalarType::i32, std::move(e)); }

// The invocation's view of its row.
struct RowLayout {
  int64_t wg = 0, per = 0; // invocations, elements per invocation (ceil(len / wg))
  bool cached = false;     // elements held in `xs` (declared once) instead of re-read
  Expr lid, row, base;
  std::vector<Expr> xs;
};

using ElementFn = std::function<Result<Stmt>(const Expr &r, const Expr &x)>;

// f(r, x) for each of the invocation's elements r (x its value), guarded by r < len where the
// stride runs past the row; `tag` keeps the variable names of each use apart.
Result<Stmt> over_elements(const RowReductionDef &d, const RowLayout &w, const std::string &tag,
                           const ElementFn &f) {
  if (w.cached) {
    std::vector<Stmt> out;
    for (int64_t j = 0; j < w.per; ++j) {
      Expr r = var(fmt::format("r{}_{}", tag, j), ScalarType::i32);
      KILN_ASSIGN(Stmt st, f(r, w.xs[static_cast<size_t>(j)]));
      if ((j + 1) * w.wg > d.len) st = if_then(r < d.len, st);
      out.push_back(let(r, w.lid + j * w.wg, st));
    }
    return block(std::move(out));
  }
  Expr j = var("j" + tag, ScalarType::i32), r = var("r" + tag, ScalarType::i32);
  KILN_ASSIGN(Stmt st, f(r, d.read(w.base, r)));
  if (w.per * w.wg != d.len) st = if_then(r < d.len, st);
  return for_loop(j, i32(0), i32(w.per), let(r, w.lid + j * w.wg, st));
}

// Declares the cached elements (zero past the row's end; those are never combined).
void load_cached(const RowReductionDef &d, RowLayout &w, std::vector<Stmt> &out) {
  for (int64_t j = 0; j < w.per; ++j) {
    Expr x = var(fmt::format("x{}", j), d.acc);
    Expr r = w.lid + j * w.wg;
    Expr v = d.read(w.base, r);
    if ((j + 1) * w.wg > d.len) {
      Expr ok = r < d.len;
      v = select(ok, d.read(w.base, select(ok, r, i32(0))), make_const(d.acc, 0));
    }
    out.push_back(declare_var(x, v));
    w.xs.push_back(x);
  }
}

// The subgroup's combination of `acc`. A NaN-sticky max / min cannot use the subgroup max /
// min (undefined for NaN): where any invocation holds a NaN, the subgroup's sum carries it.
Expr subgroup_value(const RowStage &s, const Expr &acc, size_t k, std::vector<Stmt> &out) {
  if (!s.nan_sticky || s.op == ReduceOp::add || s.op == ReduceOp::mul)
    return subgroup_reduce(s.op, acc);
  Expr nan = var(fmt::format("nan{}", k), ScalarType::i32);
  out.push_back(declare_var(
      nan, subgroup_reduce(ReduceOp::max, select(call(Intrinsic::isnan, {acc}), i32(1), i32(0)))));
  return select(nan > 0, subgroup_reduce(ReduceOp::add, acc), subgroup_reduce(s.op, acc));
}

// Stage k: accumulate, combine across the subgroup and the workgroup, finish; appends the
// statements to `out` and the statistic's variable to `stats`.
Status emit_stage(GridKernel &g, const RowReductionDef &d, const RowLayout &w, size_t k,
                  std::vector<Expr> &stats, std::vector<Stmt> &out) {
  const RowStage &s = d.stages[k];
  SharedVar part = g.kernel().add_shared(fmt::format("part{}", k), d.acc,
                                         static_cast<uint32_t>(w.wg));
  Expr acc = var(fmt::format("acc{}", k), d.acc);
  out.push_back(declare_var(acc, s.identity));
  const std::vector<Expr> before = stats;
  KILN_ASSIGN(Stmt accumulate,
              over_elements(d, w, fmt::format("a{}", k), [&](const Expr &, const Expr &x) {
                return Result<Stmt>(assign(acc, combine(s, acc, s.term(x, before))));
              }));
  out.push_back(accumulate);
  Expr sg = var(fmt::format("sg{}", k), d.acc);
  out.push_back(declare_var(sg, subgroup_value(s, acc, k, out)));
  out.push_back(if_then(subgroup_invocation_id() == imm_u32(0),
                        store_shared(part, as_i32(subgroup_id()), sg)));
  out.push_back(barrier());
  Expr tot = var(fmt::format("tot{}", k), d.acc), q = var(fmt::format("q{}", k), ScalarType::i32);
  out.push_back(declare_var(tot, s.identity));
  out.push_back(for_loop(q, i32(0), as_i32(num_subgroups()),
                         assign(tot, combine(s, tot, load_shared(part, q)))));
  Expr stat = var(fmt::format("stat{}", k), d.acc);
  out.push_back(declare_var(stat, s.finish ? s.finish(tot, before) : tot));
  stats.push_back(stat);
  return Status::ok();
}

std::array<uint32_t, 2> grid_of(int64_t rows) {
  const int64_t gx = std::min(rows, kMaxGroups), gy = (rows + gx - 1) / gx;
  return {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy)};
}

} // namespace

RowReductionSchedule schedule_row_reduction(LowerCtx &c, const RowReductionShape &s,
                                            ScalarType acc) {
  RowReductionSchedule out = pick_row_reduction(c.target(), c.options().schedule, s,
                                                &c.options().row_reduction_override);
  if (out.strategy != RowStrategy::naive) {
    if (acc != ScalarType::f32) {
      out = {RowStrategy::naive, 0, fmt::format("{} statistics", to_string(acc)), false};
    } else if (s.rows > kMaxGroups * kMaxGroups) {
      out = {RowStrategy::naive, 0, "grid exceeds 65535 x 65535 workgroups", false};
    }
  }
  c.count_row_strategy(out.strategy);
  return out;
}

Status emit_row_reduction(GridKernel &g, const RowReductionDef &d, const RowReductionSchedule &s) {
  KILN_ASSERT(s.strategy == RowStrategy::workgroup_rows,
              "emit_row_reduction: the naive kernel is the lowering's");
  KILN_ASSERT(!d.stages.empty() && d.stages.size() <= kMaxStages && d.len > 0 && d.rows > 0,
              "emit_row_reduction: unsupported definition");
  KILN_ASSERT(static_cast<bool>(d.write_element) != static_cast<bool>(d.write_row),
              "emit_row_reduction: exactly one write callback");
  RowLayout w;
  w.wg = s.workgroup;
  w.per = (d.len + w.wg - 1) / w.wg;
  w.cached = w.per <= kCachedMax;
  w.lid = var("lid", ScalarType::i32);
  w.row = var("row", ScalarType::i32);
  w.base = var("base", ScalarType::i32);
  std::vector<Stmt> body;
  if (w.cached) load_cached(d, w, body);
  std::vector<Expr> stats;
  for (size_t k = 0; k < d.stages.size(); ++k) KILN_TRY(emit_stage(g, d, w, k, stats, body));
  if (d.write_element) {
    KILN_ASSIGN(Stmt st, over_elements(d, w, "w", [&](const Expr &r, const Expr &x) {
                  return d.write_element(w.base, r, x, stats);
                }));
    body.push_back(st);
  } else {
    KILN_ASSIGN(Stmt st, d.write_row(w.row, stats));
    body.push_back(if_then(w.lid == 0, st));
  }
  const auto grid = grid_of(d.rows);
  Stmt st = let(w.base, d.base(w.row), block(std::move(body)));
  if (static_cast<int64_t>(grid[0]) * grid[1] != d.rows) st = if_then(w.row < d.rows, st);
  Expr row = as_i32(workgroup_id(0));
  if (grid[1] > 1) row = as_i32(workgroup_id(1)) * static_cast<int64_t>(grid[0]) + row;
  st = let(w.row, row, st);
  st = let(w.lid, as_i32(local_id(0)), st);
  g.kernel().name += fmt::format("_rows{}", w.wg);
  return g.finish_grid({static_cast<uint32_t>(w.wg), 1, 1}, {grid[0], grid[1], 1}, st);
}

} // namespace kiln::compiler
