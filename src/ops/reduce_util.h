// Shared pieces of the reduce / normalisation family (reduce*.cpp, norm*.cpp): registration
// entry points of the family's files and loop helpers for "along some axes" computations.
#pragma once

#include "ops/op_util.h"

#include <cstdint>
#include <vector>

namespace kiln::reduce_detail {

// Registration of the family's files; register_reduce_ops (reduce.cpp) calls them all.
void register_scan_ops(OpRegistry &r);  // reduce_scan.cpp: softmax, cumulative, topk
void register_norm_ops(OpRegistry &r);  // norm_ops.cpp: normalize, group_norm, batch_norm
void register_norm_misc(OpRegistry &r); // norm_misc.cpp: lrn, lp_norm, nll_loss

// Flat offsets (row-major strides of `shape`) of every index over the dims where `mask` is
// true, other dims held at 0, in row-major order of those dims.
inline std::vector<int64_t> masked_offsets(const Shape &shape, const std::vector<bool> &mask) {
  // An empty selection (a masked dim of 0) has no offsets: returned before the other masked
  // dims, which an empty tensor may declare huge, size the list.
  for (size_t d = 0; d < shape.size(); ++d)
    if (mask[d] && shape[d] == 0) return {};
  std::vector<int64_t> strides = shape_strides(shape);
  std::vector<int64_t> offs{0};
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d]) continue;
    std::vector<int64_t> next;
    next.reserve(offs.size() * static_cast<size_t>(shape[d]));
    for (int64_t base : offs)
      for (int64_t k = 0; k < shape[d]; ++k) next.push_back(base + k * strides[d]);
    offs = std::move(next);
  }
  return offs;
}

// Splits `shape` into outer offsets (dims not in `axes`) and inner offsets (dims in `axes`):
// element (o, i) lives at outer[o] + inner[i]. Axes are normalised.
struct AxisSplit {
  std::vector<int64_t> outer, inner;
};
inline AxisSplit split_axes(const Shape &shape, const std::vector<int64_t> &axes) {
  std::vector<bool> mask(shape.size(), false);
  for (int64_t a : axes) mask[static_cast<size_t>(a)] = true;
  std::vector<bool> inv(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) inv[d] = !mask[d];
  // Callers walk the inner offsets once per outer offset: with no outer offsets (an empty
  // tensor) the inner list, possibly huge, is not built.
  std::vector<int64_t> outer = masked_offsets(shape, inv);
  if (outer.empty()) return {};
  return {std::move(outer), masked_offsets(shape, mask)};
}

// Shape with the given (normalised) axes set to 1 (keepdims) or removed.
inline Shape reduced_shape(const Shape &shape, const std::vector<int64_t> &axes, bool keepdims) {
  std::vector<bool> mask(shape.size(), false);
  for (int64_t a : axes) mask[static_cast<size_t>(a)] = true;
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d]) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

// a < b for integer values of dtype t held as int64 (u64 compared unsigned).
inline bool int_less(DType t, int64_t a, int64_t b) {
  if (t == DType::u64) return static_cast<uint64_t>(a) < static_cast<uint64_t>(b);
  return a < b;
}

// Wrapping int64 arithmetic (no UB on overflow; the result is truncated to the dtype later).
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Reads a 0-D or 1-element integer tensor (axis / k operands).
Result<int64_t> scalar_int_operand(const Op &op, const Tensor &t, const char *what);

} // namespace kiln::reduce_detail
