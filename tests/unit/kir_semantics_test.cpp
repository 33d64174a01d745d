// Kernel-IR semantics that drivers are free to differ on, checked on the device the tests find
// (lavapipe in CI; bench/h200_conform.sh runs this binary on the H200 too): signed integer
// division and remainder for every sign combination and width (Vulkan leaves OpSRem/OpSMod
// undefined for negative operands), round-half-to-even ties, correctly rounded f32 division
// for quantisation, and the accuracy of the float formulas of compiler/lowering/float_math.h
// on small and large arguments. Expected values are computed here in C++ (double precision
// for the transcendentals); tolerances are stated per test.
#include "compiler/lowering/float_math.h"
#include "kir_run_util.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>

using namespace kiln::kir;
using kir_run::Bytes;

namespace {

class KirSemantics : public kir_run::DeviceTest {};

constexpr uint32_t kGroup = 64;

kir_run::Launch grid(uint32_t n) { return {{(n + kGroup - 1) / kGroup, 1, 1}, {n}}; }

Bytes poisoned(size_t bytes) { return Bytes(bytes, 0xA5); }

// out_k[i] = f_k(in_0[i], in_1[i], ...) for i < pc[0]: one kernel of elementwise expressions.
Kernel elementwise_kernel(const std::vector<ScalarType> &ins, const std::vector<ScalarType> &outs,
                          const std::function<std::vector<Expr>(const std::vector<Expr> &)> &f) {
  Kernel k;
  k.name = "semantics";
  k.workgroup_size[0] = kGroup;
  k.push_constant_count = 1;
  std::vector<BufferVar> in, out;
  for (size_t j = 0; j < ins.size(); ++j)
    in.push_back(k.add_buffer("in" + std::to_string(j), ins[j], true));
  for (size_t j = 0; j < outs.size(); ++j)
    out.push_back(k.add_buffer("out" + std::to_string(j), outs[j], false, true));
  Expr i = var("i", ScalarType::u32);
  std::vector<Expr> vals;
  for (const BufferVar &b : in)
    vals.push_back(load(b, i));
  std::vector<Expr> res = f(vals);
  std::vector<Stmt> stores;
  for (size_t j = 0; j < out.size(); ++j)
    stores.push_back(store(out[j], i, res[j]));
  k.body = let(i, global_id(0), if_then(i < push_const(0), block(std::move(stores))));
  return k;
}

template <class T> ScalarType scalar_of() {
  if constexpr (std::is_same_v<T, int8_t>)
    return ScalarType::i8;
  if constexpr (std::is_same_v<T, int16_t>)
    return ScalarType::i16;
  if constexpr (std::is_same_v<T, int32_t>)
    return ScalarType::i32;
  if constexpr (std::is_same_v<T, int64_t>)
    return ScalarType::i64;
  return ScalarType::u32;
}

// a / b, a % b, a / 7 and a % -7 (constant divisors take the same lowering) for every pair of
// the interesting values of T (signs, one, extremes; b != 0 and not the overflowing MIN / -1),
// compared with C's truncating semantics.
template <class T> void check_div_rem(kiln_device *device, const TargetDesc &target) {
  using L = std::numeric_limits<T>;
  const std::vector<T> vals{0,
                            1,
                            -1,
                            2,
                            -2,
                            3,
                            -3,
                            6,
                            -6,
                            7,
                            -7,
                            100,
                            -100,
                            T(L::max() - 1),
                            L::max(),
                            L::min(),
                            T(L::min() + 1)};
  std::vector<T> a, b;
  for (T x : vals)
    for (T y : vals)
      if (y != 0 && !(x == L::min() && y == -1))
        a.push_back(x), b.push_back(y);
  const uint32_t n = static_cast<uint32_t>(a.size());
  const ScalarType st = scalar_of<T>();
  Kernel k = elementwise_kernel({st, st}, {st, st, st, st}, [&](const std::vector<Expr> &v) {
    return std::vector<Expr>{v[0] / v[1], v[0] % v[1], v[0] / make_const(st, 7),
                             v[0] % make_const(st, -7)};
  });
  std::vector<Bytes> bufs{kir_run::to_bytes(a), kir_run::to_bytes(b)};
  for (int o = 0; o < 4; ++o)
    bufs.push_back(poisoned(n * sizeof(T)));
  ASSERT_EQ(kir_run::run(device, k, target, &bufs, grid(n)), "");
  auto q = kir_run::from_bytes<T>(bufs[2]), r = kir_run::from_bytes<T>(bufs[3]);
  auto q7 = kir_run::from_bytes<T>(bufs[4]), r7 = kir_run::from_bytes<T>(bufs[5]);
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t x = a[i], y = b[i];
    EXPECT_EQ(int64_t(q[i]), x / y) << x << " / " << y;
    EXPECT_EQ(int64_t(r[i]), x % y) << x << " % " << y;
    EXPECT_EQ(int64_t(q7[i]), x / 7) << x << " / 7";
    EXPECT_EQ(int64_t(r7[i]), x % -7) << x << " % -7";
  }
}

