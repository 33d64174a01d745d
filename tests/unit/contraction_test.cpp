// Contraction strategies (compiler/definitions/contraction.cpp): matmul, gemm and convolution on shapes that
// are not multiples of any tile (1, 7, 33, 257), run on Vulkan (lavapipe in CI) under every
// strategy and compared with the reference executor; the strategy table and its overrides.
#include "compiler/schedules/schedule.h"
#include "e2e_util.h"
#include "support/half.h"
#include "test_module.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

using compiler::ContractionSchedule;
using compiler::Strategy;
using test::TestModule;

// The forced schedules every case runs under, and the stats counter each must move.
struct Forced {
  const char *spec;
  Strategy strategy;
  bool split_k = false; // every contraction must also run as split-K
};
const Forced kForced[] = {
    {"naive", Strategy::naive},
    {"registers:32x32x1:4x4!", Strategy::registers},
    {"registers:64x64x1:8x8!", Strategy::registers},
    {"registers:16x64x1:2x8!", Strategy::registers},
    {"tiled:32x32x16:4x4!", Strategy::tiled},
    {"tiled:64x32x8:4x4!", Strategy::tiled},
    {"tiled:16x16x4:2x2!", Strategy::tiled},
    {"tiled:32x32x16:4x4:k3!", Strategy::tiled, true},
    {"tiled:16x16x4:2x2:k64!", Strategy::tiled, true},
    // tk a whole number of convolution windows (3x3, 3x2, 4): k decomposes per slice.
    {"tiled:32x32x18:4x4!", Strategy::tiled},
    {"tiled:16x16x36:2x2:k2!", Strategy::tiled, true},
    // Staging variants: scalar and 2-lane shared loads, one staging buffer.
    {"tiled:32x32x16:4x4:v1!", Strategy::tiled},
    {"tiled:32x32x8:2x4:v2:s1!", Strategy::tiled},
    {"tiled:64x32x18:4x4:s1!", Strategy::tiled},
    {"tiled:32x32x16:4x4:s1:k3!", Strategy::tiled, true},
};

int count_of(const CompileStats &s, Strategy st) {
  switch (st) {
  case Strategy::naive: return s.naive_contractions;
  case Strategy::tiled: return s.tiled_contractions;
  case Strategy::registers: return s.register_contractions;
  case Strategy::matrix: return s.matrix_contractions;
  case Strategy::coop: return s.coop_contractions;
  }
  return -1;
}

// Runs `m` under every forced schedule; each must match the reference and every contraction
// of the module (`contractions`) must have used the forced strategy. With `kernels` >= 0 the
// artifact must also have exactly that many dispatches (plus one per contraction under
// split-K, the kernel adding the slices).
void check_all_strategies(const Module &m, int contractions, double rtol = 1e-4,
                          double atol = 1e-5, int kernels = -1) {
  if (!test::vulkan_device()) GTEST_SKIP() << "no Vulkan device";
  for (const Forced &f : kForced) {
    SCOPED_TRACE(f.spec);
    CompileOptions o;
    ASSERT_TRUE(compiler::parse_contraction_override(f.spec, &o.contraction_override));
    CompileStats st;
    test::expect_matches_reference(m, {}, rtol, atol, test::lavapipe(), o, &st);
    EXPECT_EQ(count_of(st, f.strategy), contractions);
    EXPECT_EQ(st.split_k_contractions, f.split_k ? contractions : 0);
    if (kernels >= 0) {
      EXPECT_EQ(st.dispatches, kernels + (f.split_k ? contractions : 0));
    }
  }
}

TEST(Contraction, MatMulOddShapes) {
  TestModule t;
  Value *a = t.param(DType::f32, {7, 33}, "a");
  Value *b = t.param(DType::f32, {33, 257}, "b");
  Value *c = t.param(DType::f32, {1, 5}, "c");
  Value *d = t.param(DType::f32, {5, 1}, "d");
  Value *e = t.param(DType::f32, {33, 7}, "e");
  t.g->results = {t.op("kiln.matmul", {a, b}), t.op("kiln.matmul", {c, d}),
                  t.op("kiln.matmul", {d, c}), t.op("kiln.matmul", {e, a})};
  check_all_strategies(t.m, 4);
}

