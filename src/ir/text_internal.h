// Internals of the textual IR shared by the printer and the parser (not a public API): scalar
// literal formatting and decoding, string escapes, identifier rules and the lexer.
#pragma once

#include "ir/graph.h"
#include "support/text_cursor.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::text {

// Tensors with at most this many elements print as `dense<[...]>`, larger ones as
// `dense_hex<"0x...">`.
inline constexpr int64_t kDenseMaxElements = 32;

// [A-Za-z_][A-Za-z0-9_.$]*: printable bare as %name, @name or an attribute key.
bool is_identifier(std::string_view s);

// Quoted string with escapes: \" \\ \n \t and \HH for other control bytes.
std::string quote(std::string_view s);

// A double that reads back exactly (shortest form, always with '.', 'e', "inf" or "nan").
std::string format_double(double v);
// Element `i` of `t` as a literal ("1.5", "-3", "true").
std::string format_element(const Tensor &t, int64_t i);

// Decodes one element literal (the text of a number, true/false, [-]inf, [-]nan) into the
// bytes of dtype `dt` at `dst`. Returns an empty string on success, else the reason.
std::string encode_element(DType dt, std::string_view text, std::byte *dst);
// Parses a double literal (number or [-]inf/[-]nan); false when malformed.
bool parse_double(std::string_view text, double &out);

enum class Tok {
  eof,
  error,      // text holds the message
  value_id,   // %name or %12 (text without the sigil)
  func_id,    // @name or @"quoted" (decoded)
  block_id,   // ^bb0
  ident,      // func, kiln.add, tensor, dense, true, inf, ...
  integer,    // -12
  floating,   // 1.5, -2e+10, -inf, -nan
  string,     // decoded contents
  lparen, rparen, lbrace, rbrace, lbracket, rbracket, less, greater, comma, colon, equal,
  arrow,
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
  // Raw text between '<' and the matching '>' right at the current position (used for the
  // `2x?x3xf32` part of tensor types, which does not split into ordinary tokens). Returns
  // false with `body` holding an error message when there is no '<' ... '>'.
  bool angle_body(std::string &body, int &line, int &col);
  // Where the next token would start after whitespace and comments (for error messages).
  void position(int &line, int &col) const { line = line_, col = col_; }

private:
  Token lex_number(Token t);
  Token lex_string(Token t);
  Token lex_sigil(Token t, Tok kind);
};

} // namespace kiln::text
