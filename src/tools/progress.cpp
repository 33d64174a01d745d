// ProgressLine (progress.h).
#include "tools/progress.h"

#include <unistd.h>

#include <cstdio>

namespace kiln::tools {

ProgressLine::ProgressLine(std::chrono::milliseconds delay)
    : enabled_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()),
      delay_(delay) {}

void ProgressLine::update(const std::string &text, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < delay_) return;
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  // \r to the line's start, the text, then erase what a longer earlier text left (ESC [K).
  std::fprintf(stderr, "\r%s\033[K", text.c_str());
  std::fflush(stderr);
}

void ProgressLine::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

} // namespace kiln::tools