TEST(Contraction, BatchedMatMulBroadcastsBatchDims) {
  TestModule t;
  Value *a = t.param(DType::f32, {2, 1, 33, 17}, "a");
  Value *b = t.param(DType::f32, {3, 17, 7}, "b");
  Value *v = t.param(DType::f32, {17}, "v");
  Value *w = t.param(DType::f32, {1, 7, 1}, "w");
  // One B for all batch entries of A: the batch folds into M (a [2*3*33, 17] x [17, 7] product)
  // and a fused relu still sees the result's own layout.
  Value *a3 = t.param(DType::f32, {2, 3, 33, 17}, "a3");
  Value *b2 = t.param(DType::f32, {17, 7}, "b2");
  t.g->results = {t.op("kiln.matmul", {a, b}), t.op("kiln.matmul", {a, v}),
                  t.op("kiln.matmul", {b, w}), t.op("kiln.relu", {t.op("kiln.matmul", {a3, b2})})};
  check_all_strategies(t.m, 4);
}

TEST(Contraction, GemmTransposesAlphaBetaAndBias) {
  TestModule t;
  Value *a = t.param(DType::f32, {33, 7}, "a");
  Value *b = t.param(DType::f32, {257, 33}, "b");
  Value *c = t.param(DType::f32, {257}, "c");
  Value *c2 = t.param(DType::f32, {7, 1}, "c2");
  t.g->results = {t.op("kiln.gemm", {a, b, c},
                       {{"trans_a", int64_t(1)}, {"trans_b", int64_t(1)}, {"alpha", 0.5},
                        {"beta", 2.0}}),
                  t.op("kiln.gemm", {a, a, c2}, {{"trans_a", int64_t(1)}})};
  check_all_strategies(t.m, 2);
}

TEST(Contraction, ConvolutionsAsImplicitGemm) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 4, 9, 8}, "x");
  Value *w = t.param(DType::f32, {6, 2, 3, 2}, "w");
  Value *bias = t.param(DType::f32, {6}, "bias");
  Value *grouped = t.op("kiln.conv", {x, w, bias},
                        {{"group", int64_t(2)}, {"pads", std::vector<int64_t>{1, 0, 2, 1}},
                         {"strides", std::vector<int64_t>{2, 1}},
                         {"dilations", std::vector<int64_t>{1, 2}}});
  Value *w2 = t.param(DType::f32, {33, 4, 3, 3}, "w2");
  Value *same = t.op("kiln.conv", {x, w2}, {{"auto_pad", std::string("SAME_UPPER")}});
  Value *w3 = t.param(DType::f32, {7, 4, 1, 1}, "w3");
  Value *b3 = t.param(DType::f32, {7}, "b3");
  // A 1x1 convolution with a fused epilogue (bias, then relu applied in the store).
  Value *pointwise = t.op("kiln.relu", {t.op("kiln.conv", {x, w3, b3})});
  Value *x1 = t.param(DType::f32, {1, 3, 257}, "x1");
  Value *w1 = t.param(DType::f32, {5, 3, 4}, "w1");
  Value *conv1d = t.op("kiln.conv", {x1, w1}, {{"strides", std::vector<int64_t>{3}},
                                              {"pads", std::vector<int64_t>{2, 1}}});
  // Two convolutions written in place into their concat (the fire module of squeezenet).
  Value *w4 = t.param(DType::f32, {3, 4, 3, 3}, "w4");
  Value *joined = t.op("kiln.concat", {t.op("kiln.relu", {t.op("kiln.conv", {x, w3, b3})}),
                                       t.op("kiln.conv", {x, w4}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})},
                       {{"axis", int64_t(1)}});
  t.g->results = {grouped, same, pointwise, conv1d, joined};
  check_all_strategies(t.m, 6);
}

