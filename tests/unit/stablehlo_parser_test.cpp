// StableHLO text parser: JAX's pretty and generic forms give the same syntax tree, pretty forms
// are normalised to the generic attribute names, and malformed text is a located error.
#include "frontend/stablehlo/ast.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

namespace kiln::stablehlo_fe {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(KILN_SOURCE_DIR) / ".." / "shared";
const fs::path kPrograms = fs::path(KILN_SOURCE_DIR) / "tests" / "stablehlo" / "programs";

std::string read_all(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

ModuleAst parse_ok(const std::string &text, const ParseOptions &opt = {}) {
  auto r = parse_module(text, "t.mlir", opt);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return {};
  return std::move(r).value();
}

std::string parse_error(const std::string &text, const ParseOptions &opt = {}) {
  auto r = parse_module(text, "t.mlir", opt);
  EXPECT_FALSE(r.is_ok()) << "parsed but should not have:\n" << text;
  return r.is_ok() ? std::string() : r.status().message();
}

// "t.mlir:LINE:COL: message"
bool located(const std::string &msg) {
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

// ---- a canonical dump: SSA names renamed in definition order, attributes sorted ----

std::string type_str(const Type &t) {
  std::string s = "tensor<";
  for (int64_t d : t.dims) s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  return s + std::string(dtype_name(t.dtype)) + ">";
}

std::string attr_str(const Attr &a) {
  switch (a.kind) {
  case Attr::Kind::Unit: return "unit";
  case Attr::Kind::Int: return std::to_string(a.i);
  case Attr::Kind::Float: return fmt::format("{:.17g}f", a.f);
  case Attr::Kind::Bool: return a.i ? "true" : "false";
  case Attr::Kind::String: return "\"" + a.s + "\"";
  case Attr::Kind::Ident: return "#" + a.s;
  case Attr::Kind::Array: {
    std::string s = "[";
    for (const Attr &x : a.list) s += attr_str(x) + ",";
    return s + "]";
  }
  case Attr::Kind::DenseArray: {
    std::string s = "array[";
    for (int64_t x : a.ints) s += std::to_string(x) + ",";
    return s + "]";
  }
  case Attr::Kind::Dense: {
    std::string s = "dense:" + type_str(a.type) + ":";
    const auto *p = reinterpret_cast<const unsigned char *>(a.dense.raw());
    for (size_t i = 0; i < a.dense.nbytes(); ++i) s += fmt::format("{:02x}", p[i]);
    return s;
  }
  case Attr::Kind::TypeAttr: return "type:" + type_str(a.type);
  case Attr::Kind::Dict:
  case Attr::Kind::Dialect: {
    std::vector<std::string> items;
    for (const auto &[k, v] : a.dict) items.push_back(k + "=" + attr_str(v));
    std::sort(items.begin(), items.end());
    std::string s = a.kind == Attr::Kind::Dict ? "{" : a.s + "<";
    for (const auto &i : items) s += i + ",";
    return s + (a.kind == Attr::Kind::Dict ? "}" : ">");
  }
  }
  return "?";
}

class Dumper {
public:
  std::string func(const Function &f) {
    names_.clear();
    std::string s = fmt::format("func {} {} -> (", f.is_public ? "public" : "private", f.name);
    for (const Type &t : f.result_types) s += type_str(t) + ",";
    s += ")\n";
    return s + block(f.body, 1);
  }

private:
  std::string def(const std::string &n) {
    std::string base = n.substr(0, n.find('#'));
    if (n.find('#') == std::string::npos || n.substr(n.find('#')) == "#0")
      names_[base] = "v" + std::to_string(next_++);
    return use(n);
  }
  std::string use(const std::string &n) {
    size_t h = n.find('#');
    std::string base = n.substr(0, h);
    auto it = names_.find(base);
    std::string r = it == names_.end() ? "UNDEF(" + base + ")" : it->second;
    return h == std::string::npos ? r : r + n.substr(h);
  }
  std::string block(const Block &b, int indent) {
    std::string pad(static_cast<size_t>(indent) * 2, ' ');
    std::string s = pad + "^(";
    for (size_t i = 0; i < b.arg_names.size(); ++i)
      s += def(b.arg_names[i]) + ":" + type_str(b.arg_types[i]) + ",";
    s += ")\n";
    for (const Operation &o : b.ops) {
      s += pad;
      std::vector<std::string> attrs;
      for (const auto &[k, v] : o.attrs) attrs.push_back(k + "=" + attr_str(v));
      std::sort(attrs.begin(), attrs.end());
      std::string operands;
      for (const auto &x : o.operands) operands += use(x) + ",";
      std::string line = o.name + "(" + operands + ") {";
      for (const auto &a : attrs) line += a + ",";
      line += "} : (";
      for (const Type &t : o.operand_types) line += type_str(t) + ",";
      line += ") -> (";
      for (const Type &t : o.result_types) line += type_str(t) + ",";
      line += ")\n";
      std::string regions;
      for (const Block &r : o.regions) {
        auto outer = names_; // names defined in a region are not visible after it
        regions += block(r, indent + 1);
        names_ = outer;
      }
      std::string results;
      for (const auto &r : o.results) results += def(r) + ",";
      s += results + " = " + line + regions;
    }
    return s;
  }
  std::map<std::string, std::string> names_;
  int next_ = 0;
};

std::string dump(const ModuleAst &m) {
  std::string s;
  for (const Function &f : m.funcs) s += Dumper().func(f);
  return s;
}


// ---- inline samples (run without ../shared) ----

const char *const kMlp = R"(module @jit_mlp attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
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

const char *const kCnn = R"(module @jit_cnn attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
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

const char *const kForms = R"(#loc1 = loc("f.py":3:4)
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

const Operation &find_op(const Block &b, const std::string &name, int nth = 0) {
  for (const Operation &o : b.ops)
    if (o.name == name && nth-- == 0) return o;
  static const Operation none;
  ADD_FAILURE() << "no op " << name;
  return none;
}

std::vector<int64_t> ints_of(const Attr *a) {
  std::vector<int64_t> v;
  if (!a) return {-999};
  if (a->kind == Attr::Kind::DenseArray) return a->ints;
  if (a->kind == Attr::Kind::Dense) return a->dense.to_i64s();
  for (const Attr &x : a->list) v.push_back(x.kind == Attr::Kind::Int ? x.i : -999);
  return v;
}

using V = std::vector<int64_t>;

TEST(StablehloParser, MlpNormalisedAttributes) {
  ModuleAst m = parse_ok(kMlp);
  ASSERT_EQ(m.funcs.size(), 2u);
  EXPECT_EQ(m.name, "jit_mlp");
  const Block &b = m.funcs[0].body;
  EXPECT_EQ(b.arg_names, (std::vector<std::string>{"arg0", "arg1", "arg2"}));
  ASSERT_EQ(m.funcs[0].result_types.size(), 1u);
  EXPECT_EQ(m.funcs[0].result_types[0].dims, V{8});

  const Operation &dot = find_op(b, "stablehlo.dot_general");
  const Attr *dd = dot.attr("dot_dimension_numbers");
  ASSERT_TRUE(dd && dd->kind == Attr::Kind::Dialect);
  EXPECT_EQ(dd->s, "stablehlo.dot");
  EXPECT_EQ(ints_of(dd->get("lhs_contracting_dimensions")), V{1});
  EXPECT_EQ(ints_of(dd->get("rhs_contracting_dimensions")), V{0});
  EXPECT_EQ(dd->get("lhs_batching_dimensions"), nullptr);
  const Attr *prec = dot.attr("precision_config");
  ASSERT_TRUE(prec && prec->list.size() == 2);
  EXPECT_EQ(prec->list[1].kind, Attr::Kind::Ident);
  EXPECT_EQ(prec->list[1].s, "DEFAULT");
  EXPECT_EQ(dot.operand_types[1].dims, (V{64, 128}));
  EXPECT_EQ(dot.result_types[0].dims, (V{8, 128}));

  EXPECT_EQ(ints_of(find_op(b, "stablehlo.broadcast_in_dim", 1).attr("broadcast_dimensions")),
            (V{0, 1}));
  const Operation &add = find_op(b, "stablehlo.add");
  EXPECT_EQ(add.operand_types.size(), 2u);
  EXPECT_EQ(add.operand_types[1].dims, (V{8, 128}));
  const Operation &call = find_op(b, "func.call");
  EXPECT_EQ(call.attr("callee")->s, "relu");
  const Operation &cst = find_op(b, "stablehlo.constant");
  ASSERT_EQ(cst.attr("value")->kind, Attr::Kind::Dense);
  EXPECT_EQ(cst.attr("value")->dense.get_f64(0), -HUGE_VAL);

  const Operation &red = find_op(b, "stablehlo.reduce");
  EXPECT_EQ(red.operands, (std::vector<std::string>{"4", "cst"}));
  EXPECT_EQ(ints_of(red.attr("dimensions")), V{1});
  ASSERT_EQ(red.regions.size(), 1u);
  const Block &body = red.regions[0];
  ASSERT_EQ(body.arg_types.size(), 2u);
  EXPECT_TRUE(body.arg_types[0].dims.empty());
  ASSERT_EQ(body.ops.size(), 2u);
  EXPECT_EQ(body.ops[0].name, "stablehlo.maximum");
  EXPECT_EQ(body.ops[0].operands, (std::vector<std::string>{body.arg_names[0], body.arg_names[1]}));
  EXPECT_EQ(body.ops[1].name, "stablehlo.return");
  EXPECT_EQ(body.ops[1].operands, body.ops[0].results);
  EXPECT_EQ(b.ops.back().name, "func.return");
  EXPECT_EQ(b.ops.back().loc.line, 10);
  EXPECT_EQ(b.ops.back().loc.col, 5);
}

TEST(StablehloParser, ConvolutionWindowAndDimensionNumbers) {
  ModuleAst m = parse_ok(kCnn);
  ASSERT_EQ(m.funcs.size(), 1u);
  const Operation &conv = find_op(m.funcs[0].body, "stablehlo.convolution");
  const Attr *dn = conv.attr("dimension_numbers");
  ASSERT_TRUE(dn && dn->kind == Attr::Kind::Dialect);
  EXPECT_EQ(dn->s, "stablehlo.conv");
  EXPECT_EQ(dn->get("input_batch_dimension")->i, 0);
  EXPECT_EQ(dn->get("input_feature_dimension")->i, 1);
  EXPECT_EQ(ints_of(dn->get("input_spatial_dimensions")), (V{2, 3}));
  EXPECT_EQ(dn->get("kernel_output_feature_dimension")->i, 0);
  EXPECT_EQ(dn->get("kernel_input_feature_dimension")->i, 1);
  EXPECT_EQ(ints_of(dn->get("kernel_spatial_dimensions")), (V{2, 3}));
  EXPECT_EQ(ints_of(dn->get("output_spatial_dimensions")), (V{2, 3}));
  EXPECT_EQ(ints_of(conv.attr("window_strides")), (V{2, 2}));
  const Attr *pad = conv.attr("padding");
  ASSERT_TRUE(pad && pad->kind == Attr::Kind::Dense);
  EXPECT_EQ(pad->dense.shape(), (V{2, 2}));
  EXPECT_EQ(pad->dense.dtype(), DType::i64);
  EXPECT_EQ(pad->dense.to_i64s(), (V{0, 1, 2, 3}));
  EXPECT_EQ(ints_of(conv.attr("lhs_dilation")), (V{1, 1}));
  EXPECT_EQ(ints_of(conv.attr("window_reversal")), (V{0, 0}));
  EXPECT_EQ(conv.attr("feature_group_count")->i, 1);
  EXPECT_EQ(conv.attr("precision_config")->list[0].s, "DEFAULT");

  const Operation &rw = find_op(m.funcs[0].body, "stablehlo.reduce_window");
  EXPECT_EQ(rw.attr("padding")->dense.to_i64s(), V(8, 0));
  EXPECT_EQ(ints_of(rw.attr("window_dimensions")), (V{1, 1, 2, 2}));
  ASSERT_EQ(rw.regions.size(), 1u);
  EXPECT_EQ(rw.regions[0].arg_names, (std::vector<std::string>{"arg4", "arg5"}));

  // The same dimension numbers spelled as the generic attribute, compact and raw.
  const std::string generic = R"(func.func @f(%a: tensor<1x4x4x2xf32>, %k: tensor<3x3x2x8xf32>) -> tensor<1x2x2x8xf32> {
  %0 = "stablehlo.convolution"(%a, %k) <{dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, padding = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<1x4x4x2xf32>, tensor<3x3x2x8xf32>) -> tensor<1x2x2x8xf32>
  %1 = "stablehlo.convolution"(%a, %k) <{dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, padding = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}> : (tensor<1x4x4x2xf32>, tensor<3x3x2x8xf32>) -> tensor<1x2x2x8xf32>
  return %0 : tensor<1x2x2x8xf32>
})";
  ModuleAst g = parse_ok(generic);
  ASSERT_EQ(g.funcs.size(), 1u);
  const Attr *c0 = g.funcs[0].body.ops[0].attr("dimension_numbers");
  const Attr *c1 = g.funcs[0].body.ops[1].attr("dimension_numbers");
  ASSERT_TRUE(c0 && c1);
  EXPECT_EQ(attr_str(*c0), attr_str(*c1));
  EXPECT_EQ(c0->get("input_feature_dimension")->i, 3);
  EXPECT_EQ(ints_of(c0->get("input_spatial_dimensions")), (V{1, 2}));
  EXPECT_EQ(c0->get("kernel_output_feature_dimension")->i, 3);
}

TEST(StablehloParser, PrettyForms) {
  ModuleAst m = parse_ok(kForms);
  ASSERT_EQ(m.funcs.size(), 1u);
  const Function &f = m.funcs[0];
  EXPECT_TRUE(f.is_public);
  EXPECT_EQ(f.result_types.size(), 2u);
  const Block &b = f.body;
  const Operation &cmp = find_op(b, "stablehlo.compare");
  EXPECT_EQ(cmp.attr("comparison_direction")->s, "GT");
  EXPECT_EQ(cmp.attr("comparison_direction")->kind, Attr::Kind::Ident);
  EXPECT_EQ(cmp.attr("compare_type")->s, "FLOAT");
  EXPECT_EQ(cmp.result_types[0].dtype, DType::boolean);
  const Operation &sel = find_op(b, "stablehlo.select");
  ASSERT_EQ(sel.operand_types.size(), 3u);
  EXPECT_EQ(sel.operand_types[0].dtype, DType::boolean);
  EXPECT_EQ(sel.operand_types[2].dtype, DType::f32);
  EXPECT_EQ(sel.result_types[0].dims, (V{4, 6}));
  const Operation &sl = find_op(b, "stablehlo.slice");
  EXPECT_EQ(ints_of(sl.attr("start_indices")), (V{0, 1}));
  EXPECT_EQ(ints_of(sl.attr("limit_indices")), (V{2, 6}));
  EXPECT_EQ(ints_of(sl.attr("strides")), (V{1, 2}));
  const Operation &iota = find_op(b, "stablehlo.iota");
  EXPECT_EQ(iota.attr("iota_dimension")->i, 1);
  EXPECT_TRUE(iota.operands.empty());
  EXPECT_EQ(iota.result_types[0].dtype, DType::i32);
  EXPECT_EQ(ints_of(find_op(b, "stablehlo.transpose").attr("permutation")), (V{1, 0}));
  EXPECT_EQ(find_op(b, "stablehlo.concatenate").attr("dimension")->i, 0);
  const Operation &pad = find_op(b, "stablehlo.pad");
  EXPECT_EQ(ints_of(pad.attr("edge_padding_low")), (V{0, 1}));
  EXPECT_EQ(ints_of(pad.attr("edge_padding_high")), (V{1, 0}));
  EXPECT_EQ(ints_of(pad.attr("interior_padding")), (V{0, 1}));
  const Operation &ds = find_op(b, "stablehlo.dynamic_slice");
  EXPECT_EQ(ds.operands.size(), 3u);
  EXPECT_EQ(ints_of(ds.attr("slice_sizes")), (V{2, 2}));

  const Operation &wh = find_op(b, "stablehlo.while");
  EXPECT_EQ(wh.results, (std::vector<std::string>{"8#0", "8#1"}));
  EXPECT_EQ(wh.operands, (std::vector<std::string>{"arg1", "arg0"}));
  ASSERT_EQ(wh.regions.size(), 2u);
  for (const Block &r : wh.regions) {
    EXPECT_EQ(r.arg_names, (std::vector<std::string>{"iterArg", "iterArg_0"}));
    EXPECT_EQ(r.arg_types[1].dims, (V{4, 6}));
  }
  EXPECT_EQ(wh.regions[1].ops.back().operands.size(), 2u);
  const Operation &erf = find_op(b, "chlo.erf");
  EXPECT_EQ(erf.operands, std::vector<std::string>{"8#1"});
  EXPECT_EQ(erf.result_types[0].dims, (V{4, 6}));

  const Attr *dd = find_op(b, "stablehlo.dot_general").attr("dot_dimension_numbers");
  EXPECT_EQ(ints_of(dd->get("lhs_batching_dimensions")), V{0});
  EXPECT_EQ(ints_of(dd->get("rhs_batching_dimensions")), V{0});
  EXPECT_EQ(ints_of(dd->get("lhs_contracting_dimensions")), V{2});
  EXPECT_EQ(find_op(b, "stablehlo.dot_general").attr("precision_config")->list[1].s, "HIGHEST");

  const Operation &red = find_op(b, "stablehlo.reduce");
  EXPECT_EQ(red.operands, (std::vector<std::string>{"arg0", "3", "cst", "c_0"}));
  EXPECT_EQ(red.result_types.size(), 2u);
  ASSERT_EQ(red.regions.size(), 1u);
  // reducer pairs (%a, %b) and (%c, %d): arguments are the firsts, then the seconds.
  EXPECT_EQ(red.regions[0].arg_names, (std::vector<std::string>{"a", "c", "b", "d"}));
  EXPECT_EQ(red.regions[0].arg_types[1].dtype, DType::i32);

  const Operation &ex = find_op(b, "stablehlo.exponential");
  ASSERT_TRUE(ex.attr("result_accuracy"));
  EXPECT_EQ(ex.attr("result_accuracy")->kind, Attr::Kind::Dialect);
  EXPECT_DOUBLE_EQ(ex.attr("result_accuracy")->get("atol")->f, 1e-5);
  const Operation &cc = find_op(b, "stablehlo.custom_call");
  EXPECT_EQ(cc.attr("call_target_name")->s, "foo");
  EXPECT_EQ(cc.attr("api_version")->i, 2);
  EXPECT_EQ(cc.attr("backend_config")->s, "a\"b");
}


std::string const_func(const std::string &value, const std::string &type) {
  return "func.func @main() -> " + type + " {\n  %0 = stablehlo.constant " + value + " : " + type +
         "\n  return %0 : " + type + "\n}\n";
}

Tensor constant(const std::string &value, const std::string &type, const ParseOptions &opt = {}) {
  ModuleAst m = parse_ok(const_func(value, type), opt);
  if (m.funcs.empty()) return {};
  return m.funcs[0].body.ops[0].attr("value")->dense;
}

std::string const_error(const std::string &value, const std::string &type,
                        const ParseOptions &opt = {}) {
  std::string msg = parse_error(const_func(value, type), opt);
  EXPECT_TRUE(located(msg)) << msg;
  return msg;
}

uint64_t bits(const Tensor &t, int64_t i) {
  uint64_t v = 0;
  std::memcpy(&v, t.raw() + i * static_cast<int64_t>(dtype_size(t.dtype())), dtype_size(t.dtype()));
  return v;
}

TEST(StablehloParser, DenseConstants) {
  EXPECT_EQ(constant("dense<[[1, -2], [3, 4]]>", "tensor<2x2xi32>").to_i64s(), (V{1, -2, 3, 4}));
  Tensor blob = constant("dense<\"0x0000803F00000040\">", "tensor<2xf32>");
  EXPECT_EQ(blob.to_f64s(), (std::vector<double>{1.0, 2.0}));
  Tensor splat_blob = constant("dense<\"0x0000C03F\">", "tensor<3xf32>");
  EXPECT_EQ(splat_blob.to_f64s(), (std::vector<double>{1.5, 1.5, 1.5}));
  EXPECT_EQ(constant("dense<[true, false, true]>", "tensor<3xi1>").to_i64s(), (V{1, 0, 1}));
  EXPECT_EQ(constant("dense<\"0x010001\">", "tensor<3xi1>").to_i64s(), (V{1, 0, 1}));
  EXPECT_EQ(constant("dense<true>", "tensor<2x2xi1>").to_i64s(), (V{1, 1, 1, 1}));
  EXPECT_EQ(constant("dense<0x7F800000>", "tensor<f32>").get_f64(0), HUGE_VAL);
  EXPECT_TRUE(std::isnan(constant("dense<0x7FC00000>", "tensor<f32>").get_f64(0)));
  EXPECT_EQ(constant("dense<1.0e-5>", "tensor<f32>").get_f64(0), static_cast<double>(1.0e-5f));
  EXPECT_EQ(constant("dense<0.797884583>", "tensor<f32>").get_f64(0),
            static_cast<double>(0.797884583f));
  EXPECT_EQ(constant("dense<[1.5, 2]>", "tensor<2xf64>").to_f64s(), (std::vector<double>{1.5, 2}));
  EXPECT_EQ(bits(constant("dense<-2.5>", "tensor<2xbf16>"), 1), 0xC020u);
  EXPECT_EQ(bits(constant("dense<0x7C00>", "tensor<f16>"), 0), 0x7C00u);
  EXPECT_EQ(bits(constant("dense<1.0>", "tensor<f16>"), 0), 0x3C00u);
  EXPECT_EQ(constant("dense<255>", "tensor<ui8>").to_i64s(), V{255});
  EXPECT_EQ(constant("dense<[-128, 127]>", "tensor<2xi8>").to_i64s(), (V{-128, 127}));
  EXPECT_EQ(constant("dense<-9223372036854775808>", "tensor<i64>").to_i64s(),
            V{INT64_MIN});
  EXPECT_EQ(constant("dense<>", "tensor<0xf32>").numel(), 0);
  EXPECT_EQ(constant("dense<[]>", "tensor<0x3xf32>").numel(), 0);

  EXPECT_NE(const_error("dense<[1, 2, 3]>", "tensor<2xi32>").find("shape 3"), std::string::npos);
  EXPECT_NE(const_error("dense<[[1], [2, 3]]>", "tensor<2x2xi32>").find("different lengths"),
            std::string::npos);
  EXPECT_NE(const_error("dense<[[1, 2], 3]>", "tensor<2x2xi32>").find("mixes"), std::string::npos);
  EXPECT_NE(const_error("dense<1.5>", "tensor<i32>").find("integer"), std::string::npos);
  EXPECT_NE(const_error("dense<256>", "tensor<ui8>").find("out of range"), std::string::npos);
  EXPECT_NE(const_error("dense<-1>", "tensor<ui8>").find("unsigned"), std::string::npos);
  EXPECT_NE(const_error("dense<-129>", "tensor<i8>").find("out of range"), std::string::npos);
  EXPECT_NE(const_error("dense<0x1FFFF>", "tensor<f16>").find("wider"), std::string::npos);
  EXPECT_NE(const_error("dense<1e5>", "tensor<f32>").find("expected"), std::string::npos);
  EXPECT_NE(const_error("dense<1.0e999>", "tensor<f32>").find("float"), std::string::npos);
  EXPECT_NE(const_error("dense<3.5e+38>", "tensor<f32>").find("float"), std::string::npos);
  EXPECT_EQ(constant("dense<1.0e-50>", "tensor<f32>").get_f64(0), 0.0);
  EXPECT_EQ(constant("dense<1.401298e-45>", "tensor<f32>").get_f64(0),
            static_cast<double>(1.401298e-45f));
  EXPECT_NE(const_error("dense<2>", "tensor<i1>").find("true or false"), std::string::npos);
  EXPECT_NE(const_error("dense<\"0x0000803F00\">", "tensor<2xf32>").find("5 bytes"),
            std::string::npos);
  EXPECT_NE(const_error("dense<\"0x0G\">", "tensor<1xi8>").find("hex"), std::string::npos);
  EXPECT_NE(const_error("dense<\"hello\">", "tensor<1xi8>").find("string"), std::string::npos);
  EXPECT_NE(const_error("dense<1>", "tensor<?xf32>").find("static"), std::string::npos);
  EXPECT_NE(const_error("dense<(1.0, 2.0)>", "tensor<f32>").find("complex"), std::string::npos);
  EXPECT_NE(const_error("dense_resource<blob>", "tensor<f32>").find("dense_resource"),
            std::string::npos);
  // Large literals: decimal lists are encoded in a second pass over the text, hex blobs copied.
  std::string big = "dense<[";
  for (int i = 0; i < 100000; ++i) big += (i ? ", " : "") + std::to_string(i % 7 - 3);
  big += "]>";
  Tensor bt = constant(big, "tensor<100000xi32>");
  EXPECT_EQ(bt.get_i64(99999), 99999 % 7 - 3);
  std::string hex = "dense<\"0x" + std::string(16 * 100000, 'A') + "\">";
  EXPECT_EQ(bits(constant(hex, "tensor<100000xf64>"), 99999), 0xAAAAAAAAAAAAAAAAull);
  ParseOptions small;
  small.max_constant_bytes = 1024;
  EXPECT_EQ(constant("dense<1.0>", "tensor<256xf32>", small).numel(), 256);
  EXPECT_NE(const_error("dense<1.0>", "tensor<257xf32>", small).find("limit"), std::string::npos);
  EXPECT_NE(const_error("dense<0>", "tensor<4611686018427387904x4xi8>").find("too many"),
            std::string::npos);
}

TEST(StablehloParser, GenericModuleAndAttributes) {
  const std::string text = R"("builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{mhlo.sharding = "{replicated}"}], function_type = (tensor<4xi32>) -> (tensor<4xi32>, tensor<2xi32>), res_attrs = [{jax.result_info = "a"}, {}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xi32>):
    %0:2 = "stablehlo.sort"(%arg0, %arg0) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>):
      %1 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%1) : (tensor<i1>) -> ()
    }) : (tensor<4xi32>, tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    %2 = "stablehlo.slice"(%0#1) <{limit_indices = array<i64: 2>, start_indices = array<i64: 0>, strides = array<i64: 1>}> {flags = array<i1: true, false>, u, neg = -3 : i64, half = 5.000000e-01 : f32, inf = 0x7F800000 : f32, t = tensor<2xf32>, s = @callee} : (tensor<4xi32>) -> tensor<2xi32>
    "func.return"(%0, %2) : (tensor<4xi32>, tensor<2xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> (), sym_name = "helper", sym_visibility = "private"}> ({
    "func.return"() : () -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
)";
  ModuleAst m = parse_ok(text);
  EXPECT_EQ(m.name, "jit_f");
  ASSERT_EQ(m.funcs.size(), 2u);
  EXPECT_TRUE(m.funcs[0].is_public);
  EXPECT_FALSE(m.funcs[1].is_public);
  EXPECT_EQ(m.funcs[0].result_types.size(), 2u);
  EXPECT_EQ(m.funcs[0].body.arg_names, std::vector<std::string>{"arg0"});
  const Operation &sort = m.funcs[0].body.ops[0];
  EXPECT_EQ(sort.results, (std::vector<std::string>{"0#0", "0#1"}));
  EXPECT_EQ(sort.attr("dimension")->i, 0);
  EXPECT_EQ(sort.attr("is_stable")->kind, Attr::Kind::Bool);
  ASSERT_EQ(sort.regions.size(), 1u);
  EXPECT_EQ(sort.regions[0].arg_names.size(), 4u);
  EXPECT_EQ(sort.regions[0].ops[0].attr("comparison_direction")->s, "LT");
  const Operation &sl = m.funcs[0].body.ops[1];
  EXPECT_EQ(sl.operands, std::vector<std::string>{"0#1"});
  EXPECT_EQ(ints_of(sl.attr("flags")), (V{1, 0}));
  EXPECT_EQ(sl.attr("u")->kind, Attr::Kind::Unit);
  EXPECT_EQ(sl.attr("neg")->i, -3);
  EXPECT_EQ(sl.attr("half")->f, 0.5);
  EXPECT_EQ(sl.attr("inf")->f, HUGE_VAL);
  EXPECT_EQ(sl.attr("t")->kind, Attr::Kind::TypeAttr);
  EXPECT_EQ(sl.attr("t")->type.dims, V{2});
  EXPECT_EQ(sl.attr("s")->s, "callee");
  // %0 of a two-result op means its first result.
  EXPECT_EQ(m.funcs[0].body.ops[2].operands, (std::vector<std::string>{"0#0", "2"}));

  ModuleAst gm = parse_ok(R"(func.func @f(%a: tensor<5x3xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
})");
  ASSERT_EQ(gm.funcs.size(), 1u);
  const Attr *g = gm.funcs[0].body.ops[0].attr("dimension_numbers");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->s, "stablehlo.gather");
  EXPECT_EQ(ints_of(g->get("offset_dims")), V{1});
  EXPECT_EQ(ints_of(g->get("start_index_map")), V{0});
  EXPECT_EQ(g->get("index_vector_dim")->i, 1);
  EXPECT_EQ(g->get("operand_batching_dims"), nullptr);
}



