// Parser of the kernel-IR text form (grammar in kir_parser.h). Recursive descent with one
// token of lookahead; the first error stops parsing. Every operand is checked against the
// rules of the node factories before one is called, so ill-typed text is an error message,
// never an assertion. One function per statement or expression form, chosen by the keyword
// or reference the printer writes: a new node kind adds a keyword and a function.
#include "kir/kir_parser_internal.h"

namespace kiln::kir {

namespace text {

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
  if (at("lanes")) {
    bump();
    const Token at_lanes = cur_;
    KILN_ASSIGN(uint32_t lanes, u32_number("a lane count (2 or 4)"));
    if (lanes != 2 && lanes != 4) return error(at_lanes, "shared arrays have 2 or 4 lanes");
    if (s.count % lanes != 0)
      return error(at_lanes, fmt::format("{} elements are not a whole number of {}-lane vectors",
                                         s.count, lanes));
    s.lanes = static_cast<int>(lanes);
  }
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
  if (at("vstore")) return vstore_stmt();
  if (at("coopmat_store")) return coopmat_store_stmt();
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
  KILN_ASSIGN(ValueType t, value_type());
  return var(std::move(n), t);
}

Result<Stmt> Parser::for_stmt() {
  bump();
  KILN_TRY(expect("("));
  const Token at_var = cur_;
  KILN_ASSIGN(Expr v, decl());
  if (!v.is_scalar() || !is_index_type(v.type()))
    return error(at_var, fmt::format("loop variable must be i32 or u32, not {}", type_string(v)));
  auto bound = [&](const char *what) -> Result<Expr> {
    KILN_TRY(expect(","));
    const Token at_e = cur_;
    KILN_ASSIGN(Expr e, expr());
    if (e.value_type() != v.value_type())
      return error(at_e, fmt::format("loop {} has type {}, the variable {}", what,
                                     type_string(e), type_string(v)));
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
  if (cond.value_type() != ValueType(ScalarType::boolean))
    return error(at_cond, fmt::format("if condition must be bool, not {}", type_string(cond)));
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
  if (value.value_type() != v.value_type())
    return error(at_value, fmt::format("let value has type {}, the variable {}",
                                       type_string(value), type_string(v)));
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
  if (init.value_type() != v.value_type())
    return error(at_init, fmt::format("var initial value has type {}, the variable {}",
                                      type_string(init), type_string(v)));
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
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (!value.is_scalar())
    return error(at_value, fmt::format("stored value must be a scalar, not {}", type_string(value)));
  return prefix == 'b' ? store(i, index, value) : store_shared(i, index, value);
}

Result<Stmt> Parser::assign_stmt() {
  KILN_ASSIGN(Expr v, var_ref());
  KILN_TRY(expect("="));
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (value.value_type() != v.value_type())
    return error(at_value, fmt::format("assigned value has type {}, the variable {}",
                                       type_string(value), type_string(v)));
  return assign(v, value);
}

// vstore<T>(bI, index, value)
Result<Stmt> Parser::vstore_stmt() {
  const Token at_fn = cur_;
  bump();
  KILN_ASSIGN(ValueType t, angle_type());
  if (!t.is_vector() || t.elem == ScalarType::boolean)
    return error(at_fn, fmt::format("vstore needs a non-bool vector type, not {}", to_string(t)));
  KILN_TRY(expect("("));
  KILN_ASSIGN(int b, ref('b', "a buffer reference bN"));
  KILN_TRY(expect(","));
  KILN_ASSIGN(Expr index, index_arg("index"));
  KILN_TRY(expect(","));
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (value.value_type() != t)
    return error(at_value, fmt::format("vstore<{}> value has type {}", to_string(t),
                                       type_string(value)));
  KILN_TRY(expect(")"));
  return vector_store(b, index, value);
}

// coopmat_store<M>(bI | sI, offset, stride, layout, value)
Result<Stmt> Parser::coopmat_store_stmt() {
  bump();
  KILN_ASSIGN(MatrixAccess a, matrix_access());
  KILN_TRY(expect(","));
  const Token at_value = cur_;
  KILN_ASSIGN(Expr value, expr());
  if (value.value_type() != a.type)
    return error(at_value, fmt::format("coopmat_store value has type {}, not {}",
                                       type_string(value), to_string(a.type)));
  KILN_TRY(expect(")"));
  return matrix_store(a.space, a.target, a.offset, a.stride, a.layout, value);
}

} // namespace text

bool is_reserved_word(std::string_view w) {
  static constexpr std::string_view words[] = {
      "kernel", "workgroup", "push_constants", "buffer", "shared", "readonly", "writeonly",
      "for", "if", "else", "let", "var", "barrier", "select", "true", "false", "pc", "inf",
      "nan", "min", "max", "pow", "coopmat", "vload", "vstore", "broadcast", "extract_lane",
      "make_vector", "subgroup_reduce", "subgroup_broadcast", "subgroup_broadcast_first",
      "subgroup_shuffle", "subgroup_shuffle_xor", "coopmat_load", "coopmat_store",
      "coopmat_muladd", "coopmat_fill", "coopmat_scale", "coopmat_length"};
  for (std::string_view k : words)
    if (w == k) return true;
  return text::type_named(w) || text::vector_type_named(w) || text::intrinsic_named(w) || text::builtin_named(w) ||
         text::ref_index(w, 'b') || text::ref_index(w, 's');
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
  return text::Parser(text, filename).kernels();
}

Result<Kernel> parse_kernel(std::string_view text, std::string_view filename) {
  KILN_ASSIGN(std::vector<Kernel> ks, parse_kernels(text, filename));
  if (ks.size() != 1)
    return Status::error(fmt::format("{}: expected one kernel, found {}", filename, ks.size()));
  return std::move(ks[0]);
}

} // namespace kiln::kir
