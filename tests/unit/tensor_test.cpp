#include "ir/tensor.h"
#include "support/half.h"

#include <cmath>
#include <limits>
#include <gtest/gtest.h>

namespace kiln {

TEST(Tensor, BroadcastShapes) {
  auto r = broadcast_shapes({2, 1, 3}, {4, 1});
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value(), (Shape{2, 4, 3}));
  EXPECT_FALSE(broadcast_shapes({2, 3}, {4}).is_ok());
}

TEST(Tensor, HalfRoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
    EXPECT_EQ(f16_to_f32(f32_to_f16(f)), f) << f;
  EXPECT_EQ(f16_to_f32(f32_to_f16(1e6f)), INFINITY);
  EXPECT_EQ(bf16_to_f32(f32_to_bf16(1.0f)), 1.0f);
}

TEST(Tensor, CastAndAccess) {
  Tensor t = Tensor::from_f32s({1.5f, -2.7f, 3.0f}, {3});
  Tensor i = t.cast(DType::i32);
  EXPECT_EQ(i.get_i64(0), 1);
  EXPECT_EQ(i.get_i64(1), -2);
  Tensor b = t.cast(DType::boolean);
  EXPECT_EQ(b.get_i64(2), 1);
  EXPECT_FALSE(Tensor::allocate(DType::f32, {int64_t(1) << 40, int64_t(1) << 40}).is_ok());
}

// Element counts saturate instead of overflowing, and a zero dimension makes a tensor empty
// however large the other dimensions are (before or after the zero).
TEST(Tensor, ElementCountsOfHugeAndEmptyShapes) {
  const int64_t big = int64_t(1) << 40;
  EXPECT_EQ(shape_numel({big, big}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(shape_numel({big, big, 0}), 0);
  EXPECT_EQ(shape_numel({0, big, big}), 0);
  EXPECT_EQ(shape_numel({3, 4}), 12);
  auto empty = Tensor::allocate(DType::f32, {big, big, 0});
  ASSERT_TRUE(empty.is_ok()) << empty.status().message();
  EXPECT_EQ(empty->numel(), 0);
  EXPECT_EQ(empty->nbytes(), 0u);
  EXPECT_FALSE(Tensor::allocate(DType::f32, {big, -1, 0}).is_ok()); // negative still refused
}

} // namespace kiln
