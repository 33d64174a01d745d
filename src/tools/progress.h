// A one-line progress indicator on stderr for long CLI commands: shown only when stderr is a
// terminal (isatty), rewritten in place with '\r', at most ten times a second, and erased when
// done, so logs and pipes never see it.
#pragma once

#include <chrono>
#include <string>

namespace kiln::tools {

class ProgressLine {
public:
  // `delay`: show nothing until the command has run this long (short runs stay quiet).
  explicit ProgressLine(std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine &) = delete;
  ProgressLine &operator=(const ProgressLine &) = delete;

  bool enabled() const { return enabled_; }
  // Replaces the line with `text` (throttled unless `force`).
  void update(const std::string &text, bool force = false);
  // Erases the line (if one was shown).
  void clear();

private:
  bool enabled_ = false, shown_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  std::chrono::milliseconds delay_;
};

} // namespace kiln::tools
