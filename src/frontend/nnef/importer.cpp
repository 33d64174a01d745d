// NNEF graph -> core ops. Standard operations are looked up by name with their NNEF
// signatures (positional arguments bind in declaration order, then named ones); compound
// fragments defined in the document are inlined. NNEF broadcasting aligns shapes from the
// left (a [1, C] bias broadcasts against [N, C, H, W]), so binary operands of lower rank get
// trailing unit dimensions.
#include "frontend/nnef/importer.h"
#include "frontend/nnef/syntax.h"
#include "frontend/nnef/tensor_file.h"
#include "ir/builder.h"
#include "ops/ops.h"
#include "support/limits.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace kiln::nnef_fe {

namespace fs = std::filesystem;

namespace {

struct Env;

// What an identifier is bound to: a tensor value, or (inside a fragment) the caller's
// expression for an attribute, resolved in the caller's environment.
struct Binding {
  Value *t = nullptr;
  const Expr *lit = nullptr;
  const Env *lit_env = nullptr;
};

struct Env {
  std::map<std::string, Binding, std::less<>> names;
  const Binding *find(std::string_view n) const {
    auto it = names.find(n);
    return it == names.end() ? nullptr : &it->second;
  }
};

const std::map<std::string, std::vector<std::string>, std::less<>> &signatures() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> kSig = [] {
    std::map<std::string, std::vector<std::string>, std::less<>> m{
        {"external", {"shape"}},
        {"variable", {"shape", "label"}},
        {"constant", {"shape", "value"}},
        {"conv", {"input", "filter", "bias", "border", "padding", "stride", "dilation", "groups"}},
        {"max_pool", {"input", "size", "border", "padding", "stride", "dilation"}},
        {"avg_pool", {"input", "size", "border", "padding", "stride", "dilation"}},
        {"clamp", {"x", "a", "b"}},
        {"transpose", {"input", "axes"}},
        {"reshape", {"input", "shape", "axis_start", "axis_count"}},
        {"squeeze", {"input", "axes"}},
        {"unsqueeze", {"input", "axes"}},
        {"concat", {"values", "axis"}},
        {"pad", {"input", "padding", "border", "value"}},
        {"prelu", {"x", "alpha"}},
        {"leaky_relu", {"x", "alpha"}},
        {"elu", {"x", "alpha"}},
        {"linear", {"input", "filter", "bias"}},
        {"matmul", {"A", "B", "transposeA", "transposeB"}},
        {"softmax", {"x", "axes"}},
        {"multilinear_upsample", {"input", "factor", "method", "border"}},
        {"nearest_upsample", {"input", "factor"}},
        {"batch_normalization", {"input", "mean", "variance", "offset", "scale", "epsilon"}},
    };
    for (const char *u : {"copy", "relu", "sigmoid", "tanh", "exp", "log", "abs", "neg", "sqrt",
                          "rsqrt", "rcp", "sign", "floor", "ceil", "round", "sin", "cos", "softplus"})
      m[u] = {"x"};
    for (const char *b : {"add", "sub", "mul", "div", "pow", "min", "max"}) m[b] = {"x", "y"};
    for (const char *r : {"sum_reduce", "mean_reduce", "max_reduce", "min_reduce"}) m[r] = {"input", "axes"};
    return m;
  }();
  return kSig;
}

const std::map<std::string, const char *, std::less<>> kUnary = {
    {"relu", "kiln.relu"}, {"sigmoid", "kiln.sigmoid"}, {"tanh", "kiln.tanh"},
    {"exp", "kiln.exp"},   {"log", "kiln.log"},         {"abs", "kiln.abs"},
    {"neg", "kiln.neg"},   {"sqrt", "kiln.sqrt"},       {"rcp", "kiln.reciprocal"},
    {"sign", "kiln.sign"}, {"floor", "kiln.floor"},     {"ceil", "kiln.ceil"},
    {"round", "kiln.round"}, {"sin", "kiln.sin"},       {"cos", "kiln.cos"},
    {"softplus", "kiln.softplus"}};
const std::map<std::string, const char *, std::less<>> kBinary = {
    {"add", "kiln.add"}, {"sub", "kiln.sub"}, {"mul", "kiln.mul"}, {"div", "kiln.div"},
    {"pow", "kiln.pow"}, {"min", "kiln.min"}, {"max", "kiln.max"}};

class Importer;

// One invocation with its arguments bound to parameter names.
struct Call {
  Importer *imp;
  const Expr *e;
  const Env *env;
  std::map<std::string, std::pair<const Expr *, const Env *>, std::less<>> args;

  Status error(const std::string &msg) const;
  bool has(std::string_view n) const { return args.count(n) > 0; }
  Result<const Expr *> get(std::string_view n, const Env **where) const;
  Result<Value *> tensor(std::string_view n) const;
  Result<std::vector<Value *>> tensors(std::string_view n) const;
  Result<std::vector<int64_t>> ints(std::string_view n, std::vector<int64_t> dflt) const;
  Result<double> number(std::string_view n, double dflt) const;
  Result<std::string> str(std::string_view n, std::string dflt) const;
  Result<bool> boolean(std::string_view n, bool dflt) const;
  Result<std::vector<std::pair<int64_t, int64_t>>> pairs(std::string_view n) const;
  Result<Value *> op(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {}) const;
};

