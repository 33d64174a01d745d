// Windows (compiler/definitions/window.cpp): max / average / Lp pooling and depthwise
// convolution on odd shapes (widths that are not multiples of R, pads, strides 2, dilation,
// ceil_mode, count_include_pad, 1-D and 3-D windows, a fused epilogue), run on Vulkan (lavapipe
// in CI) with window_rows forced at several R and compared with the reference executor;
// must-not-fire cases and the table. Sums are combined in the naive kernel's order, so the
// tolerances only allow for the driver contracting multiply-adds (and pow for Lp). The harness
// reads outputs into fresh host tensors and cannot poison the device buffers; every case has
// random non-zero inputs, so an output element left unwritten (zero) fails the comparison.
#include "compiler/schedules/schedule.h"
#include "e2e_util.h"
#include "test_module.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using compiler::ScheduleMode;
using compiler::WindowStrategy;
using test::TestModule;
using I = std::vector<int64_t>;

// R = 1 (no reuse), 3 (odd), 4 and 8, 16 (wider than most rows here), with bounds checks
// hoisted for interior blocks and without (every block guarded, lavapipe's table rows).
const char *const kForced[] = {"window_rows:1!",         "window_rows:3!",
                               "window_rows:4!",         "window_rows:8!",
                               "window_rows:16!",        "window_rows:1:guarded!",
                               "window_rows:3:guarded!", "window_rows:4:guarded!",
                               "window_rows:16:guarded!"};

// Runs `m` under every forced R (each of the module's `windows` windows must run window_rows
// and match the reference), then under --schedule naive (none may).
void check_strategies(const Module &m, int windows, double rtol, double atol) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  for (const char *spec : kForced) {
    SCOPED_TRACE(spec);
    CompileOptions o;
    ASSERT_TRUE(compiler::parse_window_override(spec, &o.window_override));
    CompileStats st;
    test::expect_matches_reference(m, {}, rtol, atol, test::lavapipe(), o, &st);
    EXPECT_EQ(st.window_rows_windows, windows);
    EXPECT_EQ(st.naive_windows, 0);
  }
  SCOPED_TRACE("--schedule naive");
  CompileOptions o;
  ASSERT_TRUE(compiler::parse_window_override("window_rows:4!", &o.window_override));
  o.schedule = ScheduleMode::naive;
  CompileStats st;
  test::expect_matches_reference(m, {}, rtol, atol, test::lavapipe(), o, &st);
  EXPECT_EQ(st.window_rows_windows, 0);
  EXPECT_EQ(st.naive_windows, windows);
}

Value *pool(TestModule &t, const char *kind, Value *x, I kernel, AttrMap extra = {}) {
  extra["kernel_shape"] = std::move(kernel);
  return t.op(kind, {x}, std::move(extra));
}

TEST(Window, MaxPoolPadsStridesDilationCeilMode) {
  TestModule t;
  Value *a = t.param(DType::f32, {2, 3, 7, 13}, "a");
  Value *b = t.param(DType::f32, {1, 2, 15, 17}, "b");
  Value *c = t.param(DType::f32, {2, 3, 33}, "c");
  t.g->results = {
      pool(t, "kiln.max_pool", a, {3, 3}, {{"pads", I{1, 1, 1, 1}}}),
      // squeezenet's pools: 3x3 stride 2, ceil_mode (the last window overhangs the input).
      pool(t, "kiln.max_pool", b, {3, 3}, {{"strides", I{2, 2}}, {"ceil_mode", int64_t(1)}}),
      pool(t, "kiln.max_pool", b, {2, 3},
           {{"dilations", I{2, 2}}, {"pads", I{0, 2, 1, 1}}, {"strides", I{1, 2}}}),
      // 1-D, asymmetric pads, stride 3.
      pool(t, "kiln.max_pool", c, {4}, {{"pads", I{2, 1}}, {"strides", I{3}}}),
  };
  check_strategies(t.m, 4, 0, 0);
}

