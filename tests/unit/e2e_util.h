// End-to-end helpers for compiler tests: compile a graph-IR module, run it on the first Vulkan
// device (lavapipe in CI) and compare every output with the reference executor.
#pragma once

#include "compiler/compiler.h"
#include "exec/executor.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace kiln::test {

inline const kir::TargetDesc &lavapipe() {
  const kir::TargetDesc *t = kir::find_target("vulkan-lavapipe");
  EXPECT_NE(t, nullptr);
  return *t;
}

// The Vulkan device shared by the end-to-end tests (nullptr when none is available).
inline kiln_device *vulkan_device() {
  static kiln_device *dev = [] {
    kiln_device *d = nullptr;
    kiln_status s = kiln_device_open("vulkan", &d);
    if (s) {
      kiln_status_free(s);
      return static_cast<kiln_device *>(nullptr);
    }
    return d;
  }();
  return dev;
}

// The cpu driver's device shared by the end-to-end tests of cpu targets.
inline kiln_device *cpu_device() {
  static kiln_device *dev = [] {
    kiln_device *d = nullptr;
    kiln_status s = kiln_device_open("cpu", &d);
    if (s) {
      ADD_FAILURE() << kiln_status_message(s);
      kiln_status_free(s);
      return static_cast<kiln_device *>(nullptr);
    }
    return d;
  }();
  return dev;
}

// The device a target's artifacts run on: the cpu driver for the C backend, else Vulkan.
inline kiln_device *device_for(const kir::TargetDesc &target) {
  return target.backend == "c" ? cpu_device() : vulkan_device();
}

inline Tensor random_tensor(const TensorType &t, std::mt19937 &rng) {
  Tensor x(t.dtype, t.dims);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (is_float(t.dtype)) x.set_f64(i, u(rng));
    else if (is_bool(t.dtype)) x.set_i64(i, u(rng) > 0);
    else x.set_i64(i, static_cast<int64_t>(std::floor(u(rng) * 2)));
  }
  return x;
}

inline Result<std::vector<Tensor>> run_on_vulkan(const Module &m,
                                                 const std::vector<Tensor> &inputs,
                                                 const kir::TargetDesc &target,
                                                 const CompileOptions &opts = {},
                                                 CompileStats *stats = nullptr) {
  KILN_ASSIGN(auto bytes, compile_to_artifact(m, target, opts, stats));
  kiln_module *mod = nullptr;
  auto check = [](kiln_status s) -> Status {
    if (!s) return Status::ok();
    Status e = Status::error(kiln_status_message(s));
    kiln_status_free(s);
    return e;
  };
  KILN_TRY(check(kiln_module_load_memory(device_for(target), bytes.data(), bytes.size(), &mod)));
  std::vector<kiln_tensor> ins, outs;
  for (const Tensor &t : inputs)
    ins.push_back({static_cast<kiln_dtype>(t.dtype()), static_cast<uint32_t>(t.rank()),
                   t.shape().data(), const_cast<std::byte *>(t.raw()), t.nbytes()});
  std::vector<Tensor> results;
  for (const Value *v : m.main()->body.results) {
    results.emplace_back(v->type.dtype, v->type.dims);
    std::memset(results.back().raw_mut(), 0x7f, results.back().nbytes()); // poisoned
  }
  for (Tensor &t : results)
    outs.push_back({static_cast<kiln_dtype>(t.dtype()), static_cast<uint32_t>(t.rank()),
                    t.shape().data(), t.raw_mut(), t.nbytes()});
  Status s = check(kiln_module_run(mod, ins.data(), ins.size(), outs.data(), outs.size()));
  kiln_module_release(mod);
  KILN_TRY(s);
  return results;
}

// Runs `m` on Vulkan and on the reference executor with the given (or seeded random) inputs.
inline void expect_matches_reference(const Module &m, std::vector<Tensor> inputs = {},
                                     double rtol = 1e-4, double atol = 1e-5,
                                     const kir::TargetDesc &target = lavapipe(),
                                     const CompileOptions &opts = {},
                                     CompileStats *stats = nullptr) {
  if (!device_for(target)) GTEST_SKIP() << "no device for target " << target.name;
  std::mt19937 rng(7);
  const Graph &g = m.main()->body;
  for (size_t i = inputs.size(); i < g.params.size(); ++i)
    inputs.push_back(random_tensor(g.params[i]->type, rng));
  auto ref = execute(*m.main(), inputs);
  ASSERT_TRUE(ref.is_ok()) << ref.status().message();
  auto got = run_on_vulkan(m, inputs, target, opts, stats);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(ref->size(), got->size());
  for (size_t k = 0; k < ref->size(); ++k) {
    const Tensor &a = (*ref)[k], &b = (*got)[k];
    ASSERT_EQ(a.shape(), b.shape());
    int bad = 0;
    for (int64_t i = 0; i < a.numel() && bad < 5; ++i) {
      const double x = a.get_f64(i), y = b.get_f64(i);
      const bool ok = (std::isnan(x) && std::isnan(y)) || x == y ||
                      std::fabs(x - y) <= atol + rtol * std::fabs(x);
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << "output " << k << " element " << i << ": reference " << x << ", vulkan "
                      << y;
    }
  }
}

} // namespace kiln::test
