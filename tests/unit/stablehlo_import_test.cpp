// StableHLO import: the JAX models of ../shared/models against their golden outputs, the
// StableHLO semantics that differ from kiln's core ops (index clamping, dropped scatter windows,
// rounding, total order, shifts, loops), and error messages with source locations.
#include "exec/executor.h"
#include "frontend/stablehlo/importer.h"
#include "support/npy.h"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kModels = fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "models";

Tensor load_npy(const fs::path &p) {
  auto a = read_npy(p.string());
  EXPECT_TRUE(a.is_ok()) << a.status().message();
  if (!a) return Tensor();
  Tensor t(a->dtype, a->shape);
  if (!a->bytes.empty()) std::memcpy(t.raw_mut(), a->bytes.data(), a->bytes.size());
  return t;
}

void expect_close(const Tensor &got, const Tensor &want, double rtol, double atol) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.get_f64(i), w = want.get_f64(i);
    ASSERT_LE(std::fabs(g - w), atol + rtol * std::fabs(w)) << "element " << i;
  }
}

void run_model(const std::string &name) {
  const fs::path mlir = kModels / (name + ".stablehlo.mlir");
  if (!fs::exists(mlir)) GTEST_SKIP() << mlir << " is absent";
  auto m = stablehlo_fe::import_file(mlir.string());
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const Function &f = *m.value()->main();
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < f.body.params.size(); ++i) {
    EXPECT_EQ(f.body.params[i]->name, "arg" + std::to_string(i));
    inputs.push_back(load_npy(kModels / (name + ".in." + std::to_string(i) + ".npy")));
  }
  ASSERT_EQ(f.body.results.size(), 1u);
  EXPECT_EQ(f.body.results[0]->name, "out0");
  auto outs = execute(f, inputs);
  ASSERT_TRUE(outs.is_ok()) << outs.status().message();
  expect_close(outs.value()[0], load_npy(kModels / (name + ".out.0.npy")), 1e-4, 1e-5);
}

TEST(StablehloImport, JaxMlpMatchesGolden) { run_model("jax_mlp"); }
TEST(StablehloImport, JaxCnnMatchesGolden) { run_model("jax_cnn"); }

// Imports `body` as the body of @main with the given signature and runs it.
Result<std::vector<Tensor>> run(const std::string &sig, const std::string &body,
                                std::vector<Tensor> inputs) {
  std::string text = "module {\n  func.func public @main" + sig + " {\n" + body + "  }\n}\n";
  auto m = stablehlo_fe::import_text(text, "t.mlir");
  if (!m) return m.status();
  return execute(*m.value()->main(), std::move(inputs));
}

Tensor f32s(std::vector<float> v, Shape s) { return Tensor::from_f32s(v, std::move(s)); }
Tensor i32s(std::vector<int64_t> v, Shape s) {
  Tensor t(DType::i32, std::move(s));
  for (size_t i = 0; i < v.size(); ++i) t.set_i64(static_cast<int64_t>(i), v[i]);
  return t;
}
std::vector<double> vals(const Tensor &t) { return t.to_f64s(); }

TEST(StablehloImport, DynamicSliceClampsStartIndices) {
  // Start 5 on a dim of 6 with size 3 is clamped to 3 (StableHLO), not an error or a wrap.
  auto r = run("(%arg0: tensor<6xf32>, %arg1: tensor<i32>) -> tensor<3xf32>",
               "    %0 = \"stablehlo.dynamic_slice\"(%arg0, %arg1) <{slice_sizes = array<i64: 3>}> : "
               "(tensor<6xf32>, tensor<i32>) -> tensor<3xf32>\n"
               "    \"func.return\"(%0) : (tensor<3xf32>) -> ()\n",
               {f32s({0, 1, 2, 3, 4, 5}, {6}), i32s({5}, {})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{3, 4, 5}));
  r = run("(%arg0: tensor<6xf32>, %arg1: tensor<i32>) -> tensor<3xf32>",
          "    %0 = \"stablehlo.dynamic_slice\"(%arg0, %arg1) <{slice_sizes = array<i64: 3>}> : "
          "(tensor<6xf32>, tensor<i32>) -> tensor<3xf32>\n"
          "    \"func.return\"(%0) : (tensor<3xf32>) -> ()\n",
          {f32s({0, 1, 2, 3, 4, 5}, {6}), i32s({-4}, {})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{0, 1, 2}));
}

