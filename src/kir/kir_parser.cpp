// Parser of the kernel-IR text form (grammar in kir_parser.h). Recursive descent with one
// token of lookahead; the first error stops parsing. Every operand is checked against the
// rules of the node factories before one is called, so ill-typed text is an error message,
// never an assertion. One function per statement or expression form, chosen by the keyword
// or reference the printer writes: a new node kind adds a keyword and a function.
#include "kir/kir_parser.h"
#include "kir/kir_lexer.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <utility>

namespace kiln::kir {

namespace {

using text::Tok;
using text::Token;

constexpr int kMaxDepth = 1000; // nested expressions and statements

template <class E, E Last> std::optional<E> enum_named(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(Last); ++i)
    if (s == to_string(static_cast<E>(i))) return static_cast<E>(i);
  return std::nullopt;
}
std::optional<ScalarType> type_named(std::string_view s) {
  return enum_named<ScalarType, ScalarType::f64>(s);
}
std::optional<Intrinsic> intrinsic_named(std::string_view s) {
  return enum_named<Intrinsic, Intrinsic::isinf>(s);
}
std::optional<BuiltinKind> builtin_named(std::string_view s) {
  return enum_named<BuiltinKind, BuiltinKind::workgroup_id_z>(s);
}
std::optional<BinOp> binop_named(std::string_view s) {
  return enum_named<BinOp, BinOp::shr>(s);
}
std::optional<CmpOp> cmpop_named(std::string_view s) {
  return enum_named<CmpOp, CmpOp::ge>(s);
}

// The index of a reference "<prefix>N" (b0, s12); nullopt for other words.
std::optional<int> ref_index(std::string_view s, char prefix) {
  if (s.size() < 2 || s.size() > 10 || s[0] != prefix) return std::nullopt;
  int v = 0;
  auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !is_digit_char(s[1])) return std::nullopt;
  return v;
}

bool is_infix_binop(BinOp op) { return op != BinOp::min && op != BinOp::max && op != BinOp::pow; }

bool is_index_type(ScalarType t) { return t == ScalarType::i32 || t == ScalarType::u32; }

