// Lexer of the textual IR: one token at a time with line and column (1-based, in bytes).
#include "ir/text_internal.h"

#include <fmt/format.h>

namespace kiln::text {

namespace {

bool is_ident_char(char c) { return is_alpha_char(c) || is_digit_char(c) || c == '.' || c == '$'; }

Token make_error(Token t, std::string msg) {
  t.kind = Tok::error;
  t.text = std::move(msg);
  return t;
}

} // namespace

Token Lexer::lex_number(Token t) {
  size_t start = pos_;
  bool is_float_tok = false;
  if (peek() == '-') advance();
  if (!is_digit_char(peek())) {
    // "-inf" / "-nan"
    size_t s = pos_;
    while (is_alpha_char(peek())) advance();
    std::string_view word = src_.substr(s, pos_ - s);
    if (word != "inf" && word != "nan") return make_error(t, "expected a number after '-'");
    t.kind = Tok::floating;
    t.text = std::string(src_.substr(start, pos_ - start));
    return t;
  }
  while (is_digit_char(peek())) advance();
  if (peek() == '.' && is_digit_char(peek(1))) {
    is_float_tok = true;
    advance();
    while (is_digit_char(peek())) advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (is_digit_char(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit_char(peek(2))))) {
    is_float_tok = true;
    advance();
    if (peek() == '+' || peek() == '-') advance();
    while (is_digit_char(peek())) advance();
  }
  t.kind = is_float_tok ? Tok::floating : Tok::integer;
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

Token Lexer::lex_string(Token t) {
  advance(); // opening quote
  std::string s;
  for (;;) {
    if (pos_ >= src_.size() || peek() == '\n') return make_error(t, "unterminated string");
    char c = peek();
    advance();
    if (c == '"') break;
    if (c != '\\') {
      s += c;
      continue;
    }
    char e = peek();
    if (e == '"' || e == '\\') s += e, advance();
    else if (e == 'n') s += '\n', advance();
    else if (e == 't') s += '\t', advance();
    else if (hex_digit_value(e) >= 0 && hex_digit_value(peek(1)) >= 0) {
      s += static_cast<char>(hex_digit_value(e) * 16 + hex_digit_value(peek(1)));
      advance();
      advance();
    } else {
      return make_error(t, "invalid escape in string");
    }
  }
  t.kind = Tok::string;
  t.text = std::move(s);
  return t;
}

Token Lexer::lex_sigil(Token t, Tok kind) {
  char sigil = peek();
  advance();
  if (kind == Tok::func_id && peek() == '"') {
    Token s = lex_string(t);
    if (s.kind == Tok::error) return s;
    s.kind = Tok::func_id;
    return s;
  }
  size_t start = pos_;
  if (is_digit_char(peek()) && kind == Tok::value_id) {
    while (is_digit_char(peek())) advance();
  } else if (is_alpha_char(peek()) || (kind == Tok::block_id && is_digit_char(peek()))) {
    while (is_ident_char(peek())) advance();
  } else {
    return make_error(t, fmt::format("expected a name after '{}'", sigil));
  }
  t.kind = kind;
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

Token Lexer::next() {
  skip_space();
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= src_.size()) return t; // eof
  char c = peek();
  if (c == '%') return lex_sigil(t, Tok::value_id);
  if (c == '@') return lex_sigil(t, Tok::func_id);
  if (c == '^') return lex_sigil(t, Tok::block_id);
  if (c == '"') return lex_string(t);
  if (is_digit_char(c) || (c == '-' && peek(1) != '>')) return lex_number(t);
  if (is_alpha_char(c)) {
    size_t start = pos_;
    while (is_ident_char(peek())) advance();
    t.kind = Tok::ident;
    t.text = std::string(src_.substr(start, pos_ - start));
    return t;
  }
  if (c == '-') { // "->"
    advance();
    advance();
    t.kind = Tok::arrow;
    t.text = "->";
    return t;
  }
  static constexpr std::pair<char, Tok> punct[] = {
      {'(', Tok::lparen},   {')', Tok::rparen},   {'{', Tok::lbrace}, {'}', Tok::rbrace},
      {'[', Tok::lbracket}, {']', Tok::rbracket}, {'<', Tok::less},   {'>', Tok::greater},
      {',', Tok::comma},    {':', Tok::colon},    {'=', Tok::equal},
  };
  for (auto [ch, kind] : punct) {
    if (c != ch) continue;
    advance();
    t.kind = kind;
    t.text = std::string(1, c);
    return t;
  }
  unsigned char u = static_cast<unsigned char>(c);
  return make_error(t, u >= 0x20 && u < 0x7f ? fmt::format("unexpected character '{}'", c)
                                             : fmt::format("unexpected byte 0x{:02X}", u));
}

bool Lexer::angle_body(std::string &body, int &line, int &col) {
  line = line_;
  col = col_;
  if (peek() != '<') {
    body = "expected '<'";
    return false;
  }
  advance();
  line = line_;
  col = col_;
  size_t start = pos_;
  while (pos_ < src_.size() && peek() != '>' && peek() != '\n') advance();
  if (peek() != '>') {
    body = "expected '>' to close the type";
    return false;
  }
  body = std::string(src_.substr(start, pos_ - start));
  advance();
  return true;
}

} // namespace kiln::text
