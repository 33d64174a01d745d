// Kernel IR verifier: the invariants the factories cannot see because they need the kernel
// (buffer and shared-array declarations, push-constant count) or the scope of variables.
#include "kir/kir.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace kiln::kir {
namespace {

struct Binding {
  ValueType type;
  bool mutable_;
};

// Whether an expression may differ between the invocations of a subgroup: it reads a
// per-invocation builtin, a shuffled value, or a variable bound to such a value. Loads count
// as varying only through their index. Conservative (a uniform value may be reported varying).
class VaryingCheck : public Visitor {
public:
  explicit VaryingCheck(const std::set<std::string> &varying) : varying_(varying) {}
  bool found = false;
  using Visitor::visit;
  void visit(const Var *n) override { found = found || varying_.count(n->name) > 0; }
  void visit(const Builtin *n) override {
    switch (n->builtin) {
    case BuiltinKind::global_id_x:
    case BuiltinKind::global_id_y:
    case BuiltinKind::global_id_z:
    case BuiltinKind::local_id_x:
    case BuiltinKind::local_id_y:
    case BuiltinKind::local_id_z:
    case BuiltinKind::subgroup_invocation_id: found = true; return;
    case BuiltinKind::workgroup_id_x:
    case BuiltinKind::workgroup_id_y:
    case BuiltinKind::workgroup_id_z:
    case BuiltinKind::subgroup_size:
    case BuiltinKind::subgroup_id:
    case BuiltinKind::num_subgroups: return;
    }
  }
  void visit(const SubgroupShuffle *) override { found = true; }

private:
  const std::set<std::string> &varying_;
};

class Verifier : public Visitor {
public:
  explicit Verifier(const Kernel &k) : k_(k) {}
  std::string error;

  using Visitor::visit;

  void visit(const Var *n) override {
    auto it = scope_.find(n->name);
    if (it == scope_.end()) return fail(fmt::format("variable '{}' used out of scope", n->name));
    if (it->second.type != n->value_type())
      fail(fmt::format("variable '{}' used as {} but declared {}", n->name,
                       to_string(n->value_type()), to_string(it->second.type)));
  }

  void visit(const VectorLoad *n) override {
    check_buffer(n->buffer, n->type, "vector load from");
    if (ok_buffer(n->buffer) && k_.buffers[n->buffer].writeonly)
      fail(fmt::format("vector load from writeonly buffer b{}", n->buffer));
    check_lane_alignment(n->index, n->lanes);
    visit(n->index);
  }

  void visit(const VectorStore *n) override {
    check_buffer(n->buffer, n->value.type(), "vector store to");
    if (ok_buffer(n->buffer) && k_.buffers[n->buffer].readonly)
      fail(fmt::format("vector store to readonly buffer b{}", n->buffer));
    check_lane_alignment(n->index, n->value.lanes());
    visit(n->index);
    visit(n->value);
  }

  void visit(const MatrixLoad *n) override {
    check_matrix_memory(n->space, n->target, n->type, n->offset, n->stride, true);
    check_uniform("coopmat_load");
    Visitor::visit(n);
  }
  void visit(const MatrixStore *n) override {
    check_matrix_memory(n->space, n->target, n->value.type(), n->offset, n->stride, false);
    check_uniform("coopmat_store");
    Visitor::visit(n);
  }
  void visit(const SubgroupBroadcast *n) override {
    if (n->lane.defined() && is_varying(n->lane))
      fail("subgroup_broadcast lane may differ between invocations (it must be uniform)");
    Visitor::visit(n);
  }
  void visit(const MatrixMulAdd *n) override {
    check_uniform("coopmat_muladd");
    Visitor::visit(n);
  }
  void visit(const MatrixFill *n) override {
    check_uniform("coopmat_fill");
    Visitor::visit(n);
  }
  void visit(const MatrixScale *n) override {
    check_uniform("coopmat_scale");
    Visitor::visit(n);
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
    if (n->lanes > 1 && ok_shared(n->array) && k_.shared[n->array].lanes != n->lanes)
      fail(fmt::format("vector load of {} lanes from shared array s{} stored with {}", n->lanes,
                       n->array, k_.shared[n->array].lanes));
    check_lane_alignment(n->index, n->lanes);
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
    const bool divergent = is_varying(n->begin) || is_varying(n->extent);
    nonuniform_ += divergent;
    scoped(n->var, false, [&] { visit(n->body); }, divergent);
    nonuniform_ -= divergent;
  }

  void visit(const Let *n) override {
    visit(n->value);
    scoped(n->var, false, [&] { visit(n->body); }, is_varying(n->value));
  }