TEST(StablehloImport, ScatterDropsWindowsThatDoNotFit) {
  // x.at[idx].set(u) with one index out of range: that update is skipped, the others land.
  const std::string body =
      "    %0 = \"stablehlo.scatter\"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, "
      "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
      "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
      "unique_indices = false}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      \"stablehlo.return\"(%b) : (tensor<f32>) -> ()\n"
      "    }) : (tensor<4x2xf32>, tensor<3x1xi32>, tensor<3x2xf32>) -> tensor<4x2xf32>\n"
      "    \"func.return\"(%0) : (tensor<4x2xf32>) -> ()\n";
  auto r = run("(%arg0: tensor<4x2xf32>, %arg1: tensor<3x1xi32>, %arg2: tensor<3x2xf32>) -> "
               "tensor<4x2xf32>",
               body, {f32s({0, 0, 0, 0, 0, 0, 0, 0}, {4, 2}), i32s({3, 7, 1}, {3, 1}),
                      f32s({1, 2, 3, 4, 5, 6}, {3, 2})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{0, 0, 5, 6, 0, 0, 1, 2}));
}

TEST(StablehloImport, GatherClampsIndices) {
  // x[idx] with idx = [2, 9, -3] on 4 rows: 9 -> 3 and -3 -> 0 (clamped, StableHLO semantics).
  const std::string body =
      "    %0 = \"stablehlo.gather\"(%arg0, %arg1) <{dimension_numbers = "
      "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
      "index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 2>}> : "
      "(tensor<4x2xf32>, tensor<3x1xi32>) -> tensor<3x2xf32>\n"
      "    \"func.return\"(%0) : (tensor<3x2xf32>) -> ()\n";
  auto r = run("(%arg0: tensor<4x2xf32>, %arg1: tensor<3x1xi32>) -> tensor<3x2xf32>", body,
               {f32s({0, 1, 2, 3, 4, 5, 6, 7}, {4, 2}), i32s({2, 9, -3}, {3, 1})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{4, 5, 6, 7, 0, 1}));
}

TEST(StablehloImport, RoundHalfAwayFromZeroIsExact) {
  auto r = run("(%arg0: tensor<6xf32>) -> tensor<6xf32>",
               "    %0 = \"stablehlo.round_nearest_afz\"(%arg0) : (tensor<6xf32>) -> tensor<6xf32>\n"
               "    \"func.return\"(%0) : (tensor<6xf32>) -> ()\n",
               {f32s({0.5f, -2.5f, 1.5f, 0.49999997f, -0.49999997f, 2.4f}, {6})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{1, -3, 2, 0, 0, 2}));
}

TEST(StablehloImport, CompareTotalOrder) {
  const float nan = std::nanf("");
  auto r = run("(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xi1>",
               "    %0 = \"stablehlo.compare\"(%arg0, %arg1) <{compare_type = "
               "#stablehlo<comparison_type TOTALORDER>, comparison_direction = "
               "#stablehlo<comparison_direction LT>}> : (tensor<3xf32>, tensor<3xf32>) -> "
               "tensor<3xi1>\n"
               "    \"func.return\"(%0) : (tensor<3xi1>) -> ()\n",
               {f32s({-0.0f, INFINITY, -1.0f}, {3}), f32s({0.0f, nan, -2.0f}, {3})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{1, 1, 0}));
}

