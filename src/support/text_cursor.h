// A cursor over source text for the hand-written lexers (text IR, MLIR/StableHLO): the byte
// offset with its 1-based line and column (columns count bytes), blank and `//` comment
// skipping, and the character classes both lexers share.
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln {

inline bool is_digit_char(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
// The value of a hexadecimal digit, -1 for any other character.
inline int hex_digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class TextCursor {
public:
  explicit TextCursor(std::string_view src) : src_(src) {}

protected:
  // The character `k` bytes ahead ('\0' past the end).
  char peek(size_t k = 0) const { return pos_ + k < src_.size() ? src_[pos_ + k] : '\0'; }
  // Steps one byte, keeping line and column.
  void advance() {
    if (pos_ >= src_.size()) return;
    if (src_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  // Skips blanks and `//` comments (to the end of their line).
  void skip_space() {
    for (;;) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < src_.size() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

} // namespace kiln
