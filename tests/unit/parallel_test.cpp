// Parallel kernels (compiler/definitions/parallel.cpp): elementwise maps with broadcast, a fused
// epilogue, casts, gathers, transposes, concats, pads and slices on odd sizes (1, 7, 33, 257 and
// partial last blocks), run on Vulkan (lavapipe in CI) with blocked forced at each E and compared
// with the reference executor; a grid split into y; must-not-fire cases and the table. Inputs are
// random and non-zero, so an element no invocation wrote (zero) fails the comparison.
#include "compiler/schedules/schedule.h"
#include "e2e_util.h"
#include "test_module.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using compiler::ParallelStrategy;
using compiler::ScheduleMode;
using test::TestModule;
using I = std::vector<int64_t>;

CompileOptions forced(const char *spec) {
  CompileOptions o;
  EXPECT_TRUE(compiler::parse_parallel_override(spec, &o.parallel_override)) << spec;
  return o;
}

// Runs `m` with every blocked E forced (`kernels` parallel kernels, all blocked, and results
// equal to the reference), then under --schedule naive (none blocked).
void check_strategies(const Module &m, int kernels) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  for (const char *spec : {"blocked:2!", "blocked:4!", "blocked:8!"}) {
    SCOPED_TRACE(spec);
    CompileStats st;
    test::expect_matches_reference(m, {}, 1e-6, 1e-7, test::lavapipe(), forced(spec), &st);
    EXPECT_EQ(st.blocked_parallel, kernels);
    EXPECT_EQ(st.naive_parallel, 0);
  }
  SCOPED_TRACE("--schedule naive");
  CompileOptions o = forced("blocked:4!");
  o.schedule = ScheduleMode::naive;
  CompileStats st;
  test::expect_matches_reference(m, {}, 1e-6, 1e-7, test::lavapipe(), o, &st);
  EXPECT_EQ(st.blocked_parallel, 0);
  EXPECT_EQ(st.naive_parallel, kernels);
}

TEST(Parallel, ElementwiseBroadcastAndEpilogue) {
  TestModule t;
  Value *a = t.param(DType::f32, {3, 257, 33}, "a");
  Value *b = t.param(DType::f32, {257, 1}, "b");
  Value *c = t.param(DType::f32, {7, 1}, "c");
  Value *d = t.param(DType::f32, {7, 33}, "d");
  // add (broadcast) with relu and mul fused into its store; a cast; a map over 7 elements.
  Value *sum = t.op("kiln.relu", {t.op("kiln.add", {a, b})});
  t.g->results = {t.op("kiln.mul", {sum, a}), t.op("kiln.cast", {d}, {{"to", DType::i32}}),
                  t.op("kiln.neg", {c}), t.op("kiln.abs", {t.op("kiln.sub", {d, c})})};
  check_strategies(t.m, 4);
}

TEST(Parallel, DataMovement) {
  TestModule t;
  Value *x = t.param(DType::f32, {5, 7, 33}, "x");
  Value *ix = t.param(DType::i64, {3, 2}, "ix");
  t.g->results = {
      t.op("kiln.transpose", {x}, {{"perm", I{2, 0, 1}}}),
      t.op("kiln.concat", {x, t.op("kiln.neg", {x})}, {{"axis", int64_t(1)}}),
      t.op("kiln.gather", {x, ix}, {{"axis", int64_t(1)}}),
      t.op("kiln.pad", {x, t.b.i64s({0, 1, 2, 0, 2, 1})}, {{"mode", std::string("reflect")}}),
      t.op("kiln.slice", {x, t.b.i64s({-1, 1}), t.b.i64s({-100, 33}), t.b.i64s({2, 0}),
                          t.b.i64s({-1, 3})}),
  };
  // Six kernels: the concat's operands each write their slice (the neg in place, x as a copy).
  check_strategies(t.m, 6);
}

// Workgroups of one invocation: 140,001 elements in blocks of 2 need 70,001 workgroups, more than
// a grid dimension holds, so the grid splits into y (as the naive kernel's does).
TEST(Parallel, GridSplitIntoY) {
  TestModule t;
  Value *x = t.param(DType::f32, {140001}, "x");
  t.g->results = {t.op("kiln.neg", {x})};
  CompileOptions o = forced("blocked:2!");
  o.workgroup_size = 1;
  CompileStats st;
  test::expect_matches_reference(t.m, {}, 0, 0, test::lavapipe(), o, &st);
  EXPECT_EQ(st.blocked_parallel, 1);
}

