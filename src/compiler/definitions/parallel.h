// The parallel definition: elementwise maps (numpy broadcast), gathers, copies and every other
// kernel whose elements are independent, over a flat index space [0, count). The lowering builds
// the body one element computes and stores, from the element's flat index (operand reads go
// through the index maps of lower.h: unflatten, flatten, broadcast_index, fused epilogues
// through GridKernel::store); the schedule (schedule.h) decides how many elements an invocation
// handles and emit_parallel builds and dispatches the kernel for it. dispatch_flat and
// GridKernel::finish build one, so every such kernel goes through the definition and the table.
#pragma once

#include "compiler/schedules/schedule.h"
#include "kir/kir.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln {
class Op;
}

namespace kiln::compiler {

class LowerCtx;

struct ParallelDef {
  int64_t count = 0; // elements, 1 to INT32_MAX
  kir::Expr index;   // the i32 variable `body` reads: the element's flat index
  kir::Stmt body;    // what element `index` computes and stores

  ParallelShape shape() const;
};

// The definition of `count` (1 or more) elements with body(i) each, i the i32 variable
// `index_name`; counts beyond the 32-bit index range are an error naming `op`.
Result<ParallelDef> parallel_def(const Op &op, int64_t count, const std::string &index_name,
                                 const std::function<Result<kir::Stmt>(kir::Expr)> &body);

// The schedule for `d` on the lowering's target and mode (CompileOptions::parallel_override
// included). Counts the choice for CompileStats.
ParallelSchedule schedule_parallel(LowerCtx &c, const ParallelDef &d);

// Builds `k`'s body and workgroup size for `d` under schedule `s` and dispatches it binding
// `buffers`. Grids of more than 65535 workgroups are split into y.
Status emit_parallel(LowerCtx &c, const Op &op, kir::Kernel k, std::vector<int> buffers,
                     const ParallelDef &d, const ParallelSchedule &s);

} // namespace kiln::compiler
