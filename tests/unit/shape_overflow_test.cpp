// Shape functions against hostile dims and attributes: sums and products of dims, pads,
// strides, dilations, group counts, block sizes and scales that do not fit int64 are clear
// op errors naming the overflow, never a wrapped (negative or small) dim. In the UBSan build
// any overflow left in a shape function traps here.
#include "ir/builder.h"
#include "ops/ops.h"
#include "test_module.h"

#include <gtest/gtest.h>
#include <limits>

namespace kiln {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t k2p62 = int64_t(1) << 62;
constexpr int64_t k2p40 = int64_t(1) << 40;

using Ints = std::vector<int64_t>;

// main(params...) under construction (test_module.h); op() returns the builder's result, so a
// test can check how an op is refused.
struct Fixture : test::ModuleBuilder {
  Value *param(Shape s, DType t = DType::f32) {
    return g->add_param(TensorType{t, std::move(s), true}, "p" + std::to_string(n++));
  }
  Value *f32s(std::vector<float> v) {
    const int64_t len = static_cast<int64_t>(v.size());
    return b.constant(Tensor::from_f32s(std::move(v), {len}));
  }
  Result<std::vector<Value *>> op(std::string_view name, std::vector<Value *> in,
                                  AttrMap attrs = {}, int results = 1) {
    return b.create(name, std::move(in), std::move(attrs), results);
  }
  int n = 0;
};

// The op must be refused with a message that names an int64 overflow.
void expect_overflow(const Result<std::vector<Value *>> &r) {
  ASSERT_FALSE(r.is_ok()) << "succeeded with result " << r.value()[0]->type.str();
  EXPECT_NE(r.status().message().find("overflows int64"), std::string::npos)
      << r.status().message();
}

void expect_error(const Result<std::vector<Value *>> &r, const std::string &what) {
  ASSERT_FALSE(r.is_ok()) << "succeeded with result " << r.value()[0]->type.str();
  EXPECT_NE(r.status().message().find(what), std::string::npos) << r.status().message();
}

Shape result_dims(const Result<std::vector<Value *>> &r) {
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value()[0]->type.dims : Shape{};
}

// ---- convolutions and pools ------------------------------------------------------------------

TEST(ShapeOverflow, ConvPads) {
  Fixture t;
  expect_overflow(t.op("kiln.conv", {t.param({1, 1, 4, 4}), t.param({1, 1, 3, 3})},
                       {{"pads", Ints{0, 0, kMax, kMax}}}));
}

TEST(ShapeOverflow, ConvDilation) {
  Fixture t;
  expect_overflow(t.op("kiln.conv", {t.param({1, 1, 4, 4}), t.param({1, 1, 3, 3})},
                       {{"dilations", Ints{kMax, 1}}}));
}

TEST(ShapeOverflow, ConvHugeInputDim) {
  Fixture t;
  expect_overflow(t.op("kiln.conv", {t.param({1, 1, kMax, 4}), t.param({1, 1, 3, 3})},
                       {{"pads", Ints{1, 0, 1, 0}}}));
}

TEST(ShapeOverflow, ConvGroupTimesWeightChannels) {
  Fixture t;
  expect_overflow(t.op("kiln.conv", {t.param({1, 4, 4, 4}), t.param({4, k2p62, 3, 3})},
                       {{"group", int64_t(4)}}));
}

TEST(ShapeOverflow, ConvSameUpperHugeStrideIsExact) {
  // ceil(in / stride) without in + stride - 1.
  Fixture t;
  auto r = t.op("kiln.conv", {t.param({1, 1, 4, 4}), t.param({1, 1, 3, 3})},
                {{"strides", Ints{kMax, 1}}, {"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_EQ(result_dims(r), (Shape{1, 1, 1, 4}));
}

// Folded through the reference implementations (every operand constant): a huge stride
// leaves one window, and the im2col column ranges must not add stride - 1.
TEST(ShapeOverflow, FoldedConvAndPoolWithHugeStrides) {
  Fixture t;
  std::vector<float> xv(16);
  for (int i = 0; i < 16; ++i) xv[i] = static_cast<float>(i + 1);
  Value *x = t.b.constant(Tensor::from_f32s(xv, {1, 1, 4, 4}));
  Value *w = t.b.constant(Tensor::from_f32s(std::vector<float>(9, 1.0f), {1, 1, 3, 3}));
  auto conv = t.op("kiln.conv", {x, w}, {{"strides", Ints{kMax, kMax}}});
  ASSERT_EQ(result_dims(conv), (Shape{1, 1, 1, 1}));
  const Tensor *c = Builder::constant_value(conv.value()[0]);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->get_f64(0), 54.0); // the top-left 3x3 block

  auto pool = t.op("kiln.max_pool", {x},
                   {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{kMax, kMax}},
                    {"ceil_mode", int64_t(1)}});
  ASSERT_EQ(result_dims(pool), (Shape{1, 1, 1, 1}));
  const Tensor *p = Builder::constant_value(pool.value()[0]);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->get_f64(0), 6.0);

  Value *one = t.b.constant(Tensor::from_f32s({2.0f}, {1, 1, 1, 1}));
  Value *w2 = t.b.constant(Tensor::from_f32s(std::vector<float>(4, 1.0f), {1, 1, 2, 2}));
  auto convt = t.op("kiln.conv_transpose", {one, w2}, {{"strides", Ints{kMax, kMax}}});
  ASSERT_EQ(result_dims(convt), (Shape{1, 1, 2, 2}));
  const Tensor *ct = Builder::constant_value(convt.value()[0]);
  ASSERT_NE(ct, nullptr);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(ct->get_f64(i), 2.0);
}

TEST(ShapeOverflow, ConvTransposeStrides) {
  Fixture t;
  expect_overflow(t.op("kiln.conv_transpose", {t.param({1, 1, k2p40, 4}), t.param({1, 1, 3, 3})},
                       {{"strides", Ints{int64_t(1) << 30, 1}}}));
}

TEST(ShapeOverflow, ConvTransposeOutputPadding) {
  Fixture t;
  expect_overflow(t.op("kiln.conv_transpose", {t.param({1, 1, 4, 4}), t.param({1, 1, 3, 3})},
                       {{"output_padding", Ints{kMax, 0}}}));
}

TEST(ShapeOverflow, ConvTransposeGroupTimesChannels) {
  Fixture t;
  expect_overflow(t.op("kiln.conv_transpose", {t.param({1, 4, 4, 4}), t.param({4, k2p62, 3, 3})},
                       {{"group", int64_t(4)}}));
}

TEST(ShapeOverflow, ConvTransposeSameHugeStride) {
  Fixture t;
  expect_overflow(t.op("kiln.conv_transpose", {t.param({1, 1, 4, 4}), t.param({1, 1, 3, 3})},
                       {{"strides", Ints{k2p62, 1}}, {"auto_pad", std::string("SAME_UPPER")}}));
}

TEST(ShapeOverflow, MaxPoolPads) {
  Fixture t;
  expect_overflow(t.op("kiln.max_pool", {t.param({1, 1, 4, 4})},
                       {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{kMax, 0, 1, 0}}}));
}

