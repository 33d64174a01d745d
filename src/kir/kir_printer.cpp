// Kernel IR printer: the text form (kir_parser.h has its grammar). print(Kernel) writes text
// that parses back: a variable's or load's type is left out only where the enclosing binding
// or buffer declaration gives it. print(Expr) and print(Stmt) alone have no such context and
// leave those types out (dumps and error messages).
#include "kir/kir.h"
#include "kir/kir_parser.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

namespace kiln::kir {
namespace {

std::string print_int(const IntImm *n) {
  switch (n->type) {
  case ScalarType::boolean: return n->value ? "true" : "false";
  case ScalarType::i32: return std::to_string(n->value);
  case ScalarType::u32: return std::to_string(n->value) + "u";
  case ScalarType::u64: return fmt::format("{}:u64", static_cast<uint64_t>(n->value));
  case ScalarType::i8:
  case ScalarType::u8:
  case ScalarType::i16:
  case ScalarType::u16:
  case ScalarType::i64:
  case ScalarType::f16:
  case ScalarType::f32:
  case ScalarType::f64: break;
  }
  return fmt::format("{}:{}", n->value, to_string(n->type));
}

// Shortest text that reads back as the same value: f32 and f16 values (exact in a float)
// print as floats, f64 as doubles.
std::string print_float(const FloatImm *n) {
  const char *type = to_string(n->type);
  if (std::isnan(n->value)) return fmt::format("nan:{}", type);
  if (std::isinf(n->value)) return fmt::format("{}inf:{}", n->value < 0 ? "-" : "", type);
  std::string v = n->type == ScalarType::f64 ? fmt::format("{}", n->value)
                                             : fmt::format("{}", static_cast<float>(n->value));
  if (v.find_first_of(".e") == std::string::npos) v += ".0";
  if (n->type == ScalarType::f32) return v + "f";
  if (n->type == ScalarType::f64) return v;
  return fmt::format("{}:{}", v, type);
}

bool is_infix(BinOp op) { return op != BinOp::min && op != BinOp::max && op != BinOp::pow; }

// "f16, 16x16, a": the type arguments of the cooperative-matrix keywords.
std::string matrix_args(const ValueType &t) {
  return fmt::format("{}, {}x{}, {}", to_string(t.elem), t.matrix.rows, t.matrix.cols,
                     to_string(t.matrix.use));
}

std::string space_ref(MemSpace space, int target) {
  return fmt::format("{}{}", space == MemSpace::buffer ? "b" : "s", target);
}


// Variables in scope while printing a kernel (innermost last).
using Scope = std::vector<std::pair<std::string, ValueType>>;

class ExprPrinter {
public:
  // With a kernel and scope, types are written where they are not implied; without, never.
  ExprPrinter(const Kernel *k, const Scope *scope) : k_(k), scope_(scope) {}

  std::string run(const Expr &e) {
    if (!e.defined()) return "<undefined>";
    switch (e.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case ExprKind::K: return print_node(e.as<K>());
      KILN_KIR_EXPR_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
    }
    return "?";
  }

private:
  const Kernel *k_;
  const Scope *scope_;