// A body of one statement that is not a Block is that statement; else a Block.
Stmt body_of(std::vector<Stmt> stmts) {
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
  std::vector<std::pair<std::string, ScalarType>> scope_;
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
  Result<Expr> decl();
  Status bind(const Expr &v) {
    scope_.emplace_back(v.as<Var>()->name, v.type());
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
  Result<Expr> cast_expr(ScalarType t);
  Result<Expr> call_expr(Intrinsic fn);
  Result<Expr> binary_call(BinOp op);
  Result<Expr> binary_call_checked(const Token &at_op, BinOp op, Expr a, Expr b);
  Result<Expr> select_expr();
  Result<Expr> load_expr(char prefix);
  Result<Expr> push_const_expr();
  Result<std::vector<Expr>> args(size_t n);
};

// ---- kernels ----

Result<Kernel> Parser::kernel() {
  Kernel k;
  KILN_TRY(expect("kernel"));
  KILN_ASSIGN(k.name, name("a kernel name", true));
  KILN_TRY(expect("workgroup"));
  KILN_TRY(expect("("));
  for (int i = 0; i < 3; ++i) {
    if (i) KILN_TRY(expect(","));
    KILN_ASSIGN(k.workgroup_size[i], u32_number("a workgroup size"));
  }
  KILN_TRY(expect(")"));
  KILN_TRY(expect("push_constants"));
  KILN_ASSIGN(k.push_constant_count, u32_number("a push-constant count"));
  for (;;) {
    if (at("buffer")) {
      KILN_TRY(buffer_decl(k));
    } else if (at("shared")) {
      KILN_TRY(shared_decl(k));
    } else {
      break;
    }
  }
  k_ = &k;
  scope_.clear();
  auto body = braced();
  k_ = nullptr;
  if (!body) return body.status();
  k.body = std::move(*body);
  return k;
}

Status Parser::buffer_decl(Kernel &k) {
  bump();
  const Token at_ref = cur_;
  KILN_ASSIGN(int i, ref('b', "a buffer reference bN"));
  if (i != static_cast<int>(k.buffers.size()))
    return error(at_ref, fmt::format("expected buffer b{}, got b{}", k.buffers.size(), i));
  BufferParam b;
  KILN_ASSIGN(b.name, name("a buffer name", true));
  KILN_TRY(expect(":"));
  KILN_ASSIGN(b.elem, type());
  if (at("readonly")) {
    b.readonly = true;
    bump();
  }
  if (at("writeonly")) {
    b.writeonly = true;
    bump();
  }
  k.buffers.push_back(std::move(b));
  return Status::ok();
}

Status Parser::shared_decl(Kernel &k) {
  bump();
  const Token at_ref = cur_;
  KILN_ASSIGN(int i, ref('s', "a shared array reference sN"));
  if (i != static_cast<int>(k.shared.size()))
    return error(at_ref, fmt::format("expected shared array s{}, got s{}", k.shared.size(), i));
  SharedArray s;
  KILN_ASSIGN(s.name, name("a shared array name", true));
  KILN_TRY(expect(":"));
  KILN_ASSIGN(s.elem, type());
  KILN_TRY(expect("["));
  KILN_ASSIGN(s.count, u32_number("an element count"));
  KILN_TRY(expect("]"));
  k.shared.push_back(std::move(s));
  return Status::ok();
}

// ---- statements ----

// Statements up to (not including) the closing '}'. Variables declared here go out of scope
// at the end; an unbraced `let` takes the rest of the list as its body.
Result<std::vector<Stmt>> Parser::items() {
  const size_t depth = scope_.size();
  std::vector<Stmt> out;
  while (!at("}")) {
    if (cur_.kind == Tok::eof) return expected("'}'");
    bool rest_is_body = false;
    auto s = at("let") ? let_stmt(rest_is_body) : statement();
    if (!s) return s.status();
    out.push_back(std::move(*s));
    if (rest_is_body) break;
  }
  scope_.resize(depth);
  return out;
}

Result<Stmt> Parser::braced() {
  DepthGuard g(depth_);
  KILN_TRY(check_depth());
  KILN_TRY(expect("{"));
  KILN_ASSIGN(std::vector<Stmt> stmts, items());
  KILN_TRY(expect("}"));
  return body_of(std::move(stmts));
}

Result<Stmt> Parser::statement() {
  DepthGuard g(depth_);
  KILN_TRY(check_depth());
  if (at("for")) return for_stmt();
  if (at("if")) return if_stmt();
  if (at("var")) return var_stmt();
  if (at("barrier")) return barrier_stmt();
  if (at("{")) {
    bump();
    KILN_ASSIGN(std::vector<Stmt> stmts, items());
    KILN_TRY(expect("}"));
    return block(std::move(stmts));
  }
  if (cur_.kind == Tok::ident && ref_index(cur_.text, 'b')) return store_stmt('b');
  if (cur_.kind == Tok::ident && ref_index(cur_.text, 's')) return store_stmt('s');
  if (cur_.kind == Tok::string || (cur_.kind == Tok::ident && !is_reserved_word(cur_.text)))
    return assign_stmt();
  return expected("a statement");
}

// name ':' type, a new variable (bound by the caller).
Result<Expr> Parser::decl() {
  KILN_ASSIGN(std::string n, name("a variable name"));
  KILN_TRY(expect(":"));
  KILN_ASSIGN(ScalarType t, type());
  return var(std::move(n), t);
}

Result<Stmt> Parser::for_stmt() {
  bump();
  KILN_TRY(expect("("));
  const Token at_var = cur_;
  KILN_ASSIGN(Expr v, decl());
  if (!is_index_type(v.type()))
    return error(at_var, fmt::format("loop variable must be i32 or u32, not {}",
                                     to_string(v.type())));
  auto bound = [&](const char *what) -> Result<Expr> {
    KILN_TRY(expect(","));
    const Token at_e = cur_;
    KILN_ASSIGN(Expr e, expr());
    if (e.type() != v.type())
      return error(at_e, fmt::format("loop {} has type {}, the variable {}", what,
                                     to_string(e.type()), to_string(v.type())));
    return e;
  };
  KILN_ASSIGN(Expr begin, bound("begin"));
  KILN_ASSIGN(Expr extent, bound("extent"));
  KILN_TRY(expect(")"));
  const size_t depth = scope_.size();
  KILN_TRY(bind(v));
  auto body = braced();
  scope_.resize(depth);
  if (!body) return body.status();
  return for_loop(v, begin, extent, *body);
}

Result<Stmt> Parser::if_stmt() {
  bump();
  KILN_TRY(expect("("));
  const Token at_cond = cur_;
  KILN_ASSIGN(Expr cond, expr());
  if (cond.type() != ScalarType::boolean)
    return error(at_cond, fmt::format("if condition must be bool, not {}", to_string(cond.type())));
  KILN_TRY(expect(")"));
  KILN_ASSIGN(Stmt then_case, braced());
  Stmt else_case;
  if (at("else")) {
    bump();
    KILN_ASSIGN(else_case, braced());
  }
  return if_then(cond, then_case, else_case);
}

// let x: T = v <rest of the list>   or   let (x: T = v) { ... }
Result<Stmt> Parser::let_stmt(bool &rest_is_body) {
  DepthGuard g(depth_);
  KILN_TRY(check_depth());
  bump();
  const bool braces = at("(");
  if (braces) bump();
  KILN_ASSIGN(Expr v, decl());
  KILN_TRY(expect("="));
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (value.type() != v.type())
    return error(at_value, fmt::format("let value has type {}, the variable {}",
                                       to_string(value.type()), to_string(v.type())));
  const size_t depth = scope_.size();
  KILN_TRY(bind(v));
  Result<Stmt> body = Status::error("");
  if (braces) {
    KILN_TRY(expect(")"));
    body = braced();
  } else {
    rest_is_body = true;
    auto rest = items();
    if (rest) body = body_of(std::move(*rest));
    else body = rest.status();
  }
  scope_.resize(depth);
  if (!body) return body.status();
  return let(v, value, *body);
}

Result<Stmt> Parser::var_stmt() {
  bump();
  KILN_ASSIGN(Expr v, decl());
  KILN_TRY(expect("="));
  const Token at_init = cur_;
  KILN_ASSIGN(Expr init, expr());
  if (init.type() != v.type())
    return error(at_init, fmt::format("var initial value has type {}, the variable {}",
                                      to_string(init.type()), to_string(v.type())));
  KILN_TRY(bind(v));
  return declare_var(v, init);
}

Result<Stmt> Parser::barrier_stmt() {
  bump();
  KILN_TRY(expect("("));
  KILN_TRY(expect(")"));
  return barrier();
}

// bI[index] = value   or   sI[index] = value
Result<Stmt> Parser::store_stmt(char prefix) {
  KILN_ASSIGN(int i, ref(prefix, "a reference"));
  KILN_TRY(expect("["));
  KILN_ASSIGN(Expr index, typed_expr("index", is_index_type, "i32 or u32"));
  KILN_TRY(expect("]"));
  KILN_TRY(expect("="));
  KILN_ASSIGN(Expr value, expr());
  return prefix == 'b' ? store(i, index, value) : store_shared(i, index, value);
}

Result<Stmt> Parser::assign_stmt() {
  KILN_ASSIGN(Expr v, var_ref());
  KILN_TRY(expect("="));
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (value.type() != v.type())
    return error(at_value, fmt::format("assigned value has type {}, the variable {}",
                                       to_string(value.type()), to_string(v.type())));
  return assign(v, value);
}

// ---- expressions ----

Result<Expr> Parser::expr() {
  DepthGuard g(depth_);
  KILN_TRY(check_depth());
  if (cur_.kind == Tok::number) return literal();
  if (at("(")) return infix();
  if (at("!")) {
    bump();
    const Token at_a = cur_;
    KILN_ASSIGN(Expr a, expr());
    if (a.type() != ScalarType::boolean)
      return error(at_a, fmt::format("'!' needs a bool operand, not {}", to_string(a.type())));
    return logical_not(a);
  }
  if (cur_.kind == Tok::string) return var_ref();
  if (cur_.kind == Tok::ident) return word();
  return expected("an expression");
}

// An expression whose type must satisfy `ok` (`need` names the allowed types).
Result<Expr> Parser::typed_expr(const char *what, const std::function<bool(ScalarType)> &ok,
                                const char *need) {
  const Token at_e = cur_;
  KILN_ASSIGN(Expr e, expr());
  if (!ok(e.type()))
    return error(at_e, fmt::format("{} must be {}, not {}", what, need, to_string(e.type())));
  return e;
}

// 5 (i32), 5u (u32), 1.5f (f32), 1.5 / 1e3 (f64), or VALUE ':' type.
Result<Expr> Parser::literal() {
  const Token t = cur_;
  bump();
  std::string_view s = t.text;
  size_t end = s.size();
  while (end > 0 && is_alpha_char(s[end - 1]) && s != "-inf") --end;
  std::string_view digits = s.substr(0, end), suffix = s.substr(end);
  const bool has_point = digits.find_first_of(".eE") != std::string_view::npos || s == "-inf";
  if (!suffix.empty() && suffix != "u" && suffix != "f")
    return error(t, fmt::format("invalid suffix '{}' on number '{}'", suffix, s));
  if (at(":")) {
    if (!suffix.empty())
      return error(cur_, fmt::format("number '{}' has a suffix and a type", s));
    bump();
    KILN_ASSIGN(ScalarType ty, type());
    if (is_float(ty)) return float_literal(t, digits, ty);
    if (has_point) return error(t, fmt::format("'{}' is not an integer", s));
    if (ty == ScalarType::boolean) return error(t, "a bool constant is written true or false");
    return int_literal(t, digits, ty);
  }
  if (suffix == "f") return float_literal(t, digits, ScalarType::f32);
  if (s == "-inf") return error(t, "'-inf' needs a type (-inf:f32)");
  if (has_point) {
    if (suffix == "u") return error(t, fmt::format("'{}' is not an integer", s));
    return float_literal(t, digits, ScalarType::f64);
  }
  return int_literal(t, digits, suffix == "u" ? ScalarType::u32 : ScalarType::i32);
}

Result<Expr> Parser::int_literal(const Token &t, std::string_view digits, ScalarType ty) {
  const char *b = digits.data(), *e = digits.data() + digits.size();
  auto out_of_range = [&] {
    return error(t, fmt::format("integer '{}' out of range for {}", digits, to_string(ty)));
  };
  if (is_unsigned_int(ty)) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range) return out_of_range();
    if (ec != std::errc() || end != e) return error(t, fmt::format("invalid integer '{}'", digits));
    if (bits(ty) < 64 && v >> bits(ty) != 0) return out_of_range();
    return imm(ty, static_cast<int64_t>(v));
  }
  int64_t v = 0;
  auto [end, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range) return out_of_range();
  if (ec != std::errc() || end != e) return error(t, fmt::format("invalid integer '{}'", digits));
  const int64_t lim = bits(ty) == 64 ? std::numeric_limits<int64_t>::max()
                                     : (int64_t{1} << (bits(ty) - 1)) - 1;
  if (v > lim || v < -lim - 1) return out_of_range();
  return imm(ty, v);
}