// Must not fire, even forced: a kernel whose per-element body loops (a reduction with one
// invocation per output: blocking would multiply its loop count), a single element, and the
// window_rows kernel of a pool (its own definition's layout: not a parallel kernel at all).
TEST(Parallel, MustNotFire) {
  TestModule t;
  Value *x = t.param(DType::f32, {3, 40, 5}, "x");
  Value *s = t.param(DType::f32, {1}, "s");
  Value *p = t.param(DType::f32, {1, 4, 12, 12}, "p");
  t.g->results = {t.op("kiln.reduce", {x, t.b.i64s({1})}, {{"kind", std::string("sum")}}),
                  t.op("kiln.neg", {s}),
                  t.op("kiln.max_pool", {p}, {{"kernel_shape", I{3, 3}}})};
  CompileStats st;
  test::expect_matches_reference(t.m, {}, 1e-5, 1e-5, test::lavapipe(), forced("blocked:8!"),
                                 &st);
  EXPECT_EQ(st.blocked_parallel, 0);
  EXPECT_EQ(st.naive_parallel, 2);
  EXPECT_EQ(st.window_rows_windows, 1);
}

TEST(ParallelTable, PicksByTargetAndShape) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  const kir::TargetDesc *portable = kir::find_target("vulkan");
  ASSERT_TRUE(lp && nv && portable);
  auto pick = [](const kir::TargetDesc &t, ScheduleMode m, int64_t count, bool loops,
                 const compiler::ParallelSchedule *o = nullptr) {
    return compiler::pick_parallel(t, m, {count, loops}, o);
  };
  // Lavapipe (measured, bench/RESULTS.md): blocked with E = 4 from 32,768 elements.
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 1 << 20, false).strategy,
            ParallelStrategy::blocked);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 32768, false).elements, 4u);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 32767, false).strategy, ParallelStrategy::naive);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 1 << 20, true).strategy, ParallelStrategy::naive);
  EXPECT_EQ(pick(*lp, ScheduleMode::naive, 1 << 20, false).strategy, ParallelStrategy::naive);
  // No NVIDIA or portable row (unmeasured there).
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1 << 20, false).strategy,
            ParallelStrategy::naive);
  EXPECT_EQ(pick(*portable, ScheduleMode::automatic, 1 << 20, false).strategy,
            ParallelStrategy::naive);
  compiler::ParallelSchedule o;
  ASSERT_TRUE(compiler::parse_parallel_override("blocked:8!", &o));
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1000, false, &o).strategy,
            ParallelStrategy::blocked);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1000, false, &o).elements, 8u);
  // Rules before the table and the override: --schedule naive, bodies with loops, one element,
  // over half the i32 range.
  EXPECT_EQ(pick(*nv, ScheduleMode::naive, 1000, false, &o).strategy, ParallelStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1000, true, &o).strategy,
            ParallelStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1, false, &o).strategy, ParallelStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, int64_t(1) << 30, false, &o).strategy,
            ParallelStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, (int64_t(1) << 30) - 1, false, &o).strategy,
            ParallelStrategy::blocked);
  // Without `!` an override only replaces the table's non-naive choices.
  ASSERT_TRUE(compiler::parse_parallel_override("blocked:2", &o));
  EXPECT_FALSE(o.everywhere);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1000, false, &o).strategy,
            ParallelStrategy::naive);
  ASSERT_TRUE(compiler::parse_parallel_override("naive!", &o));
  EXPECT_EQ(o.strategy, ParallelStrategy::naive);
  EXPECT_TRUE(o.everywhere);
  for (const char *bad : {"blocked", "blocked:", "blocked:1", "blocked:3", "blocked:16",
                          "blocked:4x", "blocked:-4", "block:4", "naive:4", "", "!"})
    EXPECT_FALSE(compiler::parse_parallel_override(bad, &o)) << bad;
}

} // namespace
} // namespace kiln
