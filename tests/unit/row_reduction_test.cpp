// Row reductions (compiler/definitions/row_reduction.cpp): softmax, log-softmax, normalisation and
// kiln.reduce over contiguous rows of odd lengths (1, 3, 7, 33, 128, 257, 768, 1000) and row
// counts, run on Vulkan (lavapipe in CI) with the workgroup_rows strategy forced at several
// workgroup sizes (one subgroup, several, rows shorter than the workgroup, rows many times
// longer) and compared with the reference executor; must-not-fire cases and the table.
#include "compiler/schedules/schedule.h"
#include "e2e_util.h"
#include "test_module.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace kiln {
namespace {

using compiler::RowStrategy;
using compiler::ScheduleMode;
using test::TestModule;

const int64_t kLengths[] = {1, 3, 7, 33, 128, 257, 768, 1000};
int64_t rows_for(int64_t len) { return 1 + (len * 7) % 5; } // 1 to 5 rows

// Workgroup sizes forced on every case: one lavapipe subgroup, several, the NVIDIA sizes.
const char *const kForced[] = {"workgroup_rows:8!", "workgroup_rows:32!", "workgroup_rows:128!",
                               "workgroup_rows:256!"};

// Runs `m` under every forced schedule (each must match the reference with every one of the
// module's `rows` row reductions on workgroup_rows), then under --schedule naive (none may).
void check_strategies(const Module &m, int rows, double rtol, double atol,
                      const std::vector<Tensor> &inputs = {}) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  for (const char *spec : kForced) {
    SCOPED_TRACE(spec);
    CompileOptions o;
    ASSERT_TRUE(compiler::parse_row_reduction_override(spec, &o.row_reduction_override));
    CompileStats st;
    test::expect_matches_reference(m, inputs, rtol, atol, test::lavapipe(), o, &st);
    EXPECT_EQ(st.workgroup_row_reductions, rows);
    EXPECT_EQ(st.naive_row_reductions, 0);
  }
  SCOPED_TRACE("--schedule naive");
  CompileOptions o;
  ASSERT_TRUE(
      compiler::parse_row_reduction_override("workgroup_rows:32!", &o.row_reduction_override));
  o.schedule = ScheduleMode::naive;
  CompileStats st;
  test::expect_matches_reference(m, inputs, rtol, atol, test::lavapipe(), o, &st);
  EXPECT_EQ(st.workgroup_row_reductions, 0);
  EXPECT_EQ(st.naive_row_reductions, rows);
}

Value *softmax(TestModule &t, Value *x, const char *kind, int64_t axis = -1) {
  return t.op("kiln.softmax", {x}, {{"kind", std::string(kind)}, {"axis", axis}});
}

Value *reduce(TestModule &t, Value *x, std::vector<int64_t> axes, const char *kind) {
  return t.op("kiln.reduce", {x, t.b.i64s(std::move(axes))},
              {{"kind", std::string(kind)}, {"keepdims", int64_t(0)}});
}

TEST(RowReduction, SoftmaxAndLogSoftmaxOddRows) {
  TestModule t;
  std::vector<Value *> outs;
  for (int64_t len : kLengths) {
    Value *x = t.param(DType::f32, {rows_for(len), len}, fmt::format("x{}", len));
    outs.push_back(softmax(t, x, "softmax"));
    outs.push_back(softmax(t, x, "log_softmax"));
  }
  // Rows of a 3-D tensor, and softmax over the trailing axes flattened (rows of 5 x 33).
  Value *y = t.param(DType::f32, {2, 3, 5, 33}, "y");
  outs.push_back(softmax(t, y, "softmax"));
  outs.push_back(t.op("kiln.softmax", {y}, {{"kind", std::string("log_softmax")},
                                            {"axis", int64_t(2)},
                                            {"flatten_trailing", int64_t(1)}}));
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 1e-4, 1e-6);
}

TEST(RowReduction, HalfPrecisionSoftmaxAndLayerNormKeepF32Statistics) {
  TestModule t;
  std::vector<Value *> outs;
  for (int64_t len : {int64_t(7), int64_t(257), int64_t(768)}) {
    Value *x = t.param(DType::f16, {3, len}, fmt::format("x{}", len));
    Value *sc = t.param(DType::f16, {len}, fmt::format("s{}", len));
    Value *bi = t.param(DType::f16, {len}, fmt::format("b{}", len));
    outs.push_back(softmax(t, x, "softmax"));
    outs.push_back(t.op("kiln.normalize", {x, sc, bi},
                        {{"axes", std::vector<int64_t>{1}}, {"epsilon", 1e-5},
                         {"kind", std::string("standard")}}));
    outs.push_back(reduce(t, x, {1}, "sum"));
  }
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 4e-3, 4e-3);
}