Result<Expr> Parser::float_literal(const Token &t, std::string_view digits, ScalarType ty) {
  if (digits == "inf" || digits == "-inf")
    return fimm(ty, digits[0] == '-' ? -INFINITY : INFINITY);
  if (digits == "nan") return fimm(ty, NAN);
  const char *b = digits.data(), *e = digits.data() + digits.size();
  double v = 0;
  std::errc ec{};
  const char *end = nullptr;
  if (ty == ScalarType::f64) {
    auto r = std::from_chars(b, e, v);
    ec = r.ec;
    end = r.ptr;
  } else {
    float f = 0;
    auto r = std::from_chars(b, e, f);
    ec = r.ec;
    end = r.ptr;
    v = f;
  }
  if (ec == std::errc::result_out_of_range)
    return error(t, fmt::format("'{}' out of range for {}", digits, to_string(ty)));
  if (ec != std::errc() || end != e) return error(t, fmt::format("invalid number '{}'", digits));
  if (ty == ScalarType::f16 && std::fabs(v) > 65504.0)
    return error(t, fmt::format("'{}' out of range for f16", digits));
  return fimm(ty, v);
}
// '(' a op b ')' with op a binary, comparison or logical operator of matching operands.
Result<Expr> Parser::infix() {
  bump();
  KILN_ASSIGN(Expr a, expr());
  const Token op = cur_;
  if (op.kind != Tok::punct || op.text == ")") return expected("an operator");
  bump();
  const Token at_b = cur_;
  KILN_ASSIGN(Expr b, expr());
  KILN_TRY(expect(")"));
  const ScalarType t = a.type();
  if (b.type() != t)
    return error(at_b, fmt::format("operands of '{}' have types {} and {}", op.text, to_string(t),
                                   to_string(b.type())));
  auto bad = [&](const char *need) {
    return error(op, fmt::format("'{}' needs {} operands, not {}", op.text, need, to_string(t)));
  };
  if (op.text == "&&" || op.text == "||") {
    if (t != ScalarType::boolean) return bad("bool");
    return op.text == "&&" ? logical_and(a, b) : logical_or(a, b);
  }
  if (auto c = cmpop_named(op.text)) {
    if (t == ScalarType::boolean && *c != CmpOp::eq && *c != CmpOp::ne) return bad("non-bool");
    return cmp(*c, a, b);
  }
  auto bop = binop_named(op.text);
  if (!bop || !is_infix_binop(*bop)) return error(op, fmt::format("unknown operator '{}'", op.text));
  return binary_call_checked(op, *bop, a, b);
}