TEST(Window, AveragePoolCountIncludePadAndCeilMode) {
  TestModule t;
  Value *a = t.param(DType::f32, {2, 3, 9, 11}, "a");
  Value *b = t.param(DType::f32, {1, 2, 4, 5, 7}, "b");
  std::vector<Value *> outs;
  for (int64_t cip : {0, 1}) {
    outs.push_back(pool(t, "kiln.avg_pool", a, {3, 3},
                        {{"pads", I{1, 1, 1, 1}}, {"count_include_pad", cip}}));
    outs.push_back(pool(t, "kiln.avg_pool", a, {3, 2},
                        {{"pads", I{1, 0, 1, 1}},
                         {"strides", I{2, 2}},
                         {"ceil_mode", int64_t(1)},
                         {"count_include_pad", cip}}));
    // 3-D: the outer kernel axes unrolled with the row.
    outs.push_back(pool(t, "kiln.avg_pool", b, {2, 3, 3},
                        {{"pads", I{1, 1, 0, 0, 1, 2}}, {"count_include_pad", cip}}));
  }
  // Global-style window (the whole 9x11 plane: rows of one output stay naive, so not here).
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 1e-5, 1e-6);
}

TEST(Window, LpPool) {
  TestModule t;
  Value *a = t.param(DType::f32, {1, 3, 8, 10}, "a");
  std::vector<Value *> outs;
  for (int64_t p : {1, 2, 3})
    outs.push_back(pool(t, "kiln.lp_pool", a, {3, 3},
                        {{"p", p}, {"pads", I{1, 1, 1, 1}}, {"strides", I{1, 2}}}));
  t.g->results = outs;
  check_strategies(t.m, 3, 1e-4, 1e-5);
}

Value *depthwise(TestModule &t, Value *x, Value *w, Value *b, AttrMap attrs) {
  attrs["group"] = x->type.dims[1];
  std::vector<Value *> in{x, w};
  if (b) in.push_back(b);
  return t.op("kiln.conv", in, std::move(attrs));
}

TEST(Window, DepthwiseConvolution) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 5, 9, 11}, "x");
  Value *w3 = t.param(DType::f32, {5, 1, 3, 3}, "w3");
  Value *w5 = t.param(DType::f32, {5, 1, 5, 5}, "w5");
  Value *b = t.param(DType::f32, {5}, "b");
  Value *x1 = t.param(DType::f32, {1, 4, 37}, "x1");
  Value *w1 = t.param(DType::f32, {4, 1, 3}, "w1");
  t.g->results = {
      // mobilenet_v2's two shapes: 3x3 stride 1 and stride 2, pads 1 (with a fused relu).
      t.op("kiln.relu", {depthwise(t, x, w3, b, {{"pads", I{1, 1, 1, 1}}})}),
      depthwise(t, x, w3, b, {{"pads", I{1, 1, 1, 1}}, {"strides", I{2, 2}}}),
      depthwise(t, x, w3, nullptr, {{"dilations", I{2, 2}}, {"pads", I{2, 1, 0, 2}}}),
      depthwise(t, x, w5, b, {{"pads", I{2, 2, 2, 2}}, {"strides", I{1, 2}}}),
      depthwise(t, x1, w1, nullptr, {{"pads", I{1, 1}}}),
  };
  check_strategies(t.m, 5, 1e-5, 1e-5);
}

TEST(Window, HalfPrecisionAccumulatesInF32) {
  TestModule t;
  Value *x = t.param(DType::f16, {1, 3, 6, 10}, "x");
  Value *w = t.param(DType::f16, {3, 1, 3, 3}, "w");
  t.g->results = {depthwise(t, x, w, nullptr, {{"pads", I{1, 1, 1, 1}}}),
                  pool(t, "kiln.avg_pool", x, {3, 3}, {{"pads", I{1, 1, 1, 1}}}),
                  pool(t, "kiln.max_pool", x, {2, 2}, {{"strides", I{2, 2}}})};
  check_strategies(t.m, 3, 4e-3, 4e-3);
}

// Must not fire, even forced: windows of more than 64 elements, rows of one output, grouped
// convolutions that are not depthwise (contractions) and depthwise multipliers above 1.
TEST(Window, MustNotFire) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  TestModule t;
  Value *x = t.param(DType::f32, {1, 4, 12, 12}, "x");
  Value *wg = t.param(DType::f32, {4, 2, 3, 3}, "wg");
  Value *wm = t.param(DType::f32, {8, 1, 3, 3}, "wm");
  t.g->results = {
      pool(t, "kiln.max_pool", x, {9, 9}),
      pool(t, "kiln.avg_pool", x, {3, 12}),
      t.op("kiln.conv", {x, wg}, {{"group", int64_t(2)}}),
      t.op("kiln.conv", {x, wm}, {{"group", int64_t(4)}}),
  };
  CompileOptions forced;
  ASSERT_TRUE(compiler::parse_window_override("window_rows:4!", &forced.window_override));
  CompileStats st;
  test::expect_matches_reference(t.m, {}, 1e-5, 1e-5, test::lavapipe(), forced, &st);
  EXPECT_EQ(st.window_rows_windows, 0);
  EXPECT_EQ(st.naive_windows, 2);
  EXPECT_EQ(st.naive_contractions + st.register_contractions + st.tiled_contractions +
                st.matrix_contractions, 2);
}

