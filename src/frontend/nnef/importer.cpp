// NNEF graph -> core ops: the driver. Standard operations are looked up by name with their NNEF
// signatures (positional arguments bind in declaration order, then named ones; ops.cpp converts
// them); compound fragments defined in the document are inlined. NNEF broadcasting aligns shapes
// from the left (a [1, C] bias broadcasts against [N, C, H, W]), so binary operands of lower
// rank get trailing unit dimensions (ops.cpp).
#include "frontend/nnef/call.h"
#include "frontend/nnef/importer.h"
#include "ops/ops.h"
#include "support/limits.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <set>

namespace kiln::nnef_fe {

namespace fs = std::filesystem;

class Importer {
public:
  Importer(const Document &d, std::string folder, const Archive *archive, Function &fn)
      : d_(d), folder_(std::move(folder)), archive_(archive), fn_(fn), b_(core_ops(), fn.body) {
    b_.set_fold_limit(int64_t(1) << 24);
  }
  Status run();

  Status error_at(const Expr &e, const std::string &msg) const {
    return Status::error(fmt::format("{}:{}:{}: {}", d_.file, e.line, e.col, msg));
  }
  Result<const Expr *> resolve(const Expr &e, const Env &env, const Env **where) const;
  Result<Value *> tensor_of(const Expr &e, const Env &env);
  Result<std::vector<Value *>> invoke(const Expr &e, const Env &env);
  Status check_supported() const;

private:
  const Document &d_;
  std::string folder_;
  const Archive *archive_;
  Function &fn_;
  Builder b_;
  int depth_ = 0;

  Status assign(const Assignment &a, Env &env, bool top);
  Result<std::vector<Value *>> inline_fragment(const Fragment &f, const Expr &e, const Env &env);
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

Result<int64_t> Call::integer(std::string_view n, int64_t dflt) const {
  if (!has(n)) return dflt;
  const Env *en;
  KILN_ASSIGN(const Expr *x, get(n, &en));
  if (x->kind != Expr::Kind::number || !x->is_int) return error(fmt::format("argument '{}' must be an integer", n));
  return static_cast<int64_t>(x->num);
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
    const double lo = i.items[0].num, hi = i.items[1].num;
    if (std::fabs(lo) > (1 << 24) || std::fabs(hi) > (1 << 24))
      return error(fmt::format("argument '{}' has a padding beyond 2^24", n));
    v.emplace_back(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
  }
  return v;
}

Result<Value *> Call::op(std::string_view name, std::vector<Value *> operands, AttrMap attrs) const {
  auto r = b->create1(name, std::move(operands), std::move(attrs));
  if (!r) return error(r.status().message());
  return r;
}

Status Importer::check_supported() const {
  std::string bad;
  int n = 0;
  std::function<void(const Expr &)> scan = [&](const Expr &e) {
    if (e.kind == Expr::Kind::invoke && !standard_ops().count(e.str) && !fragment(e.str)) {
      ++n;
      bad += fmt::format("{}{}:{}:{}: '{}'", n > 1 ? "; " : " ", d_.file, e.line, e.col, e.str);
    }
    for (const Expr &i : e.items) scan(i);
    for (const auto &kv : e.named) scan(kv.value);
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
  auto it = standard_ops().find(e.str);
  if (it == standard_ops().end()) return error_at(e, fmt::format("operation '{}' is not supported", e.str));
  Call c{this, &e, &env, &b_, &fn_, &folder_, archive_, {}};
  const auto &params = it->second.params;
  if (e.items.size() > params.size())
    return c.error(fmt::format("takes at most {} arguments, got {}", params.size(), e.items.size()));
  for (size_t i = 0; i < e.items.size(); ++i) c.args[params[i]] = {&e.items[i], &env};
  for (const auto &[name, v] : e.named) {
    if (std::find(params.begin(), params.end(), name) == params.end())
      return c.error(fmt::format("has no parameter '{}'", name));
    if (c.args.count(name)) return c.error(fmt::format("argument '{}' is given twice", name));
    c.args[name] = {&v, &env};
  }
  return it->second.fn(c);
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
  for (const NamedArg &na : e.named) {
    const std::string &name = na.name;
    const Expr &v = na.value;
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

namespace {

Result<std::unique_ptr<Module>> import_document(std::string_view text, const std::string &file,
                                                const std::string &folder, const Archive *archive) {
  KILN_ASSIGN(Document d, parse_document(text, file));
  auto mod = std::make_unique<Module>();
  auto fn = std::make_unique<Function>();
  fn->name = "main";
  Importer imp(d, folder, archive, *fn);
  KILN_TRY(imp.run());
  // Parameters were created in the order external appeared; name them after the inputs.
  for (size_t i = 0; i < fn->body.params.size(); ++i) fn->body.params[i]->name = d.inputs[i];
  renumber(*fn);
  Status st = verify_function(*fn);
  if (!st) return Status::error(fmt::format("{}: {}", file, st.message()));
  mod->functions.push_back(std::move(fn));
  return mod;
}

} // namespace

Result<std::unique_ptr<Module>> import_text(std::string_view text, const std::string &file,
                                            const std::string &folder) {
  return import_document(text, file, folder, nullptr);
}

Result<std::unique_ptr<Module>> import_path(const std::string &path) {
  if (path.ends_with(".tgz") || path.ends_with(".tar.gz")) {
    KILN_ASSIGN(Archive files, read_tgz(path));
    auto g = files.find("graph.nnef");
    const std::string text(g->second.begin(), g->second.end());
    return import_document(text, path + ":graph.nnef", "", &files);
  }
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