// Checks what kir::binary asserts, then builds the node.
Result<Expr> Parser::binary_call_checked(const Token &at_op, BinOp op, Expr a, Expr b) {
  const ScalarType t = a.type();
  const char *name = to_string(op);
  if (t == ScalarType::boolean)
    return error(at_op, fmt::format("'{}' does not take bool operands", name));
  const bool bitwise = op == BinOp::bit_and || op == BinOp::bit_or || op == BinOp::bit_xor ||
                       op == BinOp::shl || op == BinOp::shr;
  if (bitwise && !is_int(t))
    return error(at_op, fmt::format("'{}' needs integer operands, not {}", name, to_string(t)));
  if (op == BinOp::pow && !is_float(t))
    return error(at_op, fmt::format("pow needs float operands, not {}", to_string(t)));
  return binary(op, a, b);
}

// Words: constants, casts, calls, builtins, references and variables.
Result<Expr> Parser::word() {
  const Token t = cur_;
  const std::string &w = t.text;
  if (w == "true" || w == "false") {
    bump();
    return imm_bool(w == "true");
  }
  if (w == "inf" || w == "nan") {
    bump();
    if (!at(":")) return error(t, fmt::format("'{}' needs a type ({}:f32)", w, w));
    bump();
    KILN_ASSIGN(ScalarType ty, type());
    if (!is_float(ty)) return error(t, fmt::format("'{}' needs a float type", w));
    return float_literal(t, w, ty);
  }
  if (auto ty = type_named(w)) return cast_expr(*ty);
  if (auto fn = intrinsic_named(w)) return call_expr(*fn);
  if (w == "min") return binary_call(BinOp::min);
  if (w == "max") return binary_call(BinOp::max);
  if (w == "pow") return binary_call(BinOp::pow);
  if (w == "select") return select_expr();
  if (w == "pc") return push_const_expr();
  if (auto b = builtin_named(w)) {
    bump();
    return builtin(*b);
  }
  if (ref_index(w, 'b')) return load_expr('b');
  if (ref_index(w, 's')) return load_expr('s');
  if (is_reserved_word(w)) return expected("an expression");
  return var_ref();
}