class Importer {
public:
  Importer(const Document &d, std::string folder, Function &fn)
      : d_(d), folder_(std::move(folder)), fn_(fn), b_(core_ops(), fn.body) {
    b_.set_fold_limit(int64_t(1) << 24);
  }
  Status run();

  const Document &d_;
  std::string folder_;
  Function &fn_;
  Builder b_;
  int depth_ = 0;

  Status error_at(const Expr &e, const std::string &msg) const {
    return Status::error(fmt::format("{}:{}:{}: {}", d_.file, e.line, e.col, msg));
  }
  Result<const Expr *> resolve(const Expr &e, const Env &env, const Env **where) const;
  Result<Value *> tensor_of(const Expr &e, const Env &env);
  Result<std::vector<Value *>> invoke(const Expr &e, const Env &env);
  Status check_supported() const;

private:
  Status assign(const Assignment &a, Env &env, bool top);
  Result<std::vector<Value *>> standard(const std::string &name, Call &c);
  Result<std::vector<Value *>> inline_fragment(const Fragment &f, const Expr &e, const Env &env);
  Result<Value *> variable(Call &c);
  const Fragment *fragment(std::string_view name) const {
    for (const Fragment &f : d_.fragments)
      if (f.name == name && f.has_body) return &f;
    return nullptr;
  }
  std::set<std::string> inputs_;
};

Status Call::error(const std::string &msg) const {
  return imp->error_at(*e, fmt::format("{}: {}", e->str, msg));
}

Result<const Expr *> Call::get(std::string_view n, const Env **where) const {
  auto it = args.find(n);
  if (it == args.end()) return error(fmt::format("argument '{}' is missing", n));
  return imp->resolve(*it->second.first, *it->second.second, where);
}

Result<const Expr *> Importer::resolve(const Expr &e, const Env &env, const Env **where) const {
  const Expr *x = &e;
  const Env *en = &env;
  for (int hops = 0; x->kind == Expr::Kind::ident; ++hops) {
    const Binding *bnd = en->find(x->str);
    if (!bnd || !bnd->lit || hops > 64) break;
    x = bnd->lit;
    en = bnd->lit_env;
  }
  *where = en;
  return x;
}

Result<Value *> Importer::tensor_of(const Expr &e, const Env &env) {
  const Env *en;
  KILN_ASSIGN(const Expr *x, resolve(e, env, &en));
  switch (x->kind) {
  case Expr::Kind::ident: {
    const Binding *bnd = en->find(x->str);
    if (!bnd || !bnd->t) return error_at(*x, fmt::format("'{}' is not defined", x->str));
    return bnd->t;
  }
  case Expr::Kind::number: return b_.scalar_f(DType::f32, x->num);
  case Expr::Kind::boolean: return b_.constant(Tensor::scalar_i64(DType::boolean, x->flag));
  case Expr::Kind::invoke: {
    KILN_ASSIGN(auto vs, invoke(*x, *en));
    if (vs.size() != 1) return error_at(*x, "a nested invocation must have one result");
    return vs[0];
  }
  default: return error_at(*x, "expected a tensor");
  }
}

Result<Value *> Call::tensor(std::string_view n) const {
  auto it = args.find(n);
  if (it == args.end()) return error(fmt::format("argument '{}' is missing", n));
  return imp->tensor_of(*it->second.first, *it->second.second);
}

Result<std::vector<Value *>> Call::tensors(std::string_view n) const {
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::array) return error(fmt::format("argument '{}' must be an array of tensors", n));
  std::vector<Value *> v;
  for (const Expr &i : x->items) {
    KILN_ASSIGN(Value * t, imp->tensor_of(i, *en));
    v.push_back(t);
  }
  return v;
}

Result<std::vector<int64_t>> Call::ints(std::string_view n, std::vector<int64_t> dflt) const {
  if (!has(n)) return dflt;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::array) return error(fmt::format("argument '{}' must be an array of integers", n));
  std::vector<int64_t> v;
  for (const Expr &i : x->items) {
    const Env *en2;
    KILN_ASSIGN(const Expr *y, imp->resolve(i, *en, &en2));
    if (y->kind != Expr::Kind::number || !y->is_int)
      return error(fmt::format("argument '{}' must be an array of integers", n));
    v.push_back(static_cast<int64_t>(y->num));
  }
  return v;
}

Result<double> Call::number(std::string_view n, double dflt) const {
  if (!has(n)) return dflt;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::number) return error(fmt::format("argument '{}' must be a number", n));
  return x->num;
}

Result<std::string> Call::str(std::string_view n, std::string dflt) const {
  if (!has(n)) return dflt;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::string) return error(fmt::format("argument '{}' must be a string", n));
  return x->str;
}

Result<bool> Call::boolean(std::string_view n, bool dflt) const {
  if (!has(n)) return dflt;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::boolean) return error(fmt::format("argument '{}' must be true or false", n));
  return x->flag;
}

Result<std::vector<std::pair<int64_t, int64_t>>> Call::pairs(std::string_view n) const {
  std::vector<std::pair<int64_t, int64_t>> v;
  if (!has(n)) return v;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::array) return error(fmt::format("argument '{}' must be an array of pairs", n));
  for (const Expr &i : x->items) {
    if (i.kind != Expr::Kind::tuple || i.items.size() != 2 || i.items[0].kind != Expr::Kind::number ||
        i.items[1].kind != Expr::Kind::number || !i.items[0].is_int || !i.items[1].is_int)
      return error(fmt::format("argument '{}' must be an array of integer pairs", n));
    v.emplace_back(static_cast<int64_t>(i.items[0].num), static_cast<int64_t>(i.items[1].num));
  }
  return v;
}

