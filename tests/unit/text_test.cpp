// Textual IR: exact round trips (attributes, constants, names, regions), parser diagnostics
// with locations, robustness against truncated and corrupted input, and round trips of
// imported ONNX models.
#include "frontend/onnx/importer.h"
#include "ir/builder.h"
#include "ir/text.h"
#include "ops/ops.h"
#include "support/half.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <limits>
#include <random>

namespace kiln {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(KILN_SOURCE_DIR) / ".." / "shared";

// Checks print(parse(print(m))) == print(m) and returns the parsed module.
std::unique_ptr<Module> round_trip(const OpRegistry &ops, const Module &m) {
  std::string text = print_module(m);
  auto parsed = parse_module(ops, text, "rt");
  EXPECT_TRUE(parsed.is_ok()) << parsed.status().message() << "\n" << text;
  if (!parsed.is_ok()) return nullptr;
  EXPECT_EQ(print_module(*parsed.value()), text);
  return std::move(parsed).value();
}

std::string parse_error(const OpRegistry &ops, const std::string &text) {
  auto r = parse_module(ops, text, "t.kgraph");
  return r.is_ok() ? std::string("<parsed>") : r.status().message();
}

// A registry with the core constant plus test ops of every shape: variadic operands,
// several results, regions.
const OpRegistry &test_ops() {
  static const OpRegistry r = [] {
    OpRegistry r;
    r.add(*core_ops().find("kiln.constant"));
    r.add(OpDef{.name = "test.any", .min_operands = 0, .max_operands = -1, .min_results = 0,
                .max_results = -1});
    r.add(OpDef{.name = "test.two_regions", .min_operands = 0, .max_operands = -1,
                .min_results = 0, .max_results = -1, .num_regions = 2});
    return r;
  }();
  return r;
}

Module one_function(std::function<void(Builder &, Graph &)> fill) {
  Module m;
  m.functions.push_back(std::make_unique<Function>());
  m.functions[0]->name = "main";
  Graph &g = m.functions[0]->body;
  Builder b(test_ops(), g);
  fill(b, g);
  return m;
}

// Bitwise equality (NaN equals NaN, -0.0 differs from 0.0).
bool same_attr(const AttrValue &a, const AttrValue &b) {
  return std::visit(
      [](const auto &x, const auto &y) -> bool {
        using X = std::decay_t<decltype(x)>;
        if constexpr (!std::is_same_v<X, std::decay_t<decltype(y)>>) return false;
        else if constexpr (std::is_same_v<X, Tensor>) return x.identical(y);
        else if constexpr (std::is_same_v<X, double>) return std::memcmp(&x, &y, 8) == 0;
        else if constexpr (std::is_same_v<X, std::vector<double>>)
          return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), 8 * x.size()) == 0);
        else return x == y;
      },
      a, b);
}

const Tensor &const_value(const Module &m, size_t op_index) {
  return *m.functions[0]->body.ops[op_index]->attr_tensor("value");
}

