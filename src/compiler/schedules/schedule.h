// Schedules: how a kernel definition runs on a target. The strategy table (schedule.cpp) is
// data: rows keyed by definition kind and target, each with tile parameters sized against the
// target's shared memory and workgroup limits. Lowerings ask pick_*() and never hard-code a
// strategy; `kiln compile --schedule naive` forces the reference strategy everywhere.
#pragma once

#include "kir/target.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::compiler {

// Which strategies the compiler may use: `auto` consults the table, `naive` forces the
// reference strategy (one invocation per output element, today's kernels) for every kernel.
enum class ScheduleMode { automatic, naive };
const char *to_string(ScheduleMode m);
bool parse_schedule_mode(std::string_view s, ScheduleMode *out);

enum class Strategy {
  naive,     // one invocation per output element, serial loop over the reduction
  tiled,     // workgroup tile staged through shared memory, register block per invocation
  registers, // register block per invocation read straight from global memory (no staging)
  matrix,    // one invocation per workgroup: tk-deep slices of the tile staged, multiplied as
             // cooperative matrices (targets with one invocation per subgroup: the C backend)
  coop,      // f16 operands on a GPU with cooperative matrices: tk-deep slices staged in shared
             // memory as f16, each subgroup multiplies an rm x rn block of 16x16 matrices
};
const char *to_string(Strategy s);

// Tile parameters of the contraction strategies. A workgroup computes tm x tn outputs of one
// batch entry with (tn / rn) x (tm / rm) invocations; each invocation owns rm x rn outputs,
// strided by the invocation grid so neighbouring invocations touch neighbouring elements. The
// reduction advances tk elements per step (the staged tiles are tk x tm and tk x tn).
struct TileConfig {
  int tm = 0, tn = 0, tk = 0, rm = 1, rn = 1;
  // `tiled` staging: the widest vector (1, 2 or 4 lanes) one shared-memory load may read, and
  // the number of staging buffers (2: double-buffered, one barrier per tk step).
  int lanes = 4, stages = 2;
  int invocations() const { return (tm / rm) * (tn / rn); }
  // A is staged k-major in rows of a_row() elements, B k-major in rows of tn, stored as vectors
  // of a_lanes() / b_lanes() lanes, so one load feeds that many rows / columns of a block.
  int a_lanes() const { return widest(rm); }
  int b_lanes() const { return widest(rn); }
  int a_row() const { return tm + (a_lanes() == 1 ? 1 : a_lanes()); } // padded: no bank conflicts
  uint32_t shared_bytes() const; // every staging buffer (f32), padded rows included

private:
  int widest(int r) const { return lanes >= 4 && r % 4 == 0 ? 4 : lanes >= 2 && r % 2 == 0 ? 2 : 1; }
};

struct ContractionSchedule {
  Strategy strategy = Strategy::naive;
  TileConfig tile;
  // Split-K (tiled and coop): the reduction is cut into `split_k` slices run as separate
  // workgroups writing partial sums, then one kernel adds the slices and stores (epilogue
  // included). 1 = no split; 0 (overrides only) = as the table's split-K rule decides.
  int split_k = 1;
  std::string reason; // the table row (or rule) that decided it, for --stats and tests
  bool everywhere = false; // an override that also replaces the table's naive choices
  // The grid (workgroups, split-K slices included) the table row asks for: split-K picks its
  // slices within [min_groups, max_groups] where it can (0: no bound), also when a lowering
  // resizes the tile afterwards.
  int64_t min_groups = 0, max_groups = 0;
};

// A contraction of `batch` independent [M x K] x [K x N] products; `operand` is the element
// type of A and B when they share one (f32 otherwise).
struct ContractionShape {
  int64_t batch = 1, M = 0, N = 0, K = 0;
  kir::ScalarType operand = kir::ScalarType::f32;
};