TEST(RowReduction, LayerNormRmsAndMvnOddRows) {
  TestModule t;
  std::vector<Value *> outs;
  for (int64_t len : kLengths) {
    Value *x = t.param(DType::f32, {rows_for(len), len}, fmt::format("x{}", len));
    Value *sc = t.param(DType::f32, {len}, fmt::format("s{}", len));
    Value *bi = t.param(DType::f32, {len}, fmt::format("b{}", len));
    outs.push_back(t.op("kiln.normalize", {x, sc, bi},
                        {{"axes", std::vector<int64_t>{1}}, {"epsilon", 1e-5},
                         {"kind", std::string("standard")}}));
    outs.push_back(t.op("kiln.normalize", {x, sc},
                        {{"axes", std::vector<int64_t>{-1}}, {"epsilon", 1e-6},
                         {"kind", std::string("rms")}}));
    outs.push_back(t.op("kiln.normalize", {x},
                        {{"axes", std::vector<int64_t>{1}}, {"epsilon", 1e-9},
                         {"kind", std::string("mvn")}}));
  }
  // A normalised block of two axes (rows of 3 x 11) with scale [3, 11] and a per-channel
  // parameter axis.
  Value *z = t.param(DType::f32, {4, 3, 11}, "z");
  Value *zs = t.param(DType::f32, {3, 11}, "zs");
  Value *c4 = t.param(DType::f32, {4}, "c4");
  outs.push_back(t.op("kiln.normalize", {z, zs, zs},
                      {{"axes", std::vector<int64_t>{1, 2}}, {"epsilon", 1e-5},
                       {"kind", std::string("standard")}}));
  outs.push_back(t.op("kiln.normalize", {z, c4, c4},
                      {{"axes", std::vector<int64_t>{1, 2}}, {"epsilon", 1e-5},
                       {"kind", std::string("standard")}, {"param_axis", int64_t(0)}}));
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 1e-4, 1e-4);
}

TEST(RowReduction, GroupNormOddGroups) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 6, 7, 11}, "x"); // 3 groups of 2 x 77
  Value *sc = t.param(DType::f32, {6}, "sc");
  Value *bi = t.param(DType::f32, {6}, "bi");
  Value *y = t.param(DType::f32, {3, 4, 33}, "y"); // 2 groups per image, per-group scale
  Value *gs = t.param(DType::f32, {2}, "gs");
  Value *z = t.param(DType::f32, {1, 3, 1}, "z"); // rows of 1
  Value *zs = t.param(DType::f32, {3}, "zs");
  t.g->results = {
      t.op("kiln.group_norm", {x, sc, bi}, {{"num_groups", int64_t(3)}, {"epsilon", 1e-5}}),
      t.op("kiln.group_norm", {y, gs, gs},
           {{"num_groups", int64_t(2)}, {"epsilon", 1e-5}, {"scale_per", std::string("group")}}),
      t.op("kiln.group_norm", {z, zs, zs}, {{"num_groups", int64_t(3)}, {"epsilon", 1e-5}})};
  check_strategies(t.m, 3, 1e-4, 1e-4);
}

TEST(RowReduction, ReduceKindsOddRows) {
  TestModule t;
  std::vector<Value *> outs;
  for (int64_t len : kLengths) {
    Value *x = t.param(DType::f32, {rows_for(len), len}, fmt::format("x{}", len));
    for (const char *k : {"sum", "mean", "max", "min", "l1", "l2", "sum_square", "log_sum_exp"})
      outs.push_back(reduce(t, x, {1}, k));
    if (len <= 33) outs.push_back(reduce(t, x, {1}, "prod")); // longer products underflow
  }
  // Every axis of a tensor (one row), and the two innermost axes of a 3-D one.
  Value *w = t.param(DType::f32, {3, 7, 9}, "w");
  outs.push_back(reduce(t, w, {0, 1, 2}, "sum"));
  outs.push_back(reduce(t, w, {1, 2}, "max"));
  Value *pos = t.op("kiln.add", {t.op("kiln.abs", {w}), t.b.scalar_f(DType::f32, 0.5)});
  outs.push_back(reduce(t, pos, {2}, "log_sum"));
  // lp_norm over rows of 9 (some elements zero), and rows that are all zero (zeros out).
  Value *zeros = t.op("kiln.relu", {t.op("kiln.neg", {t.op("kiln.abs", {w})})});
  for (int64_t p : {1, 2})
    for (Value *v : {t.op("kiln.relu", {w}), zeros})
      outs.push_back(t.op("kiln.lp_norm", {v}, {{"p", p}, {"axis", int64_t(-1)}}));
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 1e-4, 1e-4);
}

TEST(RowReduction, MaxMinPropagateNaN) {
  TestModule t;
  Value *x = t.param(DType::f32, {3, 40}, "x");
  t.g->results = {reduce(t, x, {1}, "max"), reduce(t, x, {1}, "min")};
  std::vector<float> v(120);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 13) - 6.0f;
  v[5] = NAN;       // row 0, first subgroup
  v[40 + 39] = NAN; // row 1, last element
  check_strategies(t.m, 2, 0, 0, {Tensor::from_f32s(v, {3, 40})});
}

