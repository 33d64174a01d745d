// Kernels built from the new kernel-IR kinds, run on a Vulkan device (lavapipe in CI) and
// compared with values computed here. The cooperative-matrix GEMM skips on devices without
// VK_KHR_cooperative_matrix (lavapipe); it is the test to run on the H200.
#include "kir_run_util.h"
#include "kir_test_kernels.h"
#include "support/half.h"

#include <limits>
#include <map>
#include <utility>

using namespace kiln::kir;
using kir_run::Bytes;

class KirRun : public kir_run::DeviceTest {};

TEST_F(KirRun, VectorLoadAxpy) {
  const uint32_t n = 1024; // 256 invocations of 4 lanes
  std::vector<float> a(n), b(n);
  for (uint32_t i = 0; i < n; ++i) {
    a[i] = 0.25f * float(i % 97) - 3.0f;
    b[i] = float(i) * 0.5f + 1.0f;
  }
  std::vector<Bytes> bufs{kir_run::to_bytes(a), kir_run::to_bytes(b), Bytes(n * 4)};
  kir_run::Launch launch{{n / 4 / 64, 1, 1}, {n / 4}};
  ASSERT_EQ(kir_run::run(device_, kir_test::vector_axpy_kernel(), target(), &bufs, launch), "");
  std::vector<float> out = kir_run::from_bytes<float>(bufs[2]);
  for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] * 2.0f + b[i]) << "out[" << i << "]";
}

TEST_F(KirRun, SharedArrayOfVectors) {
  const uint32_t n = 1024; // 4 workgroups of 64 invocations, 256 elements each
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = float(i % 251) * 0.75f - 40.0f;
  std::vector<float> poison(n, std::numeric_limits<float>::quiet_NaN());
  std::vector<Bytes> bufs{kir_run::to_bytes(in), kir_run::to_bytes(poison)};
  kir_run::Launch launch{{n / 256, 1, 1}, {}};
  ASSERT_EQ(kir_run::run(device_, kir_test::shared_vector_kernel(), target(), &bufs, launch), "");
  std::vector<float> out = kir_run::from_bytes<float>(bufs[1]);
  for (uint32_t w = 0; w < n / 256; ++w)
    for (uint32_t l = 0; l < 64; ++l)
      for (uint32_t r = 0; r < 4; ++r) {
        const uint32_t o = w * 256 + 4 * l + r;
        ASSERT_EQ(out[o], float(r + 1) * in[w * 256 + 4 * (63 - l) + r]) << "out[" << o << "]";
      }
}

TEST_F(KirRun, SubgroupReduceShuffleBroadcast) {
  const uint32_t n = 256; // 4 workgroups of 64
  std::vector<int32_t> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>((i * 37) % 101) - 50;
  std::vector<Bytes> bufs{kir_run::to_bytes(x)};
  for (int o = 0; o < 5; ++o) bufs.emplace_back(n * 4);
  kir_run::Launch launch{{n / 64, 1, 1}, {n}};
  ASSERT_EQ(kir_run::run(device_, kir_test::subgroup_kernel(), target(), &bufs, launch), "");
  auto sum = kir_run::from_bytes<int32_t>(bufs[1]), mx = kir_run::from_bytes<int32_t>(bufs[2]);
  auto xor1 = kir_run::from_bytes<int32_t>(bufs[3]), first = kir_run::from_bytes<int32_t>(bufs[4]);
  auto info = kir_run::from_bytes<uint32_t>(bufs[5]);
  // Group the invocations by (workgroup, subgroup id), as the device reports them.
  std::map<std::pair<uint32_t, uint32_t>, std::map<uint32_t, uint32_t>> groups; // -> lane -> g
  for (uint32_t g = 0; g < n; ++g) {
    uint32_t size = info[g] >> 16, sid = (info[g] >> 8) & 0xff, lane = info[g] & 0xff;
    ASSERT_EQ(size, info_.subgroup_size) << "invocation " << g;
    ASSERT_LT(lane, size);
    groups[{g / 64, sid}][lane] = g;
  }
  ASSERT_EQ(groups.size(), n / info_.subgroup_size);
  for (const auto &[key, lanes] : groups) {
    ASSERT_EQ(lanes.size(), info_.subgroup_size);
    int32_t s = 0, m = INT32_MIN;
    for (const auto &[lane, g] : lanes) {
      s += x[g];
      m = std::max(m, x[g]);
    }
    const int32_t lowest = x[lanes.begin()->second];
    for (const auto &[lane, g] : lanes) {
      EXPECT_EQ(sum[g], s) << "invocation " << g;
      EXPECT_EQ(mx[g], m) << "invocation " << g;
      if (info_.subgroup_size > 1) { // lane ^ 1 exists
        EXPECT_EQ(xor1[g], x[lanes.at(lane ^ 1u)]) << "invocation " << g;
      }
      EXPECT_EQ(first[g], lowest) << "invocation " << g;
    }
  }
}

TEST_F(KirRun, CooperativeMatrixGemm16x16x16) {
  if (!info_.cooperative_matrix)
    GTEST_SKIP() << "device '" << info_.name << "' lacks VK_KHR_cooperative_matrix";
  const uint32_t M = 32, N = 48, K = 64; // 2 x 3 tiles of C, 4 steps of K
  std::vector<uint16_t> a(M * K), b(K * N); // A row-major, B column-major (b[n * K + k])
  std::vector<float> af(M * K), bf(K * N);
  for (uint32_t i = 0; i < M * K; ++i) {
    af[i] = float(int((i * 7) % 9) - 4) * 0.5f;
    a[i] = kiln::f32_to_f16(af[i]);
  }
  for (uint32_t i = 0; i < K * N; ++i) {
    bf[i] = float(int((i * 5) % 11) - 5) * 0.25f;
    b[i] = kiln::f32_to_f16(bf[i]);
  }
  std::vector<Bytes> bufs{kir_run::to_bytes(a), kir_run::to_bytes(b), Bytes(M * N * 4)};
  kir_run::Launch launch{{N / 16, M / 16, 1}, {M, N, K}};
  Kernel k = kir_test::coopmat_gemm_kernel(info_.subgroup_size);
  ASSERT_EQ(kir_run::run(device_, k, *find_target("vulkan-nvidia"), &bufs, launch), "");
  std::vector<float> c = kir_run::from_bytes<float>(bufs[2]);
  for (uint32_t m = 0; m < M; ++m)
    for (uint32_t n = 0; n < N; ++n) {
      float want = 0; // every product and partial sum is exact in f32
      for (uint32_t kk = 0; kk < K; ++kk) want += af[m * K + kk] * bf[n * K + kk];
      ASSERT_EQ(c[m * N + n], want) << "C[" << m << "][" << n << "]";
    }
}
