#include "support/narrow.h"

#include "support/half.h"
#include "support/status.h"

#include <cmath>
#include <fmt/format.h>
#include <limits>

namespace kiln {

namespace {

// A sign / exponent / mantissa format of at most 8 bits.
struct FloatFormat {
  int ebits, mbits, bias;
  bool has_inf;      // e5m2: exponent all ones, mantissa 0
  bool uz;           // fnuz: no -0, the one NaN is 0x80
  uint8_t max_bits;  // largest finite magnitude pattern (sign clear)
};

FloatFormat format_of(DType t) {
  switch (t) {
  case DType::f8e4m3fn: return {4, 3, 7, false, false, 0x7E};
  case DType::f8e4m3fnuz: return {4, 3, 8, false, true, 0x7F};
  case DType::f8e5m2: return {5, 2, 15, true, false, 0x7B};
  case DType::f8e5m2fnuz: return {5, 2, 16, false, true, 0x7F};
  case DType::f4e2m1: return {2, 1, 1, false, false, 0x7};
  default: break;
  }
  KILN_ASSERT(false, "format_of: not a float8 / float4 dtype");
  return {};
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double decode(const FloatFormat &f, uint8_t bits) {
  const int width = 1 + f.ebits + f.mbits;
  const uint8_t sign_bit = static_cast<uint8_t>(1u << (width - 1));
  const uint8_t mag = bits & static_cast<uint8_t>(sign_bit - 1);
  const bool neg = (bits & sign_bit) != 0;
  const int exp = mag >> f.mbits;
  const int man = mag & ((1 << f.mbits) - 1);
  const int exp_max = (1 << f.ebits) - 1;
  if (f.uz && bits == sign_bit) return kNaN;
  if (f.has_inf && exp == exp_max)
    return man == 0 ? (neg ? -INFINITY : INFINITY) : kNaN;
  if (!f.uz && !f.has_inf && width == 8 && mag == 0x7F) return kNaN; // e4m3fn
  double v = exp == 0 ? std::ldexp(static_cast<double>(man), 1 - f.bias - f.mbits)
                      : std::ldexp(static_cast<double>(man + (1 << f.mbits)),
                                   exp - f.bias - f.mbits);
  return neg ? -v : v;
}

uint8_t nan_bits(DType t, bool neg) {
  switch (t) {
  case DType::f8e4m3fn: return neg ? 0xFF : 0x7F;
  case DType::f8e5m2: return neg ? 0xFF : 0x7F;
  case DType::f4e2m1: return 0x8;
  default: return 0x80; // fnuz
  }
}

} // namespace

double narrow_float_to_f64(DType t, uint8_t bits) {
  if (t == DType::f8e8m0) return bits == 0xFF ? kNaN : std::ldexp(1.0, int(bits) - 127);
  return decode(format_of(t), bits);
}

uint8_t f64_to_narrow_float(DType t, double v, bool saturate) {
  const FloatFormat f = format_of(t);
  const int width = 1 + f.ebits + f.mbits;
  const bool neg = std::signbit(v);
  const uint8_t sign = neg ? static_cast<uint8_t>(1u << (width - 1)) : 0;
  if (std::isnan(v)) return nan_bits(t, neg);
  if (t == DType::f4e2m1) saturate = true; // no inf, no NaN to overflow to
  auto overflow = [&]() -> uint8_t {
    if (saturate) return sign | f.max_bits;
    if (f.has_inf) return sign | static_cast<uint8_t>(((1 << f.ebits) - 1) << f.mbits);
    return nan_bits(t, neg);
  };
  if (std::isinf(v)) return overflow();
  const double a = std::fabs(v);
  const uint8_t zero = f.uz ? 0 : sign; // fnuz has no -0: it would be the NaN pattern
  if (a == 0) return zero;
  // The quantum (one unit in the last place) at a's binade, never below the subnormal one.
  const int emin = 1 - f.bias;
  const int e = std::max(std::ilogb(a), emin);
  const double quantum = std::ldexp(1.0, e - f.mbits);
  const double r = std::nearbyint(a / quantum); // exact scaling; ties to even (default mode)
  if (r == 0) return zero;
  const double mag = r * quantum;
  if (mag > decode(f, f.max_bits)) return overflow();
  int exp_field, man;
  if (e == emin && r < (1 << f.mbits)) { // subnormal
    exp_field = 0;
    man = static_cast<int>(r);
  } else if (r >= (2 << f.mbits)) { // rounded up into the next binade
    exp_field = e + 1 + f.bias;
    man = 0;
  } else {
    exp_field = e + f.bias;
    man = static_cast<int>(r) - (1 << f.mbits);
  }
  return sign | static_cast<uint8_t>((exp_field << f.mbits) | man);
}

uint8_t f32_to_e8m0(float v, E8M0Round mode, bool saturate) {
  if (std::isnan(v)) return 0xFF;
  if (std::isinf(v)) return saturate ? 0xFE : 0xFF;
  const double a = std::fabs(static_cast<double>(v));
  if (a == 0) return 0x00; // no zero: the smallest value, 2^-127
  int k = 0;
  const double f = std::frexp(a, &k); // a = f * 2^k, f in [0.5, 1): floor(log2 a) = k - 1
  int code = k - 1 + 127;
  if ((mode == E8M0Round::up && f != 0.5) || (mode == E8M0Round::nearest && f >= 0.75)) ++code;
  if (code < 0) return 0x00; // below 2^-127 (float32 subnormals): the smallest value
  if (code >= 0xFF) return saturate ? 0xFE : 0xFF;
  return static_cast<uint8_t>(code);
}

int64_t wrap_narrow_int(DType t, int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  switch (t) {
  case DType::i4: return static_cast<int64_t>((u & 0xF) ^ 0x8) - 0x8;
  case DType::u4: return static_cast<int64_t>(u & 0xF);
  case DType::i2: return static_cast<int64_t>((u & 0x3) ^ 0x2) - 0x2;
  case DType::u2: return static_cast<int64_t>(u & 0x3);
  default: break;
  }
  KILN_ASSERT(false, "wrap_narrow_int: not a narrow integer dtype");
  return 0;
}

bool narrow_byte_valid(DType t, uint8_t b) {
  switch (t) {
  case DType::i4:
  case DType::i2: return static_cast<int8_t>(b) >= int_lowest(t) && static_cast<int8_t>(b) <= int_highest(t);
  case DType::u4:
  case DType::u2: return b <= int_highest(t);
  case DType::f4e2m1: return b < 16;
  default: return true;
  }
}

size_t packed_bytes(DType t, int64_t n) {
  const int bits = dtype_bits(t);
  return static_cast<size_t>((static_cast<uint64_t>(n) * static_cast<uint64_t>(bits) + 7) / 8);
}

std::string unpack_narrow(DType t, const uint8_t *src, size_t src_len, int64_t n, uint8_t *dst) {
  const size_t need = packed_bytes(t, n);
  if (src_len != need)
    return fmt::format("{} packed {} elements need {} bytes, got {}", dtype_name(t), n, need,
                       src_len);
  const int bits = dtype_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t raw = (src[i / per_byte] >> (bits * (i % per_byte))) & mask;
    dst[i] = t == DType::f4e2m1 ? raw : static_cast<uint8_t>(wrap_narrow_int(t, raw));
  }
  return {};
}

std::vector<uint8_t> pack_narrow(DType t, const uint8_t *src, int64_t n) {
  const int bits = dtype_bits(t);
  const int per_byte = 8 / bits;
  const uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  std::vector<uint8_t> out(packed_bytes(t, n), 0);
  for (int64_t i = 0; i < n; ++i)
    out[i / per_byte] |= static_cast<uint8_t>((src[i] & mask) << (bits * (i % per_byte)));
  return out;
}

} // namespace kiln