// Transposes after a contraction (through its bias add and reshapes) are absorbed into its
// store: a scaled-down attention block (bert's projections, heads split by reshape +
// transpose, the context merged back by transpose + reshape) and a convolution written
// channels-last. Only the contractions' kernels are dispatched, under every strategy.
TEST(Contraction, TransposesAbsorbedIntoTheStore) {
  TestModule t;
  auto perm = [](std::vector<int64_t> p) { return AttrMap{{"perm", std::move(p)}}; };
  Value *x = t.param(DType::f32, {2, 5, 12}, "x");
  auto heads = [&](const char *name, std::vector<int64_t> p) {
    Value *w = t.param(DType::f32, {12, 12}, name);
    Value *bias = t.param(DType::f32, {12}, std::string(name) + "_bias");
    Value *y = t.op("kiln.add", {t.op("kiln.matmul", {x, w}), bias});
    return t.op("kiln.transpose", {t.op("kiln.reshape", {y, t.b.i64s({2, 5, 3, 4})})},
                perm(std::move(p)));
  };
  Value *q = heads("wq", {0, 2, 1, 3}); // [2, 3, 5, 4]
  Value *k = heads("wk", {0, 2, 3, 1}); // [2, 3, 4, 5]
  Value *v = heads("wv", {0, 2, 1, 3}); // [2, 3, 5, 4]
  Value *p = t.op("kiln.matmul", {q, k});
  Value *ctx = t.op("kiln.transpose", {t.op("kiln.matmul", {p, v})}, perm({0, 2, 1, 3}));
  Value *wo = t.param(DType::f32, {12, 7}, "wo");
  Value *out = t.op("kiln.matmul", {t.op("kiln.reshape", {ctx, t.b.i64s({2, 5, 12})}), wo});
  // A transposed value that is itself a graph result is absorbed too (NCHW -> NHWC).
  Value *img = t.param(DType::f32, {2, 3, 6, 5}, "img");
  Value *wc = t.param(DType::f32, {4, 3, 3, 3}, "wc");
  Value *nhwc = t.op("kiln.transpose", {t.op("kiln.conv", {img, wc})}, perm({0, 2, 3, 1}));
  // Two transposes with a reshape between them compose; unsqueeze and flatten keep the order.
  Value *a = t.param(DType::f32, {4, 6}, "a");
  Value *r = t.op("kiln.reshape", {t.op("kiln.matmul", {a, t.param(DType::f32, {6, 10}, "b")}),
                                   t.b.i64s({4, 2, 5})});
  Value *r2 = t.op("kiln.reshape", {t.op("kiln.transpose", {r}, perm({2, 0, 1})), t.b.i64s({5, 8})});
  Value *twice = t.op("kiln.transpose", {r2}, perm({1, 0}));
  Value *gm = t.op("kiln.gemm", {t.param(DType::f32, {7, 33}, "ga"), t.param(DType::f32, {5, 33}, "gb"),
                                 t.param(DType::f32, {5}, "gc")},
                   {{"trans_b", int64_t(1)}});
  Value *u = t.op("kiln.unsqueeze", {gm, t.b.i64s({0})});
  Value *flat = t.op("kiln.flatten", {t.op("kiln.transpose", {u}, perm({0, 2, 1}))},
                     {{"axis", int64_t(1)}});
  t.g->results = {out, nhwc, twice, flat};
  check_all_strategies(t.m, 9, 1e-4, 1e-4, 9);
}

TEST(Contraction, HalfPrecisionAccumulatesInFloat) {
  TestModule t;
  Value *a = t.param(DType::f16, {33, 65}, "a");
  Value *b = t.param(DType::f16, {65, 17}, "b");
  t.g->results = {t.op("kiln.matmul", {a, b})};
  check_all_strategies(t.m, 1, 2e-3, 2e-3);
}

