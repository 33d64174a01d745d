// Kernel IR -> C (c.h says what the generated code looks like and why).
#include "target/c/c.h"
#include "target/c/c_emit_util.h"

#include "kiln/artifact/cpu_abi.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

namespace kiln::cgen {

using namespace kir;
using namespace detail;

namespace {

// ---- the emitter -----------------------------------------------------------------------------

class Emitter {
public:
  Emitter(const Kernel &k, Requirements *used) : k_(k), used_(used) {}

  Result<std::string> run() {
    wg_ = k_.workgroup_size[0] * k_.workgroup_size[1] * k_.workgroup_size[2];
    line("__attribute__((visibility(\"default\"))) void KILN_FN(const kiln_cpu_dispatch *kiln_d, "
         "uint32_t kiln_first, uint32_t kiln_last) {");
    ++depth_;
    for (size_t i = 0; i < k_.buffers.size(); ++i)
      line(fmt::format("{0} *const b{1} = ({0} *)kiln_d->bindings[{1}];",
                       storage_type(k_.buffers[i].elem), i));
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
    // The matrix types the kernel uses, defined once per translation unit.
    std::string types;
    for (const std::string &m : matrix_types_)
      types += fmt::format("#ifndef KILN_DEFINED_{0}\n#define KILN_DEFINED_{0}\ntypedef struct "
                           "{{ float v[{1}] __attribute__((aligned(64))); }} {0};\n#endif\n",
                           m, matrix_elems_.at(m));
    return types + out_;
  }

private:
  const Kernel &k_;
  Requirements *used_;
  uint32_t wg_ = 1;
  std::string out_;
  int depth_ = 0;
  int temps_ = 0;
  std::set<std::string> per_invocation_; // privatised variables: name[lid]
  // Variables that carry data values (bound to an expression that reads memory, or mutable):
  // signed integer arithmetic on them wraps explicitly (through unsigned), while arithmetic
  // of coordinates, sizes and loop counters stays plain C, where signed overflow cannot
  // happen (indices fit 31 bits) and the C compiler may treat it as affine and vectorise.
  std::set<std::string> values_;
  std::unordered_map<const ExprNode *, bool> carries_; // per statement: memo of carries_value
  // Per statement: hoisted sub-expressions and their use counts.
  std::unordered_map<const ExprNode *, int> uses_;
  std::unordered_map<const ExprNode *, std::string> hoisted_;
  std::vector<std::string> pre_;
  std::set<std::string> matrix_types_;            // C names of the matrix types used
  std::map<std::string, uint32_t> matrix_elems_; // and their element counts

  void line(const std::string &s) {
    out_.append(static_cast<size_t>(depth_) * 2, ' ');
    out_ += s;
    out_ += '\n';
  }
  std::string temp() { return fmt::format("t{}", temps_++); }

  Status unsupported(const std::string &what) const {
    return Status::error(fmt::format("kernel '{}': the cpu target does not support {}", k_.name,
                                     what));
  }

  bool carries_value(const Expr &e) { return carries_data(e, values_, carries_); }
  // Marks `var` (bound to `value`) as carrying data or not; returns whether it was before.
  bool bind_value_var(const Expr &var, const Expr &value) {
    const std::string &n = var.as<Var>()->name;
    const bool was = values_.count(n) > 0;
    if (carries_value(value)) values_.insert(n);
    else values_.erase(n);
    return was;
  }
  void restore_value_var(const Expr &var, bool was) {
    const std::string &n = var.as<Var>()->name;
    if (was) values_.insert(n);
    else values_.erase(n);
  }

  // ---- statements with expressions: bind shared sub-expressions first ----
  void begin_statement(std::initializer_list<const Expr *> exprs) {
    uses_.clear();
    hoisted_.clear();
    pre_.clear();
    carries_.clear();
    for (const Expr *e : exprs)
      if (e && e->defined()) count_uses(*e, uses_);
  }
  void flush_pre() {
    for (const std::string &s : pre_) line(s);
    pre_.clear();
  }

