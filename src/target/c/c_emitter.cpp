// Kernel IR -> C: the kernel, its statements and the loops over a workgroup's invocations
// (c.h says what the generated code looks like and why; c_emitter.h lists the emitter).
#include "target/c/c_emitter.h"

namespace kiln::cgen::detail {

Result<std::string> Emitter::run() {
  wg_ = k_.workgroup_size[0] * k_.workgroup_size[1] * k_.workgroup_size[2];
  line("__attribute__((visibility(\"default\"))) void KILN_FN(const kiln_cpu_dispatch *kiln_d, "
       "uint32_t kiln_first, uint32_t kiln_last) {");
  ++depth_;
  for (size_t i = 0; i < k_.buffers.size(); ++i)
    line(fmt::format("{0} *const b{1} = ({0} *)kiln_d->bindings[{1}];",
                     storage_type(k_.buffers[i].elem), i));
  // Read-only elements at constant indices, loaded once (invariant_loads_).
  struct ConstLoads : Visitor {
    using Visitor::visit;
    const Kernel &k;
    std::set<std::pair<int, int64_t>> found;
    explicit ConstLoads(const Kernel &kernel) : k(kernel) {}
    void visit(const Load *n) override {
      if (const auto *c = n->index.as<IntImm>(); c && c->value >= 0 && k.buffers[size_t(n->buffer)].readonly)
        found.insert({n->buffer, c->value});
      Visitor::visit(n);
    }
  } loads(k_);
  loads.visit(k_.body);
  for (const auto &[b, i] : loads.found) {
    const std::string name = fmt::format("kiln_c{}_{}", b, i);
    const bool boolean = k_.buffers[size_t(b)].elem == ScalarType::boolean;
    line(fmt::format("const {} {} = {}b{}[{}]{};", boolean ? "_Bool" : storage_type(k_.buffers[size_t(b)].elem),
                     name, boolean ? "(_Bool)(" : "", b, i, boolean ? " != 0)" : ""));
    line(fmt::format("(void){};", name));
    invariant_loads_[{b, i}] = name;
  }
  consts_at_ = out_.size();
  line("const uint32_t *const pc = kiln_d->push; (void)pc;");
  line("const uint32_t kiln_nx = kiln_d->groups[0], kiln_ny = kiln_d->groups[1];");
  line("(void)kiln_nx; (void)kiln_ny;");
  line("for (uint32_t kiln_w = kiln_first; kiln_w < kiln_last; ++kiln_w) {");
  ++depth_;
  line("const uint32_t wg_x = kiln_w % kiln_nx, wg_y = (kiln_w / kiln_nx) % kiln_ny, "
       "wg_z = kiln_w / kiln_nx / kiln_ny;");
  line("(void)wg_x; (void)wg_y; (void)wg_z;");
  uint64_t shared_bytes = 0;
  for (size_t i = 0; i < k_.shared.size(); ++i) {
    const SharedArray &s = k_.shared[i];
    line(fmt::format("{} s{}[{}] __attribute__((aligned(64)));", storage_type(s.elem), i,
                     s.count));
    shared_bytes += uint64_t(s.count) * uint64_t(storage_bytes(s.elem));
  }
  if (!has_barrier(k_.body)) {
    KILN_TRY(invocations({k_.body}));
  } else {
    // The uniform level evaluates loop bounds, conditions and lets as invocation 0.
    line("const uint32_t lx = 0, ly = 0, lz = 0, lid = 0; (void)lx; (void)ly; (void)lz; "
         "(void)lid;");
    KILN_TRY(uniform(k_.body));
  }
  --depth_;
  line("}");
  --depth_;
  line("}");
  if (used_) {
    used_->shared_memory_bytes = static_cast<uint32_t>(shared_bytes);
    used_->max_workgroup_invocations = wg_;
  }
  std::string consts;
  for (const auto &[value, name] : opaque_constants_)
    consts += fmt::format("  {} {} = {}; __asm__(\"\" : \"+v\"({}));\n", value.first, name,
                          value.second, name);
  out_.insert(consts_at_, consts);
  // The matrix types the kernel uses, defined once per translation unit.
  std::string types;
  for (const std::string &m : matrix_types_)
    types += fmt::format("#ifndef KILN_DEFINED_{0}\n#define KILN_DEFINED_{0}\ntypedef struct "
                         "{{ float v[{1}] __attribute__((aligned(64))); }} {0};\n#endif\n",
                         m, matrix_elems_.at(m));
  return types + out_;
}

Status Emitter::invocations(const std::vector<Stmt> &stmts) {
  const uint32_t *w = k_.workgroup_size;
  // One loop (or one constant) per axis, z outermost.
  for (int axis = 2; axis >= 0; --axis) {
    const char name = "xyz"[axis];
    if (w[axis] > 1)
      line(fmt::format("for (uint32_t l{0} = 0; l{0} < {1}u; ++l{0}) {{", name, w[axis]));
    else
      line(fmt::format("{{ const uint32_t l{0} = 0; (void)l{0};", name));
    ++depth_;
  }
  line(fmt::format("const uint32_t lid = (lz * {}u + ly) * {}u + lx; (void)lid;", w[1], w[0]));
  for (const Stmt &s : stmts) KILN_TRY(stmt(s));
  for (int axis = 0; axis < 3; ++axis) {
    --depth_;
    line("}");
  }
  return Status::ok();
}

Status Emitter::for_stmt(const For &f, Status (Emitter::*body)(const Stmt &)) {
  KILN_TRY(for_header(f));
  KILN_TRY((this->*body)(f.body));
  --depth_;
  line("}");
  return Status::ok();
}

Status Emitter::if_stmt(const If &i, Status (Emitter::*body)(const Stmt &)) {
  begin_statement({&i.cond});
  KILN_ASSIGN(std::string c, expr(i.cond));
  flush_pre();
  line(fmt::format("if ({}) {{", c));
  ++depth_;
  KILN_TRY((this->*body)(i.then_case));
  --depth_;
  if (i.else_case.defined()) {
    line("} else {");
    ++depth_;
    KILN_TRY((this->*body)(i.else_case));
    --depth_;
  }
  line("}");
  return Status::ok();
}

Status Emitter::uniform(const Stmt &s) {
  if (!has_barrier(s))
    return invocations({s});
  switch (s.kind()) {
  case StmtKind::Block: {
    line("{");
    ++depth_;
    const std::set<std::string> saved = per_invocation_;
    std::vector<Stmt> run;
    auto flush = [&]() -> Status {
      if (!run.empty()) KILN_TRY(invocations(run));
      run.clear();
      return Status::ok();
    };
    for (const Stmt &c : s.as<Block>()->stmts) {
      if (c.kind() == StmtKind::Barrier) {
        KILN_TRY(flush());
      } else if (const auto *d = c.as<DeclareVar>()) {
        // Lives across the rest of the block, barriers included: one per invocation.
        const auto *v = d->var.as<Var>();
        line(fmt::format("{} {}[{}];", value_type(d->var.value_type()), c_name("v_", v->name),
                         wg_));
        per_invocation_.insert(v->name);
        values_.insert(v->name);
        run.push_back(assign(d->var, d->init));
      } else if (has_barrier(c)) {
        KILN_TRY(flush());
        KILN_TRY(uniform(c));
      } else {
        run.push_back(c);
      }
    }
    KILN_TRY(flush());
    per_invocation_ = saved;
    --depth_;
    line("}");
    return Status::ok();
  }
  case StmtKind::For: return for_stmt(*s.as<For>(), &Emitter::uniform);
  case StmtKind::If: return if_stmt(*s.as<If>(), &Emitter::uniform);
  case StmtKind::Let: {
    const auto *l = s.as<Let>();
    const auto *v = l->var.as<Var>();
    const std::set<std::string> saved = per_invocation_;
    line("{");
    ++depth_;
    if (!varies(l->value, per_invocation_)) {
      begin_statement({&l->value});
      KILN_ASSIGN(std::string val, expr(l->value));
      flush_pre();
      per_invocation_.erase(v->name);
      line(fmt::format("const {} {} = {};", value_type(l->var.value_type()),
                       c_name("v_", v->name), val));
    } else {
      line(fmt::format("{} {}[{}];", value_type(l->var.value_type()), c_name("v_", v->name),
                       wg_));
      per_invocation_.insert(v->name);
      KILN_TRY(invocations({kir::assign(l->var, l->value)}));
    }
    const bool was_value = bind_value_var(l->var, l->value);
    KILN_TRY(uniform(l->body));
    restore_value_var(l->var, was_value);
    per_invocation_ = saved;
    --depth_;
    line("}");
    return Status::ok();
  }
  default: return unsupported(fmt::format("a barrier inside {}", to_string(s.kind())));
  }
}

Status Emitter::for_header(const For &f) {
  const auto *v = f.var.as<Var>();
  begin_statement({&f.begin, &f.extent});
  KILN_ASSIGN(std::string b, expr(f.begin));
  KILN_ASSIGN(std::string e, expr(f.extent));
  flush_pre();
  const std::string name = c_name("v_", v->name), end = temp();
  const char *t = c_type(f.var.type());
  line(fmt::format("for ({0} {1} = {2}, {3} = ({0})({1} + {4}); {1} < {3}; ++{1}) {{", t, name,
                   b, end, e));
  per_invocation_.erase(v->name);
  values_.erase(v->name); // a loop counter
  ++depth_;
  return Status::ok();
}

Status Emitter::stmt(const Stmt &s) {
  switch (s.kind()) {
  case StmtKind::Store: {
    const auto *st = s.as<Store>();
    begin_statement({&st->index, &st->value});
    KILN_ASSIGN(std::string i, expr(st->index));
    KILN_ASSIGN(std::string v, expr(st->value));
    flush_pre();
    if (k_.buffers[size_t(st->buffer)].elem == ScalarType::boolean) v = "(uint8_t)(" + v + ")";
    line(fmt::format("b{}[{}] = {};", st->buffer, i, v));
    return Status::ok();
  }
  case StmtKind::For: return for_stmt(*s.as<For>(), &Emitter::stmt);
  case StmtKind::If: return if_stmt(*s.as<If>(), &Emitter::stmt);
  case StmtKind::Let: {
    const auto *l = s.as<Let>();
    const auto *v = l->var.as<Var>();
    begin_statement({&l->value});
    KILN_ASSIGN(std::string val, expr(l->value));
    line("{");
    ++depth_;
    flush_pre();
    const bool was = per_invocation_.erase(v->name) > 0;
    line(fmt::format("const {} {} = {};", value_type(l->var.value_type()),
                     c_name("v_", v->name), val));
    const bool was_value = bind_value_var(l->var, l->value);
    KILN_TRY(stmt(l->body));
    restore_value_var(l->var, was_value);
    if (was) per_invocation_.insert(v->name);
    --depth_;
    line("}");
    return Status::ok();
  }
  case StmtKind::DeclareVar: {
    const auto *d = s.as<DeclareVar>();
    const auto *v = d->var.as<Var>();
    if (const auto *f = d->init.as<MatrixFill>(); f && !per_invocation_.count(v->name)) {
      const auto *zero = f->value.as<FloatImm>();
      if (zero && zero->value == 0 && !std::signbit(zero->value) &&
          d->var.value_type().elem == ScalarType::f32) {
        // An accumulator starting at zero is not filled: its first multiply-add writes it
        // (kiln_mma_*'s `zero`), and any other first use fills it then (zero_pending_).
        KILN_TRY(note_matrix(d->var.value_type()));
        values_.insert(v->name);
        const std::string name = c_name("v_", v->name);
        line(fmt::format("{} {}; int {}_z = 1;", value_type(d->var.value_type()), name, name));
        zero_pending_.insert(v->name);
        return Status::ok();
      }
    }
    begin_statement({&d->init});
    KILN_ASSIGN(std::string val, expr(d->init));
    flush_pre();
    // Shadows a privatised variable of the same name for the rest of this block; the
    // emitter's blocks are C blocks, so C scoping matches.
    per_invocation_.erase(v->name);
    zero_pending_.erase(v->name);
    values_.insert(v->name); // mutable: assumed to carry data (its arithmetic wraps)
    line(fmt::format("{} {} = {};", value_type(d->var.value_type()), c_name("v_", v->name),
                     val));
    return Status::ok();
  }
  case StmtKind::Assign: {
    const auto *a = s.as<Assign>();
    if (a->value.is_matrix()) {
      KILN_ASSIGN(bool done, multiply_add_in_place(*a));
      if (done) return Status::ok();
    }
    begin_statement({&a->value});
    KILN_ASSIGN(std::string val, expr(a->value));
    flush_pre();
    const std::string &name = a->var.as<Var>()->name;
    if (zero_pending_.count(name)) { // written whole: no longer to be filled
      const std::string target = c_name("v_", name);
      line(fmt::format("{} = {}; {}_z = 0;", target, val, target));
      return Status::ok();
    }
    KILN_ASSIGN(std::string target, expr(a->var));
    line(fmt::format("{} = {};", target, val));
    return Status::ok();
  }
  case StmtKind::Block: {
    line("{");
    ++depth_;
    const std::set<std::string> saved = per_invocation_;
    for (const Stmt &c : s.as<Block>()->stmts) KILN_TRY(stmt(c));
    per_invocation_ = saved;
    --depth_;
    line("}");
    return Status::ok();
  }
  case StmtKind::Barrier:
    return unsupported("a barrier outside the workgroup's uniform control flow");
  case StmtKind::StoreShared: {
    const auto *st = s.as<StoreShared>();
    begin_statement({&st->index, &st->value});
    KILN_ASSIGN(std::string i, expr(st->index));
    KILN_ASSIGN(std::string v, expr(st->value));
    flush_pre();
    const ScalarType elem = k_.shared[size_t(st->array)].elem;
    return store_lanes(fmt::format("s{}", st->array), elem, st->value.value_type(), i, v);
  }
  case StmtKind::VectorStore: {
    const auto *st = s.as<VectorStore>();
    begin_statement({&st->index, &st->value});
    KILN_ASSIGN(std::string i, expr(st->index));
    KILN_ASSIGN(std::string v, expr(st->value));
    flush_pre();
    return store_lanes(fmt::format("b{}", st->buffer), k_.buffers[size_t(st->buffer)].elem,
                       st->value.value_type(), i, v);
  }
  case StmtKind::MatrixStore: {
    const auto *st = s.as<MatrixStore>();
    KILN_ASSIGN(std::string array, matrix_memory(st->space, st->target));
    begin_statement({&st->offset, &st->stride, &st->value});
    KILN_ASSIGN(std::string off, expr(st->offset));
    KILN_ASSIGN(std::string stride, expr(st->stride));
    KILN_ASSIGN(std::string v, expr(st->value));
    flush_pre();
    const MatrixShape &m = st->value.value_type().matrix;
    const int col_major = st->layout == MatrixLayout::col_major ? 1 : 0;
    const char *sfx = suffix(matrix_elem(st->space, st->target));
    if (st->value.as<Var>()) { // a variable's array is stored as it is (no 16 KiB copy)
      line(fmt::format("kiln_mstore_{}(&{}[(uint32_t)({})], (uint32_t)({}), {}.v, {}, {}, {});",
                       sfx, array, off, stride, v, m.rows, m.cols, col_major));
      return Status::ok();
    }
    const std::string t = temp();
    line(fmt::format("{{ const {} {} = {}; kiln_mstore_{}(&{}[(uint32_t)({})], (uint32_t)({}), "
                     "{}.v, {}, {}, {}); }}",
                     value_type(st->value.value_type()), t, v, sfx, array, off, stride, t,
                     m.rows, m.cols, col_major));
    return Status::ok();
  }
  }
  return Status::ok();
}

Status Emitter::store_lanes(const std::string &array, ScalarType elem, const ValueType &t,
                            const std::string &index, const std::string &value) {
  const char *conv = elem == ScalarType::boolean ? "(uint8_t)" : "";
  if (t.lanes == 1) {
    line(fmt::format("{}[{}] = {}{};", array, index, conv, value));
    return Status::ok();
  }
  const std::string v = temp(), i = temp();
  line(fmt::format("{{ const {} {} = {}; const uint32_t {} = (uint32_t)({});",
                   value_type(t), v, value, i, index));
  for (int l = 0; l < t.lanes; ++l)
    line(fmt::format("  {}[{} + {}u] = {}{}.v[{}];", array, i, l, conv, v, l));
  line("}");
  return Status::ok();
}

} // namespace kiln::cgen::detail

namespace kiln::cgen {

Result<std::string> emit_c(const kir::Kernel &k, const kir::TargetDesc &t,
                           kir::Requirements *used) {
  (void)t;
  if (used)
    *used = kir::Requirements{};
  detail::Emitter e(k, used);
  return e.run();
}

} // namespace kiln::cgen
