// Conversions of the narrow dtypes: the float8 formats (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz),
// float4 e2m1, the scale format float8 e8m0, and the sub-byte integers (i4, u4, i2, u2).
//
// kiln holds each element in one byte (see schema/include/kiln/artifact/lists.h); packing is
// only a matter of the ONNX storage format (pack_narrow / unpack_narrow below).
//
// The float formats, as ONNX defines them (onnx/docs/technical/float8.md and the Cast spec):
//   e4m3fn    bias 7,  no inf, NaN S.1111.111, max 448, has -0
//   e4m3fnuz  bias 8,  no inf, NaN 0x80 only,  max 240, no -0
//   e5m2      bias 15, inf S.11111.00, NaN S.11111.xx (xx != 0), max 57344, has -0
//   e5m2fnuz  bias 16, no inf, NaN 0x80 only,  max 57344, no -0
//   f4e2m1    bias 1,  no inf, no NaN, max 6, has -0 (4 bits, the low nibble of the byte)
//   e8m0      unsigned powers of two 2^(bits - 127), NaN 0xFF, no zero
#pragma once

#include "support/dtype.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

// The value of a float8 / float4 / e8m0 bit pattern (exact in a double). NaN patterns give a
// quiet NaN. `t` must be a narrow float dtype.
double narrow_float_to_f64(DType t, uint8_t bits);

// Rounds `v` to the float8 / float4 format `t` (not e8m0), to nearest, ties to even.
// Out of range (after rounding) and +-inf: with `saturate` the largest finite value of the
// sign; without it inf for e5m2, NaN for the other float8 types. float4 e2m1 has neither, so it
// always saturates. NaN gives the type's NaN (float4: 0x8, the pattern of -0, as ONNX does).
uint8_t f64_to_narrow_float(DType t, double v, bool saturate = true);

// ONNX Cast's round_mode for float8 e8m0.
enum class E8M0Round { up, down, nearest };

// Rounds a float to e8m0, a power of two 2^(code - 127) (the sign is dropped): `up` rounds any
// value between two powers up, `down` truncates, `nearest` rounds 1.5 * 2^e and above up.
// 0 and values below 2^-127 give 0x00 (the smallest value; e8m0 has no zero). Past 2^127, or
// +-inf: 0xFE (2^127) with `saturate`, else NaN 0xFF. NaN: 0xFF.
uint8_t f32_to_e8m0(float v, E8M0Round mode, bool saturate = true);

// Wraps an integer to a narrow integer type (two's complement, as a cast to int8 wraps):
// i4 -> [-8, 7], u4 -> [0, 15], i2 -> [-2, 1], u2 -> [0, 3].
int64_t wrap_narrow_int(DType t, int64_t v);

// Whether byte `b` is a valid one-per-byte element of narrow dtype `t` (i4 / i2 sign-extended,
// u4 / u2 / f4e2m1 in range; every byte is a valid float8 / e8m0 pattern).
bool narrow_byte_valid(DType t, uint8_t b);

// Packed size in bytes of `n` elements of `t` (ceil(n * bits / 8)).
size_t packed_bytes(DType t, int64_t n);

// Unpacks `n` elements of a sub-byte dtype (i4, u4, f4e2m1: 2 a byte, i2, u2: 4 a byte, low
// bits first) from `src` (`src_len` bytes, which must equal packed_bytes(t, n)) into one byte
// each at `dst`. Returns an empty string, or why the data is unusable.
std::string unpack_narrow(DType t, const uint8_t *src, size_t src_len, int64_t n, uint8_t *dst);

// The reverse of unpack_narrow: `n` one-per-byte elements packed into packed_bytes(t, n) bytes.
std::vector<uint8_t> pack_narrow(DType t, const uint8_t *src, int64_t n);

} // namespace kiln