// The coop strategy (f16 operands, 16x16x16 cooperative matrices, f32 accumulators) on the C
// backend, which multiplies the same kernel's matrices itself: one invocation per subgroup, so
// the staging, the per-subgroup blocks and the epilogue run as on a GPU with one lane each.
// Odd shapes (partial tiles and k steps), a batch, a transposed B, vector and element staging,
// one and two staging buffers, several subgroups per workgroup.
TEST(Contraction, CooperativeMatricesOnTheCpuBackend) {
  const kir::TargetDesc *cpu = kir::find_target("cpu");
  ASSERT_TRUE(cpu);
  TestModule t;
  Value *a = t.param(DType::f16, {33, 72}, "a");
  Value *b = t.param(DType::f16, {72, 40}, "b");
  Value *a3 = t.param(DType::f16, {3, 20, 16}, "a3");
  Value *b3 = t.param(DType::f16, {3, 16, 36}, "b3");
  Value *odd = t.param(DType::f16, {17, 13}, "odd");
  Value *odd_b = t.param(DType::f16, {13, 9}, "odd_b");
  Value *wt = t.param(DType::f16, {24, 72}, "wt");
  Value *bias = t.param(DType::f16, {24}, "bias");
  Value *x = t.param(DType::f16, {2, 4, 9, 7}, "x");
  Value *w = t.param(DType::f16, {6, 4, 3, 3}, "w");
  t.g->results = {t.op("kiln.matmul", {a, b}), t.op("kiln.matmul", {a3, b3}),
                  t.op("kiln.matmul", {odd, odd_b}),
                  t.op("kiln.relu", {t.op("kiln.gemm", {a, wt, bias}, {{"trans_b", int64_t(1)}})}),
                  t.op("kiln.conv", {x, w}, {{"pads", std::vector<int64_t>{1, 0, 1, 2}},
                                             {"strides", std::vector<int64_t>{2, 1}}})};
  // Small tiles: the C compiler builds each invocation's unrolled staging (GPU tiles of 256
  // invocations become a few invocations here, each staging a large share of the slices), so
  // the second variant (two subgroups, one staging buffer) runs on two of the products only.
  auto check = [&](const Module &m, const char *spec, int contractions, int split = 0) {
    SCOPED_TRACE(spec);
    CompileOptions o;
    ASSERT_TRUE(compiler::parse_contraction_override(spec, &o.contraction_override));
    CompileStats st;
    // f16 outputs: one rounding of the f32 sum (the reference sums in another order).
    test::expect_matches_reference(m, {}, 2e-3, 2e-3, *cpu, o, &st);
    EXPECT_EQ(st.coop_contractions, contractions);
    EXPECT_EQ(st.split_k_contractions, split);
  };
  check(t.m, "coop:32x32x16:16x16!", 5);
  TestModule t2;
  Value *a2 = t2.param(DType::f16, {17, 40}, "a");
  Value *w2 = t2.param(DType::f16, {9, 40}, "w");
  Value *x2 = t2.param(DType::f16, {1, 3, 5, 6}, "x");
  Value *k2 = t2.param(DType::f16, {5, 3, 2, 3}, "k");
  t2.g->results = {t2.op("kiln.gemm", {a2, w2}, {{"trans_b", int64_t(1)}}),
                   t2.op("kiln.conv", {x2, k2}, {{"pads", std::vector<int64_t>{1, 1, 0, 0}}})};
  check(t2.m, "coop:16x32x32:16x16:s1!", 2);
  // Split-K (partial sums, then the kernel adding them and applying the epilogue): the gemm's
  // K = 40 is three 16-deep steps, three slices; the conv's 18 two steps, two slices.
  check(t2.m, "coop:16x16x16:16x16:k3!", 2, 2);
  // Constant weights of a 3x3 convolution whose channels are whole k steps: k tap-major, the
  // weights repacked (stats: tap_major); a 1x1 convolution of two images folded into N with 16
  // positions each: its input staged as 4-element runs.
  TestModule t3;
  Tensor wk(DType::f16, Shape{8, 32, 3, 3});
  for (int64_t i = 0; i < wk.numel(); ++i)
    wk.data_mut<uint16_t>()[i] = f32_to_f16(static_cast<float>((i * 37) % 19 - 9) / 16.0f);
  Value *x3 = t3.param(DType::f16, {2, 32, 7, 5}, "x");
  Value *x4 = t3.param(DType::f16, {2, 8, 4, 4}, "x4");
  Value *w4 = t3.param(DType::f16, {8, 8, 1, 1}, "w4");
  t3.g->results = {t3.op("kiln.conv", {x3, t3.b.constant(std::move(wk))},
                         {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                          {"strides", std::vector<int64_t>{2, 1}}}),
                   t3.op("kiln.conv", {x4, w4})};
  CompileStats st3;
  {
    CompileOptions o;
    ASSERT_TRUE(compiler::parse_contraction_override("coop:16x16x16:16x16!", &o.contraction_override));
    test::expect_matches_reference(t3.m, {}, 2e-3, 2e-3, *cpu, o, &st3);
  }
  EXPECT_EQ(st3.coop_contractions, 2);
  EXPECT_EQ(st3.tap_major_contractions, 1);
}

