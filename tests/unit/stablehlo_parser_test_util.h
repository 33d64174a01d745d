// Shared helpers of the StableHLO parser tests (stablehlo_parser_test.cpp,
// stablehlo_parser_robustness_test.cpp): parsing that expects success or a failure, the
// "t.mlir:LINE:COL: " error location check, and the inline sample programs.
#pragma once

#include "frontend/stablehlo/ast.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <string>

namespace kiln::stablehlo_fe::parser_test {

namespace fs = std::filesystem;

inline const fs::path kShared = fs::path(KILN_SOURCE_DIR) / ".." / "shared";
inline const fs::path kPrograms = fs::path(KILN_SOURCE_DIR) / "tests" / "stablehlo" / "programs";

inline std::string read_all(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

inline ModuleAst parse_ok(const std::string &text, const ParseOptions &opt = {}) {
  auto r = parse_module(text, "t.mlir", opt);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return {};
  return std::move(r).value();
}

inline std::string parse_error(const std::string &text, const ParseOptions &opt = {}) {
  auto r = parse_module(text, "t.mlir", opt);
  EXPECT_FALSE(r.is_ok()) << "parsed but should not have:\n" << text;
  return r.is_ok() ? std::string() : r.status().message();
}

// "t.mlir:LINE:COL: message"
inline bool located(const std::string &msg) {
  const std::string file = "t.mlir:";
  if (msg.compare(0, file.size(), file) != 0) return false;
  size_t i = file.size();
  for (int field = 0; field < 2; ++field) {
    size_t digits = i;
    while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') ++i;
    if (i == digits || i >= msg.size() || msg[i] != ':') return false;
    ++i;
  }
  return msg.size() > i + 1 && msg[i] == ' ';
}

// ---- inline samples (run without ../shared) ----

inline const char *const kMlp = R"(module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x64xf32>, %arg1: tensor<64x128xf32>, %arg2: tensor<128xf32>) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<128xf32>) -> tensor<1x128xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x128xf32>) -> tensor<8x128xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x128xf32>
    %4 = call @relu(%3) : (tensor<8x128xf32>) -> tensor<8x128xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %5 = stablehlo.reduce(%4 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<8x128xf32>, tensor<f32>) -> tensor<8xf32>
    return %5 : tensor<8xf32>
  }
  func.func private @relu(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x128xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x128xf32>
    return %1 : tensor<8x128xf32>
  }
}
)";

inline const char *const kCnn = R"(module @jit_cnn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x16x16x16xf32>, %arg1: tensor<32x16x3x3xf32>) -> (tensor<2x32x4x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[0, 1], [2, 3]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x16x16x16xf32>, tensor<32x16x3x3xf32>) -> tensor<2x32x8x8xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = "stablehlo.reduce_window"(%0, %cst) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %2 = stablehlo.maximum %arg4, %arg5 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x32x8x8xf32>, tensor<f32>) -> tensor<2x32x4x4xf32>
    return %1 : tensor<2x32x4x4xf32>
  }
}
)";

inline const char *const kForms = R"(#loc1 = loc("f.py":3:4)
func.func @main(%arg0: tensor<4x6xf32> loc("x"), %arg1: tensor<i32>, %arg2: tensor<3x4x5xf32>) -> (tensor<4x6xf32>, tensor<3x4x4xf32>) {
  // a comment
  %0 = stablehlo.compare  GT, %arg0, %arg0,  FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1> loc(#loc1)
  %1 = stablehlo.select %0, %arg0, %arg0 : tensor<4x6xi1>, tensor<4x6xf32>
  %2 = stablehlo.slice %1 [0:2, 1:6:2] : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.iota dim = 1 : tensor<2x3xi32>
  %4 = stablehlo.transpose %2, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %5 = stablehlo.concatenate %2, %2, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %6 = stablehlo.pad %5, %cst, low = [0, 1], high = [1, 0], interior = [0, 1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<5x6xf32>
  %7 = stablehlo.dynamic_slice %arg0, %arg1, %arg1, sizes = [2, 2] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  %8:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg0) : tensor<i32>, tensor<4x6xf32>
   cond {
    %c = stablehlo.constant dense<3> : tensor<i32>
    %9 = stablehlo.compare  LT, %iterArg, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %9 : tensor<i1>
  } do {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %9 = stablehlo.add %iterArg, %c : tensor<i32>
    stablehlo.return %9, %iterArg_0 : tensor<i32>, tensor<4x6xf32>
  }
  %10 = chlo.erf %8#1 : tensor<4x6xf32> -> tensor<4x6xf32>
  %11 = stablehlo.dot_general %arg2, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [2], precision = [DEFAULT, HIGHEST] : (tensor<3x4x5xf32>, tensor<3x4x5xf32>) -> tensor<3x4x4xf32>
  %c_0 = stablehlo.constant dense<0> : tensor<i32>
  %12:2 = stablehlo.reduce(%arg0 init: %cst), (%3 init: %c_0) across dimensions = [1] : (tensor<4x6xf32>, tensor<2x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<2xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<i32>, %d: tensor<i32>)  {
    %13 = stablehlo.add %a, %b : tensor<f32>
    %14 = stablehlo.add %c, %d : tensor<i32>
    stablehlo.return %13, %14 : tensor<f32>, tensor<i32>
  }
  %15 = stablehlo.exponential %10 {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4x6xf32>
  %16 = "stablehlo.custom_call"(%15) <{call_target_name = "foo", api_version = 2 : i32}> {backend_config = "a\22b"} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %16, %11 : tensor<4x6xf32>, tensor<3x4x4xf32>
} loc(#loc1)
)";

} // namespace kiln::stablehlo_fe::parser_test