// a + b, a - b and a * b wrap modulo 2^N for every pair of the interesting values of T
// (extremes included, so most products and many sums overflow): the kernel IR defines signed
// overflow (SPIR-V's OpIAdd/OpIMul wrap); the C backend builds without -fwrapv and must wrap
// data arithmetic itself. Also (a + b) as a loop bound and an index of a buffer element, so
// index-like arithmetic next to it stays right.
template <class T> void check_wrapping(kiln_device *device, const TargetDesc &target) {
  using L = std::numeric_limits<T>;
  using U = std::make_unsigned_t<T>;
  const std::vector<T> vals{0, 1, -1, 2, -2, 3, 1000, -1000, T(L::max() / 2 + 1), T(L::max() - 1),
                            L::max(), L::min(), T(L::min() + 1), T(L::min() / 2 - 1)};
  std::vector<T> a, b;
  for (T x : vals)
    for (T y : vals)
      a.push_back(x), b.push_back(y);
  const uint32_t n = static_cast<uint32_t>(a.size());
  const ScalarType st = scalar_of<T>();
  const ScalarType i64 = ScalarType::i64;
  Kernel k = elementwise_kernel({st, st}, {st, st, st, st, st, i64}, [&](const std::vector<Expr> &v) {
    // (a * 3 + b) - (a - b) * 5: overflows in every step for the extremes.
    Expr mixed = (v[0] * make_const(st, 3) + v[1]) - (v[0] - v[1]) * make_const(st, 5);
    // What a C compiler may rewrite when signed overflow is undefined: a comparison of a sum
    // with its operand, and a sum widened after it wrapped.
    Expr less = select((v[0] + v[1]) < v[0], make_const(st, 1), make_const(st, 0));
    return std::vector<Expr>{v[0] + v[1], v[0] - v[1], v[0] * v[1], mixed, less,
                             cast(i64, v[0] + v[1])};
  });
  std::vector<Bytes> bufs{kir_run::to_bytes(a), kir_run::to_bytes(b)};
  for (int o = 0; o < 5; ++o)
    bufs.push_back(poisoned(n * sizeof(T)));
  bufs.push_back(poisoned(n * 8));
  ASSERT_EQ(kir_run::run(device, k, target, &bufs, grid(n)), "");
  auto sum = kir_run::from_bytes<T>(bufs[2]), diff = kir_run::from_bytes<T>(bufs[3]);
  auto prod = kir_run::from_bytes<T>(bufs[4]), mix = kir_run::from_bytes<T>(bufs[5]);
  auto less = kir_run::from_bytes<T>(bufs[6]);
  auto wide = kir_run::from_bytes<int64_t>(bufs[7]);
  for (uint32_t i = 0; i < n; ++i) {
    const U x = U(a[i]), y = U(b[i]);
    EXPECT_EQ(sum[i], T(U(x + y))) << +a[i] << " + " << +b[i];
    EXPECT_EQ(diff[i], T(U(x - y))) << +a[i] << " - " << +b[i];
    EXPECT_EQ(prod[i], T(U(x * y))) << +a[i] << " * " << +b[i];
    EXPECT_EQ(mix[i], T(U(U(x * U(3) + y) - U(U(x - y) * U(5))))) << +a[i] << ", " << +b[i];
    EXPECT_EQ(less[i], T(T(U(x + y)) < a[i] ? 1 : 0)) << +a[i] << " + " << +b[i] << " < a";
    EXPECT_EQ(wide[i], int64_t(T(U(x + y)))) << "i64(" << +a[i] << " + " << +b[i] << ")";
  }
}

