// StableHLO text parser: JAX's pretty and generic forms give the same syntax tree, pretty forms
// are normalised to the generic attribute names, and malformed text is a located error.
#include "frontend/stablehlo/ast.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>

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

bool located(const std::string &msg) {
  static const std::regex re("^t\\.mlir:[0-9]+:[0-9]+: .+");
  return std::regex_search(msg, re);
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