  std::string infix(const char *op, const Expr &a, const Expr &b) {
    return fmt::format("({} {} {})", run(a), op, run(b));
  }
  std::string args(const std::vector<Expr> &es) {
    std::string s;
    for (size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + run(es[i]);
    return s;
  }
  bool implied_var_type(const Var *n) const {
    if (!scope_) return true;
    for (auto it = scope_->rbegin(); it != scope_->rend(); ++it)
      if (it->first == n->name) return it->second == n->value_type();
    return false;
  }
  template <class Decls> std::string ref(char prefix, int i, ScalarType t, const Decls &decls) {
    if (!k_ || (i >= 0 && i < static_cast<int>(decls.size()) && decls[i].elem == t))
      return fmt::format("{}{}", prefix, i);
    return fmt::format("{}{}:{}", prefix, i, to_string(t));
  }

  std::string print_node(const IntImm *n) { return print_int(n); }
  std::string print_node(const FloatImm *n) { return print_float(n); }
  std::string print_node(const Var *n) {
    std::string name = format_name(n->name);
    return implied_var_type(n) ? name : fmt::format("{}:{}", name, to_string(n->value_type()));
  }
  std::string print_node(const Binary *n) {
    if (is_infix(n->op)) return infix(to_string(n->op), n->a, n->b);
    return fmt::format("{}({}, {})", to_string(n->op), run(n->a), run(n->b));
  }
  std::string print_node(const Cmp *n) { return infix(to_string(n->op), n->a, n->b); }
  std::string print_node(const And *n) { return infix("&&", n->a, n->b); }
  std::string print_node(const Or *n) { return infix("||", n->a, n->b); }
  std::string print_node(const Not *n) { return "!" + run(n->a); }
  std::string print_node(const Select *n) {
    return fmt::format("select({}, {}, {})", run(n->cond), run(n->t), run(n->f));
  }
  std::string print_node(const Cast *n) {
    return fmt::format("{}({})", to_string(n->value_type()), run(n->value));
  }
  std::string print_node(const Call *n) {
    return fmt::format("{}({})", to_string(n->fn), args(n->args));
  }
  std::string print_node(const Load *n) {
    const std::vector<BufferParam> none;
    return fmt::format("{}[{}]", ref('b', n->buffer, n->type, k_ ? k_->buffers : none),
                       run(n->index));
  }
  std::string print_node(const Builtin *n) { return to_string(n->builtin); }
  std::string print_node(const PushConst *n) { return fmt::format("pc[{}]", n->slot); }
  std::string print_node(const LoadShared *n) {
    if (n->lanes > 1)
      return fmt::format("vload<{}>(s{}, {})", to_string(n->value_type()), n->array,
                         run(n->index));
    const std::vector<SharedArray> none;
    return fmt::format("{}[{}]", ref('s', n->array, n->type, k_ ? k_->shared : none),
                       run(n->index));
  }
  std::string print_node(const VectorLoad *n) {
    return fmt::format("vload<{}>(b{}, {})", to_string(n->value_type()), n->buffer,
                       run(n->index));
  }
  std::string print_node(const Broadcast *n) {
    return fmt::format("broadcast<{}>({})", to_string(n->value_type()), run(n->value));
  }
  std::string print_node(const ExtractLane *n) {
    return fmt::format("extract_lane<{}>({}, {})", to_string(n->type), run(n->vector),
                       n->lane);
  }
  std::string print_node(const MakeVector *n) {
    return fmt::format("make_vector<{}>({})", to_string(n->value_type()), args(n->elems));
  }
  std::string print_node(const SubgroupReduce *n) {
    return fmt::format("subgroup_reduce<{}, {}>({})", to_string(n->op),
                       to_string(n->value_type()), run(n->value));
  }
  std::string print_node(const SubgroupBroadcast *n) {
    if (!n->lane.defined())
      return fmt::format("subgroup_broadcast_first<{}>({})", to_string(n->value_type()),
                         run(n->value));
    return fmt::format("subgroup_broadcast<{}>({}, {})", to_string(n->value_type()),
                       run(n->value), run(n->lane));
  }
  std::string print_node(const SubgroupShuffle *n) {
    return fmt::format("{}<{}>({}, {})",
                       n->mode == ShuffleMode::index ? "subgroup_shuffle" : "subgroup_shuffle_xor",
                       to_string(n->value_type()), run(n->value), run(n->lane));
  }
  std::string print_node(const MatrixLoad *n) {
    return fmt::format("coopmat_load<{}>({}, {}, {}, {})", matrix_args(n->value_type()),
                       space_ref(n->space, n->target), run(n->offset), run(n->stride),
                       to_string(n->layout));
  }
  std::string print_node(const MatrixMulAdd *n) {
    return fmt::format("coopmat_muladd<{}>({}, {}, {})", matrix_args(n->value_type()),
                       run(n->a), run(n->b), run(n->c));
  }
  std::string print_node(const MatrixFill *n) {
    return fmt::format("coopmat_fill<{}>({})", matrix_args(n->value_type()), run(n->value));
  }
  std::string print_node(const MatrixScale *n) {
    return fmt::format("coopmat_scale<{}>({}, {})", matrix_args(n->value_type()),
                       run(n->value), run(n->scale));
  }
  std::string print_node(const MatrixLength *n) {
    return fmt::format("coopmat_length<{}>()", matrix_args(n->of));
  }
};

// Prints statements as lists between braces. A Block is printed as its statements (a Block
// nested directly in a list as '{ ... }'); scopes follow the printed braces, as the parser's do.
class StmtPrinter {
public:
  StmtPrinter(const Kernel *k, int indent) : k_(k), indent_(indent) {}
  std::string out;

  // `s` as the statements of one brace-delimited list.
  void list(const Stmt &s) {
    if (const Block *b = s.as<Block>()) {
      items(b->stmts);
    } else if (s.defined()) {
      items({s});
    }
  }

private:
  const Kernel *k_;
  int indent_;
  Scope scope_;

  std::string expr(const Expr &e) { return ExprPrinter(k_, k_ ? &scope_ : nullptr).run(e); }
  void line(const std::string &text) { out += std::string(indent_ * 2, ' ') + text + "\n"; }
  void nested(const Stmt &s) {
    ++indent_;
    list(s);
    --indent_;
  }
  static std::string decl(const Expr &v) {
    return fmt::format("{}: {}", format_name(v.as<Var>()->name), to_string(v.value_type()));
  }
  void bind(const Expr &v) { scope_.emplace_back(v.as<Var>()->name, v.value_type()); }

