// Rounding f32 to float8 / float4 / e8m0 in kernel IR by a step table (see narrow_encode.h).
#include "compiler/families/narrow_encode.h"

#include "compiler/families/kernel_helpers.h"

#include <bit>
#include <cmath>
#include <limits>

namespace kiln::compiler::helpers {

using namespace kir;

namespace {

// Table layout (f32 entries): the step starts of + and - magnitudes (kSteps each, ascending,
// padded with NaN, which no comparison counts), then the bit patterns of the steps (kSteps + 1
// each: pattern k covers magnitudes from start k - 1 up to start k).
constexpr int kSteps = 256;
constexpr int kNegStarts = kSteps, kPosCodes = 2 * kSteps, kNegCodes = 3 * kSteps + 1;
constexpr int kTableSize = 4 * kSteps + 2;
constexpr uint32_t kInfBits = 0x7F800000u;

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// The starts and patterns of the steps of magnitude -> pattern for one sign.
void steps(const NarrowEncoding &e, bool negative, std::vector<float> &starts,
           std::vector<uint8_t> &codes) {
  auto f = [&](uint32_t b) {
    return narrow_reference(e, negative ? -from_bits(b) : from_bits(b));
  };
  uint32_t lo = 0;
  uint8_t code = f(0);
  codes.push_back(code);
  while (f(kInfBits) != code) {
    // f(lo) == code and the first pattern after lo's step lies in (lo, inf]: bisect for it.
    uint32_t hi = kInfBits;
    while (hi - lo > 1) {
      const uint32_t mid = lo + (hi - lo) / 2;
      (f(mid) == code ? lo : hi) = mid;
    }
    starts.push_back(from_bits(hi));
    code = f(hi);
    codes.push_back(code);
    lo = hi;
  }
  KILN_ASSERT(starts.size() < static_cast<size_t>(kSteps), "too many rounding steps");
}

} // namespace

uint8_t narrow_reference(const NarrowEncoding &e, float v) {
  if (e.type == DType::f8e8m0) return f32_to_e8m0(v, e.round, e.saturate);
  return f64_to_narrow_float(e.type, static_cast<double>(v), e.saturate);
}

NarrowEncoder NarrowEncoder::make(LowerCtx &c, GridKernel &g, const NarrowEncoding &e,
                                  bool bits) {
  Tensor table(DType::f32, {kTableSize});
  float *t = table.data_mut<float>();
  std::fill(t, t + kTableSize, std::numeric_limits<float>::quiet_NaN());
  for (bool negative : {false, true}) {
    std::vector<float> starts;
    std::vector<uint8_t> codes;
    steps(e, negative, starts, codes);
    std::copy(starts.begin(), starts.end(), t + (negative ? kNegStarts : 0));
    for (size_t k = 0; k < codes.size(); ++k)
      t[(negative ? kNegCodes : kPosCodes) + static_cast<int>(k)] = codes[k];
  }
  NarrowEncoder enc;
  const int id = c.new_constant(std::move(table));
  enc.table_ = g.scratch(id, ScalarType::f32, false);
  if (bits) enc.table_bits_ = g.scratch(id, ScalarType::u32, false);
  enc.nan_code_[0] = narrow_reference(e, std::numeric_limits<float>::quiet_NaN());
  enc.nan_code_[1] = narrow_reference(e, -std::numeric_limits<float>::quiet_NaN());
  return enc;
}

Expr NarrowEncoder::encode(GridKernel &g, std::vector<Stmt> &s, const Expr &v,
                           const Expr &negative, Compare how, const Expr *magnitude) const {
  const ScalarType f = ScalarType::f32;
  KILN_ASSERT(how != Compare::bits || (magnitude && table_bits_.index >= 0),
              "NarrowEncoder: a bits comparison needs the magnitude and make(..., bits)");
  Expr x = def(g, s, "nx", cast(f, v));
  // |x| as a value, or (Compare::bits) as the caller's bit pattern.
  Expr a = how == Compare::bits ? Expr() : def(g, s, "na", call(Intrinsic::abs, {x}));
  Expr neg = def(g, s, "nneg", negative);
  Expr base = def(g, s, "nbase", select(neg, i32(kNegStarts), i32(0)));
  Expr pos = def(g, s, "npos", i32(0));
  const Expr smallest_normal = make_const(f, std::numeric_limits<float>::min());
  const Expr mag = how == Compare::bits ? def(g, s, "nmag", *magnitude) : Expr();
  for (int step = kSteps / 2; step >= 1; step /= 2) {
    const Expr k = base + pos + (step - 1);
    Expr passed;
    if (how == Compare::bits) {
      // NaN padding (0x7FC00000) lies above every non-NaN magnitude's pattern.
      passed = load(table_bits_, k) <= mag;
    } else {
      const Expr start = load(table_, k);
      passed = start <= a;
      if (how == Compare::no_subnormal)
        passed = select(start < smallest_normal, a > make_const(f, 0), passed);
    }
    s.push_back(assign(pos, select(passed, pos + step, pos)));
  }
  Expr code = load(table_, select(neg, i32(kNegCodes), i32(kPosCodes)) + pos);
  Expr nan = select(neg, make_const(ScalarType::u8, nan_code_[1]),
                    make_const(ScalarType::u8, nan_code_[0]));
  return select(call(Intrinsic::isnan, {x}), nan,
                cast(ScalarType::u8, cast(ScalarType::i32, code)));
}

BufferVar bits_view(LowerCtx &c, GridKernel &g, const Value *v) {
  const bool half = v->type.dtype == DType::f16;
  KILN_ASSERT(half || v->type.dtype == DType::f32, "bits_view of a non-float");
  return g.scratch(c.buffer_of(v), half ? ScalarType::u16 : ScalarType::u32, false);
}

Expr sign_bit(const BufferVar &bits, const Expr &i) {
  const int shift = bits.elem == ScalarType::u16 ? 15 : 31;
  const Expr b = cast(ScalarType::u32, load(bits, i));
  return (b >> make_const(ScalarType::u32, shift)) != make_const(ScalarType::u32, 0);
}

Expr sign_of(const Expr &v) {
  const Expr zero = make_const(v.type(), 0);
  return v < zero || (v == zero && make_const(v.type(), 1) / v < zero);
}

} // namespace kiln::compiler::helpers