TEST(WindowTable, PicksByTargetAndShape) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  const kir::TargetDesc *portable = kir::find_target("vulkan");
  ASSERT_TRUE(lp && nv && portable);
  auto pick = [](const kir::TargetDesc &t, ScheduleMode m, int64_t out_w, int64_t taps,
                 bool weighted) {
    return compiler::pick_window(t, m, {64, out_w, out_w, taps, weighted});
  };
  // Lavapipe (measured, bench/RESULTS.md): every block guarded, R = 8 for depthwise
  // convolutions and R = 4 for pools with rows of at least 4 outputs.
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 56, 9, true).strategy,
            WindowStrategy::window_rows);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 56, 9, true).rows, 8u);
  EXPECT_FALSE(pick(*lp, ScheduleMode::automatic, 56, 9, true).hoist);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 55, 9, false).rows, 4u);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 3, 9, false).strategy, WindowStrategy::naive);
  // Rules: --schedule naive, windows over 64 elements, rows of one output.
  EXPECT_EQ(pick(*lp, ScheduleMode::naive, 56, 9, true).strategy, WindowStrategy::naive);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 56, 81, true).strategy, WindowStrategy::naive);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 1, 9, true).strategy, WindowStrategy::naive);
  // NVIDIA (measured on an H100, bench/RESULTS.md): depthwise R = 4 with interior blocks
  // unguarded; its pools and the portable target keep the naive kernels.
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 56, 9, true).strategy, WindowStrategy::window_rows);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 56, 9, true).rows, 4u);
  EXPECT_TRUE(pick(*nv, ScheduleMode::automatic, 56, 9, true).hoist);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 56, 9, false).strategy, WindowStrategy::naive);
  EXPECT_EQ(pick(*portable, ScheduleMode::automatic, 56, 9, false).strategy,
            WindowStrategy::naive);
  compiler::WindowSchedule o;
  ASSERT_TRUE(compiler::parse_window_override("window_rows:5!", &o));
  EXPECT_EQ(compiler::pick_window(*nv, ScheduleMode::automatic, {4, 1, 20, 9, true}, &o).rows, 5u);
  EXPECT_EQ(
      compiler::pick_window(*nv, ScheduleMode::automatic, {4, 1, 20, 81, true}, &o).strategy,
      WindowStrategy::naive);
  // Without `!` an override only replaces the table's non-naive choices (an NVIDIA pool).
  ASSERT_TRUE(compiler::parse_window_override("window_rows:5", &o));
  EXPECT_EQ(compiler::pick_window(*nv, ScheduleMode::automatic, {4, 1, 20, 9, false}, &o).strategy,
            WindowStrategy::naive);
  EXPECT_EQ(compiler::pick_window(*nv, ScheduleMode::automatic, {4, 1, 20, 9, true}, &o).rows, 5u);
  ASSERT_TRUE(compiler::parse_window_override("window_rows:6:guarded!", &o));
  EXPECT_EQ(o.rows, 6u);
  EXPECT_FALSE(o.hoist);
  EXPECT_TRUE(o.everywhere);
  ASSERT_TRUE(compiler::parse_window_override("window_rows:6", &o));
  EXPECT_TRUE(o.hoist);
  ASSERT_TRUE(compiler::parse_window_override("naive", &o));
  EXPECT_EQ(o.strategy, WindowStrategy::naive);
  for (const char *bad : {"window_rows", "window_rows:", "window_rows:0", "window_rows:17",
                          "rows:4", "window_rows:4x", "window_rows:-1", "window_rows::guarded",
                          "window_rows:4:guard", "window_rows:guarded"})
    EXPECT_FALSE(compiler::parse_window_override(bad, &o)) << bad;
}

} // namespace
} // namespace kiln