Result<Value *> Call::op(std::string_view name, std::vector<Value *> operands, AttrMap attrs) const {
  auto r = imp->b_.create1(name, std::move(operands), std::move(attrs));
  if (!r) return error(r.status().message());
  return r;
}

Status Importer::check_supported() const {
  std::string bad;
  int n = 0;
  std::function<void(const Expr &)> scan = [&](const Expr &e) {
    if (e.kind == Expr::Kind::invoke && !signatures().count(e.str) && !fragment(e.str)) {
      ++n;
      bad += fmt::format("{}{}:{}:{}: '{}'", n > 1 ? "; " : " ", d_.file, e.line, e.col, e.str);
    }
    for (const Expr &i : e.items) scan(i);
    for (const auto &kv : e.named) scan(kv.second);
  };
  for (const Assignment &a : d_.body) scan(a.rhs);
  for (const Fragment &f : d_.fragments)
    for (const Assignment &a : f.body) scan(a.rhs);
  if (n) return Status::error(fmt::format("{} unsupported operation{}:{}", n, n > 1 ? "s" : "", bad));
  return Status::ok();
}

Result<std::vector<Value *>> Importer::invoke(const Expr &e, const Env &env) {
  if (++depth_ > limits().max_graph_depth) return error_at(e, "fragments nest too deeply (recursion?)");
  struct Guard {
    int &d;
    ~Guard() { --d; }
  } guard{depth_};
  if (const Fragment *f = fragment(e.str)) return inline_fragment(*f, e, env);
  auto it = signatures().find(e.str);
  if (it == signatures().end()) return error_at(e, fmt::format("operation '{}' is not supported", e.str));
  Call c{this, &e, &env, {}};
  const auto &params = it->second;
  if (e.items.size() > params.size())
    return c.error(fmt::format("takes at most {} arguments, got {}", params.size(), e.items.size()));
  for (size_t i = 0; i < e.items.size(); ++i) c.args[params[i]] = {&e.items[i], &env};
  for (const auto &[name, v] : e.named) {
    if (std::find(params.begin(), params.end(), name) == params.end())
      return c.error(fmt::format("has no parameter '{}'", name));
    if (c.args.count(name)) return c.error(fmt::format("argument '{}' is given twice", name));
    c.args[name] = {&v, &env};
  }
  return standard(e.str, c);
}

Result<std::vector<Value *>> Importer::inline_fragment(const Fragment &f, const Expr &e, const Env &env) {
  Env inner;
  auto bind = [&](const Param &p, const Expr &arg, const Env &aenv) -> Status {
    if (p.type.rfind("tensor", 0) == 0) {
      KILN_ASSIGN(Value * t, tensor_of(arg, aenv));
      inner.names[p.name] = {t, nullptr, nullptr};
    } else {
      inner.names[p.name] = {nullptr, &arg, &aenv};
    }
    return Status::ok();
  };
  if (e.items.size() > f.params.size())
    return error_at(e, fmt::format("fragment '{}' takes {} arguments, got {}", f.name, f.params.size(), e.items.size()));
  std::set<std::string> given;
  for (size_t i = 0; i < e.items.size(); ++i) {
    KILN_TRY(bind(f.params[i], e.items[i], env));
    given.insert(f.params[i].name);
  }
  for (const auto &[name, v] : e.named) {
    auto p = std::find_if(f.params.begin(), f.params.end(), [&](const Param &q) { return q.name == name; });
    if (p == f.params.end()) return error_at(v, fmt::format("fragment '{}' has no parameter '{}'", f.name, name));
    if (!given.insert(name).second) return error_at(v, fmt::format("argument '{}' is given twice", name));
    KILN_TRY(bind(*p, v, env));
  }
  static const Env kEmpty;
  for (const Param &p : f.params)
    if (!given.count(p.name)) {
      if (!p.has_default) return error_at(e, fmt::format("fragment '{}': argument '{}' is missing", f.name, p.name));
      KILN_TRY(bind(p, p.dflt, kEmpty));
    }
  for (const Assignment &a : f.body) KILN_TRY(assign(a, inner, false));
  std::vector<Value *> outs;
  for (const std::string &r : f.results) {
    const Binding *bnd = inner.find(r);
    if (!bnd || !bnd->t) return error_at(e, fmt::format("fragment '{}' does not define its result '{}'", f.name, r));
    outs.push_back(bnd->t);
  }
  return outs;
}

Status Importer::assign(const Assignment &a, Env &env, bool top) {
  std::vector<const Expr *> lhs;
  if (a.lhs.kind == Expr::Kind::ident) lhs.push_back(&a.lhs);
  else
    for (const Expr &i : a.lhs.items) {
      if (i.kind != Expr::Kind::ident) return error_at(i, "expected an identifier");
      lhs.push_back(&i);
    }
  for (const Expr *l : lhs)
    if (env.find(l->str)) return error_at(*l, fmt::format("'{}' is assigned twice", l->str));
  std::vector<Value *> vals;
  if (a.rhs.kind == Expr::Kind::invoke) {
    if (a.rhs.str == "external") {
      if (!top) return error_at(a.rhs, "external is only allowed in the graph body");
      if (lhs.size() != 1 || !inputs_.count(lhs[0]->str))
        return error_at(a.rhs, "external must define one of the graph's inputs");
    }
    KILN_ASSIGN(vals, invoke(a.rhs, env));
  } else if (lhs.size() == 1) {
    KILN_ASSIGN(Value * v, tensor_of(a.rhs, env));
    vals.push_back(v);
  } else {
    return error_at(a.rhs, "expected an invocation");
  }
  if (vals.size() != lhs.size())
    return error_at(a.lhs, fmt::format("{} results assigned to {} names", vals.size(), lhs.size()));
  for (size_t i = 0; i < lhs.size(); ++i) env.names[lhs[i]->str] = {vals[i], nullptr, nullptr};
  return Status::ok();
}