TEST(ShapeOverflow, AvgPoolDilation) {
  Fixture t;
  expect_overflow(t.op("kiln.avg_pool", {t.param({1, 1, 4, 4})},
                       {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{1, k2p62}}}));
}

TEST(ShapeOverflow, MaxPoolCeilModeHugeStrideIsExact) {
  // ceil((len) / stride) + 1 without len + stride - 1; the window start check in 128 bits.
  Fixture t;
  auto r = t.op("kiln.max_pool", {t.param({1, 1, k2p40, 4})},
                {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{kMax, 1}},
                 {"ceil_mode", int64_t(1)}});
  EXPECT_EQ(result_dims(r), (Shape{1, 1, 1, 4}));
}

TEST(ShapeOverflow, MaxUnpoolStrides) {
  Fixture t;
  expect_overflow(t.op("kiln.max_unpool", {t.param({1, 1, 4, 4}), t.param({1, 1, 4, 4}, DType::i64)},
                       {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{kMax, 1}}}));
}

TEST(ShapeOverflow, Col2ImDilation) {
  Fixture t;
  expect_overflow(t.op("kiln.col2im", {t.param({1, 4, 9}), t.b.i64s({4, 4}), t.b.i64s({2, 2})},
                       {{"dilations", Ints{kMax, 1}}}));
}

TEST(ShapeOverflow, DeformConvGroupTimesWeightChannels) {
  Fixture t;
  expect_overflow(t.op("kiln.deform_conv",
                       {t.param({1, 4, 4, 4}), t.param({4, k2p62, 3, 3}), t.param({1, 18, 2, 2})},
                       {{"group", int64_t(4)}}));
}

TEST(ShapeOverflow, QLinearConvPads) {
  Fixture t;
  Value *xs = t.param({}), *xz = t.param({}, DType::u8);
  auto r = t.op("kiln.qlinear_conv",
                {t.param({1, 1, 4, 4}, DType::u8), xs, xz, t.param({1, 1, 3, 3}, DType::u8),
                 t.param({}), t.param({}, DType::u8), t.param({}), t.param({}, DType::u8)},
                {{"pads", Ints{kMax, 0, 1, 0}}});
  expect_overflow(r);
}

