// Internal declarations of the nn "extra" ops (resampling, detection, quantisation):
// src/ops/nn_resize*.cpp and src/ops/nn_quant*.cpp. register_nn_extra_ops (nn_resize.cpp)
// calls the per-file registration functions below.
#pragma once

#include "ops/op_util.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

void register_nn_resize_ops(OpRegistry &r);  // nn_resize.cpp: resize
void register_nn_grid_ops(OpRegistry &r);    // nn_resize_grid.cpp: grid_sample, affine_grid
void register_nn_detect_ops(OpRegistry &r);  // nn_resize_detect.cpp: roi_align, nms
void register_nn_quant_ops(OpRegistry &r);   // nn_quant.cpp: (de)quantize_linear, dynamic
void register_nn_qlinear_ops(OpRegistry &r); // nn_quant_linear.cpp: qlinear_matmul/conv

// Value range of an integer dtype (u64 is limited to the int64 range).
inline void int_range(DType t, int64_t &lo, int64_t &hi) {
  switch (t) {
  case DType::i8: lo = -128; hi = 127; return;
  case DType::u8: lo = 0; hi = 255; return;
  case DType::i16: lo = -32768; hi = 32767; return;
  case DType::u16: lo = 0; hi = 65535; return;
  case DType::i32: lo = std::numeric_limits<int32_t>::min(); hi = std::numeric_limits<int32_t>::max(); return;
  case DType::u32: lo = 0; hi = std::numeric_limits<uint32_t>::max(); return;
  case DType::boolean: lo = 0; hi = 1; return;
  case DType::u64: lo = 0; hi = std::numeric_limits<int64_t>::max(); return;
  case DType::i4:
  case DType::u4:
  case DType::i2:
  case DType::u2: lo = int_lowest(t); hi = int_highest(t); return;
  default: lo = std::numeric_limits<int64_t>::min(); hi = std::numeric_limits<int64_t>::max(); return;
  }
}

// Rounds half to even and saturates to the range of integer dtype `t` (NaN gives 0).
inline int64_t round_saturate(double v, DType t) {
  int64_t lo = 0, hi = 0;
  int_range(t, lo, hi);
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v); // default rounding mode: to nearest, ties to even
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

// A coordinate clamped to a range where integer conversion is defined (NaN stays NaN).
inline double clamp_coord(double v) { return std::clamp(v, -1e12, 1e12); }

// Writes `v` to element i of `t`: floats directly, integers rounded and saturated.
inline void store_rounded(Tensor &t, int64_t i, double v) {
  if (is_float(t.dtype())) t.set_f64(i, v);
  else t.set_i64(i, round_saturate(v, t.dtype()));
}

} // namespace kiln
