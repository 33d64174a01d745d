#include "support/dtype.h"
#include "support/half.h"
#include "support/status.h"

#include <cmath>
#include <limits>

namespace kiln {

void assert_fail(const char *expr, const char *file, int line, const char *msg) {
  std::fprintf(stderr, "kiln internal error: %s (%s) at %s:%d\n", msg, expr, file, line);
  std::abort();
}

int64_t int_lowest(DType t) {
  switch (t) {
  case DType::i8: return std::numeric_limits<int8_t>::min();
  case DType::i16: return std::numeric_limits<int16_t>::min();
  case DType::i32: return std::numeric_limits<int32_t>::min();
  case DType::i64: return std::numeric_limits<int64_t>::min();
  case DType::i4: return -8;
  case DType::i2: return -2;
  default: return 0; // unsigned, bool and float
  }
}

int64_t int_highest(DType t) {
  switch (t) {
  case DType::i8: return std::numeric_limits<int8_t>::max();
  case DType::u8: return std::numeric_limits<uint8_t>::max();
  case DType::i16: return std::numeric_limits<int16_t>::max();
  case DType::u16: return std::numeric_limits<uint16_t>::max();
  case DType::i32: return std::numeric_limits<int32_t>::max();
  case DType::u32: return std::numeric_limits<uint32_t>::max();
  case DType::i64: return std::numeric_limits<int64_t>::max();
  case DType::u64: return -1; // all bits set
  case DType::boolean: return 1;
  case DType::i4: return 7;
  case DType::u4: return 15;
  case DType::i2: return 1;
  case DType::u2: return 3;
  default: return 0;
  }
}

int dtype_bits(DType t) {
  switch (t) {
  case DType::i4:
  case DType::u4:
  case DType::f4e2m1: return 4;
  case DType::i2:
  case DType::u2: return 2;
  default: return 8 * static_cast<int>(dtype_size(t));
  }
}

size_t dtype_size(DType t) {
  switch (t) {
#define KILN_X(id, name, api, size, c_enum, fb)                                                \
  case DType::id:                                                                                  \
    return size;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
#define KILN_X(id, name, api, size, c_enum, fb)                                                \
  case DType::id:                                                                                  \
    return name;
    KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
#define KILN_X(id, name, api, size, c_enum, fb)                                                \
  if (s == name) return DType::id;
  KILN_DTYPES(KILN_X)
#undef KILN_X
  return std::nullopt;
}

uint16_t f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    int shift = 14 - e;
    uint32_t half_man = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_man & 1u))) ++half_man;
    return static_cast<uint16_t>(sign | half_man);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
  uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; // may carry into exponent: correct
  return static_cast<uint16_t>(h);
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0) {
    if (man == 0) return f32_from_bits(sign);
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return f32_from_bits(sign | 0x7f800000u | (man << 13));
  return f32_from_bits(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

} // namespace kiln
