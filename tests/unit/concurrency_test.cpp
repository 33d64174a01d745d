// Concurrency: many threads calling one loaded module give bit-identical results to a
// single-threaded run, on the null driver, on Vulkan (lavapipe in CI; skipped without a device)
// and on the reference executor (cpu-ref) sharing one graph-IR module; two modules loaded on one
// device and run from interleaved threads do not disturb each other. Every thread uses its own
// inputs, so a call that returns another call's results is caught, and output buffers are
// poisoned before every call, so a call that leaves them unwritten is caught too.
//
// The cpu driver's thread pool: every item of every dispatch runs exactly once, whatever the
// grid, chunk and thread count (slices, stealing, late workers).
//
// The ConcurrencyNull, ConcurrencyCpuRef and ConcurrencyCpuPool suites also run under
// ThreadSanitizer (make test-tsan).
#include "compiler/compiler.h"
#include "exec/executor.h"
#include "frontend/onnx/importer.h"
#include "ir/builder.h"
#include "ops/ops.h"
#include "runtime/cpu/cpu_pool.h"
#include "test_module.h"

#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr int kThreads = 8;
constexpr int kCalls = 200;   // per thread
constexpr int kInputSets = 16; // distinct inputs; call c of thread t uses set (t + c) % 16
constexpr std::byte kPoison{0xA5};

// The shared module builder (test_module.h) with random constant weights.
struct TestModule : test::TestModule {
  Value *weights(Shape s, std::mt19937 &rng) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (float &x : v) x = u(rng);
    return b.constant(Tensor::from_f32s(v, std::move(s)));
  }
};

// Two-layer perceptron with softmax and a row sum: several dispatches with intermediates in
// the transient arena, which concurrent calls must not share.
void build_mlp(TestModule &t) {
  std::mt19937 rng(11);
  Value *x = t.param(DType::f32, {4, 16}, "x");
  Value *h = t.op("kiln.relu", {t.op("kiln.add", {t.op("kiln.matmul", {x, t.weights({16, 32}, rng)}),
                                                 t.weights({32}, rng)})});
  Value *logits = t.op("kiln.matmul", {h, t.weights({32, 8}, rng)});
  Value *sm = t.op("kiln.softmax", {logits}, {{"kind", std::string("softmax")},
                                              {"axis", int64_t(-1)}});
  Value *sum = t.op("kiln.reduce", {h, t.b.i64s({1})},
                    {{"kind", std::string("sum")}, {"keepdims", int64_t(0)}});
  t.g->results = {sm, sum};
}

// Convolution, pooling and a reshape: the second module of the shared-device tests.
void build_convnet(TestModule &t) {
  std::mt19937 rng(12);
  Value *x = t.param(DType::f32, {1, 3, 9, 9}, "x");
  Value *c = t.op("kiln.conv", {x, t.weights({8, 3, 3, 3}, rng), t.weights({8}, rng)},
                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                   {"strides", std::vector<int64_t>{2, 2}}});
  Value *p = t.op("kiln.max_pool", {t.op("kiln.relu", {c})},
                  {{"kernel_shape", std::vector<int64_t>{3, 3}},
                   {"strides", std::vector<int64_t>{1, 1}}});
  Value *gp = t.op("kiln.global_pool", {p}, {{"mode", std::string("avg")}});
  t.g->results = {t.op("kiln.reshape", {gp, t.b.i64s({1, 8})}), p};
}

Tensor random_f32(const TensorType &type, std::mt19937 &rng) {
  Tensor x(type.dtype, type.dims);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t i = 0; i < x.numel(); ++i) x.set_f64(i, u(rng));
  return x;
}

// kInputSets input sets for the parameters of `m` (all f32 with static shapes).
std::vector<std::vector<Tensor>> input_sets(const Module &m, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<Tensor>> sets(kInputSets);
  for (auto &set : sets)
    for (const Value *p : m.main()->body.params) set.push_back(random_f32(p->type, rng));
  return sets;
}

std::vector<uint8_t> compile(const Module &m) {
  const kir::TargetDesc *target = kir::find_target("vulkan-lavapipe");
  EXPECT_NE(target, nullptr);
  if (!target) return {};
  auto r = compile_to_artifact(m, *target, {});
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : std::vector<uint8_t>{};
}

using Bytes = std::vector<std::byte>;

std::string take_message(kiln_status s) {
  std::string msg = kiln_status_message(s);
  kiln_status_free(s);
  return msg;
}

