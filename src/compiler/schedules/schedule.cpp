#include "compiler/schedules/schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

namespace kiln::compiler {

const char *to_string(ScheduleMode m) {
  switch (m) {
  case ScheduleMode::automatic: return "auto";
  case ScheduleMode::naive: return "naive";
  }
  return "?";
}

bool parse_schedule_mode(std::string_view s, ScheduleMode *out) {
  if (s == "auto") *out = ScheduleMode::automatic;
  else if (s == "naive") *out = ScheduleMode::naive;
  else return false;
  return true;
}

const char *to_string(Strategy s) {
  switch (s) {
  case Strategy::naive: return "naive";
  case Strategy::tiled: return "tiled";
  case Strategy::registers: return "registers";
  case Strategy::matrix: return "matrix";
  case Strategy::coop: return "coop";
  }
  return "?";
}

uint32_t TileConfig::shared_bytes() const {
  return static_cast<uint32_t>(stages * 4 * tk * (a_row() + tn));
}

bool coop_available(const kir::TargetDesc &t, const ContractionShape &s) {
  // The C backend multiplies matrices of any shape itself (the matrix strategy's), so the coop
  // kernel runs there too when forced: how tests check it without a GPU.
  const bool c_backend = t.backend == "c";
  if ((!t.cooperative_matrix && !c_backend) || s.operand != kir::ScalarType::f16) return false;
  if (c_backend) return true;
  if (t.cooperative_matrix_shapes.empty()) return true; // the device checks at load
  using S = kir::ScalarType;
  for (const kir::CoopMatrixShape &m : t.cooperative_matrix_shapes)
    if (m.m == kCoopM && m.n == kCoopN && m.k == kCoopK && m.a == S::f16 && m.b == S::f16 &&
        m.c == S::f32 && m.result == S::f32)
      return true;
  return false;
}

uint32_t coop_invocations(const TileConfig &tile, const kir::TargetDesc &t) {
  return static_cast<uint32_t>(tile.invocations()) * std::max<uint32_t>(t.subgroup_size, 1);
}

uint32_t coop_shared_bytes(const TileConfig &tile) {
  // Per stage: A as tm rows of tk (+ pad), B as tk rows of tn or tn rows of tk (a transposed
  // B), f16; then one f32 16 x 16 matrix per subgroup for the epilogue.
  const int b = std::max(tile.tk * (tile.tn + kCoopPad), tile.tn * (tile.tk + kCoopPad));
  return static_cast<uint32_t>(tile.stages * 2 * (tile.tm * (tile.tk + kCoopPad) + b) +
                               tile.invocations() * kCoopM * kCoopN * 4);
}

namespace {

// One row of the contraction strategy table. A row applies to a target whose subgroup size is
// `subgroup` (0: any), with at least `min_shared` bytes of shared memory and `min_invocations`
// invocations per workgroup, and to a shape with M, N and K at least the given minima; a row
// with `wave` > 0 also needs a tile grid (split-K slices included) of at least `wave`
// workgroups per compute unit (when the target knows its count), so large tiles never leave
// part of the device idle for the whole kernel. `wave` is the number of the row's workgroups
// a unit keeps resident (from the kernel's register count on that target) or 1 where a partly
// filled wave measured no slower. `max_wave` > 0 limits the grid to that many workgroups per
// unit: a row meant for grids that fit in one wave of resident workgroups, where a few more
// would start a second wave for them alone. The first row that applies wins; no row means
// naive.
struct ContractionRow {
  const char *name;
  uint32_t subgroup;
  uint32_t min_shared, min_invocations;
  int64_t min_m, min_n, min_k;
  Strategy strategy;
  TileConfig tile;
  int wave = 0, max_wave = 0;
  bool no_split = false; // the row never splits K (a grid too small for it takes the next row)
};

// Sizes: NVIDIA rows follow the classic SIMT SGEMM shape (256 invocations, 8x8 or 4x4 per
// invocation), plus a tall 128x64 row of 128 invocations at 8x8 for grids that fill one wave
// of it exactly (bert-base's FFN1, 1024 x 3072 x 768: 0.152 ms vs 0.195 with 128x128 tiles and
// 0.166 with 64x64, every figure at the same 1980 MHz SM clock, bench/RESULTS.md). Staging:
// 4-lane shared loads everywhere; the large row double-buffers, the medium row keeps one
// buffer (double-buffering took its 4x4 kernels from 64 to 87 registers on the H200, two
// workgroups per SM instead of four: resnet50 b32 12.97 ms with two stages, 10.83 with one, in
// one run). The small row takes M down to 1 (resnet50's classifier at batch 1, a 1 x 2048 x
// 1000 product, split-K instead of one invocation per output). Lavapipe rows keep the register
// block but skip staging (llvmpipe's shared memory is ordinary memory and its barriers switch
// coroutines). The cpu row (one invocation per subgroup: the C backend) stages 64x32 and
// 32x64 slices and multiplies them as f32 matrices with the prelude's register-blocked
// microkernel (c_build.cpp), 64x64 accumulators per workgroup. Coop rows (f16 operands): a
// 128x256 tile of 64x64 subgroup blocks with one staging buffer led the 4096^3 f16 product
// (0.592 ms; 128x128 of 64x32 blocks double-buffered 0.724, 64x64 tiles 0.815, on an H100 in
// one run), then 128x128, 64x64 and 32x32 tiles as the grid shrinks. Measured in
// bench/RESULTS.md.
constexpr std::array<ContractionRow, 13> kContractionTable{{
    {"nvidia-coop-wide", 32, 49152, 256, 128, 256, 32, Strategy::coop, {128, 256, 32, 64, 64, 4, 1}, 1, 0, true},
    {"nvidia-coop-large", 32, 49152, 256, 256, 256, 32, Strategy::coop, {128, 128, 32, 64, 32, 4, 2}, 1, 0, true},
    {"nvidia-coop-medium", 32, 16384, 128, 64, 64, 32, Strategy::coop, {64, 64, 32, 32, 32, 4, 2}},
    {"nvidia-coop-small", 32, 16384, 128, 1, 1, 16, Strategy::coop, {32, 32, 32, 16, 16, 4, 2}},
    {"nvidia-large", 32, 49152, 256, 512, 512, 64, Strategy::tiled, {128, 128, 8, 8, 8, 4, 2}, 2},
    {"nvidia-tall", 32, 16384, 128, 512, 512, 64, Strategy::tiled, {128, 64, 16, 8, 8, 4, 1}, 1, 3},
    {"nvidia-medium", 32, 16384, 256, 64, 64, 16, Strategy::tiled, {64, 64, 16, 4, 4, 4, 1}, 1},
    {"nvidia-small", 32, 16384, 64, 1, 16, 8, Strategy::tiled, {32, 32, 16, 4, 4, 4, 2}},
    {"lavapipe-large", 8, 0, 64, 64, 64, 8, Strategy::registers, {64, 64, 1, 8, 8}},
    {"lavapipe", 8, 0, 64, 8, 8, 8, Strategy::registers, {32, 32, 1, 4, 4}},
    {"cpu", 1, 0, 1, 1, 1, 1, Strategy::matrix, {64, 64, 32, 64, 64}},
    {"portable-medium", 0, 8192, 128, 64, 64, 16, Strategy::tiled, {64, 32, 16, 4, 4}},
    {"portable-small", 0, 8192, 64, 16, 16, 8, Strategy::tiled, {32, 32, 16, 4, 4}},
}};

// The grid bounds a row asks for (workgroups, split-K slices included; 0: none).
int64_t min_groups_of(const ContractionRow &r, const kir::TargetDesc &t) {
  return static_cast<int64_t>(r.wave) * t.compute_units;
}
int64_t max_groups_of(const ContractionRow &r, const kir::TargetDesc &t) {
  return static_cast<int64_t>(r.max_wave) * t.compute_units;
}
// Split-K applies to the tiled and coop strategies.
bool splits(Strategy s) { return s == Strategy::tiled || s == Strategy::coop; }

int split_of(const ContractionRow &r, const kir::TargetDesc &t, const ContractionShape &s) {
  if (!splits(r.strategy) || r.no_split) return 1;
  return pick_split_k(t, s, r.tile, min_groups_of(r, t), max_groups_of(r, t),
                      r.strategy == Strategy::coop ? coop_invocations(r.tile, t) : 0);
}

bool applies(const ContractionRow &r, const kir::TargetDesc &t, const ContractionShape &s) {
  if (r.subgroup != 0 && t.subgroup_size != r.subgroup) return false;
  if (t.shared_memory_bytes < r.min_shared || t.max_workgroup_invocations < r.min_invocations)
    return false;
  if (r.strategy == Strategy::tiled && r.tile.shared_bytes() > t.shared_memory_bytes) return false;
  if (r.strategy == Strategy::coop &&
      (!coop_available(t, s) || coop_shared_bytes(r.tile) > t.shared_memory_bytes ||
       coop_invocations(r.tile, t) > t.max_workgroup_invocations))
    return false;
  if (static_cast<uint32_t>(r.tile.invocations()) > t.max_workgroup_invocations) return false;
  if (s.M < r.min_m || s.N < r.min_n || s.K < r.min_k) return false;
  if (r.wave == 0 || t.compute_units == 0) return true;
  const int64_t groups = tile_groups(s, r.tile) * split_of(r, t, s);
  if (r.max_wave > 0 && groups > static_cast<int64_t>(r.max_wave) * t.compute_units) return false;
  return groups >= static_cast<int64_t>(r.wave) * t.compute_units;
}

ContractionSchedule from_table(const kir::TargetDesc &t, const ContractionShape &s) {
  ContractionSchedule out;
  for (const ContractionRow &r : kContractionTable) {
    if (!applies(r, t, s)) continue;
    out.strategy = r.strategy;
    out.tile = r.tile;
    out.reason = r.name;
    out.min_groups = min_groups_of(r, t);
    out.max_groups = max_groups_of(r, t);
    out.split_k = split_of(r, t, s);
    return out;
  }
  out.reason = fmt::format("no table row for M={} N={} K={} on {}", s.M, s.N, s.K, t.name);
  return out;
}

} // namespace

int64_t tile_groups(const ContractionShape &s, const TileConfig &t) {
  return ((s.M + t.tm - 1) / t.tm) * ((s.N + t.tn - 1) / t.tn) * s.batch;
}

int pick_split_k(const kir::TargetDesc &t, const ContractionShape &s, const TileConfig &tile,
                 int64_t min_groups, int64_t max_groups, uint32_t invocations) {
  const int64_t groups = tile_groups(s, tile), units = t.compute_units;
  if (units == 0 || groups >= units || tile.tk <= 0) return 1;
  const int64_t steps = (s.K + tile.tk - 1) / tile.tk;
  const int64_t most = std::min<int64_t>(steps / 4, 64);
  // Costs in tk steps of one workgroup. Fitted on the H200 (bench/RESULTS.md, 2026-12-04:
  // 1024 x 768 x 768 and 1024 x 768 x 3072 at 1 to 16 slices and three tiles): the time follows
  // the busiest SM's workgroups times their steps once it holds two or more 256-invocation
  // workgroups; a lone workgroup runs ~1.2x (128 invocations ~1.35x) slower per step, so an
  // SM costs as if it held at least sqrt(256 / invocations) of them. A slice costs the sum
  // kernel about M * N / 8 multiply-adds (one tk step is tm * tn * tk), the extra kernel and
  // its barrier about four steps.
  const double occupancy =
      std::max(1.0, std::sqrt(256.0 / (invocations ? invocations : tile.invocations())));
  const double slice = static_cast<double>(s.M * s.N * s.batch) /
                       (8.0 * tile.tm * tile.tn * tile.tk);
  auto cost = [&](int64_t slices, int64_t per) {
    const int64_t busiest = (groups * slices + units - 1) / units;
    const double work = static_cast<double>(per) * std::max<double>(busiest, occupancy);
    return slices == 1 ? work : work + 4.0 + slice * static_cast<double>(slices);
  };
  int64_t best = 1;
  double best_cost = cost(1, steps);
  bool best_in = min_groups <= groups && (max_groups == 0 || groups <= max_groups);
  for (int64_t split = 2; split <= most; ++split) {
    const int64_t per = (steps + split - 1) / split; // tk steps per slice
    const int64_t slices = (steps + per - 1) / per;   // no empty slice
    if (slices != split) continue;
    const bool in = groups * slices >= min_groups &&
                    (max_groups == 0 || groups * slices <= max_groups);
    const double c = cost(slices, per);
    if ((in && !best_in) || (in == best_in && c < best_cost)) best = slices, best_cost = c, best_in = in;
  }
  return static_cast<int>(best);
}

namespace {

// The part every override spec shares: a trailing `!` (apply everywhere) is removed from `spec`
// into `everywhere`; true when what is left is `naive`, the complete reference spec.
bool override_head(std::string_view &spec, bool *everywhere) {
  if (!spec.empty() && spec.back() == '!') {
    *everywhere = true;
    spec.remove_suffix(1);
  }
  return spec == "naive";
}

} // namespace

bool parse_contraction_override(std::string_view spec, ContractionSchedule *out) {
  ContractionSchedule r;
  r.reason = fmt::format("--contraction {}", spec);
  if (override_head(spec, &r.everywhere)) {
    *out = r;
    return true;
  }
  const std::string text(spec);
  char name[16] = {0};
  TileConfig t;
  int split = 0, used = 0; // 0: no :kS, split-K as the table would choose
  if (std::sscanf(text.c_str(), "%15[a-z]:%dx%dx%d:%dx%d%n", name, &t.tm, &t.tn, &t.tk, &t.rm,
                  &t.rn, &used) != 6)
    return false;
  // Optional fields, each at most once: :kS split-K slices, :vL lanes, :sN staging buffers.
  bool seen[3] = {false, false, false};
  for (size_t at = static_cast<size_t>(used); at < text.size();) {
    int value = 0, n = 0;
    char key = 0;
    if (std::sscanf(text.c_str() + at, ":%c%d%n", &key, &value, &n) != 2) return false;
    const char *keys = "kvs";
    const char *k = std::strchr(keys, key);
    if (!k || seen[k - keys]) return false;
    seen[k - keys] = true;
    if (key == 'k' && (value < 1 || value > 64)) return false;
    if (key == 'v' && value != 1 && value != 2 && value != 4) return false;
    if (key == 's' && value != 1 && value != 2) return false;
    (key == 'k' ? split : key == 'v' ? t.lanes : t.stages) = value;
    at += static_cast<size_t>(n);
  }
  r.split_k = split;
  if (std::string_view(name) == "tiled") r.strategy = Strategy::tiled;
  else if (std::string_view(name) == "registers") r.strategy = Strategy::registers;
  else if (std::string_view(name) == "matrix") r.strategy = Strategy::matrix;
  else if (std::string_view(name) == "coop") r.strategy = Strategy::coop;
  else return false;
  if (split > 1 && r.strategy != Strategy::tiled && r.strategy != Strategy::coop)
    return false; // split-K is a tiled or coop variant
  if (r.strategy == Strategy::coop &&
      (t.rm % kCoopM != 0 || t.rn % kCoopN != 0 || t.tk % kCoopK != 0))
    return false; // whole cooperative matrices per subgroup and per k step
  if (t.tm <= 0 || t.tn <= 0 || t.tk <= 0 || t.rm <= 0 || t.rn <= 0 || t.tm % t.rm != 0 ||
      t.tn % t.rn != 0 || t.tm > 256 || t.tn > 256 || t.tk > 256)
    return false;
  r.tile = t;
  *out = r;
  return true;
}

ContractionSchedule pick_contraction(const kir::TargetDesc &t, ScheduleMode mode,
                                     const ContractionShape &s,
                                     const ContractionSchedule *override) {
  ContractionSchedule out;
  if (mode == ScheduleMode::naive) {
    out.reason = "--schedule naive";
    return out;
  }
  ContractionSchedule table = from_table(t, s);
  if (override && !override->reason.empty() && s.K > 0 &&
      (override->everywhere || table.strategy != Strategy::naive)) {
    const TileConfig &o = override->tile;
    const bool coop = override->strategy == Strategy::coop;
    const bool fits = override->strategy == Strategy::naive ||
                      (coop ? coop_available(t, s) && coop_shared_bytes(o) <= t.shared_memory_bytes &&
                                  coop_invocations(o, t) <= t.max_workgroup_invocations
                            : static_cast<uint32_t>(o.invocations()) <= t.max_workgroup_invocations &&
                                  (override->strategy != Strategy::tiled ||
                                   o.shared_bytes() <= t.shared_memory_bytes));
    if (fits) {
      ContractionSchedule o = *override;
      if (o.split_k == 0)
        o.split_k = o.strategy == Strategy::tiled  ? pick_split_k(t, s, o.tile)
                    : o.strategy == Strategy::coop ? pick_split_k(t, s, o.tile, 0, 0,
                                                                  coop_invocations(o.tile, t))
                                                   : 1;
      return o;
    }
  }
  return table;
}

// ---- row reductions ---------------------------------------------------------------------------

const char *to_string(RowStrategy s) {
  switch (s) {
  case RowStrategy::naive: return "naive";
  case RowStrategy::workgroup_rows: return "workgroup_rows";
  }
  return "?";
}

namespace {

// One row of the row-reduction table: applies to a target whose subgroup size is `subgroup`
// (0: any) and to rows of at least `min_len` elements; the first row that applies wins, none
// means naive. Rows shorter than a subgroup keep one invocation per row.
struct RowReductionRow {
  const char *name;
  uint32_t subgroup;
  int64_t min_len;
  RowStrategy strategy;
  uint32_t workgroup;
};

// NVIDIA: 256 invocations for long rows (bert-base layer norms of 768), 128 for rows of 64+
// (attention softmax rows of 128), one subgroup for short rows. Lavapipe: no row (measured in
// bench/RESULTS.md: llvmpipe runs a workgroup's invocations as SIMD lanes of one thread and its
// barriers switch coroutines, so one invocation per row is faster there).
constexpr std::array<RowReductionRow, 3> kRowReductionTable{{
    {"nvidia-long", 32, 512, RowStrategy::workgroup_rows, 256},
    {"nvidia", 32, 64, RowStrategy::workgroup_rows, 128},
    {"nvidia-short", 32, 16, RowStrategy::workgroup_rows, 32},
}};

constexpr uint32_t kRowSubgroupOps = kir::subgroup_ops::basic | kir::subgroup_ops::arithmetic;

// Why the target or shape rules out every non-naive strategy (empty: they do not).
std::string row_rule(const kir::TargetDesc &t, const RowReductionShape &s) {
  if (s.len >= kRowSplitMin) return fmt::format("rows of {} elements take the split path", s.len);
  if (!s.contiguous) return "the row is not contiguous";
  if (s.rows <= 0 || s.len <= 0) return "empty";
  if ((t.subgroup_operations & kRowSubgroupOps) != kRowSubgroupOps)
    return fmt::format("{} lacks subgroup arithmetic", t.name);
  return {};
}

bool fits(const kir::TargetDesc &t, uint32_t workgroup) {
  // Shared memory: one f32 partial per invocation and stage (at most three stages).
  return workgroup <= t.max_workgroup_invocations && workgroup <= t.max_workgroup_size[0] &&
         3 * 4 * workgroup <= t.shared_memory_bytes;
}

} // namespace

bool parse_row_reduction_override(std::string_view spec, RowReductionSchedule *out) {
  RowReductionSchedule r;
  r.reason = fmt::format("--row-reduction {}", spec);
  if (override_head(spec, &r.everywhere)) {
    *out = r;
    return true;
  }
  constexpr std::string_view prefix = "workgroup_rows:";
  if (spec.substr(0, prefix.size()) != prefix) return false;
  const std::string num(spec.substr(prefix.size()));
  if (num.empty() || num.size() > 4 || num.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int wg = std::stoi(num);
  if (wg < 1 || wg > 1024 || (wg & (wg - 1)) != 0) return false;
  r.strategy = RowStrategy::workgroup_rows;
  r.workgroup = static_cast<uint32_t>(wg);
  *out = r;
  return true;
}

RowReductionSchedule pick_row_reduction(const kir::TargetDesc &t, ScheduleMode mode,
                                        const RowReductionShape &s,
                                        const RowReductionSchedule *override) {
  RowReductionSchedule out;
  if (mode == ScheduleMode::naive) {
    out.reason = "--schedule naive";
    return out;
  }
  out.reason = row_rule(t, s);
  if (!out.reason.empty()) return out;
  RowReductionSchedule table;
  table.reason = fmt::format("no table row for {} rows of {} on {}", s.rows, s.len, t.name);
  for (const RowReductionRow &r : kRowReductionTable) {
    if ((r.subgroup != 0 && t.subgroup_size != r.subgroup) || s.len < r.min_len ||
        !fits(t, r.workgroup))
      continue;
    table = {r.strategy, r.workgroup, r.name, false};
    break;
  }
  if (override && !override->reason.empty() &&
      (override->everywhere || table.strategy != RowStrategy::naive) &&
      (override->strategy == RowStrategy::naive || fits(t, override->workgroup)))
    return *override;
  return table;
}

// ---- windows ----------------------------------------------------------------------------------

const char *to_string(WindowStrategy s) {
  switch (s) {
  case WindowStrategy::naive: return "naive";
  case WindowStrategy::window_rows: return "window_rows";
  }
  return "?";
}

namespace {

// One row of the window table: applies to a target whose subgroup size is `subgroup` (0: any),
// to pooling (`weighted` false) or depthwise convolution (true), with rows of at least
// `min_out_w` outputs; the first row that applies wins, none means naive.
struct WindowRow {
  const char *name;
  uint32_t subgroup;
  bool weighted;
  int64_t min_out_w;
  uint32_t rows;
  bool hoist;
};

// Lavapipe (subgroup 8), measured in bench/RESULTS.md (bench/window): every block guarded (a
// group of 8 SIMD lanes mixing interior and edge blocks would run both copies of a hoisted
// body: hoisted was 1.2-1.5x slower than guarded at the same R); R = 8 for depthwise
// convolutions (mobilenet_v2's depthwise kernels 1.7x faster than R = 4, 2-3x faster than
// naive), R = 4 for pools (squeezenet's stride-2 max pools: R = 8 slower than R = 4, whose 9
// columns and 4 accumulators per row fit llvmpipe's registers). NVIDIA (subgroup 32):
// depthwise convolutions R = 4, interior blocks unguarded (mobilenet_v2 batch 32 fp16 on an H100,
// same run: 1.773 -> 1.420 ms per call, R = 2: 1.494; bench/RESULTS.md 2026-12-07); its pools
// measured even (resnet50's one max pool) and keep the naive kernels, as does the portable
// target (unmeasured). The cpu target (subgroup 1,
// the C backend) takes R = 8 with interior blocks unguarded for both: mobilenet_v2 on one
// thread 72 -> 30 ms (R = 4: 32 ms; R = 4 guarded: 45 ms), squeezenet's max pools 2.8x faster
// than naive (bench/RESULTS.md).
constexpr std::array<WindowRow, 5> kWindowTable{{
    {"nvidia-depthwise", 32, true, 4, 4, true},
    {"lavapipe-depthwise", 8, true, 4, 8, false},
    {"lavapipe-pool", 8, false, 4, 4, false},
    {"cpu-depthwise", 1, true, 4, 8, true},
    {"cpu-pool", 1, false, 4, 8, true},
}};

} // namespace

bool parse_window_override(std::string_view spec, WindowSchedule *out) {
  WindowSchedule r;
  r.reason = fmt::format("--window {}", spec);
  if (override_head(spec, &r.everywhere)) {
    *out = r;
    return true;
  }
  constexpr std::string_view prefix = "window_rows:", guarded = ":guarded";
  if (spec.substr(0, prefix.size()) != prefix) return false;
  spec.remove_prefix(prefix.size());
  if (spec.size() > guarded.size() && spec.substr(spec.size() - guarded.size()) == guarded) {
    r.hoist = false;
    spec.remove_suffix(guarded.size());
  }
  const std::string num(spec);
  if (num.empty() || num.size() > 2 || num.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int rows = std::stoi(num);
  if (rows < 1 || rows > static_cast<int>(kWindowMaxRows)) return false;
  r.strategy = WindowStrategy::window_rows;
  r.rows = static_cast<uint32_t>(rows);
  *out = r;
  return true;
}

WindowSchedule pick_window(const kir::TargetDesc &t, ScheduleMode mode, const WindowShape &s,
                           const WindowSchedule *override) {
  WindowSchedule out;
  if (mode == ScheduleMode::naive) {
    out.reason = "--schedule naive";
    return out;
  }
  if (s.planes <= 0 || s.out_w <= 0 || s.taps <= 0) {
    out.reason = "empty";
    return out;
  }
  if (s.taps > kWindowMaxTaps) {
    out.reason = fmt::format("windows of {} elements are not unrolled", s.taps);
    return out;
  }
  if (s.out_w < 2) {
    out.reason = "rows of one output";
    return out;
  }
  WindowSchedule table;
  table.reason = fmt::format("no table row for {} windows of rows of {} on {}",
                             s.weighted ? "depthwise" : "pooling", s.out_w, t.name);
  for (const WindowRow &r : kWindowTable) {
    if ((r.subgroup != 0 && t.subgroup_size != r.subgroup) || r.weighted != s.weighted ||
        s.out_w < r.min_out_w)
      continue;
    table = {WindowStrategy::window_rows, r.rows, r.hoist, r.name, false};
    break;
  }
  if (override && !override->reason.empty() &&
      (override->everywhere || table.strategy != WindowStrategy::naive))
    return *override;
  return table;
}

// ---- parallel kernels ---------------------------------------------------------------------------

const char *to_string(ParallelStrategy s) {
  switch (s) {
  case ParallelStrategy::naive: return "naive";
  case ParallelStrategy::blocked: return "blocked";
  case ParallelStrategy::rows: return "rows";
  }
  return "?";
}

namespace {

// One row of the parallel table: blocked with E = `elements` for a target whose subgroup size is
// `subgroup` (0: any) and kernels of at least `min_count` elements; the first row that applies
// wins, none means naive.
struct ParallelRow {
  const char *name;
  uint32_t subgroup;
  int64_t min_count;
  uint32_t elements;
};

// Lavapipe (subgroup 8), measured in bench/RESULTS.md (bench/parallel): a broadcast add, a
// transpose, a concat and a gather ran 1.2-1.3x faster with E = 4 than naive from about 56k
// elements (E = 8 no better), 1.1-1.3x at 37k; below about 20k blocking was as often slower
// as faster (fewer invocations to spread over llvmpipe's threads), so smaller kernels have no
// row. NVIDIA and the portable target have no row: unmeasured there, so naive.
constexpr std::array<ParallelRow, 1> kParallelTable{{
    {"lavapipe", 8, 32768, 4},
}};

// Why the shape rules out blocking (empty: it does not). A blocked grid runs past the last
// element by up to a workgroup's E * invocations per grid row (rounding, the split into y), and
// those indices must still be i32: kernels over half the i32 range stay naive.
std::string parallel_rule(const ParallelShape &s) {
  if (s.loops) return "the per-element body loops";
  if (s.count < 2) return fmt::format("{} element(s)", s.count);
  if (s.count > std::numeric_limits<int32_t>::max() / 2)
    return fmt::format("{} elements: more than half the 32-bit index range", s.count);
  return {};
}

} // namespace

bool parse_parallel_override(std::string_view spec, ParallelSchedule *out) {
  ParallelSchedule r;
  r.reason = fmt::format("--parallel {}", spec);
  if (override_head(spec, &r.everywhere)) {
    *out = r;
    return true;
  }
  if (spec != "blocked:2" && spec != "blocked:4" && spec != "blocked:8") return false;
  r.strategy = ParallelStrategy::blocked;
  r.elements = static_cast<uint32_t>(spec.back() - '0');
  *out = r;
  return true;
}

ParallelSchedule pick_parallel(const kir::TargetDesc &t, ScheduleMode mode, const ParallelShape &s,
                               const ParallelSchedule *override) {
  ParallelSchedule out;
  if (mode == ScheduleMode::naive) {
    out.reason = "--schedule naive";
    return out;
  }
  out.reason = parallel_rule(s);
  if (!out.reason.empty()) return out;
  if (t.backend == "c" && !(override && !override->reason.empty())) {
    // The C backend: rows (emit_parallel falls back to naive where no row length fits).
    out.strategy = ParallelStrategy::rows;
    out.reason = "cpu: rows";
    return out;
  }
  ParallelSchedule table;
  table.reason = fmt::format("no table row for {} elements on {}", s.count, t.name);
  for (const ParallelRow &r : kParallelTable) {
    if ((r.subgroup != 0 && t.subgroup_size != r.subgroup) || s.count < r.min_count) continue;
    table = {ParallelStrategy::blocked, r.elements, r.name, false};
    break;
  }
  if (override && !override->reason.empty() &&
      (override->everywhere || table.strategy != ParallelStrategy::naive))
    return *override;
  return table;
}

} // namespace kiln::compiler
