// Kernel-IR pass registry and pipeline: names, order, the after-each hook and errors.
#include "kir/kir.h"
#include "kir/kir_parser.h"
#include "kir/kir_pass.h"

#include <gtest/gtest.h>

using namespace kiln::kir;

namespace {

Kernel parse(const char *text) {
  auto r = parse_kernel(text, "p.kir");
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : Kernel();
}

constexpr const char *kLongSum = R"(kernel sum workgroup(1, 1, 1) push_constants 0
  buffer b0 in: f32 readonly
  buffer b1 out: f32 writeonly
{
  var acc: f32 = 0.0f
  for (r: i32, 0, (1000 + 24)) {
    acc = (acc + b0[r])
  }
  b1[0u] = acc
}
)";

} // namespace

TEST(KirPass, RegistryNamesEveryPass) {
  std::vector<std::string> names;
  for (const KirPass &p : all_kir_passes()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"simplify", "unroll-long-loops", "verify"}));
  EXPECT_EQ(find_kir_pass("simplify"), &all_kir_passes()[0]);
  EXPECT_EQ(find_kir_pass("split-bindings"), nullptr); // compiler-side, not a kernel-IR pass
  EXPECT_EQ(find_kir_pass(""), nullptr);
}

TEST(KirPass, DefaultPipelineRunsInOrderAndReportsEachPass) {
  std::vector<std::string> seen;
  std::vector<int64_t> iterations;
  auto out = run_kir_passes(parse(kLongSum), default_kir_pipeline(true),
                            [&](std::string_view pass, const Kernel &k) {
                              seen.emplace_back(pass);
                              iterations.push_back(loop_iterations(k.body));
                              return kiln::Status::ok();
                            });
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(seen, (std::vector<std::string>{"simplify", "unroll-long-loops", "simplify", "verify"}));
  // simplify folds the extent to 1024, which unroll-long-loops then unrolls by 8.
  EXPECT_EQ(iterations, (std::vector<int64_t>{1024, 128, 128, 128}));
  EXPECT_EQ(default_kir_pipeline(false).size(), 3u);
}

TEST(KirPass, ErrorsNameThePassAndStopThePipeline) {
  Kernel bad = parse(R"(kernel bad workgroup(1, 1, 1) push_constants 0
  buffer b0 o: f32 readonly
{
  b0[0u] = 1.0f
}
)");
  int calls = 0;
  auto hook = [&](std::string_view, const Kernel &) {
    ++calls;
    return kiln::Status::ok();
  };
  auto out = run_kir_passes(bad, {find_kir_pass("verify"), find_kir_pass("simplify")}, hook);
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().message(), "pass verify: kernel 'bad': store to readonly buffer b0");
  EXPECT_EQ(calls, 0);
  // A hook error stops the pipeline too.
  auto stop = run_kir_passes(parse(kLongSum), default_kir_pipeline(true),
                             [&](std::string_view pass, const Kernel &) {
                               ++calls;
                               return kiln::Status::error(std::string("stop at ") +
                                                          std::string(pass));
                             });
  ASSERT_FALSE(stop.is_ok());
  EXPECT_EQ(stop.status().message(), "stop at simplify");
  EXPECT_EQ(calls, 1);
}
