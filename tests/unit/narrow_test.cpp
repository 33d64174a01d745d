// The narrow dtypes: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float4 e2m1, e8m0 and the
// sub-byte integers. Every bit pattern decoded and round-tripped, rounding ties, saturation,
// packed nibble order, and truncated packed data refused.
#include "frontend/onnx/importer.h"
#include "ir/tensor.h"
#include "support/narrow.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>

namespace kiln {
namespace {

constexpr DType kFloat8[] = {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2,
                             DType::f8e5m2fnuz};

double dec(DType t, int bits) { return narrow_float_to_f64(t, static_cast<uint8_t>(bits)); }
int enc(DType t, double v, bool sat = true) { return f64_to_narrow_float(t, v, sat); }

// An independent decoder written from the format definitions (sign, exponent, mantissa, bias,
// and which patterns are special), to check narrow_float_to_f64 against.
double spec_decode(DType t, int b) {
  int e_bits = 4, m_bits = 3, bias = 7;
  if (t == DType::f8e4m3fnuz) bias = 8;
  if (t == DType::f8e5m2) e_bits = 5, m_bits = 2, bias = 15;
  if (t == DType::f8e5m2fnuz) e_bits = 5, m_bits = 2, bias = 16;
  const bool uz = t == DType::f8e4m3fnuz || t == DType::f8e5m2fnuz;
  if (uz && b == 0x80) return NAN;
  if (t == DType::f8e4m3fn && (b & 0x7F) == 0x7F) return NAN;
  const int e = (b >> m_bits) & ((1 << e_bits) - 1), m = b & ((1 << m_bits) - 1);
  if (t == DType::f8e5m2 && e == 31) return m ? NAN : ((b & 0x80) ? -INFINITY : INFINITY);
  double mag = 0;
  if (e == 0) mag = m * std::pow(2.0, 1 - bias - m_bits);
  else mag = (1 + m / std::pow(2.0, m_bits)) * std::pow(2.0, e - bias);
  return (b & 0x80) ? -mag : mag;
}

TEST(Narrow, EveryFloat8PatternDecodes) {
  for (DType t : kFloat8) {
    int nans = 0;
    for (int b = 0; b < 256; ++b) {
      const double want = spec_decode(t, b), got = dec(t, b);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << dtype_name(t) << " " << b;
        ++nans;
      } else {
        EXPECT_EQ(got, want) << dtype_name(t) << " " << b;
      }
    }
    // e4m3fn: S.1111.111 (2); e5m2: S.11111.{01,10,11} (6); fnuz: 0x80 only.
    const int want_nans = t == DType::f8e4m3fn ? 2 : t == DType::f8e5m2 ? 6 : 1;
    EXPECT_EQ(nans, want_nans) << dtype_name(t);
  }
  // Landmarks from the ONNX float8 note.
  EXPECT_EQ(dec(DType::f8e4m3fn, 0x7E), 448.0);
  EXPECT_EQ(dec(DType::f8e4m3fn, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(dec(DType::f8e4m3fnuz, 0x7F), 240.0);
  EXPECT_EQ(dec(DType::f8e4m3fnuz, 0x01), std::ldexp(1.0, -10));
  EXPECT_EQ(dec(DType::f8e5m2, 0x7B), 57344.0);
  EXPECT_EQ(dec(DType::f8e5m2, 0x7C), INFINITY);
  EXPECT_EQ(dec(DType::f8e5m2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(dec(DType::f8e5m2fnuz, 0x7F), 57344.0);
  EXPECT_EQ(dec(DType::f8e5m2fnuz, 0x01), std::ldexp(1.0, -17));
}

TEST(Narrow, EveryPatternRoundTrips) {
  for (DType t : {DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2, DType::f8e5m2fnuz,
                  DType::f4e2m1}) {
    const int n = t == DType::f4e2m1 ? 16 : 256;
    for (int b = 0; b < n; ++b) {
      const double v = dec(t, b);
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(enc(t, v, true), b) << dtype_name(t) << " " << v;
      EXPECT_EQ(enc(t, v, false), b) << dtype_name(t) << " " << v;
    }
  }
  for (int b = 0; b < 255; ++b)
    EXPECT_EQ(f32_to_e8m0(static_cast<float>(dec(DType::f8e8m0, b)), E8M0Round::up), b) << b;
  EXPECT_TRUE(std::isnan(dec(DType::f8e8m0, 0xFF)));
}

TEST(Narrow, RoundsToNearestEven) {
  const DType e4 = DType::f8e4m3fn, e5 = DType::f8e5m2;
  EXPECT_EQ(enc(e4, 1.0 + 1.0 / 16), 0x38);  // tie 1 | 1.125 -> 1 (even mantissa)
  EXPECT_EQ(enc(e4, 1.0 + 3.0 / 16), 0x3A);  // tie 1.125 | 1.25 -> 1.25
  EXPECT_EQ(enc(e4, 1.0 + 1.0 / 16 + 1e-9), 0x39); // just above the tie rounds up
  EXPECT_EQ(enc(e4, std::ldexp(1.0, -10)), 0x00);  // half the smallest subnormal -> 0
  EXPECT_EQ(enc(e4, -std::ldexp(1.0, -10)), 0x80); // -> -0
  EXPECT_EQ(enc(e4, std::ldexp(3.0, -10)), 0x02);  // tie 1 | 2 subnormal steps -> 2
  EXPECT_EQ(enc(e4, std::ldexp(15.0, -10)), 0x08); // tie 7 steps | min normal -> min normal
  EXPECT_EQ(enc(e5, 1.0 + 1.0 / 8), 0x3C);         // tie 1 | 1.25 -> 1
  EXPECT_EQ(enc(e5, 1.0 + 3.0 / 8), 0x3E);         // tie 1.25 | 1.5 -> 1.5
  // float4 e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
  const DType f4 = DType::f4e2m1;
  EXPECT_EQ(enc(f4, 0.25), 0x0);
  EXPECT_EQ(enc(f4, 0.75), 0x2);
  EXPECT_EQ(enc(f4, 2.5), 0x4);
  EXPECT_EQ(enc(f4, 5.0), 0x6);
  EXPECT_EQ(enc(f4, -3.5), 0xE);
  EXPECT_EQ(enc(f4, -0.0), 0x8);
}

TEST(Narrow, SaturatesOrOverflows) {
  const DType e4 = DType::f8e4m3fn, e4uz = DType::f8e4m3fnuz, e5 = DType::f8e5m2,
              e5uz = DType::f8e5m2fnuz;
  // 464 is the tie between 448 (even) and the NaN slot: it stays 448 either way.
  EXPECT_EQ(enc(e4, 464, true), 0x7E);
  EXPECT_EQ(enc(e4, 464, false), 0x7E);
  EXPECT_EQ(enc(e4, 465, true), 0x7E);
  EXPECT_EQ(enc(e4, 465, false), 0x7F);
  EXPECT_EQ(enc(e4, -1e6, true), 0xFE);
  EXPECT_EQ(enc(e4, -1e6, false), 0xFF);
  EXPECT_EQ(enc(e4, INFINITY, true), 0x7E);
  EXPECT_EQ(enc(e4, INFINITY, false), 0x7F);
  EXPECT_EQ(enc(e4, NAN), 0x7F);
  // e5m2: 61440 ties between 57344 (odd mantissa) and 65536: rounds up, out of range.
  EXPECT_EQ(enc(e5, 61439, false), 0x7B);
  EXPECT_EQ(enc(e5, 61440, true), 0x7B);
  EXPECT_EQ(enc(e5, 61440, false), 0x7C);
  EXPECT_EQ(enc(e5, -INFINITY, false), 0xFC);
  EXPECT_EQ(enc(e5, -INFINITY, true), 0xFB);
  // fnuz: no -0 (0x80 is the NaN), no inf.
  for (DType t : {e4uz, e5uz}) {
    EXPECT_EQ(enc(t, -0.0), 0x00);
    EXPECT_EQ(enc(t, -1e-30), 0x00);
    EXPECT_EQ(enc(t, NAN), 0x80);
    EXPECT_EQ(enc(t, INFINITY, true), 0x7F);
    EXPECT_EQ(enc(t, -INFINITY, true), 0xFF);
    EXPECT_EQ(enc(t, INFINITY, false), 0x80);
    EXPECT_EQ(enc(t, 1e9, false), 0x80);
  }
  // float4 has neither inf nor NaN: always saturates; NaN becomes 0x8 as ONNX's data has it.
  EXPECT_EQ(enc(DType::f4e2m1, 1e6, false), 0x7);
  EXPECT_EQ(enc(DType::f4e2m1, -INFINITY, false), 0xF);
  EXPECT_EQ(enc(DType::f4e2m1, NAN), 0x8);
  // e8m0: rounding modes and saturation.
  EXPECT_EQ(f32_to_e8m0(1.1f, E8M0Round::up), 0x80);
  EXPECT_EQ(f32_to_e8m0(1.1f, E8M0Round::down), 0x7F);
  EXPECT_EQ(f32_to_e8m0(1.4f, E8M0Round::nearest), 0x7F);
  EXPECT_EQ(f32_to_e8m0(1.6f, E8M0Round::nearest), 0x80);
  EXPECT_EQ(f32_to_e8m0(3e38f, E8M0Round::up, true), 0xFE);
  EXPECT_EQ(f32_to_e8m0(3e38f, E8M0Round::up, false), 0xFF);
  EXPECT_EQ(f32_to_e8m0(NAN, E8M0Round::up), 0xFF);
  EXPECT_EQ(f32_to_e8m0(0.0f, E8M0Round::up), 0x00);
  EXPECT_EQ(f32_to_e8m0(std::ldexp(1.0f, -140), E8M0Round::up), 0x00);
  EXPECT_EQ(f32_to_e8m0(0.124f, E8M0Round::up), 0x7C); // ONNX's test data: 0.124 -> 0.125
}

TEST(Narrow, TensorCastWrapsNarrowInts) {
  Tensor x = Tensor::from_f32s({-9, -8, 7, 8, 15, 2.9f}, {6});
  Tensor i4 = x.cast(DType::i4);
  EXPECT_EQ(i4.to_i64s(), (std::vector<int64_t>{7, -8, 7, -8, -1, 2}));
  Tensor u2 = x.cast(DType::u2);
  EXPECT_EQ(u2.to_i64s(), (std::vector<int64_t>{3, 0, 3, 0, 3, 2}));
  Tensor f8 = x.cast(DType::f8e4m3fn, false);
  EXPECT_EQ(f8.get_f64(5), 3.0); // 2.9 -> 3 (e4m3 step 0.25 at 2..4: 2.9 -> 3.0)
}

TEST(Narrow, PackedNibbleOrder) {
  // ONNX packs the first element in the low nibble: {7, -8} is 0x87.
  const uint8_t packed[] = {0x87, 0x0F};
  uint8_t out[4];
  ASSERT_EQ(unpack_narrow(DType::i4, packed, 2, 3, out), "");
  EXPECT_EQ(static_cast<int8_t>(out[0]), 7);
  EXPECT_EQ(static_cast<int8_t>(out[1]), -8);
  EXPECT_EQ(static_cast<int8_t>(out[2]), -1);
  ASSERT_EQ(unpack_narrow(DType::u4, packed, 2, 3, out), "");
  EXPECT_EQ(out[0], 7);
  EXPECT_EQ(out[1], 8);
  EXPECT_EQ(out[2], 15);
  const std::vector<uint8_t> back = pack_narrow(DType::u4, out, 3);
  EXPECT_EQ(back, (std::vector<uint8_t>{0x87, 0x0F}));
  // 2-bit: four a byte, low bits first. 0x39 = 00 11 10 01 -> 1, 2, 3, 0.
  const uint8_t two[] = {0x39};
  ASSERT_EQ(unpack_narrow(DType::u2, two, 1, 4, out), "");
  EXPECT_EQ((std::vector<int>{out[0], out[1], out[2], out[3]}), (std::vector<int>{1, 2, 3, 0}));
  ASSERT_EQ(unpack_narrow(DType::i2, two, 1, 3, out), "");
  EXPECT_EQ((std::vector<int>{int8_t(out[0]), int8_t(out[1]), int8_t(out[2])}),
            (std::vector<int>{1, -2, -1}));
}

// A TensorProto in protobuf wire format, written by hand (protobuf stays inside the ONNX
// frontend): dims (1), data_type (2), int32_data (5, unpacked), name (8), raw_data (9).
struct ProtoBytes {
  std::string b;
  void varint(uint64_t v) {
    do {
      uint8_t c = v & 0x7F;
      v >>= 7;
      b += static_cast<char>(c | (v ? 0x80 : 0));
    } while (v);
  }
  ProtoBytes &num(int field, uint64_t v) {
    varint(static_cast<uint64_t>(field) << 3);
    varint(v);
    return *this;
  }
  ProtoBytes &bytes(int field, const std::string &s) {
    varint((static_cast<uint64_t>(field) << 3) | 2);
    varint(s.size());
    b += s;
    return *this;
  }
};

Result<Tensor> read_proto(const ProtoBytes &p) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("kiln_narrow_test_" + std::to_string(::testing::UnitTest::GetInstance()
                                                              ->random_seed()) + ".pb");
  {
    std::ofstream f(path, std::ios::binary);
    f << p.b;
  }
  auto r = onnx_fe::read_tensor_pb(path.string());
  std::filesystem::remove(path);
  return r;
}

TEST(Narrow, TensorProtoPackedData) {
  // INT4 (22), 5 elements packed in 3 bytes, first element in the low nibble.
  ProtoBytes raw;
  raw.num(1, 5).num(2, 22).bytes(8, "w").bytes(9, std::string("\x87\xA9\x0B", 3));
  auto r = read_proto(raw);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(r.value().dtype(), DType::i4);
  EXPECT_EQ(r.value().to_i64s(), (std::vector<int64_t>{7, -8, -7, -6, -5}));
  // The same bytes in int32_data, one packed byte an entry.
  ProtoBytes i32;
  i32.num(1, 5).num(2, 22).bytes(8, "w");
  for (int v : {0x87, 0xA9, 0x0B}) i32.num(5, v);
  auto r2 = read_proto(i32);
  ASSERT_TRUE(r2.is_ok()) << r2.status().message();
  EXPECT_TRUE(r2.value().identical(r.value()));
  // FLOAT8E4M3FN (17) in int32_data: one pattern an entry.
  ProtoBytes f8;
  f8.num(1, 2).num(2, 17).num(5, 0x7E).num(5, 0xB8);
  auto r3 = read_proto(f8);
  ASSERT_TRUE(r3.is_ok()) << r3.status().message();
  EXPECT_EQ(r3.value().to_f64s(), (std::vector<double>{448.0, -1.0}));
  // UINT2 (25): four a byte; 0x39 0x39 hold 1, 2, 3, 0, 1, 2, (3).
  ProtoBytes u2;
  u2.num(1, 7).num(2, 25).bytes(9, std::string("\x39\x39", 2));
  auto r4 = read_proto(u2);
  ASSERT_TRUE(r4.is_ok()) << r4.status().message();
  EXPECT_EQ(r4.value().to_i64s(), (std::vector<int64_t>{1, 2, 3, 0, 1, 2, 3}));
}

TEST(Narrow, TruncatedPackedDataIsAClearError) {
  ProtoBytes raw; // INT4: 5 elements need 3 bytes, 2 given
  raw.num(1, 5).num(2, 22).bytes(8, "w").bytes(9, std::string("\x87\xA9", 2));
  auto r = read_proto(raw);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("tensor 'w'"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("need 3 bytes, got 2"), std::string::npos)
      << r.status().message();
  ProtoBytes i32; // an int32_data entry that is not a byte
  i32.num(1, 5).num(2, 22).bytes(8, "w").num(5, 0x87).num(5, 0x1FF).num(5, 0);
  auto r2 = read_proto(i32);
  ASSERT_FALSE(r2.is_ok());
  EXPECT_NE(r2.status().message().find("not a packed byte"), std::string::npos)
      << r2.status().message();
  ProtoBytes few; // too few int32_data entries
  few.num(1, 5).num(2, 21).bytes(8, "w").num(5, 0x87);
  auto r3 = read_proto(few);
  ASSERT_FALSE(r3.is_ok());
  EXPECT_NE(r3.status().message().find("need 3 packed int32_data entries, got 1"),
            std::string::npos)
      << r3.status().message();
  ProtoBytes f8; // FLOAT8E5M2 (19): 4 elements, 3 bytes
  f8.num(1, 4).num(2, 19).bytes(8, "f").bytes(9, std::string("\x01\x02\x03", 3));
  auto r4 = read_proto(f8);
  ASSERT_FALSE(r4.is_ok());
  EXPECT_NE(r4.status().message().find("raw_data has 3 bytes, 4 expected"), std::string::npos)
      << r4.status().message();
}

} // namespace
} // namespace kiln