// ---- shape and data movement ----------------------------------------------------------------

TEST(ShapeOverflow, ConcatSum) {
  Fixture t;
  expect_overflow(t.op("kiln.concat", {t.param({k2p62, 2}), t.param({k2p62, 2})},
                       {{"axis", int64_t(0)}}));
}

TEST(ShapeOverflow, Flatten) {
  Fixture t;
  expect_overflow(t.op("kiln.flatten", {t.param({k2p62, 4, 2})}, {{"axis", int64_t(2)}}));
}

TEST(ShapeOverflow, ReshapeOfHugeInput) {
  Fixture t;
  expect_overflow(t.op("kiln.reshape", {t.param({k2p62, 4}), t.b.i64s({-1})}));
}

TEST(ShapeOverflow, ReshapeToHugeShape) {
  Fixture t;
  expect_overflow(t.op("kiln.reshape", {t.param({2}), t.b.i64s({k2p62, k2p62})}));
}

TEST(ShapeOverflow, ShapeOperandOfHugeDeclaredLength) {
  // Its length is the result rank: refused before it sizes a shape (2^40 dims of memory).
  Fixture t;
  expect_error(t.op("kiln.reshape", {t.param({2}), t.param({k2p40}, DType::i64)}), "rank limit");
  expect_error(t.op("kiln.expand", {t.param({2}), t.param({k2p40}, DType::i64)}), "rank limit");
}

TEST(ShapeOverflow, Tile) {
  Fixture t;
  expect_overflow(t.op("kiln.tile", {t.param({k2p62}), t.b.i64s({4})}));
}

TEST(ShapeOverflow, Pad) {
  Fixture t;
  expect_overflow(t.op("kiln.pad", {t.param({4}), t.b.i64s({kMax, 1})}));
}

TEST(ShapeOverflow, PadFoldedWithExtremePads) {
  // Folded through the reference: the pads cancel out, and o - begin never overflows.
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s({1, 2, 3}, {3}));
  auto r = t.op("kiln.pad", {x, t.b.i64s({kMin + 2, kMax - 1})},
                {{"mode", std::string("edge")}});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r.value()[0]->type.dims, (Shape{3}));
  const Tensor *v = Builder::constant_value(r.value()[0]);
  ASSERT_NE(v, nullptr);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(v->get_f64(i), 3.0); // all right of the input
}

TEST(ShapeOverflow, SplitSizesSum) {
  Fixture t;
  expect_overflow(t.op("kiln.split", {t.param({6}), t.b.i64s({kMax, 1})}, {}, 2));
}

TEST(ShapeOverflow, SliceExtremeStepsAreExact) {
  Fixture t;
  auto up = t.op("kiln.slice", {t.param({10}), t.b.i64s({0}), t.b.i64s({10}), t.b.i64s({0}),
                                t.b.i64s({kMax})});
  EXPECT_EQ(result_dims(up), (Shape{1}));
  auto down = t.op("kiln.slice", {t.param({10}), t.b.i64s({9}), t.b.i64s({kMin}), t.b.i64s({0}),
                                  t.b.i64s({kMin})});
  EXPECT_EQ(result_dims(down), (Shape{1}));
  auto by3 = t.op("kiln.slice", {t.param({10}), t.b.i64s({kMax}), t.b.i64s({kMin}), t.b.i64s({0}),
                                 t.b.i64s({-3})});
  EXPECT_EQ(result_dims(by3), (Shape{4})); // 9, 6, 3, 0
}

TEST(ShapeOverflow, RangeNearInt64LimitsIsExact) {
  // The count of a short range near INT64_MAX (doubles would round it to 0) and a range whose
  // elements span all of int64 (start + i * delta does not fit before it is added).
  Fixture t;
  auto r = t.op("kiln.range", {t.b.scalar_i(DType::i64, kMax - 5), t.b.scalar_i(DType::i64, kMax),
                               t.b.scalar_i(DType::i64, 2)});
  EXPECT_EQ(result_dims(r), (Shape{3}));
  auto w = t.op("kiln.range", {t.b.scalar_i(DType::i64, kMin), t.b.scalar_i(DType::i64, kMax),
                               t.b.scalar_i(DType::i64, kMax)});
  ASSERT_EQ(result_dims(w), (Shape{3}));
  const Tensor *v = Builder::constant_value(w.value()[0]);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->to_i64s(), (Ints{kMin, -1, kMax - 1}));
  expect_error(t.op("kiln.range", {t.b.scalar_i(DType::i64, kMin), t.b.scalar_i(DType::i64, kMax),
                                   t.b.scalar_i(DType::i64, 1)}),
               "range is too long");
}

