// Expressions of the kernel-IR text parser (kir_parser_internal.h): each checks what the node
// factory would assert before calling it.
#include "kir/kir_parser_internal.h"

#include <cmath>
#include <limits>

namespace kiln::kir::text {

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


} // namespace kiln::kir::text