// f(x) on the device against `want` (double) for every x: |got - want| <= rtol * |want| + atol.
void check_unary(kiln_device *device, const TargetDesc &target, const std::vector<float> &x,
                 const std::function<Expr(const Expr &)> &f, double (*want)(double), double rtol,
                 double atol, const char *what) {
  const uint32_t n = static_cast<uint32_t>(x.size());
  Kernel k = elementwise_kernel({ScalarType::f32}, {ScalarType::f32},
                                [&](const std::vector<Expr> &v) { return std::vector{f(v[0])}; });
  std::vector<Bytes> bufs{kir_run::to_bytes(x), poisoned(n * 4)};
  ASSERT_EQ(kir_run::run(device, k, target, &bufs, grid(n)), "");
  auto got = kir_run::from_bytes<float>(bufs[1]);
  double worst = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const double w = want(double(x[i]));
    const double err = std::abs(double(got[i]) - w);
    EXPECT_LE(err, rtol * std::abs(w) + atol)
        << what << "(" << x[i] << ") = " << got[i] << ", want " << w;
    if (w != 0)
      worst = std::max(worst, err / std::abs(w));
  }
  std::printf("%s: worst relative error %.3g over %u arguments (bound %.3g)\n", what, worst, n,
              rtol);
}

// Arguments spanning tiny to large magnitudes, both signs: +-10^e * m for e in [-7, 1].
std::vector<float> spread(float lo, float hi) {
  std::vector<float> x;
  for (int e = -7; e <= 1; ++e)
    for (float m : {1.0f, 1.37f, 2.5f, 4.6f, 7.9f}) {
      const float v = m * std::pow(10.0f, float(e));
      if (v <= hi)
        x.push_back(v);
      if (-v >= lo)
        x.push_back(-v);
    }
  for (int i = 0; i <= 400; ++i)
    x.push_back(lo + (hi - lo) * float(i) / 400.0f);
  return x;
}

double mish(double x) { return x * std::tanh(std::log1p(std::exp(x))); }
double softplus(double x) { return std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

} // namespace

TEST_F(KirSemantics, SignedDivisionAndRemainderI8) { check_div_rem<int8_t>(device_, target()); }
TEST_F(KirSemantics, SignedDivisionAndRemainderI16) { check_div_rem<int16_t>(device_, target()); }
TEST_F(KirSemantics, SignedDivisionAndRemainderI32) { check_div_rem<int32_t>(device_, target()); }
TEST_F(KirSemantics, SignedDivisionAndRemainderI64) { check_div_rem<int64_t>(device_, target()); }

TEST_F(KirSemantics, WrappingArithmeticI32) { check_wrapping<int32_t>(device_, target()); }
TEST_F(KirSemantics, WrappingArithmeticI64) { check_wrapping<int64_t>(device_, target()); }

TEST_F(KirSemantics, RoundHalfToEvenTies) {
  std::vector<float> x{0.5f,   1.5f,   2.5f,        3.5f,        -0.5f,      -1.5f,
                       -2.5f,  -3.5f,  0.49999997f, 1e7f + 0.5f, 8388607.5f, -8388607.5f,
                       126.5f, 127.5f, -127.5f,     0.0f};
  const uint32_t n = static_cast<uint32_t>(x.size());
  Kernel k =
      elementwise_kernel({ScalarType::f32}, {ScalarType::f32}, [](const std::vector<Expr> &v) {
        return std::vector{call(Intrinsic::round_even, {v[0]})};
      });
  std::vector<Bytes> bufs{kir_run::to_bytes(x), poisoned(n * 4)};
  ASSERT_EQ(kir_run::run(device_, k, target(), &bufs, grid(n)), "");
  auto got = kir_run::from_bytes<float>(bufs[1]);
  for (uint32_t i = 0; i < n; ++i)
    EXPECT_EQ(got[i], std::nearbyint(x[i])) << "round(" << x[i] << ")";
}

