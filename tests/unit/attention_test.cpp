// The fused attention core (passes/fuse_attention.cpp, kiln.sdpa, definitions/attention.cpp):
// attention written out as matmul -> scale -> [mask add] -> softmax -> matmul, at shapes whose
// sequence lengths are not multiples of the blocks (1 to 100 keys), head sizes 1 to 128, with
// and without masks (rows masked entirely included), f32 and f16. For each: the pass makes one
// kiln.sdpa; the reference executor gives the unfused graph's results on it; the kernel on
// Vulkan (lavapipe) and on the cpu device (C backend) gives them too.
#include "e2e_util.h"
#include "passes/pass.h"
#include "test_module.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace kiln {
namespace {

using test::TestModule;

struct Case {
  int64_t batch, heads, sq, skv, d, dv;
  bool mask = false, torch = false; // torch: bool mask, scaled q and k^T, where(isnan)
  DType dt = DType::f32;
};

std::string name(const Case &c) {
  return fmt::format("{}x{} q{} k{} d{} dv{}{}{} {}", c.batch, c.heads, c.sq, c.skv, c.d, c.dv,
                     c.mask ? " mask" : "", c.torch ? " torch" : "", dtype_name(c.dt));
}

// main(q, kp, v [, mask]) -> attention, kp the keys as [B, Skv, H, D] (transposed to k^T).
std::unique_ptr<TestModule> build(const Case &c) {
  auto t = std::make_unique<TestModule>();
  Value *q = t->param(c.dt, {c.batch, c.heads, c.sq, c.d}, "q");
  Value *kp = t->param(c.dt, {c.batch, c.skv, c.heads, c.d}, "kp");
  Value *v = t->param(c.dt, {c.batch, c.heads, c.skv, c.dv}, "v");
  Value *kt = t->op("kiln.transpose", {kp}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}});
  const double scale = 1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(c.d, 1)));
  Value *s = nullptr;
  Value *mask = nullptr;
  if (c.torch) {
    Value *root = t->b.scalar_f(c.dt, std::sqrt(scale));
    s = t->op("kiln.matmul", {t->op("kiln.mul", {q, root}), t->op("kiln.mul", {kt, root})});
    Value *keep = t->param(DType::boolean, {c.batch, 1, c.sq, c.skv}, "keep");
    mask = t->op("kiln.where", {keep, t->b.scalar_f(c.dt, 0.0),
                                t->b.scalar_f(c.dt, -std::numeric_limits<double>::infinity())});
  } else {
    s = t->op("kiln.div", {t->op("kiln.matmul", {q, kt}), t->b.scalar_f(c.dt, 1.0 / scale)});
    if (c.mask)
      mask = t->param(c.dt, {c.batch, 1, 1, c.skv}, "mask");
  }
  if (mask)
    s = t->op("kiln.add", {s, mask});
  Value *p = t->op("kiln.softmax", {s}, {{"kind", std::string("softmax")}, {"axis", int64_t(-1)}});
  if (c.torch)
    p = t->op("kiln.where", {t->op("kiln.isnan", {p}), t->b.scalar_f(c.dt, 0.0), p});
  t->g->results = {t->op("kiln.matmul", {p, v})};
  return t;
}

// Inputs: values in [-2, 2]; a float mask with some keys at -inf and others at -10000; the
// bool mask keeps about 3 keys in 4, and none of query row 1.
std::vector<Tensor> inputs(const Case &c, const Graph &g) {
  std::mt19937 rng(11);
  std::vector<Tensor> in;
  for (const Value *p : g.params)
    in.push_back(test::random_tensor(p->type, rng));
  if (c.torch) {
    Tensor &keep = in.back();
    for (int64_t i = 0; i < keep.numel(); ++i) {
      const int64_t row = (i / c.skv) % c.sq;
      keep.set_i64(i, row != 1 && (i * 7) % 4 != 0);
    }
  } else if (c.mask) {
    Tensor &m = in.back();
    for (int64_t i = 0; i < m.numel(); ++i)
      m.set_f64(i, i % 5 == 1   ? -std::numeric_limits<double>::infinity()
                   : i % 5 == 3 ? -10000.0
                                : 0.0);
  }
  return in;
}

int count_ops(const Graph &g, std::string_view name) {
  int n = 0;
  for (const auto &op : g.ops)
    n += op->name() == name;
  return n;
}

void expect_close(const std::vector<Tensor> &want, const std::vector<Tensor> &got, double tol,
                  const char *what) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].shape(), got[k].shape());
    int bad = 0;
    for (int64_t i = 0; i < want[k].numel() && bad < 5; ++i) {
      const double x = want[k].get_f64(i), y = got[k].get_f64(i);
      const bool ok =
          (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= tol * (1 + std::fabs(x));
      bad += !ok;
      EXPECT_TRUE(ok) << what << ": element " << i << ": unfused " << x << ", got " << y;
    }
  }
}