// The coop strategy: the cooperative-matrix shape it multiplies (16 x 16 x 16, f16 x f16 ->
// f32), the padding of its staged rows (f16 elements: keeps every row a 16-byte multiple and
// spreads rows over the banks), whether target `t` runs it for `s`, and a tile's workgroup
// size and shared memory (both staging buffers and the per-subgroup epilogue matrix).
constexpr int kCoopM = 16, kCoopN = 16, kCoopK = 16, kCoopPad = 8;
bool coop_available(const kir::TargetDesc &t, const ContractionShape &s);
uint32_t coop_invocations(const TileConfig &tile, const kir::TargetDesc &t);
uint32_t coop_shared_bytes(const TileConfig &tile);

// A contraction schedule for tuning (`--contraction STRATEGY:TMxTNxTK:RMxRN[:kS]`, e.g.
// `tiled:64x64x16:4x4` or, split-K in S slices, `tiled:32x32x16:4x4:k8`; without `:kS` a
// tiled override splits where the table's split-K rule would): it replaces the table's choice wherever the table picks a non-naive
// strategy; with a trailing `!` it applies to every contraction (tests). `naive` alone is
// accepted. False on a malformed spec or a tile that is not a multiple of its register block.
bool parse_contraction_override(std::string_view spec, ContractionSchedule *out);

// The table's choice; `override` (strategy naive and empty reason: none) wins over the table
// when the target can run it.
// Workgroups the tile grid of `t` has over `s` (batch entries included).
int64_t tile_groups(const ContractionShape &s, const TileConfig &t);

// Split-K for a tiled schedule whose grid leaves some of the target's compute units idle: the
// number of slices (1: none) that minimises a wave-quantisation cost, the busiest unit's tk
// steps (its workgroups, the grid spread evenly, times each one's steps; a unit with fewer
// workgroups than it needs to hide latency costs as if it had that many) plus the partial
// sums' traffic and the extra kernel. Each slice keeps at least four tk steps, at most 64
// slices; where it can, the grid stays within [min_groups, max_groups] (0: no bound). Targets
// without a compute-unit count never split, nor does a grid that already covers every unit.
// `invocations` (0: the tile's) sizes the occupancy term (a coop tile's are its subgroups'
// invocations).
int pick_split_k(const kir::TargetDesc &t, const ContractionShape &s, const TileConfig &tile,
                 int64_t min_groups = 0, int64_t max_groups = 0, uint32_t invocations = 0);

ContractionSchedule pick_contraction(const kir::TargetDesc &t, ScheduleMode mode,
                                     const ContractionShape &s,
                                     const ContractionSchedule *override = nullptr);

// ---- row reductions (compiler/row_reduction.h) ----------------------------------------------

enum class RowStrategy {
  naive,          // one invocation per row, serial loops over the row (the lowering's kernel)
  workgroup_rows, // one workgroup per row: strided accumulation, subgroup reduce, shared combine
};
const char *to_string(RowStrategy s);

// A reduction of `rows` independent rows of `len` elements each; `contiguous` when a row's
// elements are consecutive in memory (the reduced axes are the innermost ones).
struct RowReductionShape {
  int64_t rows = 0, len = 0;
  bool contiguous = true;
};

struct RowReductionSchedule {
  RowStrategy strategy = RowStrategy::naive;
  uint32_t workgroup = 0;  // invocations per workgroup (workgroup_rows)
  std::string reason;      // the table row (or rule) that decided it
  bool everywhere = false; // an override that also replaces the table's naive choices
};

// Rows of this many elements or more run as split partial stages where the op has that path
// (families/reduce.cpp); the row-reduction strategies never apply to them.
constexpr int64_t kRowSplitMin = 8192;

// `naive`, or `workgroup_rows:WG` (WG a power of two from 1 to 1024); a trailing `!` applies it
// to every row reduction the target can run it for, not only where the table picks a
// non-naive strategy (tests, tuning). False on a malformed spec.
bool parse_row_reduction_override(std::string_view spec, RowReductionSchedule *out);

