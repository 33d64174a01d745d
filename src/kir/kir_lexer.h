// Tokens of the kernel-IR text form (kir_parser.h), on the shared TextCursor.
#pragma once

#include "support/text_cursor.h"

#include <string>
#include <string_view>

namespace kiln::kir::text {

enum class Tok { eof, ident, string, number, punct, error };

struct Token {
  Tok kind = Tok::eof;
  std::string text; // ident/number/punct spelling, string contents, or the error message
  int line = 1, col = 1;
};

class Lexer : public TextCursor {
public:
  explicit Lexer(std::string_view src) : TextCursor(src) {}
  Token next();

private:
  Token number(Token t);
  Token string(Token t);
  Token punct(Token t);
};

} // namespace kiln::kir::text
