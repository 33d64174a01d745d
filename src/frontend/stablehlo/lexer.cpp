// Lexer of MLIR text: bytes in, tokens out. Columns count bytes.
#include "frontend/stablehlo/lexer.h"

namespace kiln::stablehlo_fe {

namespace {

bool is_bare_char(char c) { return is_alpha_char(c) || is_digit_char(c) || c == '.' || c == '$'; }
// Characters of %name, #name, ^name and !name after the sigil.
bool is_suffix_char(char c) { return is_bare_char(c) || c == '-'; }

Token make_error(Token t, std::string msg) {
  t.kind = Tok::error;
  t.text = std::move(msg);
  return t;
}

} // namespace

bool decode_string(std::string_view body, std::string &out) {
  out.clear();
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= body.size()) return false;
    char e = body[++i];
    if (e == '"' || e == '\\') {
      out.push_back(e);
    } else if (e == 'n') {
      out.push_back('\n');
    } else if (e == 't') {
      out.push_back('\t');
    } else {
      if (i + 1 >= body.size()) return false;
      int hi = hex_digit_value(e), lo = hex_digit_value(body[i + 1]);
      if (hi < 0 || lo < 0) return false;
      out.push_back(static_cast<char>(hi * 16 + lo));
      ++i;
    }
  }
  return true;
}

Token Lexer::lex_number(Token t) {
  size_t start = pos_;
  if (peek() == '0' && peek(1) == 'x' && hex_digit_value(peek(2)) >= 0) {
    advance();
    advance();
    while (hex_digit_value(peek()) >= 0) advance();
    t.kind = Tok::integer;
    t.text = std::string(src_.substr(start, pos_ - start));
    return t;
  }
  while (is_digit_char(peek())) advance();
  t.kind = Tok::integer;
  if (peek() == '.') {
    t.kind = Tok::floating;
    advance();
    while (is_digit_char(peek())) advance();
    if ((peek() == 'e' || peek() == 'E') &&
        (is_digit_char(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit_char(peek(2))))) {
      advance();
      if (peek() == '+' || peek() == '-') advance();
      while (is_digit_char(peek())) advance();
    }
  }
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

Token Lexer::lex_string(Token t) {
  advance(); // opening quote
  size_t start = pos_;
  for (;;) {
    char c = peek();
    if (pos_ >= src_.size() || c == '\n') return make_error(t, "unterminated string");
    if (c == '"') break;
    if (c == '\\') advance();
    advance();
  }
  std::string_view body = src_.substr(start, pos_ - start);
  advance(); // closing quote
  t.kind = Tok::string;
  if (!decode_string(body, t.text)) return make_error(t, "invalid escape in string");
  return t;
}

Token Lexer::lex_sigil(Token t, Tok kind) {
  char sigil = peek();
  advance();
  if (sigil == '@' && peek() == '"') {
    Token s = lex_string(t);
    if (s.kind == Tok::error) return s;
    s.kind = Tok::symbol;
    return s;
  }
  size_t start = pos_;
  if (is_digit_char(peek())) {
    while (is_digit_char(peek())) advance();
  } else {
    while (is_suffix_char(peek())) advance();
  }
  if (pos_ == start) return make_error(t, std::string("expected a name after '") + sigil + "'");
  // %0#1: a use of one result of a multi-result op.
  if (kind == Tok::value_id && peek() == '#' && is_digit_char(peek(1))) {
    advance();
    while (is_digit_char(peek())) advance();
  }
  t.kind = kind;
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

// loc(...) with balanced parentheses; strings may hold any parenthesis.
Token Lexer::lex_loc(Token t) {
  size_t start = pos_ - 3;
  int depth = 0;
  for (;;) {
    if (pos_ >= src_.size()) return make_error(t, "unterminated location 'loc('");
    char c = peek();
    if (c == '"') {
      advance();
      while (pos_ < src_.size() && peek() != '"' && peek() != '\n') {
        if (peek() == '\\') advance();
        advance();
      }
      if (peek() != '"') return make_error(t, "unterminated string in location");
    } else if (c == '(') {
      ++depth;
    } else if (c == ')') {
      if (--depth == 0) {
        advance();
        break;
      }
    }
    advance();
  }
  t.kind = Tok::loc;
  t.text = std::string(src_.substr(start, pos_ - start));
  return t;
}

Token Lexer::next() {
  skip_space();
  Token t;
  t.line = line_;
  t.col = col_;
  if (pos_ >= src_.size()) return t;
  char c = peek();
  if (is_digit_char(c)) return lex_number(t);
  if (is_alpha_char(c)) {
    size_t start = pos_;
    while (is_bare_char(peek())) advance();
    t.kind = Tok::bare_id;
    t.text = std::string(src_.substr(start, pos_ - start));
    if (t.text == "loc" && peek() == '(') return lex_loc(t);
    return t;
  }
  switch (c) {
  case '"': return lex_string(t);
  case '%': return lex_sigil(t, Tok::value_id);
  case '@': return lex_sigil(t, Tok::symbol);
  case '^': return lex_sigil(t, Tok::caret_id);
  case '#': return lex_sigil(t, Tok::hash_id);
  case '!': return lex_sigil(t, Tok::bang_id);
  default: break;
  }
  struct Punct {
    const char *spelling;
    Tok kind;
  };
  static const Punct puncts[] = {
      {"->", Tok::arrow},   {"(", Tok::lparen},   {")", Tok::rparen}, {"[", Tok::lbracket},
      {"]", Tok::rbracket}, {"{", Tok::lbrace},   {"}", Tok::rbrace}, {"<", Tok::less},
      {">", Tok::greater},  {",", Tok::comma},    {":", Tok::colon},  {"=", Tok::equal},
      {"-", Tok::minus},    {"+", Tok::plus},     {"?", Tok::question}, {"*", Tok::star},
  };
  if (c == '{' && peek(1) == '-' && peek(2) == '#')
    return make_error(t, "file metadata '{-# ... #-}' (dialect resources) is not supported");
  for (const Punct &p : puncts) {
    std::string_view s(p.spelling);
    if (src_.substr(pos_, s.size()) == s) {
      for (size_t i = 0; i < s.size(); ++i) advance();
      t.kind = p.kind;
      t.text = std::string(s);
      return t;
    }
  }
  std::string shown = (c >= 32 && c < 127) ? std::string(1, c) : "\\x" + std::to_string(
                                                                         static_cast<unsigned char>(c));
  return make_error(t, "unexpected character '" + shown + "'");
}

bool Lexer::angle_body(std::string &body, int &line, int &col) {
  skip_space();
  if (peek() != '<') {
    line = line_;
    col = col_;
    body = "expected '<'";
    return false;
  }
  advance();
  line = line_;
  col = col_;
  size_t start = pos_;
  int depth = 1;
  for (;;) {
    if (pos_ >= src_.size()) {
      body = "unterminated '<...>'";
      return false;
    }
    char c = peek();
    if (c == '"') {
      advance();
      while (pos_ < src_.size() && peek() != '"' && peek() != '\n') {
        if (peek() == '\\') advance();
        advance();
      }
      if (peek() != '"') {
        body = "unterminated string";
        return false;
      }
    } else if (c == '-' && peek(1) == '>') {
      advance();
    } else if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (--depth == 0) break;
    }
    advance();
  }
  body = std::string(src_.substr(start, pos_ - start));
  advance(); // '>'
  return true;
}

} // namespace kiln::stablehlo_fe
