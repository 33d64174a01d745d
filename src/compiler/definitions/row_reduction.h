// The row-reduction definition: `rows` independent rows of `len` elements, each reduced by one
// or more combiners in sequence (a stage's term may use the earlier stages' statistics, e.g.
// the sum of exp(x - max) after the max), then written back either element by element from
// the row's statistics (softmax, normalisation) or once per row (reductions). A lowering
// describes its rows with index maps and callbacks; the schedule (schedule.h) decides how the
// definition runs, and emit_row_reduction builds the kernel for that strategy. The naive
// strategy (one invocation per row) is the lowering's own kernel.
#pragma once

#include "compiler/lowering/lower.h"
#include "compiler/schedules/schedule.h"

namespace kiln::compiler {

// One reduction over the row: acc = combine(acc, term(x, stats)) from `identity`, then the
// statistic finish(acc, stats) (default: acc). `stats` are the finished statistics of the
// stages before this one. The combiner is a subgroup ReduceOp; `nan_sticky` (max / min) makes
// a NaN anywhere in the row the result, as the reference reductions do; without it a max or
// min ignores NaN elements.
struct RowStage {
  kir::ReduceOp op = kir::ReduceOp::add;
  bool nan_sticky = false;
  kir::Expr identity;
  std::function<kir::Expr(const kir::Expr &x, const std::vector<kir::Expr> &stats)> term;
  std::function<kir::Expr(const kir::Expr &acc, const std::vector<kir::Expr> &stats)> finish;
};

// acc combined with one more value x as `s` does it (NaN handling included).
kir::Expr combine(const RowStage &s, const kir::Expr &acc, const kir::Expr &x);

struct RowReductionDef {
  int64_t rows = 0, len = 0;
  bool contiguous = true; // row elements consecutive in memory
  kir::ScalarType acc = kir::ScalarType::f32; // statistics type (f32 only for workgroup_rows)
  // The offset of row `row` (an i32 expression, let-bound once per row as `base`).
  std::function<kir::Expr(const kir::Expr &row)> base;
  // Element r of the row at `base`, as the accumulation type (buffers bound by the lowering).
  std::function<kir::Expr(const kir::Expr &base, const kir::Expr &r)> read;
  std::vector<RowStage> stages;
  // Exactly one of: the store of element r of the row (x its value) from the statistics, or
  // the store of the row's single result.
  std::function<Result<kir::Stmt>(const kir::Expr &base, const kir::Expr &r, const kir::Expr &x,
                                  const std::vector<kir::Expr> &stats)>
      write_element;
  std::function<Result<kir::Stmt>(const kir::Expr &row, const std::vector<kir::Expr> &stats)>
      write_row;

  RowReductionShape shape() const { return {rows, len, contiguous}; }
};

// The rows of `s` (kept axes x reduced axes) as a row-reduction shape: contiguous when the
// reduced axes are the innermost ones.
inline RowReductionShape row_shape(const AxisSplit &s) {
  return {s.outer(), s.inner(), s.red_st == shape_strides(s.red)};
}

// The schedule for rows of shape `s` accumulated in `acc` on the lowering's target and mode
// (CompileOptions::row_reduction_override included); naive where workgroup_rows cannot run
// them (an accumulation other than f32). Counts the choice for CompileStats. Call it before
// binding any buffer: the naive path binds its own.
RowReductionSchedule schedule_row_reduction(LowerCtx &c, const RowReductionShape &s,
                                            kir::ScalarType acc);

// Emits the kernel of `d` with schedule `s` (workgroup_rows) through `g`, which already has the
// definition's buffers bound. The naive kernel is the lowering's: refused here.
Status emit_row_reduction(GridKernel &g, const RowReductionDef &d, const RowReductionSchedule &s);

} // namespace kiln::compiler