TEST(Text, ConstantsKeepTheirExactBytes) {
  std::vector<Tensor> tensors;
  Tensor nan_payload = Tensor::from_f32s({1.0f, f32_from_bits(0x7fc00001u)}, {2});
  tensors.push_back(nan_payload);
  tensors.push_back(Tensor::from_f32s({0.1f, -0.0f, 1e-45f, 3.4028235e38f, INFINITY,
                                       -INFINITY, NAN, -NAN},
                                      {2, 4}));
  Tensor f64(DType::f64, {3});
  f64.data_mut<double>()[0] = 0.1;
  f64.data_mut<double>()[1] = 5e-324;
  f64.data_mut<double>()[2] = -1.7976931348623157e308;
  tensors.push_back(f64);
  Tensor h(DType::f16, {3});
  h.data_mut<uint16_t>()[0] = 0x0001; // smallest subnormal
  h.data_mut<uint16_t>()[1] = 0x7bff; // 65504
  h.data_mut<uint16_t>()[2] = 0x7e01; // NaN with a payload: hex form
  tensors.push_back(h);
  Tensor bf(DType::bf16, {2});
  bf.data_mut<uint16_t>()[0] = 0x3f81;
  bf.data_mut<uint16_t>()[1] = 0xff80;
  tensors.push_back(bf);
  Tensor u64(DType::u64, {2});
  u64.data_mut<uint64_t>()[0] = std::numeric_limits<uint64_t>::max();
  tensors.push_back(u64);
  tensors.push_back(Tensor::from_i64s({std::numeric_limits<int64_t>::min(), -1, 0}));
  for (DType dt : {DType::i8, DType::u8, DType::i16, DType::u16, DType::i32, DType::u32})
    tensors.push_back(Tensor::from_i64s({-200, 255, 70000}).cast(dt));
  Tensor odd_bool(DType::boolean, {3});
  odd_bool.raw_mut()[0] = std::byte{1};
  tensors.push_back(odd_bool);
  odd_bool = odd_bool.clone();
  odd_bool.raw_mut()[2] = std::byte{7}; // not 0/1: hex form
  tensors.push_back(odd_bool);
  tensors.push_back(Tensor::scalar_f64(DType::f32, 2.5));
  tensors.push_back(Tensor(DType::f32, {2, 0, 3}));
  std::vector<float> big(100);
  for (size_t i = 0; i < big.size(); ++i) big[i] = std::sin(static_cast<float>(i));
  tensors.push_back(Tensor::from_f32s(big, {4, 25}));

  Module m = one_function([&](Builder &b, Graph &g) {
    for (auto &t : tensors) g.results.push_back(b.constant(t));
  });
  auto parsed = round_trip(test_ops(), m);
  ASSERT_TRUE(parsed);
  for (size_t i = 0; i < tensors.size(); ++i)
    EXPECT_TRUE(const_value(*parsed, i).identical(tensors[i])) << "constant " << i;
  std::string text = print_module(m);
  EXPECT_NE(text.find("dense<[[0.1, -0.0, 1e-45, 3.4028235e+38], [inf, -inf, nan, -nan]]>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dense_hex<\"0x0000803F0100C07F\"> : tensor<2xf32>"), std::string::npos);
  EXPECT_NE(text.find("dense<[true, false, false]> : tensor<3xi1>"), std::string::npos);
  EXPECT_NE(text.find("dense<[[], []]> : tensor<2x0x3xf32>"), std::string::npos);
  EXPECT_NE(text.find("dense<2.5> : tensor<f32>"), std::string::npos);
}