TEST(StablehloImport, ConvertAndShifts) {
  auto r = run("(%arg0: tensor<3xf32>, %arg1: tensor<3xi32>, %arg2: tensor<3xi32>) -> "
               "(tensor<3xi32>, tensor<3xi1>, tensor<3xi32>)",
               "    %0 = \"stablehlo.convert\"(%arg0) : (tensor<3xf32>) -> tensor<3xi32>\n"
               "    %1 = \"stablehlo.convert\"(%arg1) : (tensor<3xi32>) -> tensor<3xi1>\n"
               "    %2 = \"stablehlo.shift_right_arithmetic\"(%arg1, %arg2) : (tensor<3xi32>, "
               "tensor<3xi32>) -> tensor<3xi32>\n"
               "    \"func.return\"(%0, %1, %2) : (tensor<3xi32>, tensor<3xi1>, tensor<3xi32>) -> ()\n",
               {f32s({-1.7f, 2.9f, 0.2f}, {3}), i32s({-8, 0, 16}, {3}), i32s({1, 3, 40}, {3})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{-1, 2, 0}));
  EXPECT_EQ(vals(r.value()[1]), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(vals(r.value()[2]), (std::vector<double>{-4, 0, 0}));
}

TEST(StablehloImport, PadInteriorAndNegative) {
  // [1 2 3] with interior 1 -> [1 9 2 9 3]; low -2 drops [1 9]; high 1 appends 9.
  auto r = run("(%arg0: tensor<3xf32>, %arg1: tensor<f32>) -> tensor<4xf32>",
               "    %0 = \"stablehlo.pad\"(%arg0, %arg1) <{edge_padding_high = array<i64: 1>, "
               "edge_padding_low = array<i64: -2>, interior_padding = array<i64: 1>}> : "
               "(tensor<3xf32>, tensor<f32>) -> tensor<4xf32>\n"
               "    \"func.return\"(%0) : (tensor<4xf32>) -> ()\n",
               {f32s({1, 2, 3}, {3}), f32s({9}, {})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{2, 9, 3, 9}));
}

TEST(StablehloImport, ReducePrecisionToHalf) {
  // f16 keeps 10 mantissa bits: 1 + 2^-10 stays, 1 + 2^-11 ties to even (1), 70000 overflows.
  auto r = run("(%arg0: tensor<3xf32>) -> tensor<3xf32>",
               "    %0 = \"stablehlo.reduce_precision\"(%arg0) <{exponent_bits = 5 : i32, "
               "mantissa_bits = 10 : i32}> : (tensor<3xf32>) -> tensor<3xf32>\n"
               "    \"func.return\"(%0) : (tensor<3xf32>) -> ()\n",
               {f32s({1.0f + 1.0f / 1024, 1.0f + 1.0f / 2048, 70000.0f}, {3})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{1.0 + 1.0 / 1024, 1.0, INFINITY}));
}

TEST(StablehloImport, WhileLoopRunsUntilTheCondition) {
  // i = 0; x = 1; while (i < n) { x = x * 2; i = i + 1 }  with a runtime n.
  const std::string body =
      "    %c0 = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n"
      "    %c1 = \"stablehlo.constant\"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>\n"
      "    %f1 = \"stablehlo.constant\"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>\n"
      "    %0:2 = \"stablehlo.while\"(%c0, %f1) ({\n"
      "    ^bb0(%i: tensor<i32>, %x: tensor<f32>):\n"
      "      %p = \"stablehlo.compare\"(%i, %arg0) <{comparison_direction = "
      "#stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      \"stablehlo.return\"(%p) : (tensor<i1>) -> ()\n"
      "    }, {\n"
      "    ^bb0(%i: tensor<i32>, %x: tensor<f32>):\n"
      "      %y = \"stablehlo.add\"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      %j = \"stablehlo.add\"(%i, %c1) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n"
      "      \"stablehlo.return\"(%j, %y) : (tensor<i32>, tensor<f32>) -> ()\n"
      "    }) : (tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>)\n"
      "    \"func.return\"(%0#1) : (tensor<f32>) -> ()\n";
  for (int n : {0, 5}) {
    auto r = run("(%arg0: tensor<i32>) -> tensor<f32>", body, {i32s({n}, {})});
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{std::ldexp(1.0, n)}));
  }
}

TEST(StablehloImport, SortAndArgsortByComparator) {
  // Descending sort of (values, iota) with a TOTALORDER comparator: stable, indices follow.
  const std::string body =
      "    %i = \"stablehlo.iota\"() <{iota_dimension = 0 : i64}> : () -> tensor<5xi32>\n"
      "    %0:2 = \"stablehlo.sort\"(%arg0, %i) <{dimension = 0 : i64, is_stable = true}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %p: tensor<i32>, %q: tensor<i32>):\n"
      "      %c = \"stablehlo.compare\"(%a, %b) <{compare_type = #stablehlo<comparison_type "
      "TOTALORDER>, comparison_direction = #stablehlo<comparison_direction GT>}> : "
      "(tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      \"stablehlo.return\"(%c) : (tensor<i1>) -> ()\n"
      "    }) : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)\n"
      "    \"func.return\"(%0#0, %0#1) : (tensor<5xf32>, tensor<5xi32>) -> ()\n";
  auto r = run("(%arg0: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xi32>)", body,
               {f32s({3, -1, 7, 3, 0}, {5})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{7, 3, 3, 0, -1}));
  EXPECT_EQ(vals(r.value()[1]), (std::vector<double>{2, 0, 3, 4, 1}));
}