// One call of a loaded module: poisons the output buffers, runs, returns the outputs' bytes (or
// an error message in `error`).
std::vector<Bytes> run_once(kiln_module *mod, const std::vector<Tensor> &inputs,
                            std::string &error) {
  std::vector<kiln_tensor> ins;
  for (const Tensor &t : inputs)
    ins.push_back({static_cast<kiln_dtype>(t.dtype()), static_cast<uint32_t>(t.rank()),
                   t.shape().data(), const_cast<std::byte *>(t.raw()), t.nbytes()});
  const size_t n = kiln_module_output_count(mod);
  std::vector<Bytes> results(n);
  std::vector<kiln_tensor> outs(n);
  for (size_t i = 0; i < n; ++i) {
    kiln_tensor_info info;
    if (kiln_status s = kiln_module_output_info(mod, i, &info)) {
      error = take_message(s);
      return {};
    }
    results[i].assign(info.bytes, kPoison);
    outs[i] = {info.dtype, info.rank, info.shape, results[i].data(), info.bytes};
  }
  if (kiln_status s = kiln_module_run(mod, ins.data(), ins.size(), outs.data(), outs.size())) {
    error = take_message(s);
    return {};
  }
  return results;
}

// One call of the reference executor. It allocates its result tensors itself, so there is no
// caller buffer to poison.
std::vector<Bytes> run_reference(const Module &m, const std::vector<Tensor> &inputs,
                                 std::string &error) {
  auto r = execute(*m.main(), inputs);
  if (!r.is_ok()) {
    error = r.status().message();
    return {};
  }
  std::vector<Bytes> results;
  for (const Tensor &t : r.value()) results.emplace_back(t.raw(), t.raw() + t.nbytes());
  return results;
}

// A single-threaded run per input set, then `threads` threads x `calls` calls of `call(set)`
// (set = (thread + call) % kInputSets), each compared byte for byte with the single-threaded
// result of its set. Reports the number of mismatches and the first one. `distinct`: results
// depend on the inputs (not so on the null driver, which writes zeros).
void expect_concurrent_matches_serial(
    const std::function<std::vector<Bytes>(int set, std::string &error)> &call,
    bool distinct = true, int threads = kThreads, int calls = kCalls, int sets = kInputSets) {
  std::vector<std::vector<Bytes>> expected(sets);
  for (int s = 0; s < sets; ++s) {
    std::string error;
    expected[s] = call(s, error);
    ASSERT_TRUE(error.empty()) << "serial run of input set " << s << ": " << error;
    ASSERT_FALSE(expected[s].empty());
  }
  // Different input sets give different results, so a call that returns another call's
  // outputs is a mismatch.
  if (distinct) {
    ASSERT_NE(expected[0], expected[1]);
  }
  std::atomic<int> mismatches{0};
  std::mutex first_mu;
  std::string first;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int c = 0; c < calls; ++c) {
        const int s = (t + c) % sets;
        std::string error;
        std::vector<Bytes> got = call(s, error);
        if (error.empty() && got == expected[s]) continue;
        if (mismatches.fetch_add(1) == 0) {
          std::lock_guard<std::mutex> lock(first_mu);
          first = "thread " + std::to_string(t) + " call " + std::to_string(c) + " (input set " +
                  std::to_string(s) + "): " +
                  (error.empty() ? "outputs differ from the single-threaded run" : error);
        }
      }
    });
  for (std::thread &th : pool) th.join();
  EXPECT_EQ(mismatches.load(), 0) << "first: " << first;
}

// A device opened for a test; skips the test when the driver has no device.
struct OpenDevice {
  kiln_device *dev = nullptr;
  std::string why;
  explicit OpenDevice(const char *uri) {
    if (kiln_status s = kiln_device_open(uri, &dev)) why = take_message(s);
  }
  ~OpenDevice() { kiln_device_release(dev); }
  kiln_module *load(const std::vector<uint8_t> &bytes) {
    kiln_module *m = nullptr;
    kiln_status s = kiln_module_load_memory(dev, bytes.data(), bytes.size(), &m);
    EXPECT_EQ(s, nullptr) << take_message(s);
    return m;
  }
  void expect_no_validation_messages() {
    uint64_t n = 0;
    kiln_status s = kiln_device_validation_message_count(dev, &n);
    EXPECT_EQ(s, nullptr) << take_message(s);
    EXPECT_EQ(n, 0u);
  }
};

struct ModuleHandle {
  kiln_module *m;
  ~ModuleHandle() { kiln_module_release(m); }
};

// 8 threads x 200 calls of the MLP module on one device.
void one_module_on(const char *uri) {
  OpenDevice d(uri);
  if (!d.dev) GTEST_SKIP() << "no device '" << uri << "': " << d.why;
  TestModule t;
  build_mlp(t);
  const auto sets = input_sets(t.m, 1);
  ModuleHandle mod{d.load(compile(t.m))};
  ASSERT_NE(mod.m, nullptr);
  expect_concurrent_matches_serial(
      [&](int s, std::string &error) { return run_once(mod.m, sets[s], error); },
      std::string(uri) != "null");
  d.expect_no_validation_messages();
}

