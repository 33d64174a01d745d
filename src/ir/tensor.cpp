#include "ir/tensor.h"

#include "support/half.h"
#include "support/narrow.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace kiln {

int64_t shape_numel(const Shape &shape) {
  // Saturates at INT64_MAX instead of overflowing: a hostile shape then fails the size limits.
  // A zero dimension makes it empty whatever the others are.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

std::string shape_str(const Shape &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

std::vector<int64_t> shape_strides(const Shape &shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    st[i] = st[i + 1] * shape[i + 1];
  return st;
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(shape_numel(shape_)) {
  size_t bytes = nbytes();
  data_ = std::shared_ptr<std::byte[]>(new std::byte[bytes ? bytes : 1]());
}

Result<Tensor> Tensor::allocate(DType dtype, Shape shape, int64_t max_bytes) {
  for (int64_t d : shape)
    if (d < 0) return Status::error(fmt::format("negative dimension {} in shape", d));
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return Tensor(dtype, std::move(shape));
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > max_bytes / d)
      return Status::error(fmt::format("tensor of shape [{}] is too large", shape_str(shape)));
    n *= d;
  }
  if (n > max_bytes / static_cast<int64_t>(dtype_size(dtype)))
    return Status::error(fmt::format("tensor of shape [{}] {} exceeds the {} byte limit",
                                     shape_str(shape), dtype_name(dtype), max_bytes));
  return Tensor(dtype, std::move(shape));
}

Tensor Tensor::scalar_f64(DType dtype, double v) {
  Tensor t(dtype, {});
  t.set_f64(0, v);
  return t;
}
Tensor Tensor::scalar_i64(DType dtype, int64_t v) {
  Tensor t(dtype, {});
  t.set_i64(0, v);
  return t;
}
Tensor Tensor::from_i64s(const std::vector<int64_t> &values) {
  Tensor t(DType::i64, {static_cast<int64_t>(values.size())});
  if (!values.empty()) std::memcpy(t.raw_mut(), values.data(), values.size() * 8);
  return t;
}
Tensor Tensor::from_f32s(const std::vector<float> &values, Shape shape) {
  Tensor t(DType::f32, std::move(shape));
  KILN_ASSERT(static_cast<int64_t>(values.size()) == t.numel(), "from_f32s size mismatch");
  if (!values.empty()) std::memcpy(t.raw_mut(), values.data(), values.size() * 4);
  return t;
}

double Tensor::get_f64(int64_t i) const {
  const std::byte *p = data_.get();
  switch (dtype_) {
  case DType::f32: return reinterpret_cast<const float *>(p)[i];
  case DType::f16: return f16_to_f32(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::bf16: return bf16_to_f32(reinterpret_cast<const uint16_t *>(p)[i]);
  case DType::f64: return reinterpret_cast<const double *>(p)[i];
  case DType::i8: return reinterpret_cast<const int8_t *>(p)[i];
  case DType::u8: return reinterpret_cast<const uint8_t *>(p)[i];
  case DType::i16: return reinterpret_cast<const int16_t *>(p)[i];
  case DType::u16: return reinterpret_cast<const uint16_t *>(p)[i];
  case DType::i32: return reinterpret_cast<const int32_t *>(p)[i];
  case DType::u32: return reinterpret_cast<const uint32_t *>(p)[i];
  case DType::i64: return static_cast<double>(reinterpret_cast<const int64_t *>(p)[i]);
  case DType::u64: return static_cast<double>(reinterpret_cast<const uint64_t *>(p)[i]);
  case DType::boolean: return reinterpret_cast<const uint8_t *>(p)[i] ? 1.0 : 0.0;
  case DType::i4:
  case DType::i2: return reinterpret_cast<const int8_t *>(p)[i];
  case DType::u4:
  case DType::u2: return reinterpret_cast<const uint8_t *>(p)[i];
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: return narrow_float_to_f64(dtype_, reinterpret_cast<const uint8_t *>(p)[i]);
  }
  return 0;
}

int64_t Tensor::get_i64(int64_t i) const {
  const std::byte *p = data_.get();
  switch (dtype_) {
  case DType::f32:
  case DType::f16:
  case DType::bf16:
  case DType::f64:
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: {
    double v = get_f64(i);
    if (std::isnan(v)) return 0;
    if (v >= 9.2e18) return std::numeric_limits<int64_t>::max();
    if (v <= -9.2e18) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(v);
  }
  case DType::i8: return reinterpret_cast<const int8_t *>(p)[i];
  case DType::u8: return reinterpret_cast<const uint8_t *>(p)[i];
  case DType::i16: return reinterpret_cast<const int16_t *>(p)[i];
  case DType::u16: return reinterpret_cast<const uint16_t *>(p)[i];
  case DType::i32: return reinterpret_cast<const int32_t *>(p)[i];
  case DType::u32: return reinterpret_cast<const uint32_t *>(p)[i];
  case DType::i64: return reinterpret_cast<const int64_t *>(p)[i];
  case DType::u64: return static_cast<int64_t>(reinterpret_cast<const uint64_t *>(p)[i]);
  case DType::boolean: return reinterpret_cast<const uint8_t *>(p)[i] ? 1 : 0;
  case DType::i4:
  case DType::i2: return reinterpret_cast<const int8_t *>(p)[i];
  case DType::u4:
  case DType::u2: return reinterpret_cast<const uint8_t *>(p)[i];
  }
  return 0;
}

void Tensor::set_f64(int64_t i, double v) { set_f64(i, v, true); }

void Tensor::set_f64(int64_t i, double v, bool saturate) {
  std::byte *p = data_.get();
  switch (dtype_) {
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
    reinterpret_cast<uint8_t *>(p)[i] = f64_to_narrow_float(dtype_, v, saturate);
    return;
  case DType::f8e8m0:
    reinterpret_cast<uint8_t *>(p)[i] =
        f32_to_e8m0(static_cast<float>(v), E8M0Round::up, saturate);
    return;
  case DType::f32: reinterpret_cast<float *>(p)[i] = static_cast<float>(v); return;
  case DType::f16: reinterpret_cast<uint16_t *>(p)[i] = f32_to_f16(static_cast<float>(v)); return;
  case DType::bf16:
    reinterpret_cast<uint16_t *>(p)[i] = f32_to_bf16(static_cast<float>(v));
    return;
  case DType::f64: reinterpret_cast<double *>(p)[i] = v; return;
  case DType::boolean: reinterpret_cast<uint8_t *>(p)[i] = v != 0.0 ? 1 : 0; return;
  default: break;
  }
  // Integer destination: truncate toward zero; out-of-range and NaN are implementation-defined
  // in C++, so go through int64 with clamping first.
  int64_t iv;
  if (std::isnan(v)) iv = 0;
  else if (v >= 9.2e18) iv = dtype_ == DType::u64 ? static_cast<int64_t>(static_cast<uint64_t>(v > 1.8e19 ? 1.8e19 : v)) : std::numeric_limits<int64_t>::max();
  else if (v <= -9.2e18) iv = std::numeric_limits<int64_t>::min();
  else iv = static_cast<int64_t>(v);
  set_i64(i, iv);
}

void Tensor::set_i64(int64_t i, int64_t v) {
  std::byte *p = data_.get();
  switch (dtype_) {
  case DType::f32: reinterpret_cast<float *>(p)[i] = static_cast<float>(v); return;
  case DType::f16: reinterpret_cast<uint16_t *>(p)[i] = f32_to_f16(static_cast<float>(v)); return;
  case DType::bf16: reinterpret_cast<uint16_t *>(p)[i] = f32_to_bf16(static_cast<float>(v)); return;
  case DType::f64: reinterpret_cast<double *>(p)[i] = static_cast<double>(v); return;
  case DType::i8: reinterpret_cast<int8_t *>(p)[i] = static_cast<int8_t>(v); return;
  case DType::u8: reinterpret_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(v); return;
  case DType::i16: reinterpret_cast<int16_t *>(p)[i] = static_cast<int16_t>(v); return;
  case DType::u16: reinterpret_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(v); return;
  case DType::i32: reinterpret_cast<int32_t *>(p)[i] = static_cast<int32_t>(v); return;
  case DType::u32: reinterpret_cast<uint32_t *>(p)[i] = static_cast<uint32_t>(v); return;
  case DType::i64: reinterpret_cast<int64_t *>(p)[i] = v; return;
  case DType::u64: reinterpret_cast<uint64_t *>(p)[i] = static_cast<uint64_t>(v); return;
  case DType::boolean: reinterpret_cast<uint8_t *>(p)[i] = v != 0 ? 1 : 0; return;
  case DType::i4:
  case DType::u4:
  case DType::i2:
  case DType::u2: reinterpret_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(wrap_narrow_int(dtype_, v)); return;
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: set_f64(i, static_cast<double>(v)); return;
  }
}

std::vector<int64_t> Tensor::to_i64s() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[i] = get_i64(i);
  return v;
}
std::vector<double> Tensor::to_f64s() const {
  std::vector<double> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[i] = get_f64(i);
  return v;
}

Tensor Tensor::reshaped(Shape shape) const {
  KILN_ASSERT(shape_numel(shape) == numel_, "reshaped: element count differs");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.raw_mut(), raw(), nbytes());
  return t;
}