// div_exact on f32 equals C's division bit for bit with the device's preset (lavapipe divides
// exactly; vulkan-nvidia refines in f64, TargetDesc::fdiv_via_f64) and with the refinement
// forced on,
// on DynamicQuantizeLinear's tie (-2.5 / (5 / 255) = -127.49999..., which a 2.5-ULP division
// rounds to -127.5), on special operands (zeros, infinities, NaN, divisors whose reciprocal is
// subnormal or overflows) and on random operands.
TEST_F(KirSemantics, CorrectlyRoundedDivision) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a{-2.5f, 5.0f, 1.0f, -3.0f, 1.0f, -1.0f, 0.0f,   inf,
                       1.0f,  nan,  1.0f, 3e38f, 1.0f, 7.0f,  1e-30f, -0.0f},
      b{5.0f / 255.0f, 255.0f, 3.0f, 5.0f / 255.0f, 0.0f,  0.0f,   0.0f,  2.0f,
        inf,           1.0f,   nan,  0.5f,          3e38f, 1e-39f, 1e10f, 3.0f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> expo(-20, 20), sign(0, 1);
  for (int i = 0; i < 4096; ++i) {
    a.push_back((sign(rng) ? -1.0f : 1.0f) * std::ldexp(mant(rng), expo(rng)));
    b.push_back((sign(rng) ? -1.0f : 1.0f) * std::ldexp(mant(rng), expo(rng)));
  }
  const uint32_t n = static_cast<uint32_t>(a.size());
  Kernel k = elementwise_kernel({ScalarType::f32, ScalarType::f32}, {ScalarType::f32},
                                [&](const std::vector<Expr> &v) {
                                  return std::vector{call(Intrinsic::div_exact, {v[0], v[1]})};
                                });
  for (bool refine : {false, true}) {
    TargetDesc t = target();
    if (refine && !t.float64)
      continue;
    t.fdiv_via_f64 = t.fdiv_via_f64 || refine;
    std::vector<Bytes> bufs{kir_run::to_bytes(a), kir_run::to_bytes(b), poisoned(n * 4)};
    ASSERT_EQ(kir_run::run(device_, k, t, &bufs, grid(n)), "");
    auto q = kir_run::from_bytes<float>(bufs[2]);
    int wrong = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const float want = a[i] / b[i];
      // Subnormal quotients may be flushed to zero (Vulkan allows it without float controls).
      const bool same = std::isnan(want)                        ? std::isnan(q[i])
                        : std::fpclassify(want) == FP_SUBNORMAL ? std::abs(q[i]) <= std::abs(want)
                                                                : q[i] == want;
      if (!same && ++wrong <= 5)
        ADD_FAILURE() << (refine ? "refined: " : "preset: ") << a[i] << " / " << b[i] << " = "
                      << q[i] << ", want " << want;
    }
    EXPECT_EQ(wrong, 0) << (t.fdiv_via_f64 ? "refined in f64" : "plain");
  }
}

// The float formulas' relative error on small and large arguments, far inside ONNX's default
// tolerance (rtol 1e-3): tanh 4e-6; log1p 4e-6; softplus, sigmoid and mish 2e-5 (exp's own
// error grows with |x| under Vulkan's precision rules: 3 + 2|x| ULP).
TEST_F(KirSemantics, TanhAccuracy) {
  check_unary(
      device_, target(), spread(-12, 12), kiln::compiler::tanh_expr,
      [](double x) { return std::tanh(x); }, 4e-6, 1e-30, "tanh");
}

TEST_F(KirSemantics, Log1pAccuracy) {
  std::vector<float> x = spread(-0.99f, 50);
  check_unary(
      device_, target(), x, kiln::compiler::log1p_expr, [](double u) { return std::log1p(u); },
      4e-6, 1e-30, "log1p");
}

TEST_F(KirSemantics, SoftplusSigmoidMishAccuracy) {
  std::vector<float> x = spread(-20, 20);
  check_unary(device_, target(), x, kiln::compiler::softplus_expr, softplus, 2e-5, 1e-30,
              "softplus");
  check_unary(device_, target(), x, kiln::compiler::sigmoid_expr, sigmoid, 2e-5, 1e-30, "sigmoid");
  check_unary(
      device_, target(), x,
      [](const Expr &v) { return v * kiln::compiler::tanh_expr(kiln::compiler::softplus_expr(v)); },
      mish, 2e-5, 1e-30, "mish");
}

