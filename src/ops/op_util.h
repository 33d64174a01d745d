// Helpers shared by op definitions: axis handling, common shape functions, elementwise loops.
#pragma once

#include "ir/op_registry.h"

#include <fmt/format.h>

#include <optional>

namespace kiln {

// Normalises a possibly negative axis against `rank`; error when out of range.
Result<int64_t> norm_axis(const Op &op, int64_t axis, int64_t rank);
// Same for a list of axes (sorted, duplicates rejected).
Result<std::vector<int64_t>> norm_axes(const Op &op, std::vector<int64_t> axes, int64_t rank);

// Result 0 has operand i's type.
Status infer_same_as(InferCtx &ctx, size_t i = 0);
// Result 0 has the broadcast shape of all present operands and dtype `dt`.
Status infer_broadcast(InferCtx &ctx, DType dt);
// Broadcast of two types' dims; kDynamic where unknown. Error if incompatible.
Result<Shape> broadcast_dims(const Op &op, const Shape &a, const Shape &b);

// Checked int64 arithmetic for shape functions: hostile models declare dims and attributes
// near INT64_MAX, and a wrapped result is undefined behaviour and a wrong buffer size.
// std::nullopt when the exact result does not fit.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// Element count of static dims (0 when a dim is 0); std::nullopt when it overflows int64.
std::optional<int64_t> checked_numel(const Shape &dims);
// The error shape functions give for an overflow: "<op>: <what> overflows int64".
Status overflow_error(const Op &op, std::string_view what);

// The most entries a shape-like list operand (a shape, axes, repeats, a crop shape) may
// declare: its length becomes a rank, and a hostile declared length (2^62) must not size a
// Shape.
inline constexpr int64_t kMaxListRank = 1024;

// Requires operand i to be a known constant (for shape operands) or returns nullptr when the
// result shape must be dynamic.
inline const Tensor *const_operand(const InferCtx &ctx, size_t i) {
  return i < ctx.consts.size() ? ctx.consts[i] : nullptr;
}

// Dims all kDynamic of the given rank.
inline Shape dynamic_dims(int64_t rank) { return Shape(static_cast<size_t>(rank), kDynamic); }

// Checks a dtype constraint; message names the op.
Status expect_dtype_in(const Op &op, const char *what, DType t, std::initializer_list<DType> ok);
Status expect_float(const Op &op, const char *what, DType t);

// Elementwise evaluation through wide types. `ff` computes on doubles (float dtypes),
// `fi` on int64 (integer and bool dtypes). Result dtype `out`.
Tensor map_unary(const Tensor &x, DType out, double (*ff)(double), int64_t (*fi)(int64_t));
template <class FF, class FI>
Tensor map_binary(const Tensor &a, const Tensor &b, const Shape &out_shape, DType out, FF ff,
                  FI fi, bool int_domain) {
  Tensor r(out, out_shape);
  BroadcastIndexer bi(out_shape, {a.shape(), b.shape()});
  if (int_domain) {
    bi.for_each([&](int64_t i, const int64_t *off) {
      r.set_i64(i, fi(a.get_i64(off[0]), b.get_i64(off[1])));
    });
  } else {
    bi.for_each([&](int64_t i, const int64_t *off) {
      r.set_f64(i, ff(a.get_f64(off[0]), b.get_f64(off[1])));
    });
  }
  return r;
}

} // namespace kiln