Status Importer::run() {
  KILN_TRY(check_supported());
  for (const std::string &i : d_.inputs)
    if (!inputs_.insert(i).second) return Status::error(fmt::format("{}: input '{}' is listed twice", d_.file, i));
  if (d_.outputs.empty()) return Status::error(fmt::format("{}: the graph has no outputs", d_.file));
  if (static_cast<int64_t>(d_.body.size()) > limits().max_nodes)
    return Status::error(fmt::format("{}: {} assignments exceed KILN_MAX_NODES", d_.file, d_.body.size()));
  Env env;
  for (const Assignment &a : d_.body) KILN_TRY(assign(a, env, true));
  // Parameters in the declared input order.
  std::vector<Value *> params;
  for (const std::string &i : d_.inputs) {
    const Binding *bnd = env.find(i);
    if (!bnd || !bnd->t || bnd->t->def)
      return Status::error(fmt::format("{}: input '{}' is not defined by external", d_.file, i));
    params.push_back(bnd->t);
  }
  fn_.body.params = params;
  for (const std::string &o : d_.outputs) {
    const Binding *bnd = env.find(o);
    if (!bnd || !bnd->t) return Status::error(fmt::format("{}: output '{}' is never assigned", d_.file, o));
    Value *v = bnd->t;
    if (!v->def || v->def->def->name == "kiln.constant" ||
        std::find(fn_.body.results.begin(), fn_.body.results.end(), v) != fn_.body.results.end()) {
      auto r = b_.create1("kiln.reshape", {v, b_.i64s(v->type.dims)});
      if (!r) return r.status();
      v = r.value();
    }
    v->name = o;
    fn_.body.results.push_back(v);
  }
  return Status::ok();
}

// ---- standard operations ----

Shape trailing_ones(const Shape &s, size_t rank) {
  Shape r = s;
  while (r.size() < rank) r.push_back(1);
  return r;
}

// NNEF broadcasting: the operand of lower rank gets trailing unit dimensions.
Result<std::pair<Value *, Value *>> align(const Call &c, Value *a, Value *b) {
  const size_t ra = a->type.dims.size(), rb = b->type.dims.size();
  if (ra && rb && ra < rb) {
    KILN_ASSIGN(a, c.op("kiln.reshape", {a, c.imp->b_.i64s(trailing_ones(a->type.dims, rb))}));
  } else if (ra && rb && rb < ra) {
    KILN_ASSIGN(b, c.op("kiln.reshape", {b, c.imp->b_.i64s(trailing_ones(b->type.dims, ra))}));
  }
  return std::make_pair(a, b);
}

Result<Value *> binary(const Call &c, const char *op, Value *a, Value *b) {
  KILN_ASSIGN(auto ab, align(c, a, b));
  return c.op(op, {ab.first, ab.second});
}

Result<DType> generic_dtype(const Call &c) {
  const std::string &g = c.e->generic;
  if (g.empty() || g == "scalar") return DType::f32;
  if (g == "integer") return DType::i32;
  if (g == "logical") return DType::boolean;
  return c.error(fmt::format("type '{}' is not supported", g));
}

Result<Shape> shape_arg(const Call &c) {
  KILN_ASSIGN(auto s, c.ints("shape", {}));
  int64_t numel = 1;
  for (int64_t d : s) {
    if (d < 0) return c.error(fmt::format("shape [{}] has a negative extent", fmt::join(s, ",")));
    if (d && numel > limits().max_tensor_bytes / d) return c.error("shape is too large");
    numel *= d;
  }
  if (numel * 4 > limits().max_tensor_bytes) return c.error("shape is too large (KILN_MAX_TENSOR_BYTES)");
  return s;
}

Result<Value *> Importer::variable(Call &c) {
  KILN_ASSIGN(Shape shape, shape_arg(c));
  KILN_ASSIGN(std::string label, c.str("label", ""));
  if (label.empty()) return c.error("label is empty");
  if (folder_.empty()) return c.error("variables cannot be read here (no model folder)");
  const fs::path rel = fs::path(label + ".dat").lexically_normal();
  if (rel.is_absolute() || rel.has_root_name() || rel.empty() || *rel.begin() == "..")
    return c.error(fmt::format("label '{}' leaves the model folder", label));
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::path(folder_), ec);
  const fs::path file = fs::weakly_canonical(fs::path(folder_) / rel, ec);
  if (ec) return c.error(fmt::format("cannot resolve the tensor file for label '{}'", label));
  auto [ri, fi] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (ri != root.end()) return c.error(fmt::format("label '{}' leaves the model folder (through a link)", label));
  auto t = read_tensor_file(file.string(), shape);
  if (!t) return c.error(t.status().message());
  Tensor v = std::move(t).value();
  KILN_ASSIGN(DType want, generic_dtype(c));
  if (want == DType::f32 && v.dtype() != DType::f32) v = v.cast(DType::f32);
  return b_.constant(std::move(v), label);
}

