// Helpers private to the shape / data-movement op family (shape*.cpp).
#pragma once

#include "ops/op_util.h"

#include <algorithm>
#include <cstring>

namespace kiln::shape_ops {

// Sub-registrations (one per file).
void register_shape_core(OpRegistry &r);    // shape.cpp: shape, size, reshape, transpose, ...
void register_shape_slice(OpRegistry &r);   // shape_slice.cpp: slice, split, pad, crop
void register_shape_gather(OpRegistry &r);  // shape_gather.cpp: gather / scatter family
void register_shape_gen(OpRegistry &r);     // shape_gen.cpp: range, constant_of_shape, ...
void register_shape_misc(OpRegistry &r);    // shape_misc.cpp: depth_to_space, unique, ...

inline Status op_error(const Op &op, const std::string &msg) {
  return Status::error(op.describe() + ": " + msg);
}

// Copies element `si` of `src` to element `di` of `dst` (same dtype), byte-wise.
inline void copy_elem(const Tensor &src, int64_t si, Tensor &dst, int64_t di) {
  const size_t es = dtype_size(src.dtype());
  std::memcpy(dst.raw_mut() + static_cast<size_t>(di) * es,
              src.raw() + static_cast<size_t>(si) * es, es);
}
// Copies `n` consecutive elements.
inline void copy_elems(const Tensor &src, int64_t si, Tensor &dst, int64_t di, int64_t n) {
  if (n <= 0) return;
  const size_t es = dtype_size(src.dtype());
  std::memcpy(dst.raw_mut() + static_cast<size_t>(di) * es,
              src.raw() + static_cast<size_t>(si) * es, static_cast<size_t>(n) * es);
}

// Allocates a result with a size check; error names the op.
inline Result<Tensor> alloc(const Op &op, DType dt, const Shape &shape) {
  auto r = Tensor::allocate(dt, shape);
  if (!r) return op_error(op, r.status().message());
  return r;
}

// A 1-D (or scalar) integer operand's values; error when not integer or wrong rank.
inline Result<std::vector<int64_t>> int_list(const Op &op, const Tensor &t, const char *what) {
  if (!is_integer(t.dtype()))
    return op_error(op, fmt::format("{} must be an integer tensor, got {}", what,
                                    dtype_name(t.dtype())));
  if (t.rank() > 1) return op_error(op, fmt::format("{} must be 1-D, got rank {}", what, t.rank()));
  return t.to_i64s();
}

// Checks that an operand type is a 1-D or scalar integer tensor; returns its static length
// (kDynamic when unknown, 1 for a scalar).
inline Result<int64_t> int_list_len(const Op &op, const TensorType &t, const char *what) {
  if (!is_integer(t.dtype))
    return op_error(op, fmt::format("{} must be an integer tensor, got {}", what,
                                    dtype_name(t.dtype)));
  if (!t.ranked) return kDynamic;
  if (t.rank() > 1) return op_error(op, fmt::format("{} must be 1-D, got rank {}", what, t.rank()));
  if (t.rank() == 1 && t.dims[0] > kMaxListRank)
    return op_error(op, fmt::format("{} has {} entries, more than the rank limit {}", what,
                                    t.dims[0], kMaxListRank));
  return t.rank() == 0 ? 1 : t.dims[0];
}

// Steps a row-major multi-index; returns false after the last index.
inline bool next_index(std::vector<int64_t> &idx, const Shape &shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

inline bool all_static(const Shape &s) {
  for (int64_t d : s)
    if (d < 0) return false;
  return true;
}

// When operand i has unknown rank, gives every result an unranked type of dtype `dt` and
// returns true (for ops whose result rank follows the operand's).
inline bool unranked_result(InferCtx &ctx, size_t i, DType dt) {
  if (ctx.type(i).ranked) return false;
  ctx.out.assign(std::max<size_t>(ctx.op.results.size(), 1), TensorType{dt, {}, false});
  return true;
}

} // namespace kiln::shape_ops

namespace kiln::shape_ops {

// dst[i] = src[base + sum_d idx_d * strides[d]] over dst's row-major indices.
inline void strided_copy(const Tensor &src, int64_t base, const std::vector<int64_t> &strides,
                         Tensor &dst) {
  const Shape &os = dst.shape();
  const int64_t n = dst.numel();
  if (n == 0) return;
  const size_t es = dtype_size(src.dtype());
  const std::byte *s = src.raw();
  std::byte *d = dst.raw_mut();
  std::vector<int64_t> idx(os.size(), 0);
  int64_t off = base;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(d + static_cast<size_t>(i) * es, s + static_cast<size_t>(off) * es, es);
    for (int64_t k = static_cast<int64_t>(os.size()) - 1; k >= 0; --k) {
      if (++idx[k] < os[k]) {
        off += strides[k];
        break;
      }
      off -= strides[k] * (os[k] - 1);
      idx[k] = 0;
    }
  }
}

} // namespace kiln::shape_ops
