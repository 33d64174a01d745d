// The window definition: pooling (max, average, Lp) and depthwise convolution. Every output
// element (plane p = image x channel, spatial position o) combines the input elements of one
// kernel window of input plane in_plane(p): x_d = o_d * stride_d - pad_begin_d + k_d *
// dilation_d for each kernel offset k, skipping (not combining) the offsets that fall in the
// padding. A lowering describes the plane map, the element read, the combiner with its
// identity (max, sum of a term, weighted sum with a weight per tap and plane), the finish
// (average divisor, Lp root) and the store (the fused epilogue, like ContractionDef's); the
// schedule (schedule.h) decides how it runs and emit_window builds the kernel for that
// strategy. The naive strategy (one invocation per output) is the lowering's own kernel.
#pragma once

#include "compiler/lowering/lower.h"
#include "compiler/schedules/schedule.h"
#include "ops/nn_kernels.h"

namespace kiln::compiler {

struct WindowDef {
  nn::Window w;       // kernel, strides, dilations, pads, input / output spatial dims
  int64_t planes = 0; // output planes (images x output channels)
  kir::ScalarType acc = kir::ScalarType::f32;
  // The offset of the input plane read by output plane `p` (an i32 expression).
  std::function<kir::Expr(const kir::Expr &p)> in_plane;
  // The input element at offset `index` of its buffer, as the accumulation type.
  std::function<kir::Expr(const kir::Expr &index)> read;
  // The combiner: max (select(x > acc, x, acc): NaN inputs are ignored, as the naive kernels
  // do), or a sum of term(x) (x itself when unset), or for a weighted window a sum of x * w.
  enum class Combine { max, sum } combine = Combine::sum;
  std::function<kir::Expr(const kir::Expr &x)> term;
  // Weighted (depthwise): the weight of kernel element `tap` (row-major over the kernel) for
  // output plane `p`, as the accumulation type; unset for pooling.
  std::function<kir::Expr(const kir::Expr &p, int64_t tap)> weight;
  // The accumulator's initial value for output plane `p` (the identity, or the bias).
  std::function<kir::Expr(const kir::Expr &p)> init;
  // Which kernel elements an average divides by: none (no count), the ones inside the input,
  // or the ones inside the padded input (count_include_pad; the ceil_mode overhang is not).
  enum class Count { none, inside, padded } count = Count::none;
  // The output value from the accumulator and the count (an i32; undefined for Count::none).
  std::function<kir::Expr(const kir::Expr &acc, const kir::Expr &count)> finish;
  // Stores output `pos` (flat spatial index) of plane `p` with value `v` (accumulation type).
  std::function<Result<kir::Stmt>(const kir::Expr &p, const kir::Expr &pos, const kir::Expr &v)>
      store;

  WindowShape shape() const;
};

// The schedule for `s` on the lowering's target and mode (CompileOptions::window_override
// included). Counts the choice for CompileStats. Call it before binding any buffer: the naive
// path binds its own.
WindowSchedule schedule_window(LowerCtx &c, const WindowShape &s);

// A definition over `planes` planes of the row-major input X (output plane p reads input
// plane p, elements cast to `acc`): w, planes, acc, in_plane and read set, the rest to fill.
WindowDef plane_window(const nn::Window &w, int64_t planes, kir::BufferVar X, kir::ScalarType acc);

// The window shape of window `w` over `planes` planes.
WindowShape window_shape(const nn::Window &w, int64_t planes, bool weighted);

// Emits the kernel of `d` with schedule `s` (window_rows) through `g`, which already has the
// definition's buffers bound. The naive kernel is the lowering's: refused here.
Status emit_window(GridKernel &g, const WindowDef &d, const WindowSchedule &s);

} // namespace kiln::compiler
