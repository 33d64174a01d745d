// Kernel IR printer: a readable text form for dumps, tests and error messages.
#include "kir/kir.h"

#include <fmt/format.h>

namespace kiln::kir {
namespace {

std::string print_int(const IntImm *n) {
  switch (n->type) {
  case ScalarType::boolean: return n->value ? "true" : "false";
  case ScalarType::i32: return std::to_string(n->value);
  case ScalarType::u32: return std::to_string(n->value) + "u";
  case ScalarType::u64: return fmt::format("u64({})", static_cast<uint64_t>(n->value));
  case ScalarType::i8:
  case ScalarType::u8:
  case ScalarType::i16:
  case ScalarType::u16:
  case ScalarType::i64:
  case ScalarType::f16:
  case ScalarType::f32:
  case ScalarType::f64: break;
  }
  return fmt::format("{}({})", to_string(n->type), n->value);
}

std::string print_float(const FloatImm *n) {
  std::string v = fmt::format("{}", n->value);
  if (v.find_first_of(".eni") == std::string::npos) v += ".0";
  if (n->type == ScalarType::f32) return v + "f";
  if (n->type == ScalarType::f64) return v;
  return fmt::format("{}({})", to_string(n->type), v);
}

std::string infix(const char *op, const Expr &a, const Expr &b) {
  return fmt::format("({} {} {})", print(a), op, print(b));
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

std::string args_list(const std::vector<Expr> &args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + print(args[i]);
  return s;
}

class ExprPrinter {
public:
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
  std::string print_node(const IntImm *n) { return print_int(n); }
  std::string print_node(const FloatImm *n) { return print_float(n); }
  std::string print_node(const Var *n) { return n->name; }
  std::string print_node(const Binary *n) {
    if (is_infix(n->op)) return infix(to_string(n->op), n->a, n->b);
    return fmt::format("{}({}, {})", to_string(n->op), print(n->a), print(n->b));
  }
  std::string print_node(const Cmp *n) { return infix(to_string(n->op), n->a, n->b); }
  std::string print_node(const And *n) { return infix("&&", n->a, n->b); }
  std::string print_node(const Or *n) { return infix("||", n->a, n->b); }
  std::string print_node(const Not *n) { return "!" + print(n->a); }
  std::string print_node(const Select *n) {
    return fmt::format("select({}, {}, {})", print(n->cond), print(n->t), print(n->f));
  }
  std::string print_node(const Cast *n) {
    return fmt::format("{}({})", to_string(n->value_type()), print(n->value));
  }
  std::string print_node(const Call *n) {
    return fmt::format("{}({})", to_string(n->fn), args_list(n->args));
  }
  std::string print_node(const Load *n) {
    return fmt::format("b{}[{}]", n->buffer, print(n->index));
  }
  std::string print_node(const Builtin *n) { return to_string(n->builtin); }
  std::string print_node(const PushConst *n) { return fmt::format("pc[{}]", n->slot); }
  std::string print_node(const LoadShared *n) {
    return fmt::format("s{}[{}]", n->array, print(n->index));
  }
  std::string print_node(const VectorLoad *n) {
    return fmt::format("vload<{}>(b{}, {})", to_string(n->value_type()), n->buffer,
                       print(n->index));
  }
  std::string print_node(const Broadcast *n) {
    return fmt::format("broadcast<{}>({})", to_string(n->value_type()), print(n->value));
  }
  std::string print_node(const ExtractLane *n) {
    return fmt::format("extract_lane<{}>({}, {})", to_string(n->type), print(n->vector),
                       n->lane);
  }
  std::string print_node(const MakeVector *n) {
    return fmt::format("make_vector<{}>({})", to_string(n->value_type()), args_list(n->elems));
  }
  std::string print_node(const SubgroupReduce *n) {
    return fmt::format("subgroup_reduce<{}, {}>({})", to_string(n->op),
                       to_string(n->value_type()), print(n->value));
  }
  std::string print_node(const SubgroupBroadcast *n) {
    if (!n->lane.defined())
      return fmt::format("subgroup_broadcast_first<{}>({})", to_string(n->value_type()),
                         print(n->value));
    return fmt::format("subgroup_broadcast<{}>({}, {})", to_string(n->value_type()),
                       print(n->value), print(n->lane));
  }
  std::string print_node(const SubgroupShuffle *n) {
    return fmt::format("{}<{}>({}, {})",
                       n->mode == ShuffleMode::index ? "subgroup_shuffle" : "subgroup_shuffle_xor",
                       to_string(n->value_type()), print(n->value), print(n->lane));
  }
  std::string print_node(const MatrixLoad *n) {
    return fmt::format("coopmat_load<{}>({}, {}, {}, {})", matrix_args(n->value_type()),
                       space_ref(n->space, n->target), print(n->offset), print(n->stride),
                       to_string(n->layout));
  }
  std::string print_node(const MatrixMulAdd *n) {
    return fmt::format("coopmat_muladd<{}>({}, {}, {})", matrix_args(n->value_type()),
                       print(n->a), print(n->b), print(n->c));
  }
  std::string print_node(const MatrixFill *n) {
    return fmt::format("coopmat_fill<{}>({})", matrix_args(n->value_type()), print(n->value));
  }
  std::string print_node(const MatrixScale *n) {
    return fmt::format("coopmat_scale<{}>({}, {})", matrix_args(n->value_type()),
                       print(n->value), print(n->scale));
  }
  std::string print_node(const MatrixLength *n) {
    return fmt::format("coopmat_length<{}>()", matrix_args(n->of));
  }
};

class StmtPrinter {
public:
  explicit StmtPrinter(int indent) : indent_(indent) {}
  std::string out;

  void run(const Stmt &s) {
    if (!s.defined()) return;
    switch (s.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case StmtKind::K: print_node(s.as<K>()); return;
      KILN_KIR_STMT_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
    }
  }

private:
  int indent_;

  void line(const std::string &text) { out += std::string(indent_ * 2, ' ') + text + "\n"; }
  void nested(const Stmt &s) {
    ++indent_;
    run(s);
    --indent_;
  }
  static std::string decl(const Expr &v) {
    return fmt::format("{}: {}", print(v), to_string(v.value_type()));
  }

  void print_node(const Store *n) {
    line(fmt::format("b{}[{}] = {}", n->buffer, print(n->index), print(n->value)));
  }
  void print_node(const For *n) {
    line(fmt::format("for ({}, {}, {}) {{", decl(n->var), print(n->begin), print(n->extent)));
    nested(n->body);
    line("}");
  }
  void print_node(const If *n) {
    line(fmt::format("if ({}) {{", print(n->cond)));
    nested(n->then_case);
    if (n->else_case.defined()) {
      line("} else {");
      nested(n->else_case);
    }
    line("}");
  }
  void print_node(const Let *n) {
    line(fmt::format("let {} = {}", decl(n->var), print(n->value)));
    run(n->body);
  }
  void print_node(const DeclareVar *n) {
    line(fmt::format("var {} = {}", decl(n->var), print(n->init)));
  }
  void print_node(const Assign *n) {
    line(fmt::format("{} = {}", print(n->var), print(n->value)));
  }
  void print_node(const Block *n) {
    for (const Stmt &s : n->stmts) run(s);
  }
  void print_node(const Barrier *) { line("barrier()"); }
  void print_node(const StoreShared *n) {
    line(fmt::format("s{}[{}] = {}", n->array, print(n->index), print(n->value)));
  }
  void print_node(const VectorStore *n) {
    line(fmt::format("vstore<{}>(b{}, {}, {})", to_string(n->value.value_type()), n->buffer,
                     print(n->index), print(n->value)));
  }
  void print_node(const MatrixStore *n) {
    line(fmt::format("coopmat_store<{}>({}, {}, {}, {}, {})",
                     matrix_args(n->value.value_type()), space_ref(n->space, n->target),
                     print(n->offset), print(n->stride), to_string(n->layout),
                     print(n->value)));
  }
};

} // namespace

std::string print(const Expr &e) { return ExprPrinter().run(e); }

std::string print(const Stmt &s, int indent) {
  StmtPrinter p(indent);
  p.run(s);
  return p.out;
}

std::string print(const Kernel &k) {
  std::string out = fmt::format("kernel {} workgroup({}, {}, {}) push_constants {}\n", k.name,
                                k.workgroup_size[0], k.workgroup_size[1], k.workgroup_size[2],
                                k.push_constant_count);
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const BufferParam &b = k.buffers[i];
    out += fmt::format("  buffer b{} {}: {}{}{}\n", i, b.name, to_string(b.elem),
                       b.readonly ? " readonly" : "", b.writeonly ? " writeonly" : "");
  }
  for (size_t i = 0; i < k.shared.size(); ++i) {
    const SharedArray &s = k.shared[i];
    out += fmt::format("  shared s{} {}: {}[{}]\n", i, s.name, to_string(s.elem), s.count);
  }
  out += "{\n" + print(k.body, 1) + "}\n";
  return out;
}

} // namespace kiln::kir
