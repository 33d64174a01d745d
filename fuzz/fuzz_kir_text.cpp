// libFuzzer target: the kernel-IR text parser (lexer, literals, types, scopes) and the kernel
// verifier on whatever parses. Every parsed kernel must round-trip: its printed text parses
// back and prints the same. Anything else than a Status error or a kernel that round-trips
// is a finding (an assertion in a node factory included).
#include "kir/kir_parser.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto r = kiln::kir::parse_kernels(text, "fuzz.kir");
  if (!r.is_ok()) return 0;
  for (const kiln::kir::Kernel &k : r.value()) {
    (void)kiln::kir::verify(k);
    kiln::Status s = kiln::kir::check_round_trip(k);
    if (!s.is_ok()) {
      std::fprintf(stderr, "kernel-IR round trip failed: %s\n", s.message().c_str());
      std::abort();
    }
  }
  return 0;
}