TEST(Text, AttributesOfEveryKind) {
  AttrMap attrs;
  attrs["i"] = int64_t(-42);
  attrs["imin"] = std::numeric_limits<int64_t>::min();
  attrs["f"] = 0.1;
  attrs["fint"] = 3.0;
  attrs["fneg0"] = -0.0;
  attrs["ftiny"] = 5e-324;
  attrs["fbig"] = 1e300;
  attrs["finf"] = -INFINITY;
  static const char raw[] = "quote\" back\\ nl\n tab\t nul\0 del\x7f \xc3\xa9";
  attrs["s"] = std::string(raw, sizeof(raw) - 1);
  attrs["ints"] = std::vector<int64_t>{1, -2, 3};
  attrs["no_ints"] = std::vector<int64_t>{};
  attrs["floats"] = std::vector<double>{0.5, -1e-7, NAN};
  attrs["no_floats"] = std::vector<double>{};
  attrs["strs"] = std::vector<std::string>{"a", "", "c,d"};
  attrs["no_strs"] = std::vector<std::string>{};
  attrs["dt"] = DType::bf16;
  attrs["weird key"] = int64_t(1);
  attrs["value"] = Tensor::from_i64s({1, 2});
  Module m = one_function([&](Builder &b, Graph &g) {
    g.append(test_ops().find("test.any"), {}, {}, attrs);
  });
  auto parsed = round_trip(test_ops(), m);
  ASSERT_TRUE(parsed);
  const AttrMap &got = parsed->functions[0]->body.ops[0]->attrs;
  ASSERT_EQ(got.size(), attrs.size());
  for (auto &[k, v] : attrs) {
    ASSERT_TRUE(got.count(k)) << k;
    EXPECT_TRUE(same_attr(got.find(k)->second, v)) << k;
  }
  std::string text = print_module(m);
  EXPECT_NE(text.find("{dt = dtype<bf16>, f = 0.1, fbig = 1e+300, finf = -inf, fint = 3.0, "
                      "floats = array<f64: 0.5, -1e-07, nan>, fneg0 = -0.0, ftiny = 5e-324, "
                      "i = -42, imin = -9223372036854775808, ints = array<i64: 1, -2, 3>, "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("no_ints = array<i64>, no_strs = array<str>"), std::string::npos) << text;
  EXPECT_NE(text.find("s = \"quote\\\" back\\\\ nl\\n tab\\t nul\\00 del\\7F \xc3\xa9\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"weird key\" = 1"), std::string::npos) << text;
}

TEST(Text, NamesAreKeptWhenUniqueAndSafe) {
  Module m = one_function([&](Builder &b, Graph &g) {
    Value *x = g.add_param({DType::f32, {2}, true}, "x");
    Value *dup1 = g.add_param({DType::f32, {2}, true}, "dup");
    Value *dup2 = g.add_param({DType::f32, {2}, true}, "dup");
    Value *odd = g.add_param({DType::f32, {2}, true}, "a/b:0");
    Value *num = g.add_param({DType::f32, {}, true}, "7");
    Op *op = g.append(test_ops().find("test.any"), {x, nullptr, dup1, dup2, odd, num},
                      {{DType::f32, {kDynamic, 3}, true}, {DType::i64, {}, false}});
    op->results[0]->name = "r";
    g.results = {op->results[0], op->results[1]};
  });
  auto parsed = round_trip(test_ops(), m);
  ASSERT_TRUE(parsed);
  std::string text = print_module(m);
  EXPECT_NE(text.find("func @main(%x: tensor<2xf32>, %0: tensor<2xf32>, %1: tensor<2xf32>, "
                      "%2: tensor<2xf32>, %3: tensor<f32>) -> (tensor<?x3xf32>, tensor<*xi64>)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%r, %4 = test.any %x, none, %0, %1, %2, %3 : (tensor<2xf32>, none, "),
            std::string::npos)
      << text;
  const Graph &g = parsed->functions[0]->body;
  EXPECT_EQ(g.params[0]->name, "x");
  EXPECT_EQ(g.params[1]->name, "");
  EXPECT_EQ(g.ops[0]->operands[1], nullptr);
  EXPECT_EQ(g.ops[0]->results[0]->name, "r");
}

TEST(Text, RegionsCaptureOuterValues) {
  const char *src = R"(func @main(%x: tensor<2xf32>) -> (tensor<2xf32>) {
  %0 = test.two_regions %x ({
  ^bb0(%p: tensor<2xf32>):
    %1 = test.any %p, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %2 = test.two_regions ({
      return %1
    }, {
      return
    }) : () -> tensor<2xf32>
    return %2, %x
  }, {
    return
  }) : (tensor<2xf32>) -> tensor<2xf32>
  return %0
}

func @"other fn"() -> () {
  return
}
)";
  auto m = parse_module(test_ops(), src, "r");
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  EXPECT_EQ(print_module(*m.value()), src);
  const Graph &g = m.value()->functions[0]->body;
  const Graph &r0 = *g.ops[0]->regions[0];
  EXPECT_EQ(r0.parent, g.ops[0].get());
  EXPECT_EQ(r0.ops[0]->operands[1], g.params[0]); // captured
  EXPECT_EQ(r0.results[1], g.params[0]);

  // The same name in sibling regions is allowed; printing then numbers both.
  const char *siblings = R"(func @main() -> () {
  test.two_regions ({
    %a = test.any : () -> tensor<f32>
    return %a
  }, {
    %a = test.any : () -> tensor<f32>
    return %a
  }) : () -> ()
  return
}
)";
  auto s = parse_module(test_ops(), siblings, "s");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  std::string printed = print_module(*s.value());
  EXPECT_NE(printed.find("%0 = test.any"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%1 = test.any"), std::string::npos) << printed;
  round_trip(test_ops(), *s.value());
}

TEST(Text, ErrorsHaveLocations) {
  const OpRegistry &ops = test_ops();
  struct Case {
    const char *src, *want;
  } cases[] = {
      {"func @f() -> () {\n  %0 = kiln.nope : () -> tensor<f32>\n  return\n}",
       "t.kgraph:2:8: unknown op 'kiln.nope'"},
      {"func @f() -> (tensor<f32>) {\n  return %y\n}", "t.kgraph:2:10: undefined value '%y'"},
      {"func @f(%x: tensor<2xf33>) -> () {\n  return\n}",
       "t.kgraph:1:22: unknown element type 'f33'"},
      {"func @f(%x: tensor<2xax3xf32>) -> () {\n  return\n}",
       "t.kgraph:1:22: invalid dimension 'a' in tensor type"},
      {"func @f(%x: tensor<f32>) -> () {\n  test.any %x : (tensor<i32>) -> ()\n  return\n}",
       "t.kgraph:2:18: operand 0 ('%x') has type tensor<f32>, not tensor<i32>"},
      {"func @f(%x: tensor<f32>) -> () {\n  return\n", "t.kgraph:3:1: expected '}' after return, "
                                                    "got end of input"},
      {"func @f() -> () {\n  return\n}\n}", "t.kgraph:4:1: expected 'func', got '}'"},
      {"func @f() -> () {\n  test.any ({\n    return\n  } : () -> ()\n  return\n}",
       "t.kgraph:4:5: expected ',' or ')' after the regions, got ':'"},
      {"func @f() -> () {\n  test.any {a = 1, a = 2} : () -> ()\n  return\n}",
       "t.kgraph:2:20: duplicate attribute 'a'"},
      {"func @f() -> () {\n  test.any {s = \"abc} : () -> ()\n  return\n}",
       "t.kgraph:2:17: unterminated string"},
      {"func @f() -> () {\n  test.any {a = dense<[1, 2]> : tensor<3xi8>} : () -> ()\n  return\n}",
       "t.kgraph:2:23: expected 3 elements for dimension 0 of tensor<3xi8>, got 2"},
      {"func @f() -> () {\n  test.any {a = dense<[1, 999]> : tensor<2xi8>} : () -> ()\n  return\n}",
       "t.kgraph:2:27: '999' is out of range for i8"},
      {"func @f() -> () {\n  test.any {a = dense<[1.5]> : tensor<1xi32>} : () -> ()\n  return\n}",
       "t.kgraph:2:24: '1.5' is not an integer (element type i32)"},
      {"func @f() -> () {\n  test.any {a = dense_hex<\"0x00\"> : tensor<2xf32>} : () -> ()\n  "
       "return\n}",
       "t.kgraph:2:27: tensor<2xf32> needs 8 bytes of data, got 1"},
      {"func @f() -> () {\n  test.any {a = dense<1.0> : tensor<?xf32>} : () -> ()\n  return\n}",
       "t.kgraph:2:30: a constant needs a static type, got tensor<?xf32>"},
      {"func @f(%x: tensor<f32>, %x: tensor<f32>) -> () {\n  return\n}",
       "t.kgraph:1:26: redefinition of value '%x'"},
      {"func @f() -> () {\n  return\n}\nfunc @f() -> () {\n  return\n}",
       "t.kgraph:4:6: redefinition of function '@f'"},
      {"func @f(%x: tensor<f32>) -> (tensor<i32>) {\n  return %x\n}",
       "t.kgraph:2:3: return value 0 has type tensor<f32> but the signature says tensor<i32>"},
      {"func @f() -> () {\n  %a, %b = test.any : () -> tensor<f32>\n  return\n}",
       "t.kgraph:2:29: 2 result names but 1 result types"},
      {"func @f() -> () {\n  %a = test.any ({\n    return %a\n  }, {\n    return\n  }) : () -> "
       "tensor<f32>\n  return\n}",
       "t.kgraph:3:12: undefined value '%a'"},
      {"func @f() -> () { # }", "t.kgraph:1:19: unexpected character '#'"},
      {"func @f() -> () {\n  test.any {x = 99999999999999999999} : () -> ()\n  return\n}",
       "t.kgraph:2:17: integer '99999999999999999999' is out of range for i64"},
  };
  for (auto &c : cases) EXPECT_EQ(parse_error(ops, c.src), c.want) << c.src;
}

// Every prefix and many corrupted variants of a printed module parse or fail cleanly.
TEST(Text, TruncatedAndCorruptedInputNeverCrashes) {
  Module m = one_function([&](Builder &b, Graph &g) {
    Value *x = g.add_param({DType::f32, {2}, true}, "x");
    AttrMap attrs{{"a", std::vector<int64_t>{1, 2}}, {"s", std::string("q")}, {"d", DType::i8}};
    auto regions = std::vector<std::unique_ptr<Graph>>();
    Op *op = g.append(test_ops().find("test.two_regions"),
                      {x, b.constant(Tensor::from_f32s({1.5f, 2.f}, {2}))},
                      {{DType::f32, {2}, true}}, attrs);
    for (int i = 0; i < 2; ++i) {
      op->regions.push_back(std::make_unique<Graph>());
      op->regions.back()->parent = op;
      Value *p = op->regions.back()->add_param({DType::i64, {}, true}, "p");
      op->regions.back()->results = {p, x};
    }
    g.results = {op->results[0]};
  });
  std::string text = print_module(m);
  for (size_t n = 0; n < text.size(); ++n) {
    auto r = parse_module(test_ops(), text.substr(0, n), "cut");
    if (!r.is_ok()) {
      EXPECT_EQ(r.status().message().rfind("cut:", 0), 0u);
    }
  }
  std::mt19937 rng(7);
  const char noise[] = "{}()[]<>,:=%@^\"x0-.? \n";
  for (int i = 0; i < 3000; ++i) {
    std::string t = text;
    for (int k = 0; k < 3; ++k) t[rng() % t.size()] = noise[rng() % (sizeof(noise) - 1)];
    auto r = parse_module(test_ops(), t, "bad");
    if (r.is_ok()) {
      round_trip(test_ops(), *r.value());
    } else {
      EXPECT_EQ(r.status().message().rfind("bad:", 0), 0u) << r.status().message();
    }
  }
  // Deep nesting is an error, not a stack overflow.
  std::string deep = "func @f() -> () {\n  test.any {a = dense<" + std::string(100000, '[') + "1";
  EXPECT_NE(parse_error(test_ops(), deep).find("nested too deeply"), std::string::npos);
}

TEST(TextOnnx, AddModelRoundTrips) {
  fs::path model = kShared / "onnx-tests" / "node" / "test_add" / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "../shared/onnx-tests is absent";
  auto m = onnx_fe::import_file(model.string());
  ASSERT_TRUE(m.is_ok()) << m.status().message();
  std::string text = print_module(*m.value());
  EXPECT_NE(text.find("func @main(%x: tensor<3x4x5xf32>, %y: tensor<3x4x5xf32>)"),
            std::string::npos)
      << text;
  auto parsed = round_trip(core_ops(), *m.value());
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(verify_function(*parsed->functions[0]).is_ok());
}

// Every node-test model that imports (control flow included) prints, parses back to the same
// text and verifies.
TEST(TextOnnx, AllImportableNodeModelsRoundTrip) {
  fs::path dir = kShared / "onnx-tests" / "node";
  if (!fs::exists(dir)) GTEST_SKIP() << "../shared/onnx-tests is absent";
  int imported = 0, with_regions = 0;
  for (auto &entry : fs::directory_iterator(dir)) {
    fs::path model = entry.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    auto m = onnx_fe::import_file(model.string());
    if (!m.is_ok()) continue;
    ++imported;
    std::string text = print_module(*m.value());
    with_regions += text.find("^bb0") != std::string::npos;
    auto parsed = parse_module(core_ops(), text, model.string());
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().message() << "\n" << text;
    ASSERT_EQ(print_module(*parsed.value()), text) << model;
    for (auto &f : parsed.value()->functions) {
      Status st = verify_function(*f);
      EXPECT_TRUE(st.is_ok()) << model << ": " << st.message();
    }
  }
  EXPECT_GT(imported, 0);
  RecordProperty("imported", imported);
  RecordProperty("with_regions", with_regions);
}

} // namespace
} // namespace kiln