TEST(StablehloParser, OtherPrettyForms) {
  ModuleAst m = parse_ok(R"(func.func @main(%a: tensor<4xf32>, %b: tensor<f32>, %p: tensor<4xi1>) -> (tensor<4xf32>, tensor<2xf32>) {
  %0:2 = stablehlo.optimization_barrier {x = 1 : i64} %a, %b : tensor<4xf32>, tensor<f32>
  %1 = chlo.broadcast_add %0#0, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = chlo.next_after %1, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3:2 = chlo.top_k(%2, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
  %4 = stablehlo.clamp %b, %a, %b : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = stablehlo.select %p, %4, %a : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %6 = stablehlo.reverse %5, dims = [0] : tensor<4xf32>
  %7 = stablehlo.reduce_precision %6, format = e5m10 : tensor<4xf32>
  %8 = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4xf32>
  %9 = stablehlo.bitcast_convert %8 : (tensor<4xf32>) -> tensor<4xi32>
  %10 = stablehlo.dot %a, %a, precision = [HIGH, HIGH] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  %11 = stablehlo.reduce(%a init: %b) applies "stablehlo.add" across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %12 = stablehlo.dynamic_update_slice %a, %3#0, %3#1 : (tensor<4xf32>, tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  %13 = stablehlo.reshape %12 : (tensor<4xf32>) -> tensor<2x2xf32>
  %14 = stablehlo.broadcast %b, sizes = [2] : (tensor<f32>) -> tensor<2xf32>
  %15 = func.call @g(%7) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %15, %14 : tensor<4xf32>, tensor<2xf32>
}
func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  stablehlo.return %x : tensor<4xf32>
})");
  ASSERT_EQ(m.funcs.size(), 2u);
  EXPECT_TRUE(m.name.empty());
  const Block &b = m.funcs[0].body;
  const Operation &ob = find_op(b, "stablehlo.optimization_barrier");
  EXPECT_EQ(ob.result_types.size(), 2u);
  EXPECT_EQ(ob.result_types[1].dims, V{});
  EXPECT_EQ(ob.attr("x")->i, 1);
  EXPECT_EQ(find_op(b, "chlo.broadcast_add").operand_types[1].dims, V{});
  EXPECT_EQ(find_op(b, "chlo.next_after").operand_types.size(), 2u);
  const Operation &topk = find_op(b, "chlo.top_k");
  EXPECT_EQ(topk.attr("k")->i, 2);
  EXPECT_EQ(topk.result_types[1].dtype, DType::i32);
  EXPECT_EQ(find_op(b, "stablehlo.clamp").operand_types[0].dims, V{});
  EXPECT_EQ(find_op(b, "stablehlo.select").operand_types[0].dtype, DType::boolean);
  EXPECT_EQ(ints_of(find_op(b, "stablehlo.reverse").attr("dimensions")), V{0});
  EXPECT_EQ(find_op(b, "stablehlo.reduce_precision").attr("exponent_bits")->i, 5);
  EXPECT_EQ(find_op(b, "stablehlo.reduce_precision").attr("mantissa_bits")->i, 10);
  EXPECT_EQ(find_op(b, "stablehlo.bitcast_convert").result_types[0].dtype, DType::i32);
  EXPECT_EQ(find_op(b, "stablehlo.dot").attr("precision_config")->list[0].s, "HIGH");
  EXPECT_EQ(find_op(b, "stablehlo.reduce").regions[0].ops[0].name, "stablehlo.add");
  EXPECT_EQ(find_op(b, "stablehlo.dynamic_update_slice").operands,
            (std::vector<std::string>{"a", "3#0", "3#1"}));
  EXPECT_EQ(ints_of(find_op(b, "stablehlo.broadcast").attr("broadcast_sizes")), V{2});
  EXPECT_EQ(find_op(b, "func.call").attr("callee")->s, "g");
  EXPECT_EQ(m.funcs[1].body.ops[0].name, "stablehlo.return");
}

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

