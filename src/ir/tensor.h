// A dense, row-major tensor value: the currency of constants, the reference executor and
// the I/O helpers. Storage is shared and immutable by convention once a tensor is published
// (constants, executor results); make_mutable() copies on demand.
#pragma once

#include "support/dtype.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace kiln {

using Shape = std::vector<int64_t>;

// Product of the dims; 1 for a scalar.
int64_t shape_numel(const Shape &shape);
std::string shape_str(const Shape &shape); // "2x3x4", "" for a scalar
// Row-major strides (in elements).
std::vector<int64_t> shape_strides(const Shape &shape);

class Tensor {
public:
  Tensor() = default;
  // Zero-filled tensor.
  Tensor(DType dtype, Shape shape);
  // Checked allocation: refuses sizes beyond max_bytes with a clear error.
  static Result<Tensor> allocate(DType dtype, Shape shape, int64_t max_bytes = int64_t(1) << 34);
  static Tensor scalar_f64(DType dtype, double v);
  static Tensor scalar_i64(DType dtype, int64_t v);
  static Tensor from_i64s(const std::vector<int64_t> &values); // 1-D i64
  static Tensor from_f32s(const std::vector<float> &values, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool valid() const { return data_ != nullptr || numel_ == 0; }

  const std::byte *raw() const { return data_.get(); }
  std::byte *raw_mut() { return data_.get(); }
  template <class T> const T *data() const { return reinterpret_cast<const T *>(data_.get()); }
  template <class T> T *data_mut() { return reinterpret_cast<T *>(data_.get()); }

  // Element access through a wide type: floats as double, integers as int64 (u64 by bit pattern),
  // bool as 0/1. Slow but exact; the reference executor relies on it. The narrow dtypes read as
  // their values (float8 / float4 / e8m0 decoded, i4 / u4 / i2 / u2 as integers); set_f64 to a
  // float8 / float4 type rounds to nearest even and saturates unless told not to, set_i64 to a
  // narrow integer wraps (support/narrow.h).
  double get_f64(int64_t i) const;
  int64_t get_i64(int64_t i) const;
  void set_f64(int64_t i, double v);
  void set_f64(int64_t i, double v, bool saturate);
  void set_i64(int64_t i, int64_t v);
  std::vector<int64_t> to_i64s() const;
  std::vector<double> to_f64s() const;

  // Same data, another shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy.
  Tensor clone() const;
  // Elementwise conversion (float -> int truncates toward zero, saturation is not applied;
  // float -> bool is x != 0; int -> i4/u4/i2/u2 wraps). To a float8 / float4 type it rounds to
  // nearest even; `saturate` picks what out-of-range values become (support/narrow.h).
  Tensor cast(DType to) const;
  Tensor cast(DType to, bool saturate) const;

  // Exact equality of dtype, shape and bytes.
  bool identical(const Tensor &other) const;

private:
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte[]> data_;
};

// Broadcast two shapes numpy-style; error when incompatible.
Result<Shape> broadcast_shapes(const Shape &a, const Shape &b);

// Iterates over every index of `out_shape` and gives, for each input, the flat offset of the
// broadcast element. Inputs have rank <= out rank (right-aligned, dims 1 or equal).
class BroadcastIndexer {
public:
  BroadcastIndexer(const Shape &out_shape, const std::vector<Shape> &in_shapes);
  // Flat input offset for output flat index `i` (computed incrementally is faster; see for_each).
  template <class F> void for_each(F &&f) const {
    const int64_t n = shape_numel(out_);
    std::vector<int64_t> idx(out_.size(), 0);
    std::vector<int64_t> off(strides_.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      f(i, off.data());
      for (int64_t d = static_cast<int64_t>(out_.size()) - 1; d >= 0; --d) {
        if (++idx[d] < out_[d]) {
          for (size_t k = 0; k < strides_.size(); ++k) off[k] += strides_[k][d];
          break;
        }
        for (size_t k = 0; k < strides_.size(); ++k) off[k] -= strides_[k][d] * (out_[d] - 1);
        idx[d] = 0;
      }
    }
  }

private:
  Shape out_;
  std::vector<std::vector<int64_t>> strides_; // per input, per output dim (0 where broadcast)
};

} // namespace kiln
