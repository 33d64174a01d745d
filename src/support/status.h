// Error model of the compiler side: Status for operations that can fail because of
// user input (a model, a text file, a command line), Result<T> for those that also
// produce a value. Internal invariants use KILN_ASSERT and abort.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace kiln {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::make_shared<std::string>(std::move(message));
    return s;
  }
  bool is_ok() const { return message_ == nullptr; }
  explicit operator bool() const { return is_ok(); }
  const std::string &message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }
  // Prefixes the message with context ("node 'x': ..."); no-op on success.
  Status with_context(const std::string &context) const {
    if (is_ok()) return *this;
    return error(context + ": " + *message_);
  }

private:
  std::shared_ptr<std::string> message_;
};

template <class T> class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {
    if (std::get<Status>(v_).is_ok()) {
      std::fprintf(stderr, "kiln internal error: Result built from an ok Status\n");
      std::abort();
    }
  }
  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  T &value() & { return std::get<0>(v_); }
  const T &value() const & { return std::get<0>(v_); }
  T &&value() && { return std::get<0>(std::move(v_)); }
  T *operator->() { return &value(); }
  T &operator*() { return value(); }
  Status status() const { return is_ok() ? Status::ok() : std::get<1>(v_); }

private:
  std::variant<T, Status> v_;
};

[[noreturn]] void assert_fail(const char *expr, const char *file, int line, const char *msg);

} // namespace kiln

#define KILN_ASSERT(cond, msg)                                                                     \
  do {                                                                                             \
    if (!(cond)) ::kiln::assert_fail(#cond, __FILE__, __LINE__, msg);                              \
  } while (0)

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

#define KILN_TRY(expr)                                                                             \
  do {                                                                                             \
    ::kiln::Status kiln_status_ = (expr);                                                          \
    if (!kiln_status_.is_ok()) return kiln_status_;                                                \
  } while (0)

#define KILN_ASSIGN_IMPL(tmp, lhs, expr)                                                           \
  auto tmp = (expr);                                                                               \
  if (!tmp.is_ok()) return tmp.status();                                                           \
  lhs = std::move(tmp).value()

// KILN_ASSIGN(auto x, compute()); returns the error Status from the enclosing function.
#define KILN_ASSIGN(lhs, expr) KILN_ASSIGN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