// name (':' type)?: without a type, the innermost binding of the name gives it.
Result<Expr> Parser::var_ref() {
  const Token t = cur_;
  KILN_ASSIGN(std::string n, name("a variable"));
  if (at(":")) {
    bump();
    KILN_ASSIGN(ScalarType ty, type());
    return var(std::move(n), ty);
  }
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->first == n) return var(std::move(n), it->second);
  return error(t, fmt::format("undeclared variable '{}' (write {}:TYPE to use it unbound)", n,
                              format_name(n)));
}

Result<std::vector<Expr>> Parser::args(size_t n) {
  const Token at_call = cur_;
  KILN_TRY(expect("("));
  std::vector<Expr> out;
  while (!at(")")) {
    if (!out.empty()) KILN_TRY(expect(","));
    KILN_ASSIGN(Expr e, expr());
    out.push_back(std::move(e));
    if (out.size() > n) return error(at_call, fmt::format("expected {} arguments", n));
  }
  if (out.size() != n) return error(at_call, fmt::format("expected {} arguments", n));
  bump();
  return out;
}

Result<Expr> Parser::cast_expr(ScalarType t) {
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(1));
  return cast(t, a[0]);
}

Result<Expr> Parser::call_expr(Intrinsic fn) {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(static_cast<size_t>(arity(fn))));
  const ScalarType t = a[0].type();
  for (const Expr &e : a)
    if (e.type() != t) return error(at_fn, fmt::format("arguments of {} differ in type", to_string(fn)));
  const bool int_ok = fn == Intrinsic::abs || fn == Intrinsic::sign;
  if (!is_float(t) && !(int_ok && is_int(t)))
    return error(at_fn, fmt::format("{} does not take {}", to_string(fn), to_string(t)));
  return call(fn, std::move(a));
}