// The table's choice for a row reduction (rules first: naive mode, split-length rows,
// non-contiguous rows, a target without subgroup arithmetic); `override` (empty reason: none)
// wins over the table where the target can run it.
RowReductionSchedule pick_row_reduction(const kir::TargetDesc &t, ScheduleMode mode,
                                        const RowReductionShape &s,
                                        const RowReductionSchedule *override = nullptr);

} // namespace kiln::compiler

namespace kiln::compiler {

// ---- windows (compiler/definitions/window.h) ------------------------------------------------

enum class WindowStrategy {
  naive,       // one invocation per output element, loops over the window (the lowering's kernel)
  window_rows, // R consecutive outputs along the innermost spatial axis per invocation
};
const char *to_string(WindowStrategy s);

// A window computation (pooling, depthwise convolution): `planes` output planes (images x
// channels) of `outer` rows of `out_w` outputs each (outer = the product of the output spatial
// dims before the last), `taps` kernel elements per output; `weighted` for a depthwise
// convolution (a weight per tap and channel).
struct WindowShape {
  int64_t planes = 0, outer = 1, out_w = 0, taps = 0;
  bool weighted = false;
};

struct WindowSchedule {
  WindowStrategy strategy = WindowStrategy::naive;
  uint32_t rows = 0;       // R: outputs per invocation along the innermost axis (window_rows)
  bool hoist = true;       // interior blocks run an unguarded copy of the body (window_rows)
  std::string reason;      // the table row (or rule) that decided it
  bool everywhere = false; // an override that also replaces the table's naive choices
};

// The most kernel elements window_rows unrolls (larger windows stay naive), and the largest R.
constexpr int64_t kWindowMaxTaps = 64;
constexpr uint32_t kWindowMaxRows = 16;

// `naive`, or `window_rows:R` (R from 1 to 16; bounds checks hoisted for interior blocks) or
// `window_rows:R:guarded` (every block checks its bounds); a trailing `!` applies it to every
// window the rules allow, not only where the table picks a non-naive strategy. False on a
// malformed spec.
bool parse_window_override(std::string_view spec, WindowSchedule *out);

// The table's choice for a window (rules first: naive mode, windows of more than
// kWindowMaxTaps elements, rows of one output); `override` (empty reason: none) wins over the
// table where the rules allow it.
WindowSchedule pick_window(const kir::TargetDesc &t, ScheduleMode mode, const WindowShape &s,
                           const WindowSchedule *override = nullptr);

} // namespace kiln::compiler

namespace kiln::compiler {

// ---- parallel kernels (compiler/definitions/parallel.h) -------------------------------------

enum class ParallelStrategy {
  naive,   // one invocation per element (the kernels as they were before the definition)
  blocked, // each invocation handles E elements, strided by the workgroup size (coalesced)
  rows,    // the C backend: the index space as rows of L elements, one loop per row (below)
};
const char *to_string(ParallelStrategy s);

// A parallel kernel: `count` independent elements; `loops` when its per-element body has a loop
// (a reduction or search run per element: not an elementwise body).
struct ParallelShape {
  int64_t count = 0;
  bool loops = false;
};

struct ParallelSchedule {
  ParallelStrategy strategy = ParallelStrategy::naive;
  uint32_t elements = 1;   // E: elements per invocation (blocked)
  std::string reason;      // the table row (or rule) that decided it
  bool everywhere = false; // an override that also replaces the table's naive choices
  int64_t row = 0;         // L: the row length (rows; set by schedule_parallel)
};

// `naive`, or `blocked:E` (E = 2, 4 or 8); a trailing `!` applies it to every parallel kernel
// the rules allow, not only where the table picks a non-naive strategy. False on a malformed
// spec.
bool parse_parallel_override(std::string_view spec, ParallelSchedule *out);

// The table's choice for a parallel kernel (rules first: naive mode, bodies with loops, which
// blocking would multiply; kernels of fewer than two elements or over half the i32 range);
// `override` (empty reason: none) wins over the table where the rules allow it.
ParallelSchedule pick_parallel(const kir::TargetDesc &t, ScheduleMode mode, const ParallelShape &s,
                               const ParallelSchedule *override = nullptr);

} // namespace kiln::compiler