TEST(ContractionTable, CoopForHalfOperandsOnNvidiaOnly) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  const kir::TargetDesc *cpu = kir::find_target("cpu");
  ASSERT_TRUE(lp && nv && cpu);
  using compiler::ScheduleMode;
  using kir::ScalarType;
  auto pick = [](const kir::TargetDesc &t, int64_t M, int64_t N, int64_t K, ScalarType op) {
    return compiler::pick_contraction(t, ScheduleMode::automatic, {1, M, N, K, op});
  };
  const ContractionSchedule big = pick(*nv, 4096, 4096, 4096, ScalarType::f16);
  EXPECT_EQ(big.strategy, Strategy::coop);
  EXPECT_EQ(big.tile.tm, 128);
  EXPECT_EQ(big.tile.tn, 256);
  EXPECT_LE(compiler::coop_shared_bytes(big.tile), nv->shared_memory_bytes);
  EXPECT_EQ(compiler::coop_invocations(big.tile, *nv), 256u);
  // Too few 128x256 tiles for the SMs but enough 128x128 ones; too few of those: 64x64 ones;
  // small shapes the 32x32 row.
  EXPECT_EQ(pick(*nv, 2048, 2048, 1024, ScalarType::f16).tile.tn, 128);
  EXPECT_EQ(pick(*nv, 512, 1568, 4608, ScalarType::f16).tile.tm, 64);
  EXPECT_EQ(pick(*nv, 1, 1000, 2048, ScalarType::f16).tile.tm, 32);
  // Must not fire: f32 operands, lavapipe (no cooperative matrices), the cpu table, naive.
  EXPECT_EQ(pick(*nv, 4096, 4096, 4096, ScalarType::f32).strategy, Strategy::tiled);
  EXPECT_EQ(pick(*lp, 4096, 4096, 4096, ScalarType::f16).strategy, Strategy::registers);
  EXPECT_EQ(pick(*cpu, 4096, 4096, 4096, ScalarType::f16).strategy, Strategy::matrix);
  EXPECT_EQ(compiler::pick_contraction(*nv, ScheduleMode::naive, {1, 4096, 4096, 4096,
                                                                   ScalarType::f16})
                .strategy,
            Strategy::naive);
  // An override the target cannot run (coop on lavapipe) leaves the table's choice.
  ContractionSchedule o;
  ASSERT_TRUE(compiler::parse_contraction_override("coop:64x64x32:32x32!", &o));
  EXPECT_EQ(compiler::pick_contraction(*lp, ScheduleMode::automatic,
                                       {1, 256, 256, 256, ScalarType::f16}, &o)
                .strategy,
            Strategy::registers);
  EXPECT_EQ(compiler::pick_contraction(*nv, ScheduleMode::automatic,
                                       {1, 256, 256, 256, ScalarType::f16}, &o)
                .strategy,
            Strategy::coop);
  for (const char *bad : {"coop:64x64x32:32x24", "coop:64x64x24:32x32", "coop:64x64x32:8x32",
                          "coop:64x64x32:32x32:k0"})
    EXPECT_FALSE(compiler::parse_contraction_override(bad, &o)) << bad;
  // Split-K: resnet50's last stage at batch 1 (M = 512, N = 49, K = 4608) has 32 tiles of
  // 32x32 for 132 SMs; the large row never splits (too few tiles: the next rows).
  const ContractionSchedule late = pick(*nv, 512, 49, 4608, ScalarType::f16);
  EXPECT_EQ(late.strategy, Strategy::coop);
  EXPECT_EQ(late.tile.tm, 32);
  EXPECT_GT(late.split_k, 1);
  EXPECT_EQ(pick(*nv, 4096, 4096, 4096, ScalarType::f16).split_k, 1);
  EXPECT_EQ(pick(*nv, 512, 1568, 4608, ScalarType::f16).split_k, 1);
}

