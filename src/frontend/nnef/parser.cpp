// NNEF 1.0 lexer and recursive-descent parser. The grammar covers flat and compositional
// documents: version, extensions, fragment declarations and definitions, the graph, and
// assignments whose right side is an invocation or a literal, identifier, array or tuple.
// Arithmetic and comprehension expressions are reported as unsupported at their position.
#include "frontend/nnef/syntax.h"

#include <cctype>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <fmt/format.h>

namespace kiln::nnef_fe {

namespace {

struct Token {
  enum Kind { end, ident, number, string, punct } kind = end;
  std::string text;
  int line = 1, col = 1;
};

class Parser {
public:
  Parser(std::string_view text, std::string file) : s_(text), file_(std::move(file)) {}

  Result<Document> document();

private:
  std::string_view s_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  Token tok_;
  int depth_ = 0;

  Status error_at(int line, int col, const std::string &msg) const {
    return Status::error(fmt::format("{}:{}:{}: {}", file_, line, col, msg));
  }
  Status error(const std::string &msg) const { return error_at(tok_.line, tok_.col, msg); }
  std::string describe() const {
    return tok_.kind == Token::end ? std::string("end of file") : fmt::format("'{}'", tok_.text);
  }

  void advance_char() {
    if (s_[pos_] == '\n') ++line_, col_ = 1;
    else ++col_;
    ++pos_;
  }