const Case kCases[] = {
    {1, 1, 1, 1, 1, 1},
    {1, 2, 5, 37, 16, 8, true},
    {2, 3, 37, 45, 20, 12, true},
    {1, 2, 64, 100, 64, 64},
    {1, 2, 17, 33, 128, 128, true},
    {2, 2, 9, 40, 32, 32, false, true},
    {1, 2, 33, 50, 64, 64, true, false, DType::f16},
    {1, 2, 8, 20, 128, 128, false, true, DType::f16},
};

TEST(Attention, FusedMatchesUnfused) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(name(c));
    auto t = build(c);
    Module &m = t->m;
    const std::vector<Tensor> in = inputs(c, m.main()->body);
    auto unfused = execute(*m.main(), in);
    ASSERT_TRUE(unfused.is_ok()) << unfused.status().message();
    ASSERT_TRUE(run_pipeline(m, {"fuse-attention", "dce"}).is_ok());
    const Graph &g = m.main()->body;
    EXPECT_EQ(count_ops(g, "kiln.sdpa"), 1);
    EXPECT_EQ(count_ops(g, "kiln.softmax"), 0);
    EXPECT_EQ(count_ops(g, "kiln.matmul"), 0);
    // f16: the unfused graph rounds the scores and probabilities to f16 on the way.
    const double tol = c.dt == DType::f16 ? 1e-2 : 1e-5;
    auto fused = execute(*m.main(), in);
    ASSERT_TRUE(fused.is_ok()) << fused.status().message();
    expect_close(*unfused, *fused, tol, "reference");
    for (const char *target : {"cpu", "vulkan-lavapipe"}) {
      SCOPED_TRACE(target);
      const kir::TargetDesc *td = kir::find_target(target);
      ASSERT_NE(td, nullptr);
      if (!test::device_for(*td))
        continue;
      CompileStats st;
      auto got = test::run_on_vulkan(m, in, *td, {}, &st);
      ASSERT_TRUE(got.is_ok()) << got.status().message();
      EXPECT_EQ(st.attention, 1);
      // k's transpose {0, 2, 1, 3} of kp, the mask's where (torch), the attention kernel.
      EXPECT_EQ(st.dispatches, 2 + (c.torch ? 1 : 0));
      expect_close(*unfused, *got, tol, target);
    }
  }
}

// The probabilities used elsewhere: nothing is fused.
TEST(Attention, SharedProbabilitiesStay) {
  TestModule t;
  Value *q = t.param(DType::f32, {2, 4, 8}, "q");
  Value *kt = t.param(DType::f32, {2, 8, 4}, "kt");
  Value *v = t.param(DType::f32, {2, 4, 8}, "v");
  Value *p = t.op("kiln.softmax", {t.op("kiln.matmul", {q, kt})},
                  {{"kind", std::string("softmax")}, {"axis", int64_t(-1)}});
  t.g->results = {t.op("kiln.matmul", {p, v}), p};
  ASSERT_TRUE(run_pipeline(t.m, {"fuse-attention", "dce"}).is_ok());
  EXPECT_EQ(count_ops(t.m.main()->body, "kiln.sdpa"), 0);
  EXPECT_EQ(count_ops(t.m.main()->body, "kiln.matmul"), 2);
}

// The pipeline a compilation for a target runs (target_pipeline): the cpu targets (C backend)
// and the targets with cooperative matrices (vulkan-nvidia) leave fuse-attention out, where the
// fused kernel was measured slower (bench/RESULTS.md, 2026-12-07); the other Vulkan targets keep
// it. All keep every other pass in order.
TEST(Attention, CpuTargetsLeaveFuseAttentionOut) {
  auto has = [](const std::vector<std::string> &v, const std::string &n) {
    return std::find(v.begin(), v.end(), n) != v.end();
  };
  for (Precision p : {Precision::fp32, Precision::fp16}) {
    const std::vector<std::string> all = precision_pipeline(p);
    ASSERT_TRUE(has(all, "fuse-attention"));
    for (const std::string &name : kir::target_names()) {
      SCOPED_TRACE(name);
      const kir::TargetDesc *t = kir::find_target(name);
      ASSERT_NE(t, nullptr);
      const std::vector<std::string> got = target_pipeline(*t, p);
      const bool cpu = name.rfind("cpu", 0) == 0;
      EXPECT_EQ(t->backend == "c", cpu);
      const bool omit = cpu || name == "vulkan-nvidia";
      EXPECT_EQ(t->cooperative_matrix, name == "vulkan-nvidia");
      EXPECT_EQ(has(got, "fuse-attention"), !omit);
      std::vector<std::string> want = all;
      if (omit) std::erase(want, "fuse-attention");
      EXPECT_EQ(got, want);
    }
  }
}

} // namespace
} // namespace kiln
