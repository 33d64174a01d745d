// The kernel-IR text parser's class, shared by kir_parser.cpp (kernels and statements) and
// kir_parse_expr.cpp (expressions). Internal to src/kir.
#pragma once

#include "kir/kir_lexer.h"
#include "kir/kir_parser.h"

#include <charconv>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::kir::text {

inline constexpr int kMaxDepth = 1000; // nested expressions and statements

template <class E, E Last> std::optional<E> enum_named(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(Last); ++i)
    if (s == to_string(static_cast<E>(i))) return static_cast<E>(i);
  return std::nullopt;
}
inline std::optional<ScalarType> type_named(std::string_view s) {
  return enum_named<ScalarType, ScalarType::f64>(s);
}
inline std::optional<Intrinsic> intrinsic_named(std::string_view s) {
  return enum_named<Intrinsic, Intrinsic::div_exact>(s);
}
inline std::optional<BuiltinKind> builtin_named(std::string_view s) {
  return enum_named<BuiltinKind, BuiltinKind::num_subgroups>(s);
}
inline std::optional<ReduceOp> reduce_op_named(std::string_view s) {
  return enum_named<ReduceOp, ReduceOp::max>(s);
}
inline std::optional<MatrixUse> matrix_use_named(std::string_view s) {
  return enum_named<MatrixUse, MatrixUse::accumulator>(s);
}
inline std::optional<MatrixLayout> matrix_layout_named(std::string_view s) {
  return enum_named<MatrixLayout, MatrixLayout::col_major>(s);
}
// "f32x4" (a scalar type, 'x', 2..4 lanes); nullopt for other words.
inline std::optional<ValueType> vector_type_named(std::string_view s) {
  const size_t x = s.rfind('x');
  if (x == std::string_view::npos || x + 2 != s.size() || s[x + 1] < '2' || s[x + 1] > '4')
    return std::nullopt;
  auto t = enum_named<ScalarType, ScalarType::f64>(s.substr(0, x));
  if (!t) return std::nullopt;
  return ValueType::vector(*t, s[x + 1] - '0');
}
inline std::string type_string(const Expr &e) { return to_string(e.value_type()); }
inline std::optional<BinOp> binop_named(std::string_view s) {
  return enum_named<BinOp, BinOp::shr>(s);
}
inline std::optional<CmpOp> cmpop_named(std::string_view s) {
  return enum_named<CmpOp, CmpOp::ge>(s);
}

// The index of a reference "<prefix>N" (b0, s12); nullopt for other words.
inline std::optional<int> ref_index(std::string_view s, char prefix) {
  if (s.size() < 2 || s.size() > 10 || s[0] != prefix) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !is_digit_char(s[1])) return std::nullopt;
  return v;
}

inline bool is_infix_binop(BinOp op) { return op != BinOp::min && op != BinOp::max && op != BinOp::pow; }

inline bool is_index_type(ScalarType t) { return t == ScalarType::i32 || t == ScalarType::u32; }

// A body of one statement that is not a Block is that statement; else a Block.
inline Stmt body_of(std::vector<Stmt> stmts) {
  if (stmts.size() == 1 && !stmts[0].as<Block>()) return stmts[0];
  return block(std::move(stmts));
}

class Parser {
public:
  Parser(std::string_view src, std::string_view file) : lex_(src), file_(file) { bump(); }

  Result<std::vector<Kernel>> kernels() {
    std::vector<Kernel> out;
    while (cur_.kind != Tok::eof) {
      KILN_ASSIGN(Kernel k, kernel());
      out.push_back(std::move(k));
    }
    return out;
  }

private:
  text::Lexer lex_;
  std::string_view file_;
  Token cur_;
  Kernel *k_ = nullptr;
  std::vector<std::pair<std::string, ValueType>> scope_;
  int depth_ = 0;

  // ---- tokens and errors ----
  void bump() { cur_ = lex_.next(); }
  bool at(std::string_view p) const {
    return (cur_.kind == Tok::punct || cur_.kind == Tok::ident) && cur_.text == p;
  }
  Status error(const Token &t, const std::string &msg) const {
    return Status::error(fmt::format("{}:{}:{}: {}", file_, t.line, t.col, msg));
  }
  Status expected(const std::string &what) const {
    if (cur_.kind == Tok::error) return error(cur_, cur_.text);
    if (cur_.kind == Tok::eof) return error(cur_, fmt::format("expected {}, got end of input", what));
    std::string got = cur_.kind == Tok::string ? "\"" + cur_.text + "\"" : cur_.text;
    return error(cur_, fmt::format("expected {}, got '{}'", what, got));
  }
  Status expect(std::string_view p) {
    if (!at(p)) return expected(fmt::format("'{}'", p));
    bump();
    return Status::ok();
  }
  // Guards recursion depth (hostile nesting must not overflow the stack).
  struct DepthGuard {
    int &d;
    explicit DepthGuard(int &depth) : d(++depth) {}
    ~DepthGuard() { --d; }
  };
  Status check_depth() const {
    if (depth_ > kMaxDepth) return error(cur_, fmt::format("nesting deeper than {}", kMaxDepth));
    return Status::ok();
  }