// The emitted code never uses the opcodes whose results Vulkan leaves open for negative
// operands, OpSRem and OpSMod: a % b is a - (a / b) * b with OpSDiv (truncating).
TEST(KirSemanticsSpirv, SignedRemainderAvoidsOpSRemSMod) {
  for (ScalarType st : {ScalarType::i8, ScalarType::i16, ScalarType::i32, ScalarType::i64}) {
    Kernel k = elementwise_kernel({st, st}, {st, st}, [](const std::vector<Expr> &v) {
      return std::vector<Expr>{v[0] / v[1], v[0] % v[1]};
    });
    Requirements req;
    auto words = kiln::spirv::emit_spirv(k, *find_target("vulkan-lavapipe"), &req);
    ASSERT_TRUE(words.is_ok()) << words.status().message();
    const std::vector<uint32_t> &w = words.value();
    int sdiv = 0;
    for (size_t at = 5; at < w.size();) {
      const uint32_t op = w[at] & 0xffff, count = w[at] >> 16;
      ASSERT_GT(count, 0u);
      EXPECT_NE(op, 138u) << "OpSRem";
      EXPECT_NE(op, 139u) << "OpSMod";
      sdiv += op == 135u; // OpSDiv
      at += count;
    }
    EXPECT_EQ(sdiv, 2); // the quotient, and the remainder's
  }
}

// On vulkan-nvidia (fdiv_via_f64) an f32 div_exact is refined in f64 (OpFConverts around f64
// multiplications; the f32 divisions are the first guess and the fallback); on lavapipe it
// stays one f32 OpFDiv, as does the plain `/` on both.
TEST(KirSemanticsSpirv, F32DivisionThroughF64WhereThePresetSaysSo) {
  for (bool exact : {true, false}) {
    Kernel k = elementwise_kernel(
        {ScalarType::f32, ScalarType::f32}, {ScalarType::f32}, [&](const std::vector<Expr> &v) {
          return std::vector{exact ? call(Intrinsic::div_exact, {v[0], v[1]}) : v[0] / v[1]};
        });
    for (const char *preset : {"vulkan-nvidia", "vulkan-lavapipe"}) {
      Requirements req;
      auto words = kiln::spirv::emit_spirv(k, *find_target(preset), &req);
      ASSERT_TRUE(words.is_ok()) << words.status().message();
      const std::vector<uint32_t> &w = words.value();
      int fdiv = 0, fconvert = 0;
      for (size_t at = 5; at < w.size(); at += w[at] >> 16) {
        fdiv += (w[at] & 0xffff) == 136u;     // OpFDiv
        fconvert += (w[at] & 0xffff) == 115u; // OpFConvert
      }
      const bool refined = exact && std::string(preset) == "vulkan-nvidia";
      EXPECT_EQ(fdiv, refined ? 2 : 1) << preset << (exact ? " div_exact" : " /");
      EXPECT_EQ(fconvert, refined ? 4 : 0) << preset << (exact ? " div_exact" : " /");
      EXPECT_EQ(req.float64, refined) << preset << (exact ? " div_exact" : " /");
    }
  }
}

// Operands known to be non-negative (here an invocation id and a constant) divide as unsigned:
// exact there, and cheaper than any signed form.
TEST(KirSemanticsSpirv, NonNegativeIndexArithmeticDividesUnsigned) {
  Kernel k;
  k.name = "index_math";
  k.workgroup_size[0] = kGroup;
  BufferVar out = k.add_buffer("out", ScalarType::i32, false, true);
  Expr i = var("i", ScalarType::i32);
  k.body =
      let(i, cast(ScalarType::i32, global_id(0)), store(out, i, i / imm_i32(7) + i % imm_i32(5)));
  Requirements req;
  auto words = kiln::spirv::emit_spirv(k, *find_target("vulkan-nvidia"), &req);
  ASSERT_TRUE(words.is_ok()) << words.status().message();
  const std::vector<uint32_t> &w = words.value();
  int udiv = 0, umod = 0, sdiv = 0;
  for (size_t at = 5; at < w.size(); at += w[at] >> 16) {
    udiv += (w[at] & 0xffff) == 134u; // OpUDiv
    umod += (w[at] & 0xffff) == 137u; // OpUMod
    sdiv += (w[at] & 0xffff) == 135u; // OpSDiv
  }
  EXPECT_EQ(udiv, 1);
  EXPECT_EQ(umod, 1);
  EXPECT_EQ(sdiv, 0);
}
