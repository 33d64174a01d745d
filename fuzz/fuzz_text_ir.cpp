// libFuzzer target: the text IR parser (lexer, literals, types, attributes, regions) followed by
// the verifier, which runs every op's shape function on whatever the text declares. A parsed
// module must also round-trip: print(parse(print(m))) == print(m). Anything else than a Status
// error or a module that round-trips is a finding.
#include "ir/text.h"
#include "ops/ops.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const kiln::OpRegistry &ops = kiln::core_ops();
  std::string text(reinterpret_cast<const char *>(data), size);
  auto r = kiln::parse_module(ops, text, "fuzz.kgraph");
  if (!r.is_ok()) return 0;
  for (const auto &f : r.value()->functions) (void)kiln::verify_function(*f);
  std::string printed = kiln::print_module(*r.value());
  auto again = kiln::parse_module(ops, printed, "printed.kgraph");
  if (!again.is_ok()) {
    std::fprintf(stderr, "printed module does not parse: %s\n%s\n",
                 again.status().message().c_str(), printed.c_str());
    std::abort();
  }
  std::string reprinted = kiln::print_module(*again.value());
  if (reprinted != printed) {
    std::fprintf(stderr, "round trip differs:\n--- printed\n%s\n--- reprinted\n%s\n",
                 printed.c_str(), reprinted.c_str());
    std::abort();
  }
  return 0;
}
