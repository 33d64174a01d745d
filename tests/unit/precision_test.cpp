// --precision fp16 / bf16 (passes/lower_precision.cpp, check_precision): the policy table names
// real ops; the fp16 pipeline stores the attention block's matmuls in f16 and keeps softmax and
// layer norm in f32 with an unchanged f32 signature; compiled for the cpu and lavapipe targets
// it matches the f32 model within 1e-2 of the output range; targets without a precision refuse
// it by name.
#include "e2e_util.h"

#include "frontend/onnx/importer.h"
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"

#include <algorithm>
#include <map>

namespace kiln {
namespace {

const std::string kBlock = std::string(KILN_SOURCE_DIR) + "/tests/cli/Inputs/attention_block.onnx";

TEST(Precision, PolicyTableNamesCoreOps) {
  for (std::string_view op : precision_policy_ops())
    EXPECT_NE(core_ops().find(op), nullptr) << op << " is not a core op";
  EXPECT_EQ(precision_policy("kiln.matmul"), PrecisionPolicy::half);
  EXPECT_EQ(precision_policy("kiln.softmax"), PrecisionPolicy::f32);
  EXPECT_EQ(precision_policy("kiln.normalize"), PrecisionPolicy::f32);
  EXPECT_EQ(precision_policy("kiln.reduce"), PrecisionPolicy::f32);
  EXPECT_EQ(precision_policy("kiln.exp"), PrecisionPolicy::f32);
  EXPECT_EQ(precision_policy("kiln.no_such_op"), PrecisionPolicy::f32); // unlisted: kept
}

TEST(Precision, ParsesItsThreeNames) {
  EXPECT_EQ(parse_precision("fp32"), Precision::fp32);
  EXPECT_EQ(parse_precision("fp16"), Precision::fp16);
  EXPECT_EQ(parse_precision("bf16"), Precision::bf16);
  EXPECT_FALSE(parse_precision("fp8").has_value());
  EXPECT_FALSE(parse_precision("f16").has_value());
}

TEST(Precision, TargetsWithoutAPrecisionRefuseItByName) {
  for (const std::string &name : kir::target_names()) {
    const kir::TargetDesc &t = *kir::find_target(name);
    EXPECT_TRUE(check_precision(t, Precision::fp32).is_ok()) << name;
    Status bf = check_precision(t, Precision::bf16);
    ASSERT_FALSE(bf.is_ok()) << name;
    EXPECT_NE(bf.message().find("--precision bf16: target '" + name + "'"), std::string::npos)
        << bf.message();
    EXPECT_EQ(check_precision(t, Precision::fp16).is_ok(), name != "vulkan") << name;
  }
  Status f16 = check_precision(*kir::find_target("vulkan"), Precision::fp16);
  EXPECT_NE(f16.message().find("--precision fp16: target 'vulkan' lacks shaderFloat16"),
            std::string::npos)
      << f16.message();
}

std::map<std::string, std::string> result_dtypes_by_op(const Graph &g) {
  std::map<std::string, std::string> r;
  for (const auto &op : g.ops)
    if (!op->results.empty())
      r[std::string(op->name())] += std::string(dtype_name(op->results[0]->type.dtype)) + " ";
  return r;
}

TEST(Precision, Fp16AttentionBlockStoresHalfAndKeepsSoftmaxAndNormInF32) {
  auto m = onnx_fe::import_file(kBlock);
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  ASSERT_TRUE(run_pipeline(**m, precision_pipeline(Precision::fp16)).is_ok());
  const Graph &g = (*m)->main()->body;
  ASSERT_EQ(g.params.size(), 1u);
  EXPECT_EQ(g.params[0]->type.dtype, DType::f32);
  ASSERT_EQ(g.results.size(), 1u);
  EXPECT_EQ(g.results[0]->type.dtype, DType::f32);
  EXPECT_EQ(g.results[0]->name, "y");
  auto d = result_dtypes_by_op(g);
  // The q / k / v projections in f16; fuse-attention folds the two products and the softmax
  // into kiln.sdpa, which the keep-list leaves in f32.
  EXPECT_EQ(d["kiln.matmul"], "f16 f16 f16 ");
  EXPECT_EQ(d["kiln.sdpa"], "f32 ");
  EXPECT_EQ(d["kiln.softmax"], "");
  EXPECT_EQ(d["kiln.normalize"], "f32 ");
  // Every f32 constant feeding a half op was converted; the norm's scale and bias stay f32.
  int f16_constants = 0, f32_constants = 0;
  for (const auto &op : g.ops)
    if (op->name() == "kiln.constant")
      (op->results[0]->type.dtype == DType::f16 ? f16_constants : f32_constants) += 1;
  EXPECT_GE(f16_constants, 4); // Wq, bq, Wk, Wv (and the scale)
  EXPECT_EQ(f32_constants, 2); // g, b
}

// Runs the block in fp16 on `target` and compares with the f32 model on the reference executor:
// max abs err <= 1e-2 of the reference's range.
void expect_fp16_close(const kir::TargetDesc &target) {
  if (!test::device_for(target)) GTEST_SKIP() << "no device for target " << target.name;
  auto f32 = onnx_fe::import_file(kBlock);
  ASSERT_TRUE(f32.is_ok()) << f32.status().message();
  std::mt19937 rng(3);
  std::vector<Tensor> in{test::random_tensor((*f32)->main()->body.params[0]->type, rng)};
  auto ref = execute(*(*f32)->main(), in);
  ASSERT_TRUE(ref.is_ok()) << ref.status().message();
  auto half = onnx_fe::import_file(kBlock);
  ASSERT_TRUE(half.is_ok());
  ASSERT_TRUE(run_pipeline(**half, target_pipeline(target, Precision::fp16)).is_ok());
  CompileOptions o;
  o.precision = Precision::fp16;
  auto got = test::run_on_vulkan(**half, in, target, o);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  const Tensor &a = (*ref)[0], &b = (*got)[0];
  ASSERT_EQ(b.dtype(), DType::f32);
  double lo = 1e300, hi = -1e300, err = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    lo = std::min(lo, a.get_f64(i));
    hi = std::max(hi, a.get_f64(i));
    err = std::max(err, std::fabs(a.get_f64(i) - b.get_f64(i)));
  }
  EXPECT_LE(err, 1e-2 * (hi - lo)) << target.name << ": range " << hi - lo;
  EXPECT_GT(err, 0.0) << "fp16 results identical to f32: was the precision applied?";
}

TEST(Precision, Fp16AttentionBlockMatchesF32OnCpu) { expect_fp16_close(*kir::find_target("cpu")); }
TEST(Precision, Fp16AttentionBlockMatchesF32OnLavapipe) { expect_fp16_close(test::lavapipe()); }

} // namespace
} // namespace kiln