  // The loops over a workgroup's invocations around `stmts`.
  Status invocations(const std::vector<Stmt> &stmts) {
    const uint32_t *w = k_.workgroup_size;
    int opened = 0;
    if (w[2] > 1) {
      line(fmt::format("for (uint32_t lz = 0; lz < {}u; ++lz) {{", w[2]));
      ++depth_, ++opened;
    } else {
      line("{ const uint32_t lz = 0; (void)lz;");
      ++depth_, ++opened;
    }
    if (w[1] > 1) {
      line(fmt::format("for (uint32_t ly = 0; ly < {}u; ++ly) {{", w[1]));
      ++depth_, ++opened;
    } else {
      line("{ const uint32_t ly = 0; (void)ly;");
      ++depth_, ++opened;
    }
    if (w[0] > 1) {
      line(fmt::format("for (uint32_t lx = 0; lx < {}u; ++lx) {{", w[0]));
      ++depth_, ++opened;
    } else {
      line("{ const uint32_t lx = 0; (void)lx;");
      ++depth_, ++opened;
    }
    line(fmt::format("const uint32_t lid = (lz * {}u + ly) * {}u + lx; (void)lid;", w[1], w[0]));
    for (const Stmt &s : stmts) KILN_TRY(stmt(s));
    while (opened--) {
      --depth_;
      line("}");
    }
    return Status::ok();
  }