Result<Expr> Parser::binary_call(BinOp op) {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(2));
  if (a[0].type() != a[1].type())
    return error(at_fn, fmt::format("arguments of {} have types {} and {}", to_string(op),
                                    to_string(a[0].type()), to_string(a[1].type())));
  return binary_call_checked(at_fn, op, a[0], a[1]);
}

Result<Expr> Parser::select_expr() {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(3));
  if (a[0].type() != ScalarType::boolean)
    return error(at_fn, fmt::format("select condition must be bool, not {}",
                                    to_string(a[0].type())));
  if (a[1].type() != a[2].type())
    return error(at_fn, fmt::format("select values have types {} and {}", to_string(a[1].type()),
                                    to_string(a[2].type())));
  return select(a[0], a[1], a[2]);
}

// bI[index] / sI[index], typed by the declaration, or bI:T[index] / sI:T[index].
Result<Expr> Parser::load_expr(char prefix) {
  const Token t = cur_;
  KILN_ASSIGN(int i, ref(prefix, "a reference"));
  std::optional<ScalarType> ty;
  if (at(":")) {
    bump();
    KILN_ASSIGN(ty, type());
  } else if (prefix == 'b' && i < static_cast<int>(k_->buffers.size())) {
    ty = k_->buffers[static_cast<size_t>(i)].elem;
  } else if (prefix == 's' && i < static_cast<int>(k_->shared.size())) {
    ty = k_->shared[static_cast<size_t>(i)].elem;
  }
  if (!ty)
    return error(t, fmt::format("{}{} is not declared (write {}{}:TYPE to use it anyway)", prefix,
                                i, prefix, i));
  KILN_TRY(expect("["));
  KILN_ASSIGN(Expr index, typed_expr("index", is_index_type, "i32 or u32"));
  KILN_TRY(expect("]"));
  return prefix == 'b' ? load(i, *ty, index) : load_shared(i, *ty, index);
}

Result<Expr> Parser::push_const_expr() {
  bump();
  KILN_TRY(expect("["));
  const Token at_slot = cur_;
  KILN_ASSIGN(uint32_t slot, u32_number("a push-constant slot"));
  if (slot > static_cast<uint32_t>(std::numeric_limits<int>::max()))
    return error(at_slot, "push-constant slot out of range");
  KILN_TRY(expect("]"));
  return push_const(static_cast<int>(slot));
}

} // namespace

bool is_reserved_word(std::string_view w) {
  static constexpr std::string_view words[] = {
      "kernel", "workgroup", "push_constants", "buffer", "shared", "readonly", "writeonly",
      "for", "if", "else", "let", "var", "barrier", "select", "true", "false", "pc", "inf",
      "nan", "min", "max", "pow"};
  for (std::string_view k : words)
    if (w == k) return true;
  return type_named(w) || intrinsic_named(w) || builtin_named(w) || ref_index(w, 'b') ||
         ref_index(w, 's');
}

namespace {

bool is_identifier(std::string_view name) {
  bool ok = !name.empty() && is_alpha_char(name[0]);
  for (char c : name) ok = ok && (is_alpha_char(c) || is_digit_char(c) || c == '.');
  return ok;
}

std::string quote(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

} // namespace

std::string format_name(std::string_view name) {
  return is_identifier(name) && !is_reserved_word(name) ? std::string(name) : quote(name);
}

std::string format_label(std::string_view name) {
  return is_identifier(name) ? std::string(name) : quote(name);
}

Result<std::vector<Kernel>> parse_kernels(std::string_view text, std::string_view filename) {
  return Parser(text, filename).kernels();
}

Result<Kernel> parse_kernel(std::string_view text, std::string_view filename) {
  KILN_ASSIGN(std::vector<Kernel> ks, parse_kernels(text, filename));
  if (ks.size() != 1)
    return Status::error(fmt::format("{}: expected one kernel, found {}", filename, ks.size()));
  return std::move(ks[0]);
}

} // namespace kiln::kir