TEST(ContractionTable, PicksByTargetAndShape) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  ASSERT_TRUE(lp && nv);
  using compiler::ScheduleMode;
  auto pick = [](const kir::TargetDesc &t, ScheduleMode m, int64_t M, int64_t N, int64_t K) {
    return compiler::pick_contraction(t, m, {1, M, N, K});
  };
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4096, 4096, 4096).strategy, Strategy::tiled);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4096, 4096, 4096).tile.tm, 128);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4096, 4096, 4096).tile.stages, 2);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1024, 1024, 64).tile.stages, 1); // medium row
  // A classifier at batch 1 (M = 1): the small row, split-K, not one invocation per output.
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 1, 1000, 2048).strategy, Strategy::tiled);
  EXPECT_GT(pick(*nv, ScheduleMode::automatic, 1, 1000, 2048).split_k, 1);
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 64, 3136, 576).strategy, Strategy::registers);
  // Must not fire: tiny shapes, depthwise-like M of 1, an empty reduction, --schedule naive.
  EXPECT_EQ(pick(*lp, ScheduleMode::automatic, 1, 4096, 9).strategy, Strategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 4, 4, 4).strategy, Strategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::automatic, 512, 512, 0).strategy, Strategy::naive);
  EXPECT_EQ(pick(*nv, ScheduleMode::naive, 4096, 4096, 4096).strategy, Strategy::naive);
}

TEST(ContractionTable, FillsTheDeviceWithSmallerTilesOrSplitK) {
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  ASSERT_TRUE(lp && nv && nv->compute_units > 0);
  using compiler::ScheduleMode;
  auto pick = [](const kir::TargetDesc &t, int64_t batch, int64_t M, int64_t N, int64_t K) {
    return compiler::pick_contraction(t, ScheduleMode::automatic, {batch, M, N, K});
  };
  // 128x128 tiles give 48 workgroups for 132 SMs, and the row wants two per SM: at least 6
  // slices. 6 (288 workgroups) leaves 24 for a third round on some SMs (3 x 16 steps); 8 slices
  // (384) cost the busiest SM 3 x 12 steps: the least wave-quantisation cost (H200: 0.054 ms
  // vs 0.064 with 6, bench/RESULTS.md 2026-12-04).
  const ContractionSchedule bert_qkv = pick(*nv, 1, 1024, 768, 768);
  EXPECT_EQ(bert_qkv.tile.tm, 128);
  EXPECT_EQ(bert_qkv.split_k, 8);
  EXPECT_EQ(bert_qkv.min_groups, 2 * static_cast<int64_t>(nv->compute_units));
  // bert-base's FFN2 (K = 3072): 11 slices, 4 x 35 steps on the busiest SM (0.152 ms measured;
  // 6 slices: 3 x 64, 0.204 ms).
  EXPECT_EQ(pick(*nv, 1, 1024, 768, 3072).split_k, 11);
  // The bounds: without a minimum grid the cost alone picks for QKV; a maximum the grid
  // cannot exceed keeps it under (48 workgroups fit 90, two slices would not).
  const compiler::TileConfig large{128, 128, 8, 8, 8, 4, 2};
  EXPECT_GT(compiler::pick_split_k(*nv, {1, 1024, 768, 768}, large), 1);
  EXPECT_EQ(compiler::pick_split_k(*nv, {1, 1024, 768, 768}, large, 0, 90), 1);
  // bert-base's FFN1 (1024 x 3072 x 768): 192 tiles of 128x128, more than one per SM but less
  // than the two each keeps resident, so 128x64 tiles (384 workgroups) and no split.
  const ContractionSchedule ffn1 = pick(*nv, 1, 1024, 3072, 768);
  EXPECT_EQ(ffn1.tile.tm, 128);
  EXPECT_EQ(ffn1.tile.tn, 64);
  EXPECT_EQ(ffn1.split_k, 1);
  // Too short a reduction to split (K = 64): 64x64 tiles (256 workgroups) instead.
  EXPECT_EQ(pick(*nv, 1, 1024, 1024, 64).tile.tm, 64);
  EXPECT_EQ(pick(*nv, 1, 1024, 1024, 64).split_k, 1);
  // 4096^3 keeps the large tiles and no split.
  EXPECT_EQ(pick(*nv, 1, 4096, 4096, 4096).tile.tm, 128);
  EXPECT_EQ(pick(*nv, 1, 4096, 4096, 4096).split_k, 1);
  // resnet50 batch 1, last stage: M = 512, N = 49, K = 4608 gives 32 tiles of 32x32; split-K
  // brings the grid to about two waves.
  const ContractionSchedule late = pick(*nv, 1, 512, 49, 4608);
  EXPECT_EQ(late.strategy, Strategy::tiled);
  EXPECT_GT(late.split_k, 1);
  EXPECT_GE(compiler::tile_groups({1, 512, 49, 4608}, late.tile) * late.split_k,
            static_cast<int64_t>(nv->compute_units));
  // Must not fire: a short reduction (too few tk steps per slice), a full grid, and a target
  // without a compute-unit count (lavapipe).
  EXPECT_EQ(pick(*nv, 1, 512, 49, 64).split_k, 1);
  EXPECT_EQ(pick(*nv, 32, 512, 512, 4608).split_k, 1);
  EXPECT_EQ(compiler::pick_split_k(*lp, {1, 512, 49, 4608}, {32, 32, 16, 4, 4}), 1);
}

