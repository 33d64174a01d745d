// Parser of the textual IR. Recursive descent with one token of lookahead; the first error
// stops parsing and is reported as "file:line:col: message". Ops are created as written
// (result types included); checking them against the shape functions is verify_function's job.
//
// Grammar ('//' comments run to the end of the line):
//   module     := function*
//   function   := 'func' '@' (name | string) '(' params? ')' '->' '(' types? ')' '{' body '}'
//   params     := %name ':' type (',' %name ':' type)*
//   body       := op* 'return' (operand (',' operand)*)?
//   op         := (%name (',' %name)* '=')? opname operands? attr-dict? regions?
//                 ':' '(' (type | 'none')* ')' '->' (type | '(' types? ')')
//   operand    := %name | 'none'                        (none: omitted optional operand)
//   regions    := '(' region (',' region)* ')'
//   region     := '{' ('^bb0' '(' params? ')' ':')? body '}'
//   type       := 'tensor<' (dim 'x')* dtype '>' | 'tensor<*x' dtype '>'   (dim: N or ?)
//   attr-dict  := '{' (key '=' attr (',' key '=' attr)*)? '}'  (key: identifier or string)
//   attr       := integer | float | string | 'dtype<' dtype '>'
//               | 'array<' ('i64' | 'f64' | 'str') (':' literal (',' literal)*)? '>'
//               | 'dense<' elements '>' ':' type | 'dense_hex<' "0x..." '>' ':' type
//   elements   := element | '[' (elements (',' elements)*)? ']'   (nested as the shape)
//   element    := integer | float | [-]inf | [-]nan | true | false
// Values are %name (kept as the value's name) or %N (no name). A name is visible after its
// definition in its graph and in regions nested there; redefining a visible name is an error.
#include "ir/text.h"
#include "ir/text_internal.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace kiln {

namespace {

using text::Tok;
using text::Token;

constexpr int kMaxNesting = 200; // regions in regions, or brackets in a dense literal

// A dense literal before its type is known: a scalar token or a bracketed list.
struct Lit {
  Token tok; // the scalar, or the '[' of a list
  bool list = false;
  std::vector<Lit> items;
};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

class Parser {
public:
  Parser(const OpRegistry &ops, std::string_view src, std::string file)
      : ops_(ops), lex_(src), file_(std::move(file)) {
    bump();
  }

  Result<std::unique_ptr<Module>> module() {
    auto m = std::make_unique<Module>();
    while (cur_.kind != Tok::eof) KILN_TRY(function(*m));
    return m;
  }

private:
  // ---- tokens and errors ----
  void bump() { cur_ = lex_.next(); }
  bool at_ident(std::string_view s) const { return cur_.kind == Tok::ident && cur_.text == s; }
  bool at_operand() const { return cur_.kind == Tok::value_id || at_ident("none"); }

  Status error_at(int line, int col, const std::string &msg) const {
    return Status::error(fmt::format("{}:{}:{}: {}", file_, line, col, msg));
  }
  Status error(const Token &t, const std::string &msg) const {
    return error_at(t.line, t.col, msg);
  }
  // "expected X, got Y" at the current token (a lexer error wins: it is the real cause).
  Status expected(const std::string &what) const {
    if (cur_.kind == Tok::error) return error(cur_, cur_.text);
    std::string got = cur_.kind == Tok::eof ? "end of input" : fmt::format("'{}'", spelling(cur_));
    return error(cur_, fmt::format("expected {}, got {}", what, got));
  }
  static std::string spelling(const Token &t) {
    switch (t.kind) {
    case Tok::value_id: return "%" + t.text;
    case Tok::func_id: return "@" + t.text;
    case Tok::block_id: return "^" + t.text;
    case Tok::string: return text::quote(t.text);
    default: return t.text;
    }
  }
  Status expect(Tok kind, const char *what) {
    if (cur_.kind != kind) return expected(what);
    bump();
    return Status::ok();
  }
  Status expect_ident(std::string_view word) {
    if (!at_ident(word)) return expected(fmt::format("'{}'", word));
    bump();
    return Status::ok();
  }
  // Parses `item (',' item)*` up to (not including) `close`; `item` is a Status() callable.
  template <class F> Status list_until(Tok close, F item) {
    if (cur_.kind == close) return Status::ok();
    for (;;) {
      KILN_TRY(item());
      if (cur_.kind != Tok::comma) return Status::ok();
      bump();
    }
  }