  void items(const std::vector<Stmt> &stmts) {
    const size_t depth = scope_.size();
    for (size_t i = 0; i < stmts.size(); ++i) item(stmts[i], i + 1 == stmts.size());
    scope_.resize(depth);
  }
  void item(const Stmt &s, bool last) {
    switch (s.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case StmtKind::K: print_node(s.as<K>(), last); return;
      KILN_KIR_STMT_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
    }
  }

  void print_node(const Store *n, bool) {
    line(fmt::format("b{}[{}] = {}", n->buffer, expr(n->index), expr(n->value)));
  }
  void print_node(const For *n, bool) {
    line(fmt::format("for ({}, {}, {}) {{", decl(n->var), expr(n->begin), expr(n->extent)));
    bind(n->var);
    nested(n->body);
    scope_.pop_back();
    line("}");
  }
  void print_node(const If *n, bool) {
    line(fmt::format("if ({}) {{", expr(n->cond)));
    nested(n->then_case);
    if (n->else_case.defined()) {
      line("} else {");
      nested(n->else_case);
    }
    line("}");
  }
  // The last statement of a list: its body is the rest of the list, unbraced.
  void print_node(const Let *n, bool last) {
    std::string value = expr(n->value);
    bind(n->var);
    if (last) {
      line(fmt::format("let {} = {}", decl(n->var), value));
      list(n->body);
    } else {
      line(fmt::format("let ({} = {}) {{", decl(n->var), value));
      nested(n->body);
      line("}");
    }
    scope_.pop_back();
  }
  void print_node(const DeclareVar *n, bool) {
    line(fmt::format("var {} = {}", decl(n->var), expr(n->init)));
    bind(n->var);
  }
  void print_node(const Assign *n, bool) {
    line(fmt::format("{} = {}", expr(n->var), expr(n->value)));
  }
  void print_node(const Block *n, bool) {
    line("{");
    ++indent_;
    items(n->stmts);
    --indent_;
    line("}");
  }
  void print_node(const Barrier *, bool) { line("barrier()"); }
  void print_node(const StoreShared *n, bool) {
    line(fmt::format("s{}[{}] = {}", n->array, expr(n->index), expr(n->value)));
  }
  void print_node(const VectorStore *n, bool) {
    line(fmt::format("vstore<{}>(b{}, {}, {})", to_string(n->value.value_type()), n->buffer,
                     expr(n->index), expr(n->value)));
  }
  void print_node(const MatrixStore *n, bool) {
    line(fmt::format("coopmat_store<{}>({}, {}, {}, {}, {})",
                     matrix_args(n->value.value_type()), space_ref(n->space, n->target),
                     expr(n->offset), expr(n->stride), to_string(n->layout),
                     expr(n->value)));
  }
};

} // namespace

std::string print(const Expr &e) { return ExprPrinter(nullptr, nullptr).run(e); }

std::string print(const Stmt &s, int indent) {
  StmtPrinter p(nullptr, indent);
  p.list(s);
  return p.out;
}

std::string print(const Kernel &k) {
  std::string out = fmt::format("kernel {} workgroup({}, {}, {}) push_constants {}\n",
                                format_label(k.name), k.workgroup_size[0], k.workgroup_size[1],
                                k.workgroup_size[2], k.push_constant_count);
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const BufferParam &b = k.buffers[i];
    out += fmt::format("  buffer b{} {}: {}{}{}\n", i, format_label(b.name), to_string(b.elem),
                       b.readonly ? " readonly" : "", b.writeonly ? " writeonly" : "");
  }
  for (size_t i = 0; i < k.shared.size(); ++i) {
    const SharedArray &s = k.shared[i];
    out += fmt::format("  shared s{} {}: {}[{}]{}\n", i, format_label(s.name), to_string(s.elem),
                       s.count, s.lanes > 1 ? fmt::format(" lanes {}", s.lanes) : "");
  }
  StmtPrinter p(&k, 1);
  p.list(k.body);
  return out + "{\n" + p.out + "}\n";
}

Status check_round_trip(const Kernel &k) {
  const std::string first = print(k);
  auto parsed = parse_kernel(first, "<printed kernel>");
  if (!parsed)
    return Status::error(fmt::format("printed kernel does not parse back: {}\n{}",
                                     parsed.status().message(), first));
  const std::string second = print(*parsed);
  if (first == second) return Status::ok();
  size_t line = 1, pos = 0;
  while (pos < first.size() && pos < second.size() && first[pos] == second[pos])
    if (first[pos++] == '\n') ++line;
  auto line_at = [&](const std::string &s) {
    size_t b = s.rfind('\n', pos == 0 ? 0 : pos - 1);
    b = b == std::string::npos || pos == 0 ? 0 : b + 1;
    return s.substr(b, s.find('\n', b) - b);
  };
  return Status::error(fmt::format("printed kernel reads back differently at line {}: '{}' "
                                   "became '{}'",
                                   line, line_at(first), line_at(second)));
}

} // namespace kiln::kir