TEST(ContractionTable, OverrideParsing) {
  ContractionSchedule s;
  ASSERT_TRUE(compiler::parse_contraction_override("tiled:64x32x16:4x2", &s));
  EXPECT_FALSE(s.everywhere);
  EXPECT_EQ(s.strategy, Strategy::tiled);
  EXPECT_EQ(s.tile.tm, 64);
  EXPECT_EQ(s.tile.tn, 32);
  EXPECT_EQ(s.tile.tk, 16);
  EXPECT_EQ(s.tile.rm, 4);
  EXPECT_EQ(s.tile.rn, 2);
  EXPECT_EQ(s.split_k, 0); // as the table would split
  EXPECT_EQ(s.tile.lanes, 4); // table defaults: 4-lane loads, two staging buffers
  EXPECT_EQ(s.tile.stages, 2);
  ASSERT_TRUE(compiler::parse_contraction_override("tiled:32x32x16:4x4:k8", &s));
  EXPECT_EQ(s.split_k, 8);
  ASSERT_TRUE(compiler::parse_contraction_override("tiled:32x32x16:4x4:s1:v2:k3", &s));
  EXPECT_EQ(s.split_k, 3);
  EXPECT_EQ(s.tile.stages, 1);
  EXPECT_EQ(s.tile.lanes, 2);
  EXPECT_EQ(s.tile.a_lanes(), 2);
  EXPECT_EQ(s.tile.a_row(), 34);
  for (const char *bad : {"", "tiled", "tiled:64x32x16", "tiled:64x30x16:4x4", "fast:8x8x8:1x1",
                          "tiled:0x32x16:1x1", "tiled:512x32x16:4x4", "!",
                          "tiled:32x32x16:4x4:k0", "tiled:32x32x16:4x4:k65",
                          "registers:32x32x1:4x4:k2", "tiled:32x32x16:4x4junk",
                          "tiled:32x32x16:4x4:v3", "tiled:32x32x16:4x4:s3", "tiled:32x32x16:4x4:k2:k3",
                          "tiled:32x32x16:4x4:x2", "tiled:32x32x16:4x4:v"})
    EXPECT_FALSE(compiler::parse_contraction_override(bad, &s)) << bad;
  // Without `!` an override leaves the table's naive choices alone; with it, it replaces them.
  const kir::TargetDesc *nv = kir::find_target("vulkan-nvidia");
  EXPECT_EQ(compiler::pick_contraction(*nv, compiler::ScheduleMode::automatic, {1, 1, 64, 4}, &s)
                .strategy,
            Strategy::naive);
  ASSERT_TRUE(compiler::parse_contraction_override("tiled:64x32x16:4x2!", &s));
  EXPECT_TRUE(s.everywhere);
  EXPECT_EQ(compiler::pick_contraction(*nv, compiler::ScheduleMode::automatic, {1, 1, 64, 4}, &s)
                .strategy,
            Strategy::tiled);
  // An override the target cannot run (too many invocations) falls back to the table.
  ASSERT_TRUE(compiler::parse_contraction_override("registers:256x256x1:1x1", &s));
  const kir::TargetDesc *lp = kir::find_target("vulkan-lavapipe");
  EXPECT_NE(compiler::pick_contraction(*lp, compiler::ScheduleMode::automatic, {1, 64, 64, 64}, &s)
                .reason,
            s.reason);
}

} // namespace
} // namespace kiln