Result<std::vector<int64_t>> auto_or_explicit_pads(const Call &c, const Shape &xs, size_t first,
                                                   const std::vector<int64_t> &k,
                                                   const std::vector<int64_t> &s,
                                                   const std::vector<int64_t> &d) {
  // Pads for dims [first, rank): {begins..., ends...}.
  KILN_ASSIGN(auto pp, c.pairs("padding"));
  const size_t n = xs.size() - first;
  std::vector<int64_t> pads(2 * n, 0);
  if (pp.empty()) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = xs[first + i], eff = (k[i] - 1) * d[i] + 1;
      const int64_t out = (in + s[i] - 1) / s[i];
      const int64_t total = std::max<int64_t>((out - 1) * s[i] + eff - in, 0);
      pads[i] = total / 2;
      pads[n + i] = total - total / 2;
    }
    return pads;
  }
  if (pp.size() != n) return c.error(fmt::format("padding has {} pairs, expected {}", pp.size(), n));
  for (size_t i = 0; i < n; ++i) {
    if (pp[i].first < 0 || pp[i].second < 0) return c.error("negative padding is not supported");
    pads[i] = pp[i].first;
    pads[n + i] = pp[i].second;
  }
  return pads;
}

Result<std::vector<int64_t>> positive_list(const Call &c, const char *name, size_t n) {
  KILN_ASSIGN(auto v, c.ints(name, {}));
  if (v.empty()) v.assign(n, 1);
  if (v.size() != n) return c.error(fmt::format("{} has {} entries, expected {}", name, v.size(), n));
  for (int64_t x : v)
    if (x <= 0) return c.error(fmt::format("{} entries must be positive", name));
  return v;
}

Result<Value *> conv(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(Value * w, c.tensor("filter"));
  if (x->type.rank() < 3 || w->type.rank() != x->type.rank())
    return c.error(fmt::format("input {} and filter {} must have the same rank (3 or more)", x->type.str(), w->type.str()));
  KILN_ASSIGN(std::string border, c.str("border", "constant"));
  if (border != "constant") return c.error(fmt::format("border '{}' is not supported", border));
  const size_t ns = x->type.dims.size() - 2;
  KILN_ASSIGN(auto stride, positive_list(c, "stride", ns));
  KILN_ASSIGN(auto dil, positive_list(c, "dilation", ns));
  std::vector<int64_t> k(w->type.dims.begin() + 2, w->type.dims.end());
  KILN_ASSIGN(auto pads, auto_or_explicit_pads(c, x->type.dims, 2, k, stride, dil));
  KILN_ASSIGN(double g, c.number("groups", 1));
  int64_t groups = static_cast<int64_t>(g);
  if (groups == 0) groups = x->type.dims[1];
  if (groups < 0) return c.error("groups must not be negative");
  AttrMap a{{"kernel_shape", k}, {"strides", stride}, {"dilations", dil}, {"pads", pads}, {"group", groups}};
  std::vector<Value *> operands{x, w};
  Value *add_after = nullptr;
  if (c.has("bias")) {
    KILN_ASSIGN(Value * bias, c.tensor("bias"));
    const Tensor *bc = Builder::constant_value(bias);
    const int64_t o = w->type.dims[0], n = shape_numel(bias->type.dims);
    if (bc && bc->numel() == 1 && bc->get_f64(0) == 0.0) {
      // no bias
    } else if (n == o) {
      KILN_ASSIGN(bias, c.op("kiln.reshape", {bias, c.imp->b_.i64s({o})}));
      operands.push_back(bias);
    } else if (n == 1) {
      add_after = bias;
    } else {
      return c.error(fmt::format("bias {} does not match {} output channels", bias->type.str(), o));
    }
  }
  KILN_ASSIGN(Value * y, c.op("kiln.conv", operands, std::move(a)));
  if (add_after) return binary(c, "kiln.add", y, add_after);
  return y;
}

Result<Value *> pool(Call &c, bool is_max) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  const size_t rank = x->type.dims.size();
  if (rank < 3) return c.error(fmt::format("input {} must have rank 3 or more", x->type.str()));
  KILN_ASSIGN(auto size, c.ints("size", {}));
  if (size.size() != rank) return c.error(fmt::format("size has {} entries, expected {}", size.size(), rank));
  KILN_ASSIGN(auto stride, positive_list(c, "stride", rank));
  KILN_ASSIGN(auto dil, positive_list(c, "dilation", rank));
  KILN_ASSIGN(auto pads, auto_or_explicit_pads(c, x->type.dims, 0, size, stride, dil));
  for (size_t i = 0; i < 2; ++i)
    if (size[i] != 1 || stride[i] != 1 || dil[i] != 1 || pads[i] != 0 || pads[rank + i] != 0)
      return c.error("pooling over the batch or channel dimension is not supported");
  KILN_ASSIGN(std::string border, c.str("border", "constant"));
  const size_t ns = rank - 2;
  std::vector<int64_t> sp;
  for (size_t i = 2; i < rank; ++i) sp.push_back(pads[i]);
  for (size_t i = 2; i < rank; ++i) sp.push_back(pads[rank + i]);
  bool any_pad = false;
  for (int64_t p : sp) any_pad = any_pad || p != 0;
  AttrMap a{{"kernel_shape", std::vector<int64_t>(size.begin() + 2, size.end())},
            {"strides", std::vector<int64_t>(stride.begin() + 2, stride.end())}};
  bool dilated = false;
  for (size_t i = 2; i < rank; ++i) dilated = dilated || dil[i] != 1;
  if (dilated) a["dilations"] = std::vector<int64_t>(dil.begin() + 2, dil.end());
  if (border == "ignore") {
    a["pads"] = sp;
    if (!is_max) a["count_include_pad"] = int64_t(0);
  } else if (border == "constant") {
    if (is_max && any_pad) {
      // Zeros take part in the maximum: pad explicitly, then pool without padding.
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < ns; ++i) full[2 + i] = sp[i], full[rank + 2 + i] = sp[ns + i];
      KILN_ASSIGN(x, c.op("kiln.pad", {x, c.imp->b_.i64s(full), c.imp->b_.scalar_f(x->type.dtype, 0.0)},
                          {{"mode", std::string("constant")}}));
      a["pads"] = std::vector<int64_t>(2 * ns, 0);
    } else {
      a["pads"] = sp;
      if (!is_max) a["count_include_pad"] = int64_t(1);
    }
  } else {
    return c.error(fmt::format("border '{}' is not supported", border));
  }
  (void)ns;
  return c.op(is_max ? "kiln.max_pool" : "kiln.avg_pool", {x}, std::move(a));
}

