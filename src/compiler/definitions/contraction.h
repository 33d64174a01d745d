// The contraction definition: out[z, m, n] = sum over k of A(z, m, k) * B(z, k, n), for
// matmul, gemm and convolution as implicit GEMM. A lowering describes its operands as index
// maps and its output as a store callback; the schedule (schedule.h) decides how the
// definition runs, and emit_contraction builds the kernel for that strategy.
//
// The reduction index k may be multi-dimensional (a convolution reduces over input channel and
// kernel window): `kdims` are its extents, row-major, and the operand maps receive one i32
// coordinate per reduction dim.
#pragma once

#include "compiler/lowering/lower.h"
#include "compiler/schedules/schedule.h"

namespace kiln::compiler {

// One operand element: its index in the operand's buffer and a predicate (undefined: always
// true) saying whether it lies inside the operand; outside elements read as zero (padding).
// The index must be safe to evaluate for every coordinate within the definition's bounds.
struct OperandRef {
  kir::Expr index, inside;
};

struct ContractionDef {
  int64_t batch = 1, M = 0, N = 0;
  Shape kdims;           // reduction dims (their product is K)
  kir::ScalarType acc = kir::ScalarType::f32;
  // The operands' buffers (bound by the lowering; a lowering that packs A for the schedule
  // binds it after scheduling, so A reads as f32 until then: valgrind saw the schedule read an
  // uninitialised element type).
  kir::BufferVar a{-1, kir::ScalarType::f32}, b{-1, kir::ScalarType::f32};
  // The graph values bound as a and b; split-K binds them again in its partial-sum kernel.
  // Unset: the schedule never splits.
  const Value *a_value = nullptr, *b_value = nullptr;
  // Element (z, m, k...) of A and (z, k..., n) of B; z, m, n and each k are i32 expressions.
  std::function<OperandRef(const kir::Expr &z, const kir::Expr &m,
                           const std::vector<kir::Expr> &k)> a_at;
  std::function<OperandRef(const kir::Expr &z, const std::vector<kir::Expr> &k,
                           const kir::Expr &n)> b_at;
  // Stores the accumulated value of output (z, m, n); called only for in-bounds m and n.
  std::function<Result<kir::Stmt>(const kir::Expr &z, const kir::Expr &m, const kir::Expr &n,
                                  const kir::Expr &acc)> store;

  // The matrix strategy's epilogue visits n outermost (what only n decides, e.g. a
  // position's coordinates, computed once per column) instead of by rows of m.
  bool store_n_outer = false;

  // n laid out in rows of `n_row` positions whose first `n_row_valid` are outputs (the wide
  // rows of a shifted-rows convolution; N a multiple of n_row). When set (with store_run and
  // without store_n_outer), the matrix strategy's epilogue stores each tile row's valid runs
  // through store_run(z, m, row, col, acc), col < n_row_valid: unit-stride loops a C
  // compiler vectorises, where `store` would decompose n element by element.
  int64_t n_row = 0, n_row_valid = 0;
  std::function<Result<kir::Stmt>(const kir::Expr &z, const kir::Expr &m, const kir::Expr &row,
                                  const kir::Expr &col, const kir::Expr &acc)>
      store_run;

  // A packed in panels for the matrix strategy (0: not packed): element (m, k) (k flat over
  // kdims) at ((m / a_panel) * a_panel_k + k) * a_panel + m % a_panel, zero past M and K; the
  // panels hold whole tiles of a_panel rows and a_panel_k (K rounded up to the k step) columns,
  // so every step of every tile multiplies A straight from the panel, one contiguous run per
  // step (bind_a_panels builds them and the matching a_at).
  int64_t a_panel = 0, a_panel_k = 0;
  // Several sets of panels (a_panel_sets > 1, a_panel_batch elements apart): batch entry z
  // multiplies set z % a_panel_sets (a convolution's groups, a Winograd product's points).
  int64_t a_panel_batch = 0, a_panel_sets = 1;

  int64_t K() const { return shape_numel(kdims); }
  ContractionShape shape() const {
    return {batch, M, N, K(), a.elem == b.elem ? a.elem : kir::ScalarType::f32};
  }
};

// Packs row-major weights w [d.M][d.K()] into the panels of ContractionDef::a_panel
// (`panel_rows` rows, K rounded up to `tk`, zero-padded), adds them to the module as a
// constant bound on `g`, and sets d.a, a_at, a_panel and a_panel_k. With `sets` > 1, w is
// [sets][d.M][d.K()]: batch entry z multiplies set z % sets.
void bind_a_panels(GridKernel &g, ContractionDef &d, const float *w, int64_t panel_rows,
                   int64_t tk, int64_t sets = 1);

// Emits the kernel of `d` with schedule `s` (tiled or registers) through `g`, which already
// has the definition's buffers bound. The naive strategy is the lowering's own kernel: this
// function refuses it. With split-K, a first kernel (binding a_value and b_value again) writes
// the slices' partial sums to a scratch buffer and `g` becomes the kernel adding them.
Status emit_contraction(GridKernel &g, const ContractionDef &d, const ContractionSchedule &s);

// The schedule for `d` on the lowering's target and mode, falling back to naive when the grid
// the strategy needs exceeds the workgroup-count limits.
ContractionSchedule schedule_contraction(LowerCtx &c, const ContractionDef &d);

} // namespace kiln::compiler
