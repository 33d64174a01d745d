// Runtime-internal status: a move-only owner of a kiln_status, released at the C boundary.
#pragma once

#include "kiln/kiln.h"

#include <memory>
#include <sstream>
#include <string>
#include <utility>

struct kiln_status_s {
  kiln_status_code code;
  std::string message;
};

namespace kiln::rt {

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(kiln_status_code code, std::string message)
      : s_(new kiln_status_s{code, std::move(message)}) {}

  bool ok() const { return s_ == nullptr; }
  kiln_status_code code() const { return s_ ? s_->code : KILN_OK; }
  const std::string &message() const;
  // Hands the status to the C caller (NULL when OK).
  kiln_status release() { return s_.release(); }

private:
  std::unique_ptr<kiln_status_s> s_;
};

// Concatenates its arguments with operator<<.
template <typename... Args> std::string cat(const Args &...args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

template <typename... Args> Status error(kiln_status_code code, const Args &...args) {
  return Status(code, cat(args...));
}

} // namespace kiln::rt

#define KILN_RT_TRY(expr)                                                                          \
  do {                                                                                             \
    ::kiln::rt::Status kiln_rt_status_ = (expr);                                                   \
    if (!kiln_rt_status_.ok())                                                                     \
      return kiln_rt_status_;                                                                      \
  } while (0)