  Status next() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance_char();
      if (pos_ < s_.size() && s_[pos_] == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') advance_char();
        continue;
      }
      break;
    }
    tok_ = Token{};
    tok_.line = line_;
    tok_.col = col_;
    if (pos_ >= s_.size()) return Status::ok();
    const char ch = s_[pos_];
    auto is_digit = [&](size_t p) { return p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p])); };
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') {
      tok_.kind = Token::ident;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) {
        tok_.text += s_[pos_];
        advance_char();
      }
      return Status::ok();
    }
    if (is_digit(pos_) || (ch == '-' && is_digit(pos_ + 1))) {
      tok_.kind = Token::number;
      if (ch == '-') tok_.text += '-', advance_char();
      while (is_digit(pos_)) tok_.text += s_[pos_], advance_char();
      if (pos_ < s_.size() && s_[pos_] == '.') {
        tok_.text += '.', advance_char();
        while (is_digit(pos_)) tok_.text += s_[pos_], advance_char();
      }
      if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
        tok_.text += s_[pos_], advance_char();
        if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) tok_.text += s_[pos_], advance_char();
        if (!is_digit(pos_)) return error_at(line_, col_, "malformed number exponent");
        while (is_digit(pos_)) tok_.text += s_[pos_], advance_char();
      }
      return Status::ok();
    }
    if (ch == '\'' || ch == '"') {
      tok_.kind = Token::string;
      advance_char();
      while (pos_ < s_.size() && s_[pos_] != ch && s_[pos_] != '\n') tok_.text += s_[pos_], advance_char();
      if (pos_ >= s_.size() || s_[pos_] != ch) return error("unterminated string");
      advance_char();
      return Status::ok();
    }
    tok_.kind = Token::punct;
    if (ch == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '>') {
      tok_.text = "->";
      advance_char(), advance_char();
      return Status::ok();
    }
    static const std::string_view kPunct = "()[]{}<>,;:=?";
    if (kPunct.find(ch) == std::string_view::npos) {
      if (std::string_view("+-*/^!&|").find(ch) != std::string_view::npos)
        return error(fmt::format("operator '{}': arithmetic expressions are not supported", ch));
      return error(fmt::format("unexpected character '{}'", ch));
    }
    tok_.text = std::string(1, ch);
    advance_char();
    return Status::ok();
  }

  bool is(std::string_view p) const { return (tok_.kind == Token::punct || tok_.kind == Token::ident) && tok_.text == p; }
  Status expect(std::string_view p) {
    if (!is(p)) return error(fmt::format("expected '{}', found {}", p, describe()));
    return next();
  }
  Result<std::string> identifier(const char *what) {
    if (tok_.kind != Token::ident) return error(fmt::format("expected {}, found {}", what, describe()));
    std::string s = tok_.text;
    KILN_TRY(next());
    return s;
  }

  Result<std::vector<std::string>> ident_list() {
    std::vector<std::string> v;
    KILN_TRY(expect("("));
    if (!is(")")) {
      for (;;) {
        KILN_ASSIGN(std::string n, identifier("an identifier"));
        v.push_back(n);
        if (is(")")) break;
        KILN_TRY(expect(","));
      }
    }
    KILN_TRY(next());
    return v;
  }

  // Types are kept as text: tensor<scalar>, integer[], (scalar, integer), ...
  Result<std::string> type() {
    std::string t;
    int nest = 0;
    for (;;) {
      if (tok_.kind == Token::end) return error("unexpected end of file in a type");
      if (nest == 0 && (is(",") || is(")") || is("=") || is(";") || is("{"))) break;
      if (is("(") || is("<") || is("[")) ++nest;
      if (is(")") || is(">") || is("]")) --nest;
      t += tok_.text;
      KILN_TRY(next());
    }
    if (t.empty()) return error(fmt::format("expected a type, found {}", describe()));
    return t;
  }

  Result<Expr> expr() {
    if (++depth_ > 64) return error("expression nesting is too deep");
    auto r = expr_inner();
    --depth_;
    return r;
  }

  Result<Expr> expr_inner() {
    Expr e;
    e.line = tok_.line;
    e.col = tok_.col;
    if (tok_.kind == Token::number) {
      e.kind = Expr::Kind::number;
      const std::string &t = tok_.text;
      e.is_int = t.find_first_of(".eE") == std::string::npos;
      char *endp = nullptr;
      e.num = std::strtod(t.c_str(), &endp);
      // Integers convert to int64 later; beyond 2^53 a double no longer holds them exactly.
      if (e.is_int && !(std::fabs(e.num) <= 9007199254740992.0))
        return error(fmt::format("integer {} is too large", t));
      if (!std::isfinite(e.num)) return error(fmt::format("number {} is out of range", t));
      KILN_TRY(next());
      return e;
    }
    if (tok_.kind == Token::string) {
      e.kind = Expr::Kind::string;
      e.str = tok_.text;
      KILN_TRY(next());
      return e;
    }
    if (is("[") || is("(")) {
      const bool arr = is("[");
      e.kind = arr ? Expr::Kind::array : Expr::Kind::tuple;
      const char *close = arr ? "]" : ")";
      KILN_TRY(next());
      if (!is(close)) {
        for (;;) {
          KILN_ASSIGN(Expr item, expr());
          e.items.push_back(std::move(item));
          if (is(close)) break;
          KILN_TRY(expect(","));
        }
      }
      KILN_TRY(next());
      return e;
    }
    if (tok_.kind == Token::ident) {
      if (tok_.text == "true" || tok_.text == "false") {
        e.kind = Expr::Kind::boolean;
        e.flag = tok_.text == "true";
        KILN_TRY(next());
        return e;
      }
      e.str = tok_.text;
      KILN_TRY(next());
      if (!is("(") && !is("<")) {
        e.kind = Expr::Kind::ident;
        return e;
      }
      e.kind = Expr::Kind::invoke;
      if (is("<")) {
        KILN_TRY(next());
        std::string g;
        while (!is(">")) {
          if (tok_.kind == Token::end) return error("unterminated generic type");
          g += tok_.text;
          KILN_TRY(next());
        }
        e.generic = g;
        KILN_TRY(next());
      }
      KILN_TRY(expect("("));
      if (!is(")")) {
        for (;;) {
          // A named argument is IDENT '=' expr; look ahead without consuming.
          bool named = false;
          if (tok_.kind == Token::ident) {
            size_t p = pos_;
            while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
            named = p < s_.size() && s_[p] == '=';
          }
          if (named) {
            std::string name = tok_.text;
            KILN_TRY(next());
            KILN_TRY(expect("="));
            KILN_ASSIGN(Expr v, expr());
            e.named.push_back(NamedArg{std::move(name), std::move(v)});
          } else {
            if (!e.named.empty()) return error("a positional argument follows a named one");
            KILN_ASSIGN(Expr v, expr());
            e.items.push_back(std::move(v));
          }
          if (is(")")) break;
          KILN_TRY(expect(","));
        }
      }
      KILN_TRY(next());
      return e;
    }
    return error(fmt::format("expected an expression, found {}", describe()));
  }

  Result<std::vector<Assignment>> body() {
    std::vector<Assignment> v;
    KILN_TRY(expect("{"));
    while (!is("}")) {
      if (tok_.kind == Token::end) return error("expected '}' before end of file");
      Assignment a;
      KILN_ASSIGN(a.lhs, expr());
      if (a.lhs.kind != Expr::Kind::ident && a.lhs.kind != Expr::Kind::array &&
          a.lhs.kind != Expr::Kind::tuple)
        return error_at(a.lhs.line, a.lhs.col, "the left side of an assignment must be an identifier, array or tuple");
      KILN_TRY(expect("="));
      KILN_ASSIGN(a.rhs, expr());
      KILN_TRY(expect(";"));
      v.push_back(std::move(a));
    }
    KILN_TRY(next());
    return v;
  }

  Result<Fragment> fragment() {
    Fragment f;
    f.line = tok_.line, f.col = tok_.col;
    KILN_TRY(next()); // 'fragment'
    KILN_ASSIGN(f.name, identifier("a fragment name"));
    if (is("<")) { // generic fragment: <? = type>
      while (!is(">")) {
        if (tok_.kind == Token::end) return error("unterminated generic parameter");
        KILN_TRY(next());
      }
      KILN_TRY(next());
    }
    KILN_TRY(expect("("));
    if (!is(")")) {
      for (;;) {
        Param p;
        KILN_ASSIGN(p.name, identifier("a parameter name"));
        KILN_TRY(expect(":"));
        KILN_ASSIGN(p.type, type());
        if (is("=")) {
          KILN_TRY(next());
          p.has_default = true;
          KILN_ASSIGN(p.dflt, expr());
        }
        f.params.push_back(std::move(p));
        if (is(")")) break;
        KILN_TRY(expect(","));
      }
    }
    KILN_TRY(next());
    KILN_TRY(expect("->"));
    KILN_TRY(expect("("));
    for (;;) {
      KILN_ASSIGN(std::string r, identifier("a result name"));
      KILN_TRY(expect(":"));
      KILN_ASSIGN(std::string t, type());
      f.results.push_back(r);
      if (is(")")) break;
      KILN_TRY(expect(","));
    }
    KILN_TRY(next());
    if (is(";")) {
      KILN_TRY(next());
      return f;
    }
    f.has_body = true;
    KILN_ASSIGN(f.body, body());
    return f;
  }
};