// kiln.global_pool avg / max: one row per plane (planes of 1, 49, 63 and 169 elements).
TEST(RowReduction, GlobalAverageAndMaxPool) {
  TestModule t;
  std::vector<Value *> outs;
  for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {7, 7}, {7, 9}, {13, 13}}) {
    Value *x = t.param(DType::f32, {2, 3, h, w}, fmt::format("x{}x{}", h, w));
    outs.push_back(t.op("kiln.global_pool", {x}, {{"mode", std::string("avg")}}));
    outs.push_back(t.op("kiln.global_pool", {x}, {{"mode", std::string("max")}}));
  }
  t.g->results = outs;
  check_strategies(t.m, static_cast<int>(outs.size()), 1e-5, 1e-6);
}

// Must not fire: rows of 8192+ elements take the split path (counted by neither strategy), a
// non-contiguous reduced axis and integer reductions stay naive, and lavapipe's table picks
// naive (measured slower there).
TEST(RowReduction, MustNotFire) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  TestModule t;
  Value *big = t.param(DType::f32, {2, 9000}, "big");
  Value *x = t.param(DType::f32, {5, 33}, "x");
  Value *n = t.param(DType::i32, {4, 33}, "n");
  t.g->results = {softmax(t, big, "softmax"), reduce(t, big, {1}, "sum"),
                  softmax(t, x, "softmax", 0), reduce(t, x, {0}, "sum"), reduce(t, n, {1}, "sum")};
  CompileOptions forced;
  ASSERT_TRUE(compiler::parse_row_reduction_override("workgroup_rows:64!",
                                                     &forced.row_reduction_override));
  CompileStats st;
  test::expect_matches_reference(t.m, {}, 1e-4, 1e-4, test::lavapipe(), forced, &st);
  EXPECT_EQ(st.workgroup_row_reductions, 0);
  EXPECT_EQ(st.naive_row_reductions, 3);

  TestModule u;
  Value *y = u.param(DType::f32, {6, 128}, "y");
  u.g->results = {softmax(u, y, "softmax"), reduce(u, y, {1}, "mean")};
  test::expect_matches_reference(u.m, {}, 1e-4, 1e-5, test::lavapipe(), {}, &st);
  EXPECT_EQ(st.workgroup_row_reductions, 0);
  EXPECT_EQ(st.naive_row_reductions, 2);
}

TEST(RowReductionTable, PicksByTargetAndShape) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  const kir::TargetDesc *portable = kir::find_target("vulkan");
  ASSERT_TRUE(lp && nv && portable);
  auto pick = [](const kir::TargetDesc &t, ScheduleMode m, int64_t rows, int64_t len,
                 bool contiguous = true) {
    return compiler::pick_row_reduction(t, m, {rows, len, contiguous});
  };
  // bert-base: attention softmax rows of 128, layer norms of 768.
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1536, 128).strategy, RowStrategy::workgroup_rows);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1536, 128).workgroup, 128u);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 128, 768).workgroup, 256u);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 128, 4096).workgroup, 256u);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 128, 20).workgroup, 32u);
  // Must not fire: short rows, split-length rows, non-contiguous rows, --schedule naive,
  // lavapipe (measured), a target without subgroup arithmetic.
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4096, 8).strategy, RowStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4, 8192).strategy, RowStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4, 768, false).strategy, RowStrategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::naive, 128, 768).strategy, RowStrategy::naive);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 128, 768).strategy, RowStrategy::naive);
  compiler::RowReductionSchedule o;
  ASSERT_TRUE(compiler::parse_row_reduction_override("workgroup_rows:64!", &o));
  EXPECT_EQ(compiler::pick_row_reduction(*portable, ScheduleMode::automatic, {4, 768}, &o).strategy,
            RowStrategy::naive);
  EXPECT_EQ(compiler::pick_row_reduction(*lp, ScheduleMode::automatic, {4, 768}, &o).workgroup,
            64u);
  // Without `!` an override only replaces the table's non-naive choices.
  ASSERT_TRUE(compiler::parse_row_reduction_override("workgroup_rows:64", &o));
  EXPECT_EQ(compiler::pick_row_reduction(*lp, ScheduleMode::automatic, {4, 768}, &o).strategy,
            RowStrategy::naive);
  EXPECT_EQ(compiler::pick_row_reduction(*nv, ScheduleMode::automatic, {4, 768}, &o).workgroup,
            64u);
  for (const char *bad : {"workgroup_rows", "workgroup_rows:", "workgroup_rows:96",
                          "workgroup_rows:2048", "rows:64", "workgroup_rows:64x"})
    EXPECT_FALSE(compiler::parse_row_reduction_override(bad, &o)) << bad;
}

} // namespace
} // namespace kiln