  // ---- values and scopes ----
  Status define(const Token &t, Value *v) {
    for (auto &scope : scopes_)
      if (scope.count(t.text)) return error(t, fmt::format("redefinition of value '%{}'", t.text));
    scopes_.back()[t.text] = v;
    if (!all_digits(t.text)) v->name = t.text;
    return Status::ok();
  }
  Result<Value *> operand() {
    if (at_ident("none")) {
      bump();
      return static_cast<Value *>(nullptr);
    }
    if (cur_.kind != Tok::value_id) return expected("a value");
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(cur_.text);
      if (found != it->end()) {
        bump();
        return found->second;
      }
    }
    return error(cur_, fmt::format("undefined value '%{}'", cur_.text));
  }

  // ---- types ----
  Result<TensorType> type() {
    if (!at_ident("tensor")) return expected("a tensor type");
    std::string body;
    int line = 0, col = 0;
    if (!lex_.angle_body(body, line, col)) return error_at(line, col, body);
    KILN_ASSIGN(TensorType t, type_body(body, line, col));
    bump();
    return t;
  }
  Result<TensorType> type_body(const std::string &body, int line, int col) {
    TensorType t;
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= body.size(); ++i) {
      if (i < body.size() && body[i] != 'x') continue;
      parts.push_back(std::string_view(body).substr(start, i - start));
      start = i + 1;
    }
    int c = col;
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      std::string_view p = parts[i];
      if (p == "*" && parts.size() == 2) {
        t.ranked = false;
      } else if (p == "?") {
        t.dims.push_back(kDynamic);
      } else {
        int64_t d = 0;
        auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), d);
        if (!all_digits(p) || ec != std::errc() || end != p.data() + p.size())
          return error_at(line, c, fmt::format("invalid dimension '{}' in tensor type", p));
        t.dims.push_back(d);
      }
      c += static_cast<int>(p.size()) + 1;
    }
    auto dt = parse_dtype(parts.back());
    if (!dt) return error_at(line, c, fmt::format("unknown element type '{}'", parts.back()));
    t.dtype = *dt;
    return t;
  }
  // A type or `none` (the type of an omitted operand); nullopt for none.
  Result<std::optional<TensorType>> optional_type() {
    if (at_ident("none")) {
      bump();
      return std::optional<TensorType>();
    }
    KILN_ASSIGN(TensorType t, type());
    return std::optional<TensorType>(std::move(t));
  }

  // ---- attributes ----
  Status attr_dict(AttrMap &attrs) {
    KILN_TRY(expect(Tok::lbrace, "'{'"));
    KILN_TRY(list_until(Tok::rbrace, [&]() -> Status {
      if (cur_.kind != Tok::ident && cur_.kind != Tok::string) return expected("an attribute name");
      Token key = cur_;
      bump();
      KILN_TRY(expect(Tok::equal, "'='"));
      KILN_ASSIGN(AttrValue v, attr_value());
      if (!attrs.emplace(key.text, std::move(v)).second)
        return error(key, fmt::format("duplicate attribute '{}'", key.text));
      return Status::ok();
    }));
    return expect(Tok::rbrace, "',' or '}'");
  }

  Result<AttrValue> attr_value() {
    Token t = cur_;
    if (t.kind == Tok::integer) {
      int64_t v = 0;
      auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
      if (ec != std::errc() || end != t.text.data() + t.text.size())
        return error(t, fmt::format("integer '{}' is out of range for i64", t.text));
      bump();
      return AttrValue(v);
    }
    if (t.kind == Tok::floating || at_ident("inf") || at_ident("nan")) {
      double d = 0;
      if (!text::parse_double(t.text, d)) return error(t, fmt::format("invalid float '{}'", t.text));
      bump();
      return AttrValue(d);
    }
    if (t.kind == Tok::string) {
      bump();
      return AttrValue(t.text);
    }
    if (at_ident("dtype")) {
      bump();
      KILN_TRY(expect(Tok::less, "'<'"));
      auto dt = cur_.kind == Tok::ident ? parse_dtype(cur_.text) : std::nullopt;
      if (!dt) return expected("an element type");
      bump();
      KILN_TRY(expect(Tok::greater, "'>'"));
      return AttrValue(*dt);
    }
    if (at_ident("array")) return array();
    if (at_ident("dense")) return dense();
    if (at_ident("dense_hex")) return dense_hex();
    return expected("an attribute value");
  }

  Result<AttrValue> array() {
    bump();
    KILN_TRY(expect(Tok::less, "'<'"));
    std::string kind = cur_.kind == Tok::ident ? cur_.text : "";
    if (kind != "i64" && kind != "f64" && kind != "str") return expected("i64, f64 or str");
    bump();
    std::vector<int64_t> ints;
    std::vector<double> floats;
    std::vector<std::string> strs;
    if (cur_.kind == Tok::colon) {
      bump();
      KILN_TRY(list_until(Tok::greater, [&]() -> Status {
        if (kind == "str") {
          if (cur_.kind != Tok::string) return expected("a string");
          strs.push_back(cur_.text);
        } else if (kind == "i64") {
          if (cur_.kind != Tok::integer) return expected("an integer");
          std::byte buf[8];
          std::string why = text::encode_element(DType::i64, cur_.text, buf);
          if (!why.empty()) return error(cur_, why);
          int64_t v;
          std::memcpy(&v, buf, 8);
          ints.push_back(v);
        } else {
          double d = 0;
          bool number = cur_.kind == Tok::integer || cur_.kind == Tok::floating ||
                        at_ident("inf") || at_ident("nan");
          if (!number) return expected("a number");
          if (!text::parse_double(cur_.text, d))
            return error(cur_, fmt::format("invalid float '{}'", cur_.text));
          floats.push_back(d);
        }
        bump();
        return Status::ok();
      }));
    }
    KILN_TRY(expect(Tok::greater, "',' or '>'"));
    if (kind == "i64") return AttrValue(std::move(ints));
    if (kind == "f64") return AttrValue(std::move(floats));
    return AttrValue(std::move(strs));
  }

  Result<Lit> literal(int depth) {
    if (depth > kMaxNesting) return error(cur_, "dense literal is nested too deeply");
    Lit lit;
    lit.tok = cur_;
    if (cur_.kind == Tok::lbracket) {
      lit.list = true;
      bump();
      KILN_TRY(list_until(Tok::rbracket, [&]() -> Status {
        KILN_ASSIGN(Lit item, literal(depth + 1));
        lit.items.push_back(std::move(item));
        return Status::ok();
      }));
      KILN_TRY(expect(Tok::rbracket, "',' or ']'"));
      return lit;
    }
    bool scalar = cur_.kind == Tok::integer || cur_.kind == Tok::floating ||
                  cur_.kind == Tok::ident;
    if (!scalar) return expected("a tensor element or '['");
    bump();
    return lit;
  }

  // Checks that `lit` has the nesting of `shape` from `dim` on.
  Status check_literal(const Lit &lit, const TensorType &t, size_t dim) const {
    if (dim == t.dims.size()) {
      if (lit.list) return error(lit.tok, fmt::format("expected an element of {}, got a list",
                                                       t.str()));
      return Status::ok();
    }
    if (!lit.list)
      return error(lit.tok, fmt::format("expected a list of {} elements for dimension {} of {}",
                                        t.dims[dim], dim, t.str()));
    if (static_cast<int64_t>(lit.items.size()) != t.dims[dim])
      return error(lit.tok, fmt::format("expected {} elements for dimension {} of {}, got {}",
                                        t.dims[dim], dim, t.str(), lit.items.size()));
    for (auto &item : lit.items) KILN_TRY(check_literal(item, t, dim + 1));
    return Status::ok();
  }

  Status fill(const Lit &lit, Tensor &t, int64_t &next) const {
    if (lit.list) {
      for (auto &item : lit.items) KILN_TRY(fill(item, t, next));
      return Status::ok();
    }
    std::byte *dst = t.raw_mut() + next * static_cast<int64_t>(dtype_size(t.dtype()));
    std::string why = text::encode_element(t.dtype(), lit.tok.text, dst);
    if (!why.empty()) return error(lit.tok, why);
    ++next;
    return Status::ok();
  }

  // `: tensor<...>` after a dense literal; the type must be static.
  Result<TensorType> constant_type() {
    KILN_TRY(expect(Tok::colon, "':' and the tensor type"));
    Token at = cur_;
    KILN_ASSIGN(TensorType t, type());
    if (!t.is_static()) return error(at, fmt::format("a constant needs a static type, got {}", t.str()));
    return t;
  }

  Result<AttrValue> dense() {
    bump();
    KILN_TRY(expect(Tok::less, "'<'"));
    KILN_ASSIGN(Lit lit, literal(0));
    KILN_TRY(expect(Tok::greater, "'>'"));
    KILN_ASSIGN(TensorType type, constant_type());
    KILN_TRY(check_literal(lit, type, 0));
    KILN_ASSIGN(Tensor t, Tensor::allocate(type.dtype, type.dims));
    int64_t next = 0;
    KILN_TRY(fill(lit, t, next));
    return AttrValue(std::move(t));
  }

  Result<AttrValue> dense_hex() {
    bump();
    KILN_TRY(expect(Tok::less, "'<'"));
    if (cur_.kind != Tok::string) return expected("a hex string");
    Token hex = cur_;
    bump();
    KILN_TRY(expect(Tok::greater, "'>'"));
    KILN_ASSIGN(TensorType type, constant_type());
    const std::string &h = hex.text;
    if (h.size() < 2 || h[0] != '0' || h[1] != 'x' || h.size() % 2)
      return error(hex, "expected \"0x\" and an even number of hex digits");
    uint64_t bytes = (h.size() - 2) / 2;
    bool empty = std::find(type.dims.begin(), type.dims.end(), 0) != type.dims.end();
    uint64_t want = empty ? 0 : dtype_size(type.dtype);
    bool huge = false; // the size would not fit 63 bits
    for (int64_t d : type.dims) {
      auto ud = static_cast<uint64_t>(d);
      if (ud != 0 && want > (uint64_t(1) << 62) / ud) huge = true;
      else want *= ud;
    }
    if (huge || want != bytes)
      return error(hex, fmt::format("{} needs {} bytes of data, got {}", type.str(),
                                    huge ? "too many" : std::to_string(want), bytes));
    KILN_ASSIGN(Tensor t, Tensor::allocate(type.dtype, type.dims));
    for (uint64_t i = 0; i < bytes; ++i) {
      int v = 0;
      auto [end, ec] = std::from_chars(h.data() + 2 + 2 * i, h.data() + 4 + 2 * i, v, 16);
      if (ec != std::errc() || end != h.data() + 4 + 2 * i)
        return error(hex, fmt::format("invalid hex digit near byte {}", i));
      t.raw_mut()[i] = static_cast<std::byte>(v);
    }
    return AttrValue(std::move(t));
  }

  // ---- graphs ----
  Status params(Graph &g) {
    KILN_TRY(expect(Tok::lparen, "'('"));
    KILN_TRY(list_until(Tok::rparen, [&]() -> Status {
      if (cur_.kind != Tok::value_id) return expected("a parameter name");
      Token name = cur_;
      bump();
      KILN_TRY(expect(Tok::colon, "':'"));
      KILN_ASSIGN(TensorType t, type());
      return define(name, g.add_param(std::move(t), {}));
    }));
    return expect(Tok::rparen, "',' or ')'");
  }

  // Ops up to and including `return ...`; `ret` gets the return token.
  Status graph_body(Graph &g, int depth, Token &ret) {
    while (!at_ident("return")) {
      if (cur_.kind == Tok::rbrace || cur_.kind == Tok::eof) return expected("an op or 'return'");
      KILN_TRY(op(g, depth));
    }
    ret = cur_;
    bump();
    if (at_operand()) {
      KILN_TRY(list_until(Tok::eof, [&]() -> Status {
        KILN_ASSIGN(Value * v, operand());
        g.results.push_back(v);
        return Status::ok();
      }));
    }
    if (cur_.kind != Tok::rbrace) return expected("'}' after return");
    return Status::ok();
  }

  Status region(std::vector<std::unique_ptr<Graph>> &regions, int depth) {
    if (depth > kMaxNesting) return error(cur_, "regions are nested too deeply");
    KILN_TRY(expect(Tok::lbrace, "'{' to start a region"));
    auto g = std::make_unique<Graph>();
    scopes_.emplace_back();
    if (cur_.kind == Tok::block_id) {
      bump();
      KILN_TRY(params(*g));
      KILN_TRY(expect(Tok::colon, "':' after the region parameters"));
    }
    Token ret;
    KILN_TRY(graph_body(*g, depth, ret));
    scopes_.pop_back();
    bump(); // '}'
    regions.push_back(std::move(g));
    return Status::ok();
  }

  Status op(Graph &g, int depth) {
    Token start = cur_;
    std::vector<Token> result_names;
    if (cur_.kind == Tok::value_id) {
      KILN_TRY(list_until(Tok::equal, [&]() -> Status {
        if (cur_.kind != Tok::value_id) return expected("a result name");
        result_names.push_back(cur_);
        bump();
        return Status::ok();
      }));
      KILN_TRY(expect(Tok::equal, "'=' after the result names"));
    }
    if (cur_.kind != Tok::ident) return expected("an op name");
    Token name = cur_;
    const OpDef *def = ops_.find(name.text);
    if (!def) return error(name, fmt::format("unknown op '{}'", name.text));
    bump();

    std::vector<Value *> operands;
    std::vector<Token> operand_toks;
    if (at_operand()) {
      KILN_TRY(list_until(Tok::eof, [&]() -> Status {
        operand_toks.push_back(cur_);
        KILN_ASSIGN(Value * v, operand());
        operands.push_back(v);
        return Status::ok();
      }));
    }
    AttrMap attrs;
    if (cur_.kind == Tok::lbrace) KILN_TRY(attr_dict(attrs));
    std::vector<std::unique_ptr<Graph>> regions;
    if (cur_.kind == Tok::lparen) {
      bump();
      KILN_TRY(list_until(Tok::rparen, [&] { return region(regions, depth + 1); }));
      KILN_TRY(expect(Tok::rparen, "',' or ')' after the regions"));
    }
    KILN_TRY(expect(Tok::colon, "':' and the op's type"));
    KILN_TRY(operand_types(operands, operand_toks));
    KILN_TRY(expect(Tok::arrow, "'->'"));
    Token types_at = cur_;
    KILN_ASSIGN(std::vector<TensorType> result_types, result_type_list());
    if (result_types.size() != result_names.size())
      return error(types_at, fmt::format("{} result names but {} result types",
                                         result_names.size(), result_types.size()));

    Op *o = g.append(def, std::move(operands), std::move(result_types), std::move(attrs));
    o->loc = fmt::format("{}:{}:{}", file_, start.line, start.col);
    o->regions = std::move(regions);
    for (auto &r : o->regions) r->parent = o;
    for (size_t i = 0; i < result_names.size(); ++i) KILN_TRY(define(result_names[i], o->results[i]));
    return Status::ok();
  }

  // `(type, none, ...)` checked against the operands.
  Status operand_types(const std::vector<Value *> &operands, const std::vector<Token> &toks) {
    Token open = cur_;
    KILN_TRY(expect(Tok::lparen, "'(' and the operand types"));
    size_t i = 0;
    KILN_TRY(list_until(Tok::rparen, [&]() -> Status {
      Token at = cur_;
      KILN_ASSIGN(auto t, optional_type());
      if (i >= operands.size())
        return error(at, fmt::format("the op has {} operands but more types are listed",
                                     operands.size()));
      const Value *v = operands[i];
      std::string want = v ? v->type.str() : "none";
      std::string got = t ? t->str() : "none";
      if (want != got)
        return error(at, fmt::format("operand {} ('{}') has type {}, not {}", i,
                                     spelling(toks[i]), want, got));
      ++i;
      return Status::ok();
    }));
    if (i != operands.size())
      return error(open, fmt::format("the op has {} operands but {} types are listed",
                                     operands.size(), i));
    return expect(Tok::rparen, "',' or ')'");
  }

  Result<std::vector<TensorType>> result_type_list() {
    std::vector<TensorType> types;
    if (cur_.kind != Tok::lparen) {
      KILN_ASSIGN(TensorType t, type());
      types.push_back(std::move(t));
      return types;
    }
    bump();
    KILN_TRY(list_until(Tok::rparen, [&]() -> Status {
      KILN_ASSIGN(TensorType t, type());
      types.push_back(std::move(t));
      return Status::ok();
    }));
    KILN_TRY(expect(Tok::rparen, "',' or ')'"));
    return types;
  }

  Status function(Module &m) {
    KILN_TRY(expect_ident("func"));
    if (cur_.kind != Tok::func_id) return expected("a function name like @main");
    Token name = cur_;
    if (!function_names_.insert(name.text).second)
      return error(name, fmt::format("redefinition of function '@{}'", name.text));
    bump();
    auto f = std::make_unique<Function>();
    f->name = name.text;
    scopes_.assign(1, {});
    KILN_TRY(params(f->body));
    KILN_TRY(expect(Tok::arrow, "'->'"));
    KILN_TRY(expect(Tok::lparen, "'(' and the result types"));
    std::vector<std::optional<TensorType>> sig;
    KILN_TRY(list_until(Tok::rparen, [&]() -> Status {
      KILN_ASSIGN(auto t, optional_type());
      sig.push_back(std::move(t));
      return Status::ok();
    }));
    KILN_TRY(expect(Tok::rparen, "',' or ')'"));
    KILN_TRY(expect(Tok::lbrace, "'{'"));
    Token ret;
    KILN_TRY(graph_body(f->body, 0, ret));
    bump(); // '}'
    KILN_TRY(check_signature(f->body, sig, ret));
    renumber(*f);
    m.functions.push_back(std::move(f));
    return Status::ok();
  }

  Status check_signature(const Graph &g, const std::vector<std::optional<TensorType>> &sig,
                         const Token &ret) const {
    if (sig.size() != g.results.size())
      return error(ret, fmt::format("the function returns {} values but its signature has {}",
                                    g.results.size(), sig.size()));
    for (size_t i = 0; i < sig.size(); ++i) {
      const Value *v = g.results[i];
      std::string want = sig[i] ? sig[i]->str() : "none";
      std::string got = v ? v->type.str() : "none";
      if (want != got)
        return error(ret, fmt::format("return value {} has type {} but the signature says {}", i,
                                      got, want));
    }
    return Status::ok();
  }

  const OpRegistry &ops_;
  text::Lexer lex_;
  std::string file_;
  Token cur_;
  std::vector<std::unordered_map<std::string, Value *>> scopes_;
  std::unordered_set<std::string> function_names_;
};

} // namespace

Result<std::unique_ptr<Module>> parse_module(const OpRegistry &ops, const std::string &text,
                                             const std::string &filename) {
  Parser p(ops, text, filename);
  return p.module();
}

} // namespace kiln