Result<int64_t> axis_in(const Call &c, int64_t a, int64_t rank) {
  if (a < 0 || a >= rank) return c.error(fmt::format("axis {} is out of range for rank {}", a, rank));
  return a;
}

Result<Value *> reshape_to(const Call &c, Value *x, const Shape &s) {
  return c.op("kiln.reshape", {x, c.imp->b_.i64s(s)});
}

} // namespace

Result<std::vector<Value *>> Importer::standard(const std::string &name, Call &c) {
  auto one = [](Result<Value *> r) -> Result<std::vector<Value *>> {
    if (!r) return r.status();
    return std::vector<Value *>{r.value()};
  };
  if (name == "external") {
    KILN_ASSIGN(Shape shape, shape_arg(c));
    KILN_ASSIGN(DType dt, generic_dtype(c));
    return std::vector<Value *>{fn_.body.add_param({dt, shape, true}, "")};
  }
  if (name == "variable") return one(variable(c));
  if (name == "constant") {
    KILN_ASSIGN(Shape shape, shape_arg(c));
    KILN_ASSIGN(DType dt, generic_dtype(c));
    const Env *en;
    KILN_ASSIGN(const Expr *v, c.get("value", &en));
    std::vector<double> vals;
    auto push = [&](const Expr &x) -> Status {
      if (x.kind == Expr::Kind::number) vals.push_back(x.num);
      else if (x.kind == Expr::Kind::boolean) vals.push_back(x.flag);
      else return c.error("value must hold numbers or logicals");
      return Status::ok();
    };
    if (v->kind == Expr::Kind::array) {
      for (const Expr &x : v->items) KILN_TRY(push(x));
    } else {
      KILN_TRY(push(*v));
    }
    const int64_t n = shape_numel(shape);
    if (vals.size() != 1 && static_cast<int64_t>(vals.size()) != n)
      return c.error(fmt::format("{} values for shape [{}]", vals.size(), shape_str(shape)));
    Tensor t(dt, shape);
    for (int64_t i = 0; i < n; ++i) t.set_f64(i, vals.size() == 1 ? vals[0] : vals[i]);
    return std::vector<Value *>{b_.constant(std::move(t))};
  }
  if (name == "copy") return one(c.tensor("x"));
  if (auto it = kUnary.find(name); it != kUnary.end()) {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    return one(c.op(it->second, {x}));
  }
  if (name == "rsqrt") {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(Value * s, c.op("kiln.sqrt", {x}));
    return one(c.op("kiln.reciprocal", {s}));
  }
  if (auto it = kBinary.find(name); it != kBinary.end()) {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(Value * y, c.tensor("y"));
    return one(binary(c, it->second, x, y));
  }
  if (name == "clamp") {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(Value * lo, c.tensor("a"));
    KILN_ASSIGN(Value * hi, c.tensor("b"));
    KILN_ASSIGN(Value * m, binary(c, "kiln.min", x, hi));
    return one(binary(c, "kiln.max", m, lo));
  }
  if (name == "prelu") {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(Value * al, c.tensor("alpha"));
    return one(binary(c, "kiln.prelu", x, al));
  }
  if (name == "leaky_relu" || name == "elu") {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(double alpha, c.number("alpha", name == "elu" ? 1.0 : 0.0));
    if (name == "leaky_relu" && !c.has("alpha")) return c.error("argument 'alpha' is missing");
    return one(c.op(name == "elu" ? "kiln.elu" : "kiln.leaky_relu", {x}, {{"alpha", alpha}}));
  }
  if (name == "conv") return one(conv(c));
  if (name == "max_pool" || name == "avg_pool") return one(pool(c, name == "max_pool"));
  if (name == "transpose") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto axes, c.ints("axes", {}));
    const int64_t rank = x->type.rank();
    std::vector<bool> seen(rank, false);
    for (int64_t a : axes) {
      if (a < 0 || a >= rank || seen[a]) return c.error(fmt::format("axes [{}] are not a permutation", fmt::join(axes, ",")));
      seen[a] = true;
    }
    for (int64_t i = static_cast<int64_t>(axes.size()); i < rank; ++i) {
      if (seen[i]) return c.error(fmt::format("axes [{}] are not a permutation", fmt::join(axes, ",")));
      axes.push_back(i);
    }
    return one(c.op("kiln.transpose", {x}, {{"perm", axes}}));
  }
  if (name == "reshape") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto shape, c.ints("shape", {}));
    KILN_ASSIGN(double start_d, c.number("axis_start", 0));
    KILN_ASSIGN(double count_d, c.number("axis_count", -1));
    const Shape &xs = x->type.dims;
    const int64_t rank = static_cast<int64_t>(xs.size());
    const int64_t start = static_cast<int64_t>(start_d);
    int64_t count = static_cast<int64_t>(count_d);
    if (count == -1) count = rank - start;
    if (start < 0 || count < 0 || start + count > rank) return c.error("axis_start / axis_count are out of range");
    Shape out(xs.begin(), xs.begin() + start);
    int64_t infer = -1, known = 1, span = 1;
    for (int64_t i = start; i < start + count; ++i) span *= xs[i];
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t d = shape[i];
      if (d == 0) {
        if (start + static_cast<int64_t>(i) >= rank) return c.error("shape 0 refers past the input's rank");
        d = xs[start + i];
      }
      if (d == -1) {
        if (infer >= 0) return c.error("shape has two -1 entries");
        infer = static_cast<int64_t>(out.size());
        out.push_back(1);
        continue;
      }
      if (d < 0) return c.error(fmt::format("shape entry {} is invalid", d));
      known *= d;
      out.push_back(d);
    }
    if (infer >= 0) {
      if (known == 0 || span % known != 0) return c.error("shape cannot be inferred");
      out[infer] = span / known;
    }
    out.insert(out.end(), xs.begin() + start + count, xs.end());
    return one(reshape_to(c, x, out));
  }
  if (name == "squeeze" || name == "unsqueeze") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto axes, c.ints("axes", {}));
    Shape s = x->type.dims;
    if (name == "squeeze") {
      std::sort(axes.begin(), axes.end());
      for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
        if (*it < 0 || *it >= static_cast<int64_t>(s.size()) || s[*it] != 1)
          return c.error(fmt::format("axis {} is not a unit dimension of {}", *it, x->type.str()));
        s.erase(s.begin() + *it);
      }
    } else {
      std::sort(axes.begin(), axes.end());
      for (int64_t a : axes) {
        if (a < 0 || a > static_cast<int64_t>(s.size())) return c.error(fmt::format("axis {} is out of range", a));
        s.insert(s.begin() + a, 1);
      }
    }
    return one(reshape_to(c, x, s));
  }
  if (name == "concat") {
    KILN_ASSIGN(auto vs, c.tensors("values"));
    if (vs.empty()) return c.error("values is empty");
    KILN_ASSIGN(double ax, c.number("axis", 0));
    KILN_ASSIGN(int64_t axis, axis_in(c, static_cast<int64_t>(ax), vs[0]->type.rank()));
    return one(c.op("kiln.concat", vs, {{"axis", axis}}));
  }
  if (name == "pad") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto pp, c.pairs("padding"));
    const size_t rank = x->type.dims.size();
    if (pp.size() != rank) return c.error(fmt::format("padding has {} pairs, expected {}", pp.size(), rank));
    std::vector<int64_t> pads(2 * rank);
    for (size_t i = 0; i < rank; ++i) {
      if (pp[i].first < 0 || pp[i].second < 0) return c.error("negative padding is not supported");
      pads[i] = pp[i].first, pads[rank + i] = pp[i].second;
    }
    KILN_ASSIGN(std::string border, c.str("border", "constant"));
    std::string mode = border == "constant" ? "constant" : border == "reflect" ? "reflect" : border == "replicate" ? "edge" : "";
    if (mode.empty()) return c.error(fmt::format("border '{}' is not supported", border));
    KILN_ASSIGN(double value, c.number("value", 0.0));
    return one(c.op("kiln.pad", {x, b_.i64s(pads), b_.scalar_f(x->type.dtype, value)}, {{"mode", mode}}));
  }
  if (name == "linear" || name == "matmul") {
    const bool lin = name == "linear";
    KILN_ASSIGN(Value * a, c.tensor(lin ? "input" : "A"));
    KILN_ASSIGN(Value * b, c.tensor(lin ? "filter" : "B"));
    KILN_ASSIGN(bool ta, c.boolean("transposeA", false));
    KILN_ASSIGN(bool tb, c.boolean("transposeB", lin));
    auto swap_last = [&](Value *v) -> Result<Value *> {
      const int64_t r = v->type.rank();
      if (r < 2) return c.error(fmt::format("operand {} must have rank 2 or more", v->type.str()));
      std::vector<int64_t> perm(r);
      for (int64_t i = 0; i < r; ++i) perm[i] = i;
      std::swap(perm[r - 1], perm[r - 2]);
      return c.op("kiln.transpose", {v}, {{"perm", perm}});
    };
    if (ta) {
      KILN_ASSIGN(a, swap_last(a));
    }
    if (tb) {
      KILN_ASSIGN(b, swap_last(b));
    }
    KILN_ASSIGN(Value * y, c.op("kiln.matmul", {a, b}));
    if (lin && c.has("bias")) {
      KILN_ASSIGN(Value * bias, c.tensor("bias"));
      KILN_ASSIGN(y, binary(c, "kiln.add", y, bias));
    }
    return std::vector<Value *>{y};
  }
  if (name == "softmax") {
    KILN_ASSIGN(Value * x, c.tensor("x"));
    KILN_ASSIGN(auto axes, c.ints("axes", {1}));
    if (axes.size() != 1) return c.error("softmax over several axes is not supported");
    KILN_ASSIGN(int64_t axis, axis_in(c, axes[0], x->type.rank()));
    return one(c.op("kiln.softmax", {x}, {{"kind", std::string("softmax")}, {"axis", axis}}));
  }
  if (name.ends_with("_reduce")) {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto axes, c.ints("axes", {}));
    for (int64_t a : axes) KILN_TRY(axis_in(c, a, x->type.rank()).status());
    const std::string kind = name.substr(0, name.size() - 7);
    // NNEF reductions keep the reduced dimensions as 1.
    return one(c.op("kiln.reduce", {x, b_.i64s(axes)},
                    {{"kind", kind}, {"keepdims", int64_t(1)}, {"noop_with_empty_axes", int64_t(1)}}));
  }
  if (name == "multilinear_upsample" || name == "nearest_upsample") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(auto factor, c.ints("factor", {}));
    const Shape &xs = x->type.dims;
    if (xs.size() < 3 || factor.size() != xs.size() - 2) return c.error("factor must have one entry per spatial dimension");
    Shape out = xs;
    for (size_t i = 0; i < factor.size(); ++i) {
      if (factor[i] <= 0) return c.error("factor entries must be positive");
      out[2 + i] *= factor[i];
    }
    AttrMap a;
    if (name == "nearest_upsample") {
      a = {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")},
           {"nearest_mode", std::string("floor")}};
    } else {
      KILN_ASSIGN(std::string method, c.str("method", "symmetric"));
      KILN_ASSIGN(std::string border, c.str("border", "replicate"));
      if (border != "replicate")
        return c.error(fmt::format("border '{}' is not supported (only 'replicate')", border));
      if (method != "symmetric" && method != "asymmetric")
        return c.error(fmt::format("method '{}' is not supported", method));
      // Symmetric weights with replicated borders are half-pixel linear interpolation.
      a = {{"mode", std::string("linear")},
           {"coordinate_transformation_mode", std::string(method == "symmetric" ? "half_pixel" : "asymmetric")}};
    }
    return one(c.op("kiln.resize", {x, nullptr, nullptr, b_.i64s(out)}, std::move(a)));
  }
  if (name == "batch_normalization") {
    KILN_ASSIGN(Value * x, c.tensor("input"));
    KILN_ASSIGN(Value * mean, c.tensor("mean"));
    KILN_ASSIGN(Value * var, c.tensor("variance"));
    if (!c.has("epsilon")) return c.error("argument 'epsilon' is missing");
    KILN_ASSIGN(double eps, c.number("epsilon", 0));
    KILN_ASSIGN(Value * y, binary(c, "kiln.sub", x, mean));
    KILN_ASSIGN(Value * d, c.op("kiln.add", {var, b_.scalar_f(var->type.dtype, eps)}));
    KILN_ASSIGN(d, c.op("kiln.sqrt", {d}));
    KILN_ASSIGN(y, binary(c, "kiln.div", y, d));
    if (c.has("scale")) {
      KILN_ASSIGN(Value * s, c.tensor("scale"));
      KILN_ASSIGN(y, binary(c, "kiln.mul", y, s));
    }
    if (c.has("offset")) {
      KILN_ASSIGN(Value * o, c.tensor("offset"));
      KILN_ASSIGN(y, binary(c, "kiln.add", y, o));
    }
    return std::vector<Value *>{y};
  }
  return c.error("operation is not supported");
}

