#include "support/limits.h"

#include <cstdlib>
#include <fmt/format.h>
#include <string>

namespace kiln {

namespace {

Limits g_limits;

// "4096", "64K", "2G": a positive count of bytes; nullopt-like -1 on error.
int64_t parse_bytes(const std::string &s) {
  if (s.empty() || s.size() > 24) return -1;
  size_t i = 0;
  int64_t v = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (s[i] - '0');
  }
  if (i == 0) return -1;
  int shift = 0;
  if (i + 1 == s.size()) {
    switch (s[i]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    default: return -1;
    }
  } else if (i != s.size()) {
    return -1;
  }
  if (v > (INT64_MAX >> shift)) return -1;
  return v << shift;
}

Status read_var(const char *name, int64_t max, int64_t &out) {
  const char *s = std::getenv(name);
  if (!s) return Status::ok();
  int64_t v = parse_bytes(s);
  if (v <= 0 || v > max)
    return Status::error(fmt::format("{}='{}' is not a positive count (digits with an optional "
                                     "K, M or G suffix, at most {})",
                                     name, s, max));
  out = v;
  return Status::ok();
}

} // namespace

const Limits &limits() { return g_limits; }

Status load_limits_from_env() {
  Limits l;
  KILN_TRY(read_var("KILN_MAX_TENSOR_BYTES", INT64_MAX, l.max_tensor_bytes));
  KILN_TRY(read_var("KILN_MAX_MODEL_BYTES", INT64_MAX, l.max_model_bytes));
  KILN_TRY(read_var("KILN_MAX_FOLD_BYTES", INT64_MAX, l.max_fold_bytes));
  int64_t depth = l.max_graph_depth;
  KILN_TRY(read_var("KILN_MAX_GRAPH_DEPTH", 100000, depth));
  l.max_graph_depth = static_cast<int>(depth);
  KILN_TRY(read_var("KILN_MAX_NODES", int64_t(1) << 40, l.max_nodes));
  g_limits = l;
  return Status::ok();
}

} // namespace kiln
