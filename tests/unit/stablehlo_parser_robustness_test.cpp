// StableHLO text parser robustness: broken snippets, truncations and byte mutations of the
// samples, and deep nesting are located errors ("t.mlir:LINE:COL: ..."), never crashes.
#include "stablehlo_parser_test_util.h"

#include "frontend/stablehlo/ast.h"

#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::stablehlo_fe {
namespace {

using namespace parser_test;

// ---- malformed input ----

std::string wrap(const std::string &body) {
  return "func.func @main(%a: tensor<2xf32>, %i: tensor<i32>) -> tensor<2xf32> {\n" + body +
         "\n  return %a : tensor<2xf32>\n}\n";
}

TEST(StablehloParser, BrokenSnippetsAreLocatedErrors) {
  struct Case {
    std::string text;
    const char *message; // expected substring, with its position first
  };
  const std::string nest_attr = "  %0 = stablehlo.add %a, %a {x = " + std::string(100, '[') +
                                std::string(100, ']') + "} : tensor<2xf32>";
  std::string nest_region;
  for (int i = 0; i < 100; ++i) nest_region += "\"x.y\"() ({\n";
  const std::vector<Case> cases = {
      {wrap("  %0 = stablehlo.add %a, %b : tensor<2xf32>"), "2:26: use of undefined value '%b'"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  %0 = stablehlo.add %a, %a : tensor<2xf32>"),
       "3:3: redefinition of value '%0'"},
      {wrap("  %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xf8E4M3FN>"),
       "2:59: unsupported element type 'f8E4M3FN'"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32, #stablehlo.bounds<8>>"), "encodings"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<*xf32>"), "unranked"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<99999999999999999999xf32>"), "too large"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<4294967296x4294967296xf32>"), "too many elements"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2 3xf32>"), "expected 'x'"},
      {wrap("  %0 = stablehlo.frobnicate %a : tensor<2xf32>"),
       "2:8: cannot parse op 'stablehlo.frobnicate'"},
      {"func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n",
       "3:1: expected '}', got end of input"},
      {wrap("") + "}\n", "5:1: expected 'module' or 'func.func'"},
      {wrap("  %0 = \"stablehlo.add(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"),
       "unterminated string"},
      {wrap("  %0 = stablehlo.constant dense<1.2.3> : tensor<f32>"), "2:36: unexpected character '.'"},
      {wrap("  %0 = stablehlo.tuple %a, %a : tuple<tensor<2xf32>, tensor<2xf32>>"),
       "tuple types are not supported"},
      {wrap("  %0 = stablehlo.create_token : !stablehlo.token"),
       "type '!stablehlo.token' is not supported"},
      {wrap("  %0:2 = stablehlo.add %a, %a : tensor<2xf32>"), "defines 2 result(s)"},
      {wrap("  %0 = stablehlo.reshape %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"),
       "has 1 operand(s) but its type lists 2"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32>, tensor<2xf32>"),
       "expects one type or a function type"},
      {wrap("  %0 = stablehlo.reshape %a : tensor<2xf32>"), "expects a function type"},
      {wrap("  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, 0]x[o, i, 0]->[b, f, 0], "
            "window = {} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"),
       "'b' and 'f' must both appear"},
      {wrap("  %0 = stablehlo.convolution(%a, %a) dim_numbers = [b, f, 0, 0]x[o, i, 0]->[b, f, 0], "
            "window = {} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"),
       "duplicate spatial dimension 0"},
      {wrap("  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.subtract across dimensions = "
            "[0] : (tensor<2xf32>, tensor<i32>) -> tensor<i32>"),
       "expected a commutative binary"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  %1 = stablehlo.add %0#3, %a : "
            "tensor<2xf32>"),
       "3:22: '%0#3' refers to result 3"},
      {wrap(nest_attr), "nesting deeper than 64 levels"},
      {wrap(nest_region), "nesting deeper than 64 levels"},
      {wrap("  %0 = stablehlo.add %a, %a {x = #foo} : tensor<2xf32>"), "aliases"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32>;"), "2:44: unexpected character ';'"},
      {"func.func private @f(tensor<2xf32>) -> tensor<2xf32>\n", "has no body"},
      {wrap("") + wrap(""), "5:11: redefinition of function '@main'"},
      {wrap("  %0 = stablehlo.add %a, %a {k = 1, k = 2} : tensor<2xf32>"), "duplicate attribute 'k'"},
      {wrap("  %0 = stablehlo.slice %a [0 2] : (tensor<2xf32>) -> tensor<2xf32>"), "expected ':'"},
      {wrap("") + "{-# dialect_resources: {} #-}\n", "5:1: file metadata"},
      {"", "no functions"},
      {"  // only a comment\n", "no functions"},
      {wrap("  \"x.y\"() ({\n  ^bb0:\n  ^bb1:\n  }) : () -> ()"), "several blocks"},
      {wrap("  %0 = stablehlo.compare %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>"),
       "expected a comparison direction"},
      {wrap("  %0 = stablehlo.select %a, %a, %a : tensor<2xf32>"), "expects 'pred-type, type'"},
      {wrap("  %0 = stablehlo.constant dense<[1, 2]> : tensor<3xf32>"), "shape 2"},
      {wrap("  %0 = stablehlo.iota dim = 99999999999999999999 : tensor<2xf32>"), "does not fit"},
      {wrap("  %0 = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> tuple<tensor<2xf32>>"),
       "tuple types"},
      {"module {\n" + wrap("") + "}\nmodule {\n}\n", "7:1: expected one module"},
      {wrap(std::string("  %0 = stablehlo.add %a, %a : tensor<2xf32>") + '\0'),
       "unexpected character '\\x0'"},
      {wrap("  %0 = stablehlo.add %a, %a : tensor<2xf32> loc(\"a\""), "unterminated location"},
      {wrap("  %0 = stablehlo.while(%x = %a) : tensor<2xf32>\n  cond {\n    %a = "
            "stablehlo.add %x, %x : tensor<2xf32>\n  } do {\n  }"),
       "4:5: redefinition of value '%a'"},
  };
  EXPECT_FALSE(located("t.mlir:3: no column"));
  EXPECT_TRUE(located("t.mlir:3:4: a message"));
  for (const Case &c : cases) {
    std::string msg = parse_error(c.text);
    EXPECT_TRUE(located(msg)) << msg;
    EXPECT_NE(msg.find(c.message), std::string::npos) << "message: " << msg << "\nwanted: " << c.message;
  }
}

std::vector<std::string> samples() {
  std::vector<std::string> out = {kMlp, kCnn, kForms};
  for (const char *name : {"jax_mlp", "jax_cnn"}) {
    fs::path p = kShared / "models" / (std::string(name) + ".stablehlo.mlir");
    if (fs::exists(p)) out.push_back(read_all(p));
  }
  for (const char *name : {"rnn_scan.stablehlo", "rnn_scan.generic", "scatter_add.generic"}) {
    fs::path p = kPrograms / (std::string(name) + ".mlir");
    if (fs::exists(p)) out.push_back(read_all(p));
  }
  return out;
}

TEST(StablehloParser, TruncatedInputIsAnError) {
  int parses = 0, errors = 0;
  for (const std::string &text : samples()) {
    ASSERT_TRUE(parse_module(text, "t.mlir").is_ok());
    for (size_t n = 0; n < text.size(); ++n) {
      auto r = parse_module(std::string_view(text).substr(0, n), "t.mlir");
      ++parses;
      if (r.is_ok()) {
        // Only a cut in the trailing blanks (or after a complete function) can parse.
        std::string_view rest = std::string_view(text).substr(n);
        EXPECT_TRUE(rest.find_first_not_of(" \n") == std::string::npos ||
                    text.substr(0, n).find("module") == std::string::npos)
            << "prefix of " << n << " bytes parsed";
        continue;
      }
      ++errors;
      ASSERT_TRUE(located(r.status().message())) << r.status().message();
    }
  }
  std::printf("[ %d truncations, %d errors ]\n", parses, errors);
  EXPECT_GT(errors, parses * 9 / 10);
}

TEST(StablehloParser, MutatedInputNeverCrashes) {
  int parses = 0;
  for (const std::string &text : {std::string(kForms), std::string(kCnn)}) {
    for (size_t i = 0; i < text.size(); ++i) {
      for (char c : std::string("}(<\"%x9-#")) {
        std::string t = text;
        t[i] = c;
        auto r = parse_module(t, "t.mlir");
        ++parses;
        if (!r.is_ok()) {
          ASSERT_TRUE(located(r.status().message())) << r.status().message();
        }
      }
    }
  }
  std::printf("[ %d mutations ]\n", parses);
}

TEST(StablehloParser, DeepNestingIsRefusedNotRecursed) {
  for (const std::string &open : {std::string("["), std::string("{a = "), std::string("\"x.y\"() ({"),
                                  std::string("dense<[")}) {
    std::string text = "func.func @f() -> () {\n  %0 = stablehlo.constant {x = ";
    for (int i = 0; i < 100000; ++i) text += open;
    std::string msg = parse_error(text);
    EXPECT_TRUE(located(msg)) << msg;
  }
  ParseOptions shallow;
  shallow.max_depth = 3;
  EXPECT_NE(parse_error(wrap("  %0 = stablehlo.add %a, %a {x = [[[1]]]} : tensor<2xf32>"), shallow)
                .find("nesting deeper than 3"),
            std::string::npos);
}

} // namespace
} // namespace kiln::stablehlo_fe