  // ---- names, types, numbers ----
  // A variable name, or with `label` a kernel/buffer/shared name (reserved words allowed).
  Result<std::string> name(const char *what, bool label = false) {
    if (cur_.kind == Tok::string) {
      if (cur_.text.empty()) return error(cur_, fmt::format("empty {}", what));
    } else if (cur_.kind != Tok::ident || (!label && is_reserved_word(cur_.text))) {
      return expected(what);
    }
    std::string n = cur_.text;
    bump();
    return n;
  }
  Result<ScalarType> type() {
    if (cur_.kind == Tok::ident)
      if (auto t = type_named(cur_.text)) {
        bump();
        return *t;
      }
    return expected("a type");
  }
  // A scalar, vector (f32x4) or cooperative-matrix (coopmat<f16, 16x16, a>) type.
  Result<ValueType> value_type();
  // '<' matrix type arguments '>' (elem ',' RxC ',' use), the brackets included.
  Result<ValueType> matrix_type_args();
  Result<ValueType> angle_type(); // '<' value type '>'
  Result<uint32_t> u32_number(const char *what) {
    uint32_t v = 0;
    const std::string &s = cur_.text;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (cur_.kind != Tok::number || ec != std::errc() || end != s.data() + s.size())
      return expected(what);
    bump();
    return v;
  }
  // A reference bI / sI of `prefix`, at the current token.
  Result<int> ref(char prefix, const char *what) {
    std::optional<int> i;
    if (cur_.kind == Tok::ident) i = ref_index(cur_.text, prefix);
    if (!i) return expected(what);
    bump();
    return *i;
  }

  // ---- kernels ----
  Result<Kernel> kernel();
  Status buffer_decl(Kernel &k);
  Status shared_decl(Kernel &k);

  // ---- statements ----
  Result<std::vector<Stmt>> items();
  Result<Stmt> braced();
  Result<Stmt> statement();
  Result<Stmt> for_stmt();
  Result<Stmt> if_stmt();
  Result<Stmt> let_stmt(bool &rest_is_body);
  Result<Stmt> var_stmt();
  Result<Stmt> barrier_stmt();
  Result<Stmt> store_stmt(char prefix);
  Result<Stmt> assign_stmt();
  Result<Stmt> vstore_stmt();
  Result<Stmt> coopmat_store_stmt();
  Result<Expr> decl();
  Status bind(const Expr &v) {
    scope_.emplace_back(v.as<Var>()->name, v.value_type());
    return Status::ok();
  }

  // ---- expressions ----
  Result<Expr> expr();
  Result<Expr> typed_expr(const char *what, const std::function<bool(ScalarType)> &ok,
                          const char *need);
  Result<Expr> literal();
  Result<Expr> int_literal(const Token &t, std::string_view digits, ScalarType ty);
  Result<Expr> float_literal(const Token &t, std::string_view digits, ScalarType ty);
  Result<Expr> infix();
  Result<Expr> word();
  Result<Expr> var_ref();
  Result<Expr> cast_expr(const ValueType &t);
  Result<Expr> vector_expr(const std::string &w);
  Result<Expr> subgroup_expr(const std::string &w);
  Result<Expr> coopmat_expr(const std::string &w);
  Result<Expr> coopmat_load_expr();
  Status coopmat_ref(MemSpace &space, int &target, ScalarType &elem);
  // The shared part of coopmat_load / coopmat_store: `<M>(ref, offset, stride, layout`, the
  // memory reference checked against the matrix's element type.
  struct MatrixAccess {
    ValueType type;
    MemSpace space = MemSpace::buffer;
    int target = 0;
    Expr offset, stride;
    MatrixLayout layout{};
  };
  Result<MatrixAccess> matrix_access();
  Result<Expr> index_arg(const char *what);
  Result<Expr> call_expr(Intrinsic fn);
  Result<Expr> binary_call(BinOp op);
  Result<Expr> binary_call_checked(const Token &at_op, BinOp op, Expr a, Expr b);
  Result<Expr> select_expr();
  Result<Expr> load_expr(char prefix);
  Result<Expr> push_const_expr();
  Result<std::vector<Expr>> args(size_t n);
};

} // namespace kiln::kir::text
