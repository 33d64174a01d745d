// Kernel building helpers of the hand-written sequence lowerings (handwritten/): kernels that
// also bind scratch buffers (transients without a graph value), read-write result buffers and
// one-workgroup-per-item kernels with shared memory.
#pragma once

#include "compiler/lowering/float_math.h"
#include "compiler/lowering/lower.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::compiler::seq {

// A new transient buffer of `count` elements of `t`, not tied to a graph value.
int new_scratch(LowerCtx &c, kir::ScalarType t, int64_t count);

class SeqKernel {
public:
  SeqKernel(LowerCtx &c, const Op &op, std::string name);

  // A graph value read-only (operand or an earlier result).
  Result<kir::BufferVar> in(const Value *v);
  // Defines result `v`; read_back also allows loads from it in this kernel.
  Result<kir::BufferVar> out(const Value *v, bool read_back = false);
  // Binds an existing buffer id (e.g. a scratch buffer) with element type t.
  kir::BufferVar bind(int id, kir::ScalarType t, bool readonly, bool writeonly);
  kir::SharedVar shared(kir::ScalarType t, int64_t count);
  kir::Expr fresh(const std::string &prefix, kir::ScalarType t);
  kir::Kernel &kernel() { return k_; }

  // One invocation per index in [0, count).
  Status grid(int64_t count, const std::function<Result<kir::Stmt>(kir::Expr)> &body);
  // One workgroup per item in [0, items): body(item, lane), both i32; lane < workgroup size.
  Status per_group(int64_t items,
                   const std::function<Result<kir::Stmt>(kir::Expr, kir::Expr)> &body);
  uint32_t workgroup_size() const { return c_.workgroup_size(); }

private:
  LowerCtx &c_;
  const Op &op_;
  kir::Kernel k_;
  std::vector<int> bufs_;
  int next_var_ = 0;
};

// for (v = 0; v < n; ++v) body(v), with a fresh i32 variable.
kir::Stmt loop(SeqKernel &g, int64_t n, const std::function<kir::Stmt(kir::Expr)> &body);
kir::Stmt loop(SeqKernel &g, const kir::Expr &n, const std::function<kir::Stmt(kir::Expr)> &body);
// Accumulation type of a float element type (f16 -> f32).
kir::ScalarType acc_type(kir::ScalarType t);
// A float constant of the type of `like`.
kir::Expr fconst(const kir::Expr &like, double v);
// The shape of an operand, or nullptr when it is absent.
const Value *operand_or_null(const Op &op, size_t i);

} // namespace kiln::compiler::seq
