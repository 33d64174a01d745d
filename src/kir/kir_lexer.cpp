// Lexer of the kernel-IR text form.
#include "kir/kir_lexer.h"

#include <fmt/format.h>

namespace kiln::kir::text {

namespace {

bool is_ident_char(char c) { return is_alpha_char(c) || is_digit_char(c) || c == '.'; }

} // namespace

Token Lexer::next() {
  skip_space();
  Token t;
  t.line = line_;
  t.col = col_;
  const char c = peek();
  if (c == '\0' && pos_ >= src_.size()) return t;
  if (is_digit_char(c) || (c == '-' && (is_digit_char(peek(1)) || src_.substr(pos_, 4) == "-inf")))
    return number(std::move(t));
  if (is_alpha_char(c)) {
    t.kind = Tok::ident;
    while (is_ident_char(peek())) {
      t.text += peek();
      advance();
    }
    return t;
  }
  if (c == '"') return string(std::move(t));
  return punct(std::move(t));
}

// [-] digits [. digits] [e [+-] digits] letters*, or -inf; the parser reads the value.
Token Lexer::number(Token t) {
  t.kind = Tok::number;
  auto take = [&] {
    t.text += peek();
    advance();
  };
  if (peek() == '-') take();
  if (peek() == 'i') {
    for (int i = 0; i < 3; ++i) take();
    return t;
  }
  while (is_digit_char(peek())) take();
  if (peek() == '.' && is_digit_char(peek(1))) {
    take();
    while (is_digit_char(peek())) take();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (is_digit_char(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit_char(peek(2))))) {
    take();
    if (peek() == '+' || peek() == '-') take();
    while (is_digit_char(peek())) take();
  }
  while (is_alpha_char(peek()) || is_digit_char(peek())) take();
  return t;
}

// "..." with \\, \", \n, \t and \xHH escapes.
Token Lexer::string(Token t) {
  advance();
  for (;;) {
    const char c = peek();
    if (c == '"') {
      advance();
      t.kind = Tok::string;
      return t;
    }
    if (c == '\n' || (c == '\0' && pos_ >= src_.size())) {
      t.kind = Tok::error;
      t.text = "unterminated string";
      return t;
    }
    advance();
    if (c != '\\') {
      t.text += c;
      continue;
    }
    const char e = peek();
    int h1 = hex_digit_value(peek(1)), h2 = hex_digit_value(peek(2));
    if (e == '\\' || e == '"') {
      t.text += e;
    } else if (e == 'n') {
      t.text += '\n';
    } else if (e == 't') {
      t.text += '\t';
    } else if (e == 'x' && h1 >= 0 && h2 >= 0) {
      t.text += static_cast<char>(h1 * 16 + h2);
      advance();
      advance();
    } else {
      t.kind = Tok::error;
      t.text = "invalid escape in string";
      return t;
    }
    advance();
  }
}

Token Lexer::punct(Token t) {
  static constexpr std::string_view two[] = {"<<", ">>", "==", "!=", "<=", ">=", "&&", "||"};
  for (std::string_view p : two) {
    if (src_.substr(pos_, 2) == p) {
      t.kind = Tok::punct;
      t.text = std::string(p);
      advance();
      advance();
      return t;
    }
  }
  const char c = peek();
  if (std::string_view("(){}[],:=!+-*/%&|^<>").find(c) != std::string_view::npos) {
    t.kind = Tok::punct;
    t.text = std::string(1, c);
    advance();
    return t;
  }
  t.kind = Tok::error;
  const auto byte = static_cast<unsigned char>(c);
  t.text = byte >= 0x20 && byte < 0x7f ? fmt::format("unexpected character '{}'", c)
                                       : fmt::format("unexpected byte 0x{:02x}", byte);
  return t;
}

} // namespace kiln::kir::text