// Two modules loaded on one device at the same time (from two threads), then run from 8
// threads that alternate between them call by call.
void two_modules_on(const char *uri) {
  OpenDevice d(uri);
  if (!d.dev) GTEST_SKIP() << "no device '" << uri << "': " << d.why;
  TestModule a, b;
  build_mlp(a);
  build_convnet(b);
  const auto sets_a = input_sets(a.m, 2), sets_b = input_sets(b.m, 3);
  const std::vector<uint8_t> art_a = compile(a.m), art_b = compile(b.m);
  ModuleHandle mod_a{nullptr}, mod_b{nullptr};
  std::thread load_a([&] { mod_a.m = d.load(art_a); });
  std::thread load_b([&] { mod_b.m = d.load(art_b); });
  load_a.join();
  load_b.join();
  ASSERT_NE(mod_a.m, nullptr);
  ASSERT_NE(mod_b.m, nullptr);
  // Even sets run module A, odd sets module B; threads step through the sets, so each thread
  // alternates between the modules and at any time both are running.
  expect_concurrent_matches_serial([&](int s, std::string &error) {
    return s % 2 ? run_once(mod_b.m, sets_b[s], error) : run_once(mod_a.m, sets_a[s], error);
  });
  d.expect_no_validation_messages();
}

TEST(ConcurrencyCpuPool, EveryItemOnce) {
  struct Grid {
    std::vector<std::atomic<int>> hits;
    std::atomic<int> bad{0};
  };
  for (unsigned threads : {1u, 2u, 3u, 4u}) {
    rt::cpu::Pool pool(threads);
    for (uint32_t n = 1; n <= 70; ++n) {
      for (uint32_t chunk : {1u, 3u, 64u}) {
        Grid g;
        g.hits = std::vector<std::atomic<int>>(n);
        pool.run(n, chunk, [](void *ctx, uint32_t b, uint32_t e) {
          auto *grid = static_cast<Grid *>(ctx);
          if (b >= e || e > grid->hits.size()) grid->bad.fetch_add(1);
          for (uint32_t i = b; i < e && i < grid->hits.size(); ++i) grid->hits[i].fetch_add(1);
        }, &g);
        EXPECT_EQ(g.bad.load(), 0) << threads << " threads, n " << n << ", chunk " << chunk;
        for (uint32_t i = 0; i < n; ++i)
          ASSERT_EQ(g.hits[i].load(), 1)
              << "item " << i << " of " << n << ", chunk " << chunk << ", " << threads << " threads";
      }
    }
  }
}

TEST(ConcurrencyNull, OneModuleEightThreads) { one_module_on("null"); }
TEST(ConcurrencyNull, TwoModulesShareOneDevice) { two_modules_on("null"); }
TEST(ConcurrencyVulkan, OneModuleEightThreads) { one_module_on("vulkan"); }
TEST(ConcurrencyVulkan, TwoModulesShareOneDevice) { two_modules_on("vulkan"); }

// The reference executor on one graph-IR module from 8 threads (constants and the op registry
// are shared).
TEST(ConcurrencyCpuRef, OneModuleEightThreads) {
  TestModule t;
  build_mlp(t);
  const auto sets = input_sets(t.m, 4);
  expect_concurrent_matches_serial(
      [&](int s, std::string &error) { return run_reference(t.m, sets[s], error); });
}

TEST(ConcurrencyCpuRef, ConvnetEightThreads) {
  TestModule t;
  build_convnet(t);
  const auto sets = input_sets(t.m, 5);
  expect_concurrent_matches_serial(
      [&](int s, std::string &error) { return run_reference(t.m, sets[s], error); });
}

// A real model: squeezenet1_1 on Vulkan, 4 threads x 2 calls (lavapipe takes ~1 s per call).
TEST(ConcurrencyVulkan, Squeezenet) {
  fs::path p = fs::path(KILN_SOURCE_DIR) / "models" / "squeezenet1_1.onnx";
  if (!fs::exists(p)) GTEST_SKIP() << p << " not present";
  OpenDevice d("vulkan");
  if (!d.dev) GTEST_SKIP() << "no Vulkan device: " << d.why;
  auto m = onnx_fe::import_file(p.string());
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const auto sets = input_sets(*m.value(), 6);
  ModuleHandle mod{d.load(compile(*m.value()))};
  ASSERT_NE(mod.m, nullptr);
  expect_concurrent_matches_serial(
      [&](int s, std::string &error) { return run_once(mod.m, sets[s], error); }, true, 4, 2,
      2);
  d.expect_no_validation_messages();
}

} // namespace
} // namespace kiln

int main(int argc, char **argv) {
  // Vulkan runs with the validation layer unless the caller chose otherwise.
  setenv("KILN_VULKAN_VALIDATION", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