TEST(ShapeOverflow, FoldedEyeLikeWithExtremeDiagonal) {
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s(std::vector<float>(9, 0.0f), {3, 3}));
  for (int64_t k : {kMax, kMin, int64_t(1)}) {
    auto r = t.op("kiln.eye_like", {x}, {{"k", k}});
    ASSERT_EQ(result_dims(r), (Shape{3, 3}));
    const Tensor *v = Builder::constant_value(r.value()[0]);
    ASSERT_NE(v, nullptr);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j)
        EXPECT_EQ(v->get_f64(i * 3 + j), j == i + 1 && k == 1 ? 1.0 : 0.0) << k;
  }
}

TEST(ShapeOverflow, DepthToSpace) {
  Fixture t;
  expect_overflow(t.op("kiln.depth_to_space", {t.param({1, 4, k2p62, 2})},
                       {{"blocksize", int64_t(2)}}));
  expect_overflow(t.op("kiln.depth_to_space", {t.param({1, 4, 2, 2})},
                       {{"blocksize", int64_t(1) << 32}}));
}

TEST(ShapeOverflow, SpaceToDepth) {
  Fixture t;
  expect_overflow(t.op("kiln.space_to_depth", {t.param({1, k2p62, 4, 4})},
                       {{"blocksize", int64_t(2)}}));
}

TEST(ShapeOverflow, UniqueItemCount) {
  Fixture t;
  expect_overflow(t.op("kiln.unique", {t.param({k2p62, 4})}, {}, 3));
}

TEST(ShapeOverflow, GatherNdLayout) {
  Fixture t;
  expect_overflow(t.op("kiln.gather_nd", {t.param({2, k2p62, k2p62}), t.param({1, 1}, DType::i64)}));
}

TEST(ShapeOverflow, CenterCropPadNegativeShape) {
  Fixture t;
  expect_error(t.op("kiln.center_crop_pad", {t.param({4}), t.b.i64s({-5})}), "non-negative");
}

// ---- misc ------------------------------------------------------------------------------------

TEST(ShapeOverflow, InverseOneSidedDftLength) {
  Fixture t;
  expect_overflow(t.op("kiln.dft", {t.param({1, k2p62 + 1, 2})},
                       {{"axis", int64_t(1)}, {"inverse", int64_t(1)}, {"onesided", int64_t(1)}}));
}

TEST(ShapeOverflow, FoldedEmptyDftWithHugeLength) {
  // The result [0, 2^40, 2] is empty, so it folds; the reference must not size line buffers
  // of 2^40 elements.
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s({}, {0, 4, 2}));
  auto r = t.op("kiln.dft", {x, t.b.scalar_i(DType::i64, k2p40)}, {{"axis", int64_t(1)}});
  ASSERT_EQ(result_dims(r), (Shape{0, k2p40, 2}));
  EXPECT_NE(Builder::constant_value(r.value()[0]), nullptr);
}

TEST(ShapeOverflow, FoldedEmptyStftWithHugeSignal) {
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s({}, {0, k2p40, 1}));
  auto r = t.op("kiln.stft", {x, t.b.scalar_i(DType::i64, k2p40)});
  ASSERT_EQ(result_dims(r), (Shape{0, 1, k2p40 / 2 + 1, 2}));
  EXPECT_NE(Builder::constant_value(r.value()[0]), nullptr);
}

TEST(ShapeOverflow, FoldedEmptyTensorsWithHugeDims) {
  // Empty constants whose other dims are huge fold to empty results: the references must not
  // build offset lists, plans or loops sized by those dims (bad_alloc or hours of looping).
  Fixture t;
  Value *e = t.b.constant(Tensor::from_f32s({}, {0, k2p40}));
  auto folded = [&](const Result<std::vector<Value *>> &r, const Shape &dims) {
    ASSERT_EQ(result_dims(r), dims);
    EXPECT_NE(Builder::constant_value(r.value()[0]), nullptr);
  };
  folded(t.op("kiln.topk", {e, t.b.i64s({2})}, {}, 2), Shape{0, 2});
  folded(t.op("kiln.softmax", {e}, {{"kind", std::string("softmax")}}), Shape{0, k2p40});
  folded(t.op("kiln.cumulative", {e, t.b.scalar_i(DType::i64, 1)}, {{"kind", std::string("sum")}}),
         Shape{0, k2p40});
  folded(t.op("kiln.reduce", {e}, {{"kind", std::string("sum")}, {"keepdims", int64_t(0)}}),
         Shape{});
  Value *img = t.b.constant(Tensor::from_f32s({}, {0, 1, k2p40, 4}));
  folded(t.op("kiln.max_pool", {img}, {{"kernel_shape", Ints{2, 2}}}),
         Shape{0, 1, k2p40 - 1, 3});
  // A zero dim empties the tensor even when the other dims' product does not fit int64.
  Value *ee = t.b.constant(Tensor::from_f32s({}, {0, k2p62, 4}));
  folded(t.op("kiln.reshape", {ee, t.b.i64s({-1, 4})}), Shape{0, 4});
}