Result<Document> Parser::document() {
  Document d;
  d.file = file_;
  KILN_TRY(next());
  if (!is("version")) return error(fmt::format("expected 'version', found {}", describe()));
  KILN_TRY(next());
  if (tok_.kind != Token::number) return error(fmt::format("expected a version number, found {}", describe()));
  d.version = std::strtod(tok_.text.c_str(), nullptr);
  if (tok_.text != "1.0") return error(fmt::format("NNEF version {} is not supported (expects 1.0)", tok_.text));
  KILN_TRY(next());
  KILN_TRY(expect(";"));
  while (is("extension")) {
    KILN_TRY(next());
    for (;;) {
      KILN_ASSIGN(std::string ext, identifier("an extension name"));
      d.extensions.push_back(ext);
      if (is(";")) break;
      KILN_TRY(expect(","));
    }
    KILN_TRY(next());
  }
  while (is("fragment")) {
    KILN_ASSIGN(Fragment f, fragment());
    d.fragments.push_back(std::move(f));
  }
  if (!is("graph")) return error(fmt::format("expected 'graph' or 'fragment', found {}", describe()));
  KILN_TRY(next());
  KILN_ASSIGN(d.graph_name, identifier("a graph name"));
  KILN_ASSIGN(d.inputs, ident_list());
  KILN_TRY(expect("->"));
  KILN_ASSIGN(d.outputs, ident_list());
  KILN_ASSIGN(d.body, body());
  if (tok_.kind != Token::end) return error(fmt::format("unexpected {} after the graph", describe()));
  return d;
}

} // namespace

Result<Document> parse_document(std::string_view text, const std::string &file) {
  Parser p(text, file);
  return p.document();
}

} // namespace kiln::nnef_fe