  void visit(const DeclareVar *n) override {
    visit(n->init);
    const Var *v = n->var.as<Var>();
    if (!bind(v->name, {v->value_type(), true})) return;
    if (is_varying(n->init)) varying_.insert(v->name);
    if (!block_decls_.empty()) block_decls_.back().push_back(v->name);
  }

  void visit(const Assign *n) override {
    visit(n->value);
    const Var *v = n->var.as<Var>();
    auto it = scope_.find(v->name);
    if (it == scope_.end()) return fail(fmt::format("assignment to undeclared '{}'", v->name));
    if (!it->second.mutable_)
      return fail(fmt::format("assignment to immutable '{}' (loop or let variable)", v->name));
    if (it->second.type != v->value_type())
      fail(fmt::format("assignment to '{}' with wrong type", v->name));
    if (is_varying(n->value) || nonuniform_ > 0) varying_.insert(v->name);
  }

  void visit(const Block *n) override {
    block_decls_.emplace_back();
    for (const Stmt &s : n->stmts) visit(s);
    for (const std::string &name : block_decls_.back()) unbind(name);
    block_decls_.pop_back();
  }

  void visit(const If *n) override {
    visit(n->cond);
    const bool divergent = is_varying(n->cond);
    nonuniform_ += divergent;
    // A DeclareVar directly in a branch (not in a Block) is scoped to that branch.
    branch(n->then_case);
    branch(n->else_case);
    nonuniform_ -= divergent;
  }

private:
  const Kernel &k_;
  std::map<std::string, Binding> scope_;
  std::vector<std::vector<std::string>> block_decls_;
  std::set<std::string> varying_; // variables that may differ between invocations
  int nonuniform_ = 0;            // depth of control flow that may diverge in a subgroup

  void unbind(const std::string &name) {
    scope_.erase(name);
    varying_.erase(name);
  }

  bool is_varying(const Expr &e) const {
    VaryingCheck c(varying_);
    c.visit(e);
    return c.found;
  }

  void check_uniform(const char *what) {
    if (nonuniform_ > 0)
      fail(fmt::format("{} in control flow that may diverge within a subgroup (cooperative-"
                       "matrix operations need uniform control flow: pad or peel instead)",
                       what));
  }

  void check_lane_alignment(const Expr &index, int lanes) {
    if (const IntImm *c = index.as<IntImm>(); c && c->value % lanes != 0)
      fail(fmt::format("vector access at index {} is not a multiple of its {} lanes", c->value,
                       lanes));
  }

  // Memory and permissions of a matrix access (alignment is the SPIR-V emitter's: Vulkan wants
  // 16-byte offsets and strides, the C backend any).
  void check_matrix_memory(MemSpace space, int target, ScalarType t, const Expr &offset,
                           const Expr &stride, bool is_load) {
    if (space == MemSpace::shared) {
      check_shared(target, t);
      if (ok_shared(target) && k_.shared[target].lanes != 1)
        fail(fmt::format("cooperative-matrix access to shared array s{} stored as vectors",
                         target));
    } else {
      check_buffer(target, t, is_load ? "coopmat_load from" : "coopmat_store to");
      const bool denied = ok_buffer(target) && (is_load ? k_.buffers[target].writeonly
                                                        : k_.buffers[target].readonly);
      if (denied)
        fail(fmt::format("coopmat_{} {} buffer b{}", is_load ? "load from" : "store to",
                         is_load ? "writeonly" : "readonly", target));
    }
    (void)offset;
    (void)stride;
  }

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

  template <class F> void scoped(const Expr &var, bool is_mutable, F body, bool varying) {
    const Var *v = var.as<Var>();
    if (!bind(v->name, {v->value_type(), is_mutable})) return;
    if (varying) varying_.insert(v->name);
    block_decls_.emplace_back();
    body();
    for (const std::string &name : block_decls_.back()) unbind(name);
    block_decls_.pop_back();
    unbind(v->name);
  }

  void branch(const Stmt &s) {
    if (!s.defined()) return;
    block_decls_.emplace_back();
    visit(s);
    for (const std::string &name : block_decls_.back()) unbind(name);
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

  bool ok_shared(int i) const { return i >= 0 && i < static_cast<int>(k_.shared.size()); }
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
  for (size_t i = 0; i < k.shared.size(); ++i) {
    const int lanes = k.shared[i].lanes;
    if ((lanes != 1 && lanes != 2 && lanes != 4) || k.shared[i].count % uint32_t(lanes) != 0 ||
        (lanes > 1 && k.shared[i].elem == ScalarType::boolean))
      return Status::error(fmt::format("shared array s{} has {} lanes for {} elements", i, lanes,
                                       k.shared[i].count));
  }
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