Result<std::unique_ptr<Module>> import_text(std::string_view text, const std::string &file,
                                            const std::string &folder) {
  KILN_ASSIGN(Document d, parse_document(text, file));
  auto mod = std::make_unique<Module>();
  auto fn = std::make_unique<Function>();
  fn->name = "main";
  Importer imp(d, folder, *fn);
  KILN_TRY(imp.run());
  // Parameters were created in the order external appeared; name them after the inputs.
  for (size_t i = 0; i < fn->body.params.size(); ++i) fn->body.params[i]->name = d.inputs[i];
  renumber(*fn);
  Status st = verify_function(*fn);
  if (!st) return Status::error(fmt::format("{}: {}", file, st.message()));
  mod->functions.push_back(std::move(fn));
  return mod;
}

Result<std::unique_ptr<Module>> import_path(const std::string &path) {
  fs::path p(path);
  std::error_code ec;
  fs::path folder = fs::is_directory(p, ec) ? p : p.parent_path();
  fs::path graph = fs::is_directory(p, ec) ? p / "graph.nnef" : p;
  std::ifstream f(graph, std::ios::binary | std::ios::ate);
  if (!f) return Status::error(fmt::format("cannot open {}", graph.string()));
  const std::streamoff size = f.tellg();
  if (size < 0) return Status::error(fmt::format("cannot read {}", graph.string()));
  if (size > limits().max_model_bytes)
    return Status::error(fmt::format("{}: {} bytes exceed KILN_MAX_MODEL_BYTES", graph.string(), size));
  std::string text(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (size && !f.read(text.data(), size)) return Status::error(fmt::format("cannot read {}", graph.string()));
  return import_text(text, graph.string(), folder.empty() ? std::string(".") : folder.string());
}

} // namespace kiln::nnef_fe