Tensor Tensor::cast(DType to) const { return cast(to, true); }

Tensor Tensor::cast(DType to, bool saturate) const {
  Tensor t(to, shape_);
  if (to == dtype_) {
    if (nbytes()) std::memcpy(t.raw_mut(), raw(), nbytes());
    return t;
  }
  if (is_narrow_float(to)) {
    // Through a double: exact for every source but the widest integers (one extra rounding).
    for (int64_t i = 0; i < numel_; ++i) t.set_f64(i, get_f64(i), saturate);
  } else if (is_float(dtype_) || is_narrow_float(dtype_) ||
             (is_float(to) && dtype_ != DType::u64 && dtype_ != DType::i64)) {
    for (int64_t i = 0; i < numel_; ++i) t.set_f64(i, get_f64(i));
  } else if (is_float(to) && dtype_ == DType::u64) {
    const uint64_t *p = data<uint64_t>();
    for (int64_t i = 0; i < numel_; ++i) t.set_f64(i, static_cast<double>(p[i]));
  } else if (is_float(to)) {
    // i64 -> float: round once, directly to the target precision where possible.
    const int64_t *p = data<int64_t>();
    for (int64_t i = 0; i < numel_; ++i) {
      if (to == DType::f32) t.data_mut<float>()[i] = static_cast<float>(p[i]);
      else t.set_f64(i, static_cast<double>(p[i]));
    }
  } else {
    for (int64_t i = 0; i < numel_; ++i) t.set_i64(i, get_i64(i));
  }
  return t;
}

bool Tensor::identical(const Tensor &o) const {
  return dtype_ == o.dtype_ && shape_ == o.shape_ &&
         (nbytes() == 0 || std::memcmp(raw(), o.raw(), nbytes()) == 0);
}

Result<Shape> broadcast_shapes(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else
      return Status::error(
          fmt::format("shapes [{}] and [{}] do not broadcast", shape_str(a), shape_str(b)));
  }
  return out;
}

BroadcastIndexer::BroadcastIndexer(const Shape &out_shape, const std::vector<Shape> &in_shapes)
    : out_(out_shape) {
  for (const Shape &s : in_shapes) {
    std::vector<int64_t> st(out_.size(), 0);
    auto in_st = shape_strides(s);
    size_t off = out_.size() - s.size();
    for (size_t d = 0; d < s.size(); ++d) st[off + d] = s[d] == 1 ? 0 : in_st[d];
    strides_.push_back(std::move(st));
  }
}

} // namespace kiln