TEST(StablehloImport, ArgmaxFromVariadicReduce) {
  // The body JAX emits for argmax: NaN wins, ties go to the smaller index.
  const std::string body =
      "    %i = \"stablehlo.iota\"() <{iota_dimension = 1 : i64}> : () -> tensor<2x4xi32>\n"
      "    %m = \"stablehlo.constant\"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>\n"
      "    %z = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n"
      "    %0:2 = \"stablehlo.reduce\"(%arg0, %i, %m, %z) <{dimensions = array<i64: 1>}> ({\n"
      "    ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):\n"
      "      %gt = \"stablehlo.compare\"(%a, %b) <{comparison_direction = "
      "#stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %nan = \"stablehlo.compare\"(%a, %a) <{comparison_direction = "
      "#stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %pick = \"stablehlo.or\"(%gt, %nan) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
      "      %eq = \"stablehlo.compare\"(%a, %b) <{comparison_direction = "
      "#stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "      %lt = \"stablehlo.compare\"(%ai, %bi) <{comparison_direction = "
      "#stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      %tie = \"stablehlo.and\"(%eq, %lt) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
      "      %idx = \"stablehlo.or\"(%pick, %tie) : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
      "      %v = \"stablehlo.select\"(%pick, %a, %b) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      %j = \"stablehlo.select\"(%idx, %ai, %bi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>\n"
      "      \"stablehlo.return\"(%v, %j) : (tensor<f32>, tensor<i32>) -> ()\n"
      "    }) : (tensor<2x4xf32>, tensor<2x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2xf32>, "
      "tensor<2xi32>)\n"
      "    \"func.return\"(%0#1) : (tensor<2xi32>) -> ()\n";
  auto r = run("(%arg0: tensor<2x4xf32>) -> tensor<2xi32>", body,
               {f32s({1, 5, 5, 2, -1, -3, -1, -2}, {2, 4})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{1, 0}));
}

TEST(StablehloImport, ReduceWindowPaddingDilationAndInit) {
  // [4 1 3] dilated by 2 with +inf: [4 inf 1 inf 3], padded (1, 0): [inf 4 inf 1 inf 3];
  // windows of 2 at stride 2: [4 1 3].  Then a window of 3 at stride 1 over [4 1 3] padded
  // (1, 1) with init 1, a sum: [1 4 1 3 1] -> 6 8 5, plus the init (not the identity) -> 7 9 6.
  const std::string body =
      "    %inf = \"stablehlo.constant\"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>\n"
      "    %0 = \"stablehlo.reduce_window\"(%arg0, %inf) <{base_dilations = array<i64: 2>, "
      "padding = dense<[[1, 0]]> : tensor<1x2xi64>, window_dimensions = array<i64: 2>, "
      "window_strides = array<i64: 2>}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %m = \"stablehlo.minimum\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      \"stablehlo.return\"(%m) : (tensor<f32>) -> ()\n"
      "    }) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "    %one = \"stablehlo.constant\"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>\n"
      "    %1 = \"stablehlo.reduce_window\"(%0, %one) <{padding = dense<[[1, 1]]> : tensor<1x2xi64>, "
      "window_dimensions = array<i64: 3>}> ({\n"
      "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "      %m = \"stablehlo.add\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
      "      \"stablehlo.return\"(%m) : (tensor<f32>) -> ()\n"
      "    }) : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "    \"func.return\"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> ()\n";
  auto r = run("(%arg0: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)", body,
               {f32s({4, 1, 3}, {3})});
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_EQ(vals(r.value()[0]), (std::vector<double>{4, 1, 3}));
  const std::vector<double> sums = vals(r.value()[1]), want = {7, 9, 6};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(sums[i], want[i], 1e-5);
}

TEST(StablehloImport, ReturnedParameterGetsItsOwnResult) {
  auto m = stablehlo_fe::import_text("func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, "
                                     "tensor<2xf32>) {\n  \"func.return\"(%arg0, %arg0) : "
                                     "(tensor<2xf32>, tensor<2xf32>) -> ()\n}\n",
                                     "id.mlir");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  const Function &f = *m.value()->main();
  ASSERT_EQ(f.body.results.size(), 2u);
  EXPECT_EQ(f.body.params[0]->name, "arg0");
  EXPECT_EQ(f.body.results[0]->name, "out0");
  EXPECT_EQ(f.body.results[1]->name, "out1");
  EXPECT_NE(f.body.results[0], f.body.results[1]);
}