// ---- JAX's own output ----

TEST(StablehloParser, SharedJaxModels) {
  for (const char *name : {"jax_mlp", "jax_cnn"}) {
    fs::path path = kShared / "models" / (std::string(name) + ".stablehlo.mlir");
    if (!fs::exists(path)) GTEST_SKIP() << path << " is absent";
    ModuleAst m = parse_ok(read_all(path));
    ASSERT_EQ(m.funcs.size(), 2u) << name;
    EXPECT_EQ(m.name, std::string("jit_") + (name + 4));
    EXPECT_TRUE(m.funcs[0].is_public);
    EXPECT_FALSE(m.funcs[1].is_public);
    EXPECT_EQ(m.funcs[1].name, "relu");
    EXPECT_EQ(m.funcs[0].body.ops.back().name, "func.return");
  }
  EXPECT_TRUE(located(parse_error("func.func @f(")));
}

std::vector<std::string> program_names() {
  std::vector<std::string> names;
  if (!fs::is_directory(kPrograms)) return names;
  for (const auto &e : fs::directory_iterator(kPrograms)) {
    std::string f = e.path().filename().string();
    const std::string suffix = ".stablehlo.mlir";
    if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(f.substr(0, f.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(StablehloParser, PrettyAndGenericFormsAgree) {
  auto names = program_names();
  if (names.empty()) GTEST_SKIP() << "no programs in " << kPrograms;
  int compared = 0;
  for (const auto &name : names) {
    SCOPED_TRACE(name);
    fs::path pretty = kPrograms / (name + ".stablehlo.mlir");
    auto p = parse_module(read_all(pretty), pretty.string());
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    fs::path generic = kPrograms / (name + ".generic.mlir");
    if (!fs::exists(generic)) continue;
    auto g = parse_module(read_all(generic), generic.string());
    ASSERT_TRUE(g.is_ok()) << g.status().message();
    EXPECT_EQ(dump(*p), dump(*g));
    ++compared;
  }
  EXPECT_GT(compared, 0);
  std::printf("[ compared %d pretty/generic pairs ]\n", compared);
}

} // namespace
} // namespace kiln::stablehlo_fe
