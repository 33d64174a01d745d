// Lexer of MLIR text as JAX prints it (StableHLO, func, chlo; pretty and generic forms): one
// token at a time with 1-based line and column. Locations `loc(...)` become one `loc` token so
// the parser can drop them wherever they appear; `//` comments are skipped.
#pragma once

#include "support/text_cursor.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::stablehlo_fe {

enum class Tok {
  eof,
  error,    // text holds the message
  bare_id,  // stablehlo.add, tensor, dense, true, DEFAULT, x, ...
  value_id, // %name, %0 or %0#1 (text without '%')
  symbol,   // @name or @"quoted" (decoded, without '@')
  caret_id, // ^bb0 (without '^')
  hash_id,  // #stablehlo.conv, #loc3 (without '#')
  bang_id,  // !stablehlo.token (without '!')
  integer,  // 12, 0x7F800000 (no sign)
  floating, // 1.5, 1.000000e+00 (no sign)
  string,   // decoded contents
  loc,      // a whole loc(...) (text is its spelling)
  lparen, rparen, lbracket, rbracket, lbrace, rbrace, less, greater, comma, colon, equal,
  arrow, minus, plus, question, star,
};

struct Token {
  Tok kind = Tok::eof;
  std::string text;
  int line = 1, col = 1;
};

class Lexer : private TextCursor {
public:
  explicit Lexer(std::string_view src) : TextCursor(src) {}

  Token next();

  // Raw text between the '<' that follows (after blanks) and its matching '>', for bodies that
  // do not split into ordinary tokens: `2x?x3xf32` in tensor types, `precision DEFAULT` in
  // #stablehlo<...> enums. Nested <>, "->" and strings are skipped over. On success `line`/`col`
  // locate the body's first character; on failure `body` holds the message.
  bool angle_body(std::string &body, int &line, int &col);
  // The character right after the last token (0 at the end); no blanks skipped.
  char peek_char() const { return peek(); }

  struct State {
    size_t pos = 0;
    int line = 1, col = 1;
  };
  State save() const { return {pos_, line_, col_}; }
  void restore(const State &s) {
    pos_ = s.pos;
    line_ = s.line;
    col_ = s.col;
  }

private:
  Token lex_number(Token t);
  Token lex_string(Token t);
  Token lex_sigil(Token t, Tok kind);
  Token lex_loc(Token t);
};

// Decodes MLIR string escapes (\" \\ \n \t and \HH); false on a malformed escape.
bool decode_string(std::string_view body, std::string &out);

} // namespace kiln::stablehlo_fe
