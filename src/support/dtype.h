// Element types of tensors, shared by every IR, the frontends and the runtime format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

#define KILN_DTYPE_LIST(X)                                                                         \
  X(f32, "f32", 4)                                                                                 \
  X(f16, "f16", 2)                                                                                 \
  X(bf16, "bf16", 2)                                                                               \
  X(f64, "f64", 8)                                                                                 \
  X(i8, "i8", 1)                                                                                   \
  X(u8, "u8", 1)                                                                                   \
  X(i16, "i16", 2)                                                                                 \
  X(u16, "u16", 2)                                                                                 \
  X(i32, "i32", 4)                                                                                 \
  X(u32, "u32", 4)                                                                                 \
  X(i64, "i64", 8)                                                                                 \
  X(u64, "u64", 8)                                                                                 \
  X(boolean, "i1", 1)

enum class DType : uint8_t {
#define KILN_X(id, name, size) id,
  KILN_DTYPE_LIST(KILN_X)
#undef KILN_X
};

inline constexpr int kNumDTypes = 13;

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

inline bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}
inline bool is_bool(DType t) { return t == DType::boolean; }
inline bool is_integer(DType t) { return !is_float(t) && !is_bool(t); }
inline bool is_signed_int(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64;
}
inline bool is_unsigned_int(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64;
}
// Lowest / highest value of an integer or bool dtype, as int64 (u64's highest by bit pattern,
// -1); 0 for float dtypes.
int64_t int_lowest(DType t);
int64_t int_highest(DType t);

} // namespace kiln
