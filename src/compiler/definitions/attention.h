// The attention definition: for each of `batch` entries (batch x heads) and each of its `sq`
// query rows, y = softmax(scale * q k^T [+ mask]) v over `skv` keys, q rows of `d` elements,
// v rows of `dv`. The kernel (emit_attention) computes both products and an online softmax
// (running max and sum per row, the accumulator rescaled when the max grows) in one
// dispatch and never stores the scores. A lowering describes its operands with reads and a
// store callback (fused epilogues); kiln.sdpa builds one (families/attention.cpp).
#pragma once

#include "compiler/lowering/lower.h"

namespace kiln::compiler {

struct AttentionDef {
  int64_t batch = 0, sq = 0, skv = 0, d = 0, dv = 0;
  double scale = 1.0;
  // A row whose probabilities are NaN (every key masked with -inf, a NaN score) gives zeros
  // instead of NaN.
  bool zero_nan_rows = false;
  // Element reads as f32 at flat indices of q [batch, sq, d], k [batch, skv, d] and
  // v [batch, skv, dv] (row-major), buffers bound by the lowering.
  std::function<kir::Expr(const kir::Expr &index)> read_q, read_k, read_v;
  // Optional reads of 4 consecutive elements as f32x4 at an index that is a multiple of 4 (the
  // rows are then staged 4 elements at a time where their width is a multiple of 4).
  std::function<kir::Expr(const kir::Expr &index)> read_q4, read_k4, read_v4;
  // The additive mask (none when read_mask is empty): element (b, i, j) at
  // mask_base(b) + i * mask_row_stride + j * mask_key_stride, as f32.
  std::function<kir::Expr(const kir::Expr &index)> read_mask;
  std::function<kir::Expr(const kir::Expr &b)> mask_base;
  int64_t mask_row_stride = 0, mask_key_stride = 0;
  // Stores y at flat index `index` of [batch, sq, dv] (value f32).
  std::function<Result<kir::Stmt>(const kir::Expr &index, const kir::Expr &value)> store;
};

// How the kernel runs: `wg` invocations per workgroup, `bq` query rows per workgroup (a grid of
// ceil(sq / bq) x batch x splits workgroups), keys walked in blocks of `bk`. With splits > 1,
// each of the splits takes a range of whole key blocks and stores its unnormalised outputs and
// its rows' running max, sum and NaN flag (AttentionPartials); a second kernel
// (emit_attention_combine) rescales them to the largest max, adds them and stores y.
struct AttentionSchedule {
  int64_t wg = 0, bq = 0, bk = 0, splits = 1;
};

// Scratch of a split attention (f32): acc [splits, batch, sq, dv] and stats
// [splits, batch, sq, 3] (max, sum, NaN flag).
struct AttentionPartials {
  kir::BufferVar acc, stats;
};

// The largest blocks whose shared arrays fit the target and whose loops stay within llvmpipe's
// 65,535 iterations per invocation; when none does, the blocks needing the fewest iterations
// and the fewest splits of the keys that fit. Errors when the grid exceeds 65,535 workgroups
// on an axis.
Result<AttentionSchedule> schedule_attention(const LowerCtx &c, const Op &op,
                                             const AttentionDef &d);

// Builds and dispatches the kernel of `d` through `g` (buffers already bound); with splits, it
// writes `part` (bound as results of `g`) instead of storing y.
Status emit_attention(GridKernel &g, const AttentionDef &d, const AttentionSchedule &s,
                      const AttentionPartials *part = nullptr);
// The second kernel of a split attention: `part` bound as inputs of `g`, y stored through
// d.store (one invocation per output).
Status emit_attention_combine(GridKernel &g, const AttentionDef &d, const AttentionSchedule &s,
                              const AttentionPartials &part);

} // namespace kiln::compiler
