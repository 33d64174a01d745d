// Element types of tensors, shared by every IR, the frontends and the runtime format.
#pragma once

#include "kiln/artifact/lists.h" // KILN_DTYPES: the one dtype list

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln {

// Values equal the artifact's and the C API's (schema/include/kiln/artifact/lists.h).
enum class DType : uint8_t {
#define KILN_X(id, text, api, bytes, c_enum, fb) id,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};

inline constexpr int kNumDTypes = 0
#define KILN_X(id, text, api, bytes, c_enum, fb) +1
    KILN_DTYPES(KILN_X)
#undef KILN_X
    ;

size_t dtype_size(DType t);
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);

// The arithmetic floats (computed in, not just stored).
inline bool is_float(DType t) {
  return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64;
}
// Storage-only float formats (float8, float4, e8m0): Cast, QuantizeLinear / DequantizeLinear and
// data movement take them; arithmetic ops refuse them. See support/narrow.h.
inline bool is_narrow_float(DType t) {
  return t == DType::f8e4m3fn || t == DType::f8e4m3fnuz || t == DType::f8e5m2 ||
         t == DType::f8e5m2fnuz || t == DType::f4e2m1 || t == DType::f8e8m0;
}
// Integers narrower than a byte, held one element per byte (sign-extended for i4 / i2).
inline bool is_narrow_int(DType t) {
  return t == DType::i4 || t == DType::u4 || t == DType::i2 || t == DType::u2;
}
inline bool is_narrow(DType t) { return is_narrow_float(t) || is_narrow_int(t); }
inline bool is_bool(DType t) { return t == DType::boolean; }
inline bool is_integer(DType t) { return !is_float(t) && !is_bool(t) && !is_narrow_float(t); }
inline bool is_signed_int(DType t) {
  return t == DType::i8 || t == DType::i16 || t == DType::i32 || t == DType::i64 ||
         t == DType::i4 || t == DType::i2;
}
inline bool is_unsigned_int(DType t) {
  return t == DType::u8 || t == DType::u16 || t == DType::u32 || t == DType::u64 ||
         t == DType::u4 || t == DType::u2;
}
// Bits one element takes where a format packs it (ONNX TensorProto): 4 or 2 for the sub-byte
// types, 8 * dtype_size otherwise.
int dtype_bits(DType t);
// Lowest / highest value of an integer or bool dtype, as int64 (u64's highest by bit pattern,
// -1); 0 for float dtypes.
int64_t int_lowest(DType t);
int64_t int_highest(DType t);

} // namespace kiln