TEST(ShapeOverflow, AttentionHiddenSize) {
  Fixture t;
  expect_overflow(t.op("kiln.attention",
                       {t.param({1, 2, k2p62}), t.param({1, 2, 8}), t.param({1, 2, 8})},
                       {{"q_num_heads", k2p62}, {"kv_num_heads", int64_t(1)}}, 4));
}

TEST(ShapeOverflow, AttentionPastPlusNewSequence) {
  Fixture t;
  expect_overflow(t.op("kiln.attention",
                       {t.param({1, 1, 2, 4}), t.param({1, 1, 2, 4}), t.param({1, 1, 2, 4}),
                        nullptr, t.param({1, 1, kMax, 4}), t.param({1, 1, kMax, 4})},
                       {}, 4));
}

TEST(ShapeOverflow, LinearAttentionHiddenSize) {
  Fixture t;
  expect_overflow(t.op("kiln.linear_attention",
                       {t.param({1, 2, k2p62}), t.param({1, 2, k2p62}), t.param({1, 2, 8})},
                       {{"q_num_heads", k2p62}, {"kv_num_heads", int64_t(1)}}, 2));
}

TEST(ShapeOverflow, EmptyBatchRnnWithHugeHiddenSize) {
  // Every result ([1, 1, 0, H], [1, 0, H] twice) is empty, so the builder folds the op; the
  // reference refuses the gate width 4 * H instead of wrapping it.
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s({}, {1, 0, 2}));
  Value *w = t.b.constant(Tensor::from_f32s(std::vector<float>(8, 0.0f), {1, 4, 2}));
  Value *r = t.b.constant(Tensor::from_f32s(std::vector<float>(4, 0.0f), {1, 4, 1}));
  expect_overflow(t.op("kiln.rnn", {x, w, r},
                       {{"cell", std::string("lstm")}, {"hidden_size", k2p62}}, 3));
}

TEST(ShapeOverflow, ResizeHugeScale) {
  Fixture t;
  Value *roi = t.b.constant(Tensor::from_f32s({}, {0}));
  expect_overflow(t.op("kiln.resize", {t.param({1, 1, 4, 4}), roi, t.f32s({1, 1, 1e30f, 1})}));
}

TEST(ShapeOverflow, FoldedResizeWithExtremeRoi) {
  // tf_crop_and_resize with a roi end of 1e30: coordinates far beyond int64 take the
  // extrapolation value instead of being converted to indices (undefined).
  Fixture t;
  Value *x = t.b.constant(Tensor::from_f32s({1, 2, 3, 4}, {1, 1, 2, 2}));
  Value *roi = t.b.constant(Tensor::from_f32s({0, 0, 0, 0, 1, 1, 1e30f, 1e30f}, {8}));
  for (const char *mode : {"nearest", "linear"}) {
    auto r = t.op("kiln.resize", {x, roi, nullptr, t.b.i64s({1, 1, 2, 2})},
                  {{"mode", std::string(mode)},
                   {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                   {"extrapolation_value", 7.0}});
    ASSERT_EQ(result_dims(r), (Shape{1, 1, 2, 2}));
    const Tensor *v = Builder::constant_value(r.value()[0]);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->get_f64(0), 1.0) << mode;
    for (int64_t i = 1; i < 4; ++i) EXPECT_EQ(v->get_f64(i), 7.0) << mode;
  }
}

TEST(ShapeOverflow, NegativeSizesAreRefused) {
  Fixture t;
  expect_error(t.op("kiln.affine_grid", {t.param({1, 2, 3}), t.b.i64s({1, 1, -4, 4})}),
               "negative");
  expect_error(t.op("kiln.col2im", {t.param({1, 4, 9}), t.param({k2p40}, DType::i64),
                                    t.b.i64s({2, 2})}),
               "rank limit");
}

} // namespace
} // namespace kiln