  // A statement that contains a barrier, at the workgroup's uniform level.
  Status uniform(const Stmt &s) {
    if (!has_barrier(s)) return invocations({s});
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
    case StmtKind::For: {
      const auto *f = s.as<For>();
      KILN_TRY(for_header(*f));
      KILN_TRY(uniform(f->body));
      --depth_;
      line("}");
      return Status::ok();
    }
    case StmtKind::If: {
      const auto *i = s.as<If>();
      begin_statement({&i->cond});
      KILN_ASSIGN(std::string c, expr(i->cond));
      flush_pre();
      line(fmt::format("if ({}) {{", c));
      ++depth_;
      KILN_TRY(uniform(i->then_case));
      --depth_;
      if (i->else_case.defined()) {
        line("} else {");
        ++depth_;
        KILN_TRY(uniform(i->else_case));
        --depth_;
      }
      line("}");
      return Status::ok();
    }
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

  Status for_header(const For &f) {
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

  // A statement inside the invocation loops.
  Status stmt(const Stmt &s) {
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
    case StmtKind::For: {
      const auto *f = s.as<For>();
      KILN_TRY(for_header(*f));
      KILN_TRY(stmt(f->body));
      --depth_;
      line("}");
      return Status::ok();
    }
    case StmtKind::If: {
      const auto *i = s.as<If>();
      begin_statement({&i->cond});
      KILN_ASSIGN(std::string c, expr(i->cond));
      flush_pre();
      line(fmt::format("if ({}) {{", c));
      ++depth_;
      KILN_TRY(stmt(i->then_case));
      --depth_;
      if (i->else_case.defined()) {
        line("} else {");
        ++depth_;
        KILN_TRY(stmt(i->else_case));
        --depth_;
      }
      line("}");
      return Status::ok();
    }
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
      begin_statement({&d->init});
      KILN_ASSIGN(std::string val, expr(d->init));
      flush_pre();
      // Shadows a privatised variable of the same name for the rest of this block; the
      // emitter's blocks are C blocks, so C scoping matches.
      per_invocation_.erase(v->name);
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

  // ---- cooperative matrices: f32 arrays the (only) invocation of the subgroup owns ----
  // f16 matrices (A and B of an f16 product) are f32 arrays too: every f16 value is an f32
  // one and so is every product of two, so the sums are those of an f32 product.
  Status note_matrix(const ValueType &t) {
    if (t.elem != ScalarType::f32 && t.elem != ScalarType::f16)
      return unsupported(fmt::format("cooperative matrices of {}", to_string(t.elem)));
    const std::string name = value_type(t);
    matrix_types_.insert(name);
    matrix_elems_[name] = t.matrix.rows * t.matrix.cols;
    return Status::ok();
  }

  ScalarType matrix_elem(MemSpace space, int target) const {
    return space == MemSpace::buffer ? k_.buffers[size_t(target)].elem
                                     : k_.shared[size_t(target)].elem;
  }

  // The C array behind a matrix load or store (buffers and shared arrays of f32 or f16).
  Result<std::string> matrix_memory(MemSpace space, int target) {
    const ScalarType elem = matrix_elem(space, target);
    if (elem != ScalarType::f32 && elem != ScalarType::f16)
      return unsupported(fmt::format("cooperative-matrix access to {} memory", to_string(elem)));
    return fmt::format("{}{}", space == MemSpace::buffer ? "b" : "s", target);
  }

  // A matrix load of the given layout as (pointer, stride) for the multiply-add fast path;
  // empty when `e` is not one.
  Result<std::pair<std::string, std::string>> memory_operand(const Expr &e, MatrixLayout layout) {
    const auto *l = e.as<MatrixLoad>();
    if (!l || l->layout != layout || matrix_elem(l->space, l->target) != ScalarType::f32)
      return std::pair<std::string, std::string>{};
    KILN_ASSIGN(std::string array, matrix_memory(l->space, l->target));
    KILN_ASSIGN(std::string off, expr(l->offset));
    KILN_ASSIGN(std::string stride, expr(l->stride));
    return std::pair{fmt::format("&{}[(uint32_t)({})]", array, off),
                     fmt::format("(uint32_t)({})", stride)};
  }

  // `acc = a * b + acc` with a row- or column-major load of a and a row-major load of b, or a
  // row-major a and a column-major b:
  // multiplied in place from memory, no copies. False when the statement has another form.
  Result<bool> multiply_add_in_place(const Assign &a) {
    const auto *mma = a.value.as<MatrixMulAdd>();
    const auto *acc = mma ? mma->c.as<Var>() : nullptr;
    if (!acc || acc->name != a.var.as<Var>()->name) return false;
    begin_statement({&mma->a, &mma->b});
    KILN_ASSIGN(auto pa, memory_operand(mma->a, MatrixLayout::row_major));
    const bool a_col_major = pa.first.empty();
    if (a_col_major) {
      KILN_ASSIGN(pa, memory_operand(mma->a, MatrixLayout::col_major));
      if (pa.first.empty()) return false;
    }
    KILN_ASSIGN(auto pb, memory_operand(mma->b, MatrixLayout::row_major));
    const bool transposed = pb.first.empty();
    if (transposed) {
      if (a_col_major) return false;
      KILN_ASSIGN(pb, memory_operand(mma->b, MatrixLayout::col_major));
      if (pb.first.empty()) return false;
    }
    KILN_TRY(note_matrix(mma->a.value_type()));
    KILN_TRY(note_matrix(mma->b.value_type()));
    KILN_ASSIGN(std::string c, expr(a.var));
    flush_pre();
    const MatrixShape &ma = mma->a.value_type().matrix, &mc = a.var.value_type().matrix;
    line(fmt::format("kiln_mma_f32{}({}.v, {}, {}, {}, {}, {}, {}, {});",
                     transposed ? "_bt" : a_col_major ? "_acm" : "",
                     c, pa.first, pa.second, pb.first, pb.second, mc.rows, mc.cols, ma.cols));
    return true;
  }

  // Elementwise on matrices of one shape: `body` computes r.v[i] from x.v[i] (and y.v[i]).
  std::string matrix_map(const ValueType &t, const std::string &x, const std::string &y,
                         const std::string &body) {
    const std::string tx = temp(), ty = temp(), r = temp(), i = temp();
    std::string s = fmt::format("({{ const {0} {1} = {2}; ", value_type(t), tx, x);
    if (!y.empty()) s += fmt::format("const {} {} = {}; ", value_type(t), ty, y);
    s += fmt::format("{0} {1}; for (uint32_t {2} = 0; {2} < {3}u; ++{2}) {1}.v[{2}] = ", value_type(t),
                     r, i, t.matrix.rows * t.matrix.cols);
    std::string b = body;
    for (auto [from, to] : {std::pair<std::string, std::string>{"X", tx + ".v[" + i + "]"},
                            {"Y", ty + ".v[" + i + "]"}}) {
      for (size_t p = b.find(from); p != std::string::npos; p = b.find(from, p + to.size()))
        b.replace(p, from.size(), to);
    }
    return s + b + "; " + r + "; })";
  }

  Status store_lanes(const std::string &array, ScalarType elem, const ValueType &t,
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

  // ---- expressions ----
  Result<std::string> expr(const Expr &e) {
    if (e.is_matrix()) KILN_TRY(note_matrix(e.value_type()));
    auto it = hoisted_.find(e.get());
    if (it != hoisted_.end()) return it->second;
    KILN_ASSIGN(std::string text, node(e));
    auto u = uses_.find(e.get());
    if (u != uses_.end() && u->second > 1 && !trivial(e) && !e.is_matrix() && !reads_memory(e)) {
      const std::string t = temp();
      pre_.push_back(fmt::format("const {} {} = {};", value_type(e.value_type()), t, text));
      hoisted_.emplace(e.get(), t);
      return t;
    }
    return text;
  }

  // Applies `scalar` (which writes the operation on scalar operand texts) lane by lane when
  // the result is a vector.
  template <class F>
  Result<std::string> lanewise(const ValueType &result, const std::vector<Expr> &operands,
                               F scalar) {
    std::vector<std::string> texts;
    for (const Expr &o : operands) {
      KILN_ASSIGN(std::string t, expr(o));
      texts.push_back(std::move(t));
    }
    if (result.lanes == 1) {
      bool any_vector = false;
      for (const Expr &o : operands) any_vector = any_vector || o.is_vector();
      if (!any_vector) {
        std::vector<ScalarType> types;
        for (const Expr &o : operands) types.push_back(o.type());
        return scalar(texts, types);
      }
    }
    std::string s = "({ ";
    std::vector<std::string> names;
    for (size_t i = 0; i < operands.size(); ++i) {
      names.push_back(temp());
      s += fmt::format("const {} {} = {}; ", value_type(operands[i].value_type()), names.back(),
                       texts[i]);
    }
    const std::string r = temp();
    s += fmt::format("{} {}; ", value_type(result), r);
    for (int l = 0; l < result.lanes; ++l) {
      std::vector<std::string> lane;
      std::vector<ScalarType> types;
      for (size_t i = 0; i < operands.size(); ++i) {
        lane.push_back(operands[i].is_vector() ? fmt::format("{}.v[{}]", names[i], l) : names[i]);
        types.push_back(operands[i].type());
      }
      KILN_ASSIGN(std::string v, scalar(lane, types));
      s += fmt::format("{}.v[{}] = {}; ", r, l, v);
    }
    return s + r + "; })";
  }

  Result<std::string> node(const Expr &e) {
    switch (e.kind()) {
    case ExprKind::IntImm: return int_literal(e.type(), e.as<IntImm>()->value);
    case ExprKind::FloatImm: return float_literal(e.type(), e.as<FloatImm>()->value);
    case ExprKind::Var: {
      const auto *v = e.as<Var>();
      const std::string n = c_name("v_", v->name);
      return per_invocation_.count(v->name) ? n + "[lid]" : n;
    }
    case ExprKind::Binary: {
      const auto *b = e.as<Binary>();
      if (e.is_matrix()) {
        const char *op = b->op == BinOp::add   ? "+"
                         : b->op == BinOp::sub ? "-"
                         : b->op == BinOp::mul ? "*"
                         : b->op == BinOp::div ? "/"
                                               : nullptr;
        if (!op) return unsupported(fmt::format("{} on cooperative matrices", to_string(b->op)));
        KILN_ASSIGN(std::string x, expr(b->a));
        KILN_ASSIGN(std::string y, expr(b->b));
        return matrix_map(e.value_type(), x, y, fmt::format("X {} Y", op));
      }
      const BinOp op = b->op;
      const bool wrap = (e.type() == ScalarType::i32 || e.type() == ScalarType::i64) &&
                        (op == BinOp::add || op == BinOp::sub || op == BinOp::mul) &&
                        carries_value(e);
      return lanewise(e.value_type(), {b->a, b->b},
                      [op, wrap](const std::vector<std::string> &x, const std::vector<ScalarType> &t)
                          -> Result<std::string> {
                        return wrap ? binary_wrapping(op, t[0], x[0], x[1])
                                    : binary_scalar(op, t[0], x[0], x[1]);
                      });
    }
    case ExprKind::Cmp: {
      const auto *c = e.as<Cmp>();
      const char *op = cmp_op(c->op);
      return lanewise(e.value_type(), {c->a, c->b},
                      [op](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> {
                        return fmt::format("((_Bool)({} {} {}))", x[0], op, x[1]);
                      });
    }
    case ExprKind::And: {
      const auto *a = e.as<And>();
      return lanewise(e.value_type(), {a->a, a->b},
                      [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> {
                        return fmt::format("((_Bool)({} && {}))", x[0], x[1]);
                      });
    }
    case ExprKind::Or: {
      const auto *o = e.as<Or>();
      return lanewise(e.value_type(), {o->a, o->b},
                      [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> {
                        return fmt::format("((_Bool)({} || {}))", x[0], x[1]);
                      });
    }
    case ExprKind::Not: {
      const auto *n = e.as<Not>();
      return lanewise(e.value_type(), {n->a},
                      [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> { return fmt::format("((_Bool)!{})", x[0]); });
    }
    case ExprKind::Select: {
      const auto *s = e.as<Select>();
      if (e.is_matrix()) return unsupported("cooperative matrices");
      if (s->cond.is_scalar()) { // only the chosen side is evaluated: guarded loads stay safe
        KILN_ASSIGN(std::string c, expr(s->cond));
        KILN_ASSIGN(std::string t, expr(s->t));
        KILN_ASSIGN(std::string f, expr(s->f));
        return fmt::format("({} ? {} : {})", c, t, f);
      }
      return lanewise(e.value_type(), {s->cond, s->t, s->f},
                      [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> {
                        return fmt::format("({} ? {} : {})", x[0], x[1], x[2]);
                      });
    }
    case ExprKind::Cast: {
      const auto *c = e.as<Cast>();
      if (e.is_matrix()) return expr(c->value); // f32 -> f32: the only matrix component type
      const ScalarType to = e.type();
      return lanewise(e.value_type(), {c->value},
                      [to](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                          -> Result<std::string> {
                        if (to == ScalarType::boolean)
                          return fmt::format("((_Bool)({} != 0))", x[0]);
                        return fmt::format("(({}){})", c_type(to), x[0]);
                      });
    }
    case ExprKind::Call: {
      const auto *c = e.as<Call>();
      const Intrinsic fn = c->fn;
      return lanewise(e.value_type(), c->args,
                      [fn](const std::vector<std::string> &x,
                           const std::vector<ScalarType> &t) -> Result<std::string> {
                        return intrinsic_scalar(fn, t[0], x);
                      });
    }
    case ExprKind::Load: {
      const auto *l = e.as<Load>();
      KILN_ASSIGN(std::string i, expr(l->index));
      if (k_.buffers[size_t(l->buffer)].elem == ScalarType::boolean)
        return fmt::format("((_Bool)(b{}[{}] != 0))", l->buffer, i);
      return fmt::format("b{}[{}]", l->buffer, i);
    }
    case ExprKind::Builtin: return builtin_text(e.as<Builtin>()->builtin, k_.workgroup_size);
    case ExprKind::PushConst: return fmt::format("pc[{}]", e.as<PushConst>()->slot);
    case ExprKind::LoadShared: {
      const auto *l = e.as<LoadShared>();
      KILN_ASSIGN(std::string i, expr(l->index));
      return load_lanes(fmt::format("s{}", l->array), k_.shared[size_t(l->array)].elem,
                        e.value_type(), i);
    }
    case ExprKind::VectorLoad: {
      const auto *l = e.as<VectorLoad>();
      KILN_ASSIGN(std::string i, expr(l->index));
      return load_lanes(fmt::format("b{}", l->buffer), k_.buffers[size_t(l->buffer)].elem,
                        e.value_type(), i);
    }
    case ExprKind::Broadcast: {
      KILN_ASSIGN(std::string v, expr(e.as<Broadcast>()->value));
      const std::string t = temp(), r = temp();
      std::string s = fmt::format("({{ const {} {} = {}; {} {}; ", c_type(e.type()), t, v,
                                  value_type(e.value_type()), r);
      for (int l = 0; l < e.lanes(); ++l) s += fmt::format("{}.v[{}] = {}; ", r, l, t);
      return s + r + "; })";
    }
    case ExprKind::ExtractLane: {
      const auto *x = e.as<ExtractLane>();
      KILN_ASSIGN(std::string v, expr(x->vector));
      return fmt::format("({}).v[{}]", v, x->lane);
    }
    case ExprKind::MakeVector: {
      std::string s = fmt::format("(({}){{ .v = {{", value_type(e.value_type()));
      for (const Expr &x : e.as<MakeVector>()->elems) {
        KILN_ASSIGN(std::string v, expr(x));
        s += v + ", ";
      }
      return s + "} })";
    }
    // One invocation per subgroup: every combination is the value itself.
    case ExprKind::SubgroupReduce: return expr(e.as<SubgroupReduce>()->value);
    case ExprKind::SubgroupBroadcast: return expr(e.as<SubgroupBroadcast>()->value);
    case ExprKind::SubgroupShuffle: return expr(e.as<SubgroupShuffle>()->value);
    case ExprKind::MatrixLoad: {
      const auto *l = e.as<MatrixLoad>();
      KILN_ASSIGN(std::string array, matrix_memory(l->space, l->target));
      KILN_ASSIGN(std::string off, expr(l->offset));
      KILN_ASSIGN(std::string stride, expr(l->stride));
      const MatrixShape &m = e.value_type().matrix;
      const std::string r = temp();
      return fmt::format("({{ {0} {1}; kiln_mload_{8}({1}.v, &{2}[(uint32_t)({3})], "
                         "(uint32_t)({4}), {5}, {6}, {7}); {1}; }})",
                         value_type(e.value_type()), r, array, off, stride, m.rows, m.cols,
                         l->layout == MatrixLayout::col_major ? 1 : 0,
                         suffix(matrix_elem(l->space, l->target)));
    }
    case ExprKind::MatrixMulAdd: {
      const auto *m = e.as<MatrixMulAdd>();
      KILN_ASSIGN(std::string a, expr(m->a));
      KILN_ASSIGN(std::string b, expr(m->b));
      KILN_ASSIGN(std::string c, expr(m->c));
      const MatrixShape &ma = m->a.value_type().matrix, &mc = e.value_type().matrix;
      const std::string ta = temp(), tb = temp(), r = temp();
      return fmt::format("({{ const {0} {1} = {2}; const {3} {4} = {5}; {6} {7} = {8}; "
                         "kiln_mma_f32({7}.v, {1}.v, {9}, {4}.v, {10}, {11}, {10}, {9}); {7}; }})",
                         value_type(m->a.value_type()), ta, a, value_type(m->b.value_type()), tb,
                         b, value_type(e.value_type()), r, c, ma.cols, mc.cols, mc.rows);
    }
    case ExprKind::MatrixFill: {
      KILN_ASSIGN(std::string v, expr(e.as<MatrixFill>()->value));
      const std::string t = temp(), r = temp(), i = temp();
      return fmt::format("({{ const float {0} = {1}; {2} {3}; for (uint32_t {4} = 0; {4} < {5}u; "
                         "++{4}) {3}.v[{4}] = {0}; {3}; }})",
                         t, v, value_type(e.value_type()), r, i,
                         e.value_type().matrix.rows * e.value_type().matrix.cols);
    }
    case ExprKind::MatrixScale: {
      const auto *m = e.as<MatrixScale>();
      KILN_ASSIGN(std::string x, expr(m->value));
      KILN_ASSIGN(std::string f, expr(m->scale));
      const std::string t = temp();
      pre_.push_back(fmt::format("const float {} = {};", t, f));
      return matrix_map(e.value_type(), x, "", "X * " + t);
    }
    case ExprKind::MatrixLength: {
      const ValueType &of = e.as<MatrixLength>()->of;
      return fmt::format("{}u", of.matrix.rows * of.matrix.cols);
    }
    }
    return unsupported("an unknown node");
  }

  Result<std::string> load_lanes(const std::string &array, ScalarType elem, const ValueType &t,
                                 const std::string &index) {
    const bool boolean = elem == ScalarType::boolean;
    if (t.lanes == 1)
      return boolean ? fmt::format("((_Bool)({}[{}] != 0))", array, index)
                     : fmt::format("{}[{}]", array, index);
    const std::string i = temp(), r = temp();
    std::string s = fmt::format("({{ const uint32_t {} = (uint32_t)({}); {} {}; ", i, index,
                                value_type(t), r);
    for (int l = 0; l < t.lanes; ++l)
      s += boolean ? fmt::format("{}.v[{}] = ({}[{} + {}u] != 0); ", r, l, array, i, l)
                   : fmt::format("{}.v[{}] = {}[{} + {}u]; ", r, l, array, i, l);
    return s + r + "; })";
  }
};

} // namespace

Result<std::string> emit_c(const Kernel &k, const TargetDesc &t, Requirements *used) {
  (void)t;
  if (used) *used = Requirements{};
  Emitter e(k, used);
  return e.run();
}

} // namespace kiln::cgen
