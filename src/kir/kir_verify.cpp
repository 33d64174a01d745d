// Kernel IR verifier: the invariants the factories cannot see because they need the kernel
// (buffer and shared-array declarations, push-constant count) or the scope of variables.
#include "kir/kir.h"

#include <fmt/format.h>

#include <map>

namespace kiln::kir {
namespace {

struct Binding {
  ScalarType type;
  bool mutable_;
};

class Verifier : public Visitor {
public:
  explicit Verifier(const Kernel &k) : k_(k) {}
  std::string error;

  using Visitor::visit;

  void visit(const Var *n) override {
    auto it = scope_.find(n->name);
    if (it == scope_.end()) return fail(fmt::format("variable '{}' used out of scope", n->name));
    if (it->second.type != n->type)
      fail(fmt::format("variable '{}' used as {} but declared {}", n->name, to_string(n->type),
                       to_string(it->second.type)));
  }

  void visit(const Load *n) override {
    check_buffer(n->buffer, n->type, "load from");
    if (ok_buffer(n->buffer) && k_.buffers[n->buffer].writeonly)
      fail(fmt::format("load from writeonly buffer b{}", n->buffer));
    visit(n->index);
  }

  void visit(const PushConst *n) override {
    if (n->slot >= static_cast<int>(k_.push_constant_count))
      fail(fmt::format("push constant slot {} out of range ({} slots)", n->slot,
                       k_.push_constant_count));
  }

  void visit(const LoadShared *n) override {
    check_shared(n->array, n->type);
    visit(n->index);
  }

  void visit(const Store *n) override {
    check_buffer(n->buffer, n->value.type(), "store to");
    if (ok_buffer(n->buffer) && k_.buffers[n->buffer].readonly)
      fail(fmt::format("store to readonly buffer b{}", n->buffer));
    visit(n->index);
    visit(n->value);
  }

  void visit(const StoreShared *n) override {
    check_shared(n->array, n->value.type());
    visit(n->index);
    visit(n->value);
  }

  void visit(const For *n) override {
    visit(n->begin);
    visit(n->extent);
    scoped(n->var, false, [&] { visit(n->body); });
  }

  void visit(const Let *n) override {
    visit(n->value);
    scoped(n->var, false, [&] { visit(n->body); });
  }

  void visit(const DeclareVar *n) override {
    visit(n->init);
    const Var *v = n->var.as<Var>();
    if (!bind(v->name, {v->type, true})) return;
    if (!block_decls_.empty()) block_decls_.back().push_back(v->name);
  }

  void visit(const Assign *n) override {
    visit(n->value);
    const Var *v = n->var.as<Var>();
    auto it = scope_.find(v->name);
    if (it == scope_.end()) return fail(fmt::format("assignment to undeclared '{}'", v->name));
    if (!it->second.mutable_)
      return fail(fmt::format("assignment to immutable '{}' (loop or let variable)", v->name));
    if (it->second.type != v->type) fail(fmt::format("assignment to '{}' with wrong type", v->name));
  }

  void visit(const Block *n) override {
    block_decls_.emplace_back();
    for (const Stmt &s : n->stmts) visit(s);
    for (const std::string &name : block_decls_.back()) scope_.erase(name);
    block_decls_.pop_back();
  }

  void visit(const If *n) override {
    visit(n->cond);
    // A DeclareVar directly in a branch (not in a Block) is scoped to that branch.
    branch(n->then_case);
    branch(n->else_case);
  }

private:
  const Kernel &k_;
  std::map<std::string, Binding> scope_;
  std::vector<std::vector<std::string>> block_decls_;

  void fail(std::string msg) {
    if (error.empty()) error = std::move(msg);
  }

  bool bind(const std::string &name, Binding b) {
    if (scope_.count(name)) {
      fail(fmt::format("variable '{}' redeclared while in scope", name));
      return false;
    }
    scope_[name] = b;
    return true;
  }

  template <class F> void scoped(const Expr &var, bool is_mutable, F body) {
    const Var *v = var.as<Var>();
    if (!bind(v->name, {v->type, is_mutable})) return;
    block_decls_.emplace_back();
    body();
    for (const std::string &name : block_decls_.back()) scope_.erase(name);
    block_decls_.pop_back();
    scope_.erase(v->name);
  }

  void branch(const Stmt &s) {
    if (!s.defined()) return;
    block_decls_.emplace_back();
    visit(s);
    for (const std::string &name : block_decls_.back()) scope_.erase(name);
    block_decls_.pop_back();
  }

  bool ok_buffer(int i) const { return i >= 0 && i < static_cast<int>(k_.buffers.size()); }

  void check_buffer(int i, ScalarType t, const char *what) {
    if (!ok_buffer(i))
      return fail(fmt::format("{} buffer b{}: the kernel has {} buffers", what, i,
                              k_.buffers.size()));
    if (k_.buffers[i].elem != t)
      fail(fmt::format("{} buffer b{} ({}) with type {}", what, i, to_string(k_.buffers[i].elem),
                       to_string(t)));
  }

  void check_shared(int i, ScalarType t) {
    if (i < 0 || i >= static_cast<int>(k_.shared.size()))
      return fail(fmt::format("shared array s{} out of range ({} arrays)", i, k_.shared.size()));
    if (k_.shared[i].elem != t)
      fail(fmt::format("shared array s{} ({}) accessed as {}", i, to_string(k_.shared[i].elem),
                       to_string(t)));
  }
};

Status verify_header(const Kernel &k) {
  for (int d = 0; d < 3; ++d)
    if (k.workgroup_size[d] == 0) return Status::error("workgroup size must be positive");
  for (size_t i = 0; i < k.buffers.size(); ++i)
    if (k.buffers[i].readonly && k.buffers[i].writeonly)
      return Status::error(fmt::format("buffer b{} is both readonly and writeonly", i));
  for (size_t i = 0; i < k.shared.size(); ++i)
    if (k.shared[i].count == 0)
      return Status::error(fmt::format("shared array s{} has no elements", i));
  if (!k.body.defined()) return Status::error("kernel has no body");
  return Status::ok();
}

} // namespace

Status verify(const Kernel &k) {
  Status s = verify_header(k);
  if (!s.is_ok()) return s.with_context("kernel '" + k.name + "'");
  Verifier v(k);
  v.visit(k.body);
  if (!v.error.empty()) return Status::error("kernel '" + k.name + "': " + v.error);
  return Status::ok();
}

} // namespace kiln::kir
