// StableHLO text parser: JAX's pretty and generic forms give the same syntax tree, pretty forms
// are normalised to the generic attribute names, and malformed text is a located error
// (stablehlo_parser_robustness_test.cpp).
#include "stablehlo_parser_test_util.h"

#include "frontend/stablehlo/ast.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>

namespace kiln::stablehlo_fe {
namespace {

using namespace parser_test;

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