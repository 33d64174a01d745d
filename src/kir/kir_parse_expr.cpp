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
    if (a.type() != ScalarType::boolean || a.is_matrix())
      return error(at_a, fmt::format("'!' needs a bool operand, not {}", type_string(a)));
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
  if (!e.is_scalar() || !ok(e.type()))
    return error(at_e, fmt::format("{} must be {}, not {}", what, need, type_string(e)));
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
  if (b.value_type() != a.value_type())
    return error(at_b, fmt::format("operands of '{}' have types {} and {}", op.text,
                                   type_string(a), type_string(b)));
  auto bad = [&](const char *need) {
    return error(op, fmt::format("'{}' needs {} operands, not {}", op.text, need, type_string(a)));
  };
  if (op.text == "&&" || op.text == "||") {
    if (t != ScalarType::boolean || a.is_matrix()) return bad("bool");
    return op.text == "&&" ? logical_and(a, b) : logical_or(a, b);
  }
  if (auto c = cmpop_named(op.text)) {
    if (a.is_matrix()) return bad("non-matrix");
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
  if (a.is_matrix() && op != BinOp::add && op != BinOp::sub && op != BinOp::mul &&
      op != BinOp::div)
    return error(at_op, fmt::format("'{}' does not take cooperative matrices", name));
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
  if (auto ty = vector_type_named(w)) return cast_expr(*ty);
  if (w == "coopmat") {
    KILN_ASSIGN(ValueType ty, value_type());
    return cast_expr(ty);
  }
  if (w == "vload" || w == "broadcast" || w == "extract_lane" || w == "make_vector")
    return vector_expr(w);
  if (w.rfind("subgroup_", 0) == 0 && !builtin_named(w)) return subgroup_expr(w);
  if (w.rfind("coopmat_", 0) == 0) return coopmat_expr(w);
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
    KILN_ASSIGN(ValueType ty, value_type());
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

// T(x): a scalar type casts scalars; a vector or matrix type names x's shape too (the printer
// writes the cast's full type).
Result<Expr> Parser::cast_expr(const ValueType &t) {
  const Token at_cast = cur_;
  if (t.lanes == 1 && !t.is_matrix()) bump(); // a vector / matrix type was read by the caller
  else if (t.is_vector()) bump();
  KILN_ASSIGN(std::vector<Expr> a, args(1));
  ValueType shape = a[0].value_type();
  shape.elem = t.elem;
  if (shape != t)
    return error(at_cast, fmt::format("cannot cast {} to {}", type_string(a[0]), to_string(t)));
  if (a[0].is_matrix() && !is_float(t.elem) && !is_int(t.elem))
    return error(at_cast, "a cooperative matrix component must be a number type");
  return cast(t.elem, a[0]);
}

Result<Expr> Parser::call_expr(Intrinsic fn) {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(static_cast<size_t>(arity(fn))));
  const ScalarType t = a[0].type();
  for (const Expr &e : a)
    if (e.value_type() != a[0].value_type())
      return error(at_fn, fmt::format("arguments of {} differ in type", to_string(fn)));
  if (a[0].is_matrix())
    return error(at_fn, fmt::format("{} does not take cooperative matrices", to_string(fn)));
  const bool int_ok = fn == Intrinsic::abs || fn == Intrinsic::sign;
  if (!is_float(t) && !(int_ok && is_int(t)))
    return error(at_fn, fmt::format("{} does not take {}", to_string(fn), to_string(t)));
  return call(fn, std::move(a));
}

Result<Expr> Parser::binary_call(BinOp op) {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(2));
  if (a[0].value_type() != a[1].value_type())
    return error(at_fn, fmt::format("arguments of {} have types {} and {}", to_string(op),
                                    type_string(a[0]), type_string(a[1])));
  return binary_call_checked(at_fn, op, a[0], a[1]);
}

Result<Expr> Parser::select_expr() {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(std::vector<Expr> a, args(3));
  if (a[0].type() != ScalarType::boolean || a[0].is_matrix())
    return error(at_fn, fmt::format("select condition must be bool, not {}", type_string(a[0])));
  if (a[1].value_type() != a[2].value_type())
    return error(at_fn, fmt::format("select values have types {} and {}", type_string(a[1]),
                                    type_string(a[2])));
  if (a[1].is_matrix()) return error(at_fn, "select does not take cooperative matrices");
  if (a[0].lanes() != 1 && a[0].lanes() != a[1].lanes())
    return error(at_fn, "select condition lanes must be 1 or the values' lanes");
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

// ---- value types ----

Result<ValueType> Parser::value_type() {
  if (cur_.kind == Tok::ident) {
    if (auto t = type_named(cur_.text)) {
      bump();
      return ValueType(*t);
    }
    if (auto t = vector_type_named(cur_.text)) {
      bump();
      return *t;
    }
    if (cur_.text == "coopmat") {
      bump();
      return matrix_type_args();
    }
  }
  return expected("a type");
}

// '<' elem ',' ROWSxCOLS ',' use '>'
Result<ValueType> Parser::matrix_type_args() {
  KILN_TRY(expect("<"));
  const Token at_elem = cur_;
  KILN_ASSIGN(ScalarType elem, type());
  if (!is_float(elem) && !is_int(elem))
    return error(at_elem, fmt::format("a cooperative matrix component must be a number type, "
                                      "not {}", to_string(elem)));
  KILN_TRY(expect(","));
  const Token at_shape = cur_;
  uint32_t dims[2] = {0, 0};
  {
    const std::string &s = cur_.text;
    const size_t x = s.find('x');
    bool ok = cur_.kind == Tok::number && x != std::string::npos;
    for (int d = 0; ok && d < 2; ++d) {
      const char *b = s.data() + (d ? x + 1 : 0), *e = s.data() + (d ? s.size() : x);
      auto [end, ec] = std::from_chars(b, e, dims[d]);
      ok = ec == std::errc() && end == e && b != e && is_digit_char(*b) && dims[d] > 0 &&
           dims[d] <= 1024;
    }
    if (!ok) return expected("a matrix shape ROWSxCOLS (1 to 1024 each)");
    bump();
  }
  KILN_TRY(expect(","));
  std::optional<MatrixUse> use;
  if (cur_.kind == Tok::ident) use = matrix_use_named(cur_.text);
  if (!use) return expected("a matrix use (a, b or accumulator)");
  bump();
  KILN_TRY(expect(">"));
  (void)at_shape;
  return ValueType::coop_matrix(elem, dims[0], dims[1], *use);
}

// '<' type '>'
Result<ValueType> Parser::angle_type() {
  KILN_TRY(expect("<"));
  KILN_ASSIGN(ValueType t, value_type());
  KILN_TRY(expect(">"));
  return t;
}

Result<Expr> Parser::index_arg(const char *what) {
  return typed_expr(what, is_index_type, "i32 or u32");
}

// ---- vectors ----

// vload<T>(bI, index) | broadcast<T>(x) | extract_lane<S>(v, N) | make_vector<T>(x, ...)
Result<Expr> Parser::vector_expr(const std::string &w) {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(ValueType t, angle_type());
  auto need_vector = [&]() -> Status {
    if (!t.is_vector())
      return error(at_fn, fmt::format("{} needs a vector type, not {}", w, to_string(t)));
    return Status::ok();
  };
  auto check = [&](const Expr &e) -> Result<Expr> {
    if (e.value_type() != t)
      return error(at_fn, fmt::format("{} has type {}, not {}", w, type_string(e), to_string(t)));
    return e;
  };
  if (w == "vload") {
    KILN_TRY(need_vector());
    if (t.elem == ScalarType::boolean) return error(at_fn, "vload of bool vectors");
    KILN_TRY(expect("("));
    const bool shared = cur_.kind == Tok::ident && !cur_.text.empty() && cur_.text[0] == 's';
    KILN_ASSIGN(int b, shared ? ref('s', "a shared array reference sN")
                              : ref('b', "a buffer reference bN"));
    KILN_TRY(expect(","));
    KILN_ASSIGN(Expr index, index_arg("index"));
    KILN_TRY(expect(")"));
    if (shared) {
      if (t.lanes == 3) return error(at_fn, "shared vector loads have 2 or 4 lanes");
      return load_shared(b, t.elem, index, t.lanes);
    }
    return vector_load(b, t.elem, index, t.lanes);
  }
  if (w == "broadcast") {
    KILN_TRY(need_vector());
    const Token at_a = cur_;
    KILN_ASSIGN(std::vector<Expr> a, args(1));
    if (a[0].value_type() != ValueType(t.elem))
      return error(at_a, fmt::format("broadcast value has type {}, not {}", type_string(a[0]),
                                     to_string(t.elem)));
    return check(broadcast(a[0], t.lanes));
  }
  if (w == "extract_lane") {
    if (t.lanes != 1 || t.is_matrix())
      return error(at_fn, fmt::format("extract_lane needs a scalar type, not {}", to_string(t)));
    KILN_TRY(expect("("));
    const Token at_v = cur_;
    KILN_ASSIGN(Expr v, expr());
    if (!v.is_vector() || v.type() != t.elem)
      return error(at_v, fmt::format("extract_lane<{}> needs a vector of {}, not {}",
                                     to_string(t), to_string(t.elem), type_string(v)));
    KILN_TRY(expect(","));
    const Token at_lane = cur_;
    KILN_ASSIGN(uint32_t lane, u32_number("a lane number"));
    if (lane >= static_cast<uint32_t>(v.lanes()))
      return error(at_lane, fmt::format("lane {} out of range for {}", lane, type_string(v)));
    KILN_TRY(expect(")"));
    return extract_lane(v, static_cast<int>(lane));
  }
  // make_vector
  KILN_TRY(need_vector());
  KILN_ASSIGN(std::vector<Expr> a, args(static_cast<size_t>(t.lanes)));
  for (const Expr &e : a)
    if (e.value_type() != ValueType(t.elem))
      return error(at_fn, fmt::format("make_vector<{}> element has type {}", to_string(t),
                                      type_string(e)));
  return make_vector(std::move(a));
}

// ---- subgroups ----

// subgroup_reduce<op, T>(x) | subgroup_broadcast_first<T>(x) | subgroup_broadcast<T>(x, lane)
// | subgroup_shuffle<T>(x, lane) | subgroup_shuffle_xor<T>(x, mask)
Result<Expr> Parser::subgroup_expr(const std::string &w) {
  const Token at_fn = cur_;
  const bool reduce = w == "subgroup_reduce", first = w == "subgroup_broadcast_first";
  if (!reduce && !first && w != "subgroup_broadcast" && w != "subgroup_shuffle" &&
      w != "subgroup_shuffle_xor")
    return error(at_fn, fmt::format("unknown subgroup operation '{}'", w));
  bump();
  KILN_TRY(expect("<"));
  ReduceOp op = ReduceOp::add;
  if (reduce) {
    std::optional<ReduceOp> r;
    if (cur_.kind == Tok::ident) r = reduce_op_named(cur_.text);
    if (!r) return expected("a reduction (add, mul, min or max)");
    op = *r;
    bump();
    KILN_TRY(expect(","));
  }
  KILN_ASSIGN(ValueType t, value_type());
  KILN_TRY(expect(">"));
  KILN_ASSIGN(std::vector<Expr> a, args(reduce || first ? 1 : 2));
  if (a[0].value_type() != t)
    return error(at_fn, fmt::format("{}<{}> value has type {}", w, to_string(t), type_string(a[0])));
  if (t.is_matrix()) return error(at_fn, fmt::format("{} does not take cooperative matrices", w));
  if (reduce) {
    if (!is_int(t.elem) && !is_float(t.elem))
      return error(at_fn, fmt::format("subgroup_reduce needs numbers, not {}", to_string(t)));
    return subgroup_reduce(op, a[0]);
  }
  if (first) return subgroup_broadcast_first(a[0]);
  if (a[1].value_type() != ValueType(ScalarType::u32))
    return error(at_fn, fmt::format("{} lane must be u32, not {}", w, type_string(a[1])));
  if (w == "subgroup_broadcast") return subgroup_broadcast(a[0], a[1]);
  if (w == "subgroup_shuffle") return subgroup_shuffle(a[0], a[1]);
  return subgroup_shuffle_xor(a[0], a[1]);
}

// ---- cooperative matrices ----

// bI or sI naming a declared buffer / shared array (its element type is the component's).
Status Parser::coopmat_ref(MemSpace &space, int &target, ScalarType &elem) {
  const Token t = cur_;
  std::optional<int> b, s;
  if (cur_.kind == Tok::ident) {
    b = ref_index(cur_.text, 'b');
    s = ref_index(cur_.text, 's');
  }
  if (b && *b < static_cast<int>(k_->buffers.size())) {
    space = MemSpace::buffer;
    target = *b;
    elem = k_->buffers[static_cast<size_t>(*b)].elem;
  } else if (s && *s < static_cast<int>(k_->shared.size())) {
    space = MemSpace::shared;
    target = *s;
    elem = k_->shared[static_cast<size_t>(*s)].elem;
  } else if (b || s) {
    return error(t, fmt::format("{} is not declared", t.text));
  } else {
    return expected("a buffer or shared array reference");
  }
  bump();
  return Status::ok();
}

Result<Parser::MatrixAccess> Parser::matrix_access() {
  MatrixAccess a;
  KILN_ASSIGN(a.type, matrix_type_args());
  KILN_TRY(expect("("));
  const Token at_ref = cur_;
  ScalarType elem = ScalarType::f32;
  KILN_TRY(coopmat_ref(a.space, a.target, elem));
  if (elem != a.type.elem)
    return error(at_ref, fmt::format("{} holds {}, the matrix {}", at_ref.text, to_string(elem),
                                     to_string(a.type.elem)));
  KILN_TRY(expect(","));
  KILN_ASSIGN(a.offset, index_arg("offset"));
  KILN_TRY(expect(","));
  KILN_ASSIGN(a.stride, index_arg("stride"));
  KILN_TRY(expect(","));
  std::optional<MatrixLayout> layout;
  if (cur_.kind == Tok::ident) layout = matrix_layout_named(cur_.text);
  if (!layout) return expected("a layout (row_major or col_major)");
  bump();
  a.layout = *layout;
  return a;
}

Result<Expr> Parser::coopmat_load_expr() {
  bump();
  KILN_ASSIGN(MatrixAccess a, matrix_access());
  KILN_TRY(expect(")"));
  return matrix_load(a.type, a.space, a.target, a.offset, a.stride, a.layout);
}

// coopmat_load / coopmat_muladd / coopmat_fill / coopmat_scale / coopmat_length '<' M '>' ...
Result<Expr> Parser::coopmat_expr(const std::string &w) {
  const Token at_fn = cur_;
  if (w == "coopmat_load") return coopmat_load_expr();
  if (w != "coopmat_muladd" && w != "coopmat_fill" && w != "coopmat_scale" &&
      w != "coopmat_length")
    return error(at_fn, fmt::format("unknown cooperative-matrix operation '{}'", w));
  bump();
  KILN_ASSIGN(ValueType t, matrix_type_args());
  auto is = [&](const Expr &e, const ValueType &want, const char *what) -> Status {
    if (e.value_type() != want)
      return error(at_fn, fmt::format("{} {} has type {}, not {}", w, what, type_string(e),
                                      to_string(want)));
    return Status::ok();
  };
  if (w == "coopmat_length") {
    KILN_ASSIGN(std::vector<Expr> a, args(0));
    return matrix_length(t);
  }
  if (w == "coopmat_fill") {
    KILN_ASSIGN(std::vector<Expr> a, args(1));
    KILN_TRY(is(a[0], ValueType(t.elem), "value"));
    return matrix_fill(t, a[0]);
  }
  if (w == "coopmat_scale") {
    KILN_ASSIGN(std::vector<Expr> a, args(2));
    if (!is_float(t.elem)) return error(at_fn, "coopmat_scale needs a float matrix");
    KILN_TRY(is(a[0], t, "matrix"));
    KILN_TRY(is(a[1], ValueType(t.elem), "scale"));
    return matrix_scale(a[0], a[1]);
  }
  // coopmat_muladd<C>(a, b, c): MxK a * KxN b + MxN c
  KILN_ASSIGN(std::vector<Expr> a, args(3));
  KILN_TRY(is(a[2], t, "accumulator"));
  if (t.matrix.use != MatrixUse::accumulator)
    return error(at_fn, "coopmat_muladd's type must be an accumulator matrix");
  const Expr &ma = a[0], &mb = a[1];
  if (!ma.is_matrix() || ma.value_type().matrix.use != MatrixUse::a)
    return error(at_fn, fmt::format("coopmat_muladd A must be a use-a matrix, not {}",
                                    type_string(ma)));
  if (!mb.is_matrix() || mb.value_type().matrix.use != MatrixUse::b)
    return error(at_fn, fmt::format("coopmat_muladd B must be a use-b matrix, not {}",
                                    type_string(mb)));
  const MatrixShape &sa = ma.value_type().matrix, &sb = mb.value_type().matrix;
  if (sa.rows != t.matrix.rows || sb.cols != t.matrix.cols || sa.cols != sb.rows)
    return error(at_fn, fmt::format("coopmat_muladd shapes do not chain: {} * {} + {}",
                                    type_string(ma), type_string(mb), to_string(t)));
  if (ma.type() != mb.type())
    return error(at_fn, "coopmat_muladd A and B components differ");
  if (is_float(ma.type()) != is_float(t.elem))
    return error(at_fn, "coopmat_muladd mixes integer and float components");
  return matrix_mul_add(a[0], a[1], a[2]);
}

} // namespace kiln::kir::text