// Programs with their numbers changed (shapes, dims, attributes) must import or fail with a
// located message, never crash: the importer checks what its converters rely on.
TEST(StablehloImport, MutatedProgramsNeverCrash) {
  const fs::path dir = fs::path(KILN_SOURCE_DIR) / "tests" / "stablehlo" / "programs";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent";
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".mlir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  int imported = 0, rejected = 0;
  for (const auto &f : files) {
    std::ifstream in(f);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    std::vector<size_t> digits;
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] >= '0' && text[i] <= '9' && i > 0 && text[i - 1] != '%') digits.push_back(i);
    if (digits.empty()) continue;
    for (int k = 0; k < 16; ++k) {
      std::string t = text;
      t[digits[next() % digits.size()]] = static_cast<char>('0' + next() % 10);
      auto m = stablehlo_fe::import_text(t, "m.mlir");
      if (m) {
        ++imported;
      } else {
        ++rejected;
        EXPECT_EQ(m.status().message().rfind("m.mlir:", 0), 0u) << m.status().message();
      }
    }
  }
  EXPECT_GT(imported + rejected, 0);
}

std::string import_error(const std::string &text) {
  auto m = stablehlo_fe::import_text(text, "e.mlir");
  EXPECT_FALSE(m.is_ok());
  return m.is_ok() ? std::string() : m.status().message();
}

TEST(StablehloImport, ErrorsNameTheOpAndQuoteTheLine) {
  std::string e = import_error(
      "func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
      "    %0 = \"stablehlo.custom_call\"(%arg0) <{call_target_name = \"Sharding\"}> : "
      "(tensor<2xf32>) -> tensor<2xf32>\n"
      "  \"func.return\"(%0) : (tensor<2xf32>) -> ()\n}\n");
  EXPECT_EQ(e.rfind("e.mlir:2:", 0), 0u) << e;
  EXPECT_NE(e.find("unsupported custom_call @Sharding: %0 = \"stablehlo.custom_call\""),
            std::string::npos)
      << e;
  e = import_error("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                   "  %0 = \"stablehlo.rng_bit_generator\"(%arg0) : (tensor<2xf32>) -> "
                   "tensor<2xf32>\n"
                   "  \"func.return\"(%0) : (tensor<2xf32>) -> ()\n}\n");
  EXPECT_NE(e.find("e.mlir:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("unsupported op 'stablehlo.rng_bit_generator'"), std::string::npos) << e;
}

TEST(StablehloImport, ReturnTypesAreChecked) {
  std::string e = import_error("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xi32> {\n"
                               "  \"func.return\"(%arg0) : (tensor<2xi32>) -> ()\n}\n");
  EXPECT_NE(e.find("e.mlir:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("tensor<2xi32>"), std::string::npos) << e;
  e = import_error("func.func @main(%arg0: tensor<2xf32>) -> tensor<2xi32> {\n"
                   "  \"func.return\"(%arg0) : (tensor<2xf32>) -> ()\n}\n");
  EXPECT_NE(e.find("e.mlir:1:"), std::string::npos) << e;
  EXPECT_NE(e.find("declares tensor<2xi32>"), std::string::npos) << e;
}

TEST(StablehloImport, RecursionIsAnError) {
  std::string e = import_error(
      "func.func public @main(%arg0: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = \"func.call\"(%arg0) <{callee = @f}> : (tensor<f32>) -> tensor<f32>\n"
      "  \"func.return\"(%0) : (tensor<f32>) -> ()\n}\n"
      "func.func private @f(%arg0: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = \"func.call\"(%arg0) <{callee = @f}> : (tensor<f32>) -> tensor<f32>\n"
      "  \"func.return\"(%0) : (tensor<f32>) -> ()\n}\n");
  EXPECT_NE(e.find("e.mlir:6:"), std::string::npos) << e;
  EXPECT_NE(e.find("recursive call of @f"), std::string::npos) << e;
}

TEST(StablehloImport, UnsupportedBitcastWidthIsAnError) {
  std::string e = import_error(
      "func.func @main(%arg0: tensor<2xf32>) -> tensor<2x2xf16> {\n"
      "  %0 = \"stablehlo.bitcast_convert\"(%arg0) : (tensor<2xf32>) -> tensor<2x2xf16>\n"
      "  \"func.return\"(%0) : (tensor<2x2xf16>) -> ()\n}\n");
  EXPECT_NE(e.find("e.mlir:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("different element widths"), std::string::npos) << e;
}

} // namespace
} // namespace kiln
