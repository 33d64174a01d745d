// libFuzzer target: the StableHLO frontend, first the parser alone (syntax tree only), then the
// whole importer (parser, inlining of private functions, mapping onto core ops). Both promise
// to never crash on any input: every outcome other than a value or an error Status is a
// finding. An imported module must also verify.
#include "frontend/stablehlo/ast.h"
#include "frontend/stablehlo/importer.h"
#include "ir/op_registry.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  kiln::stablehlo_fe::ParseOptions popt;
  popt.max_constant_bytes = int64_t(16) << 20; // within the fuzzer's memory limit
  (void)kiln::stablehlo_fe::parse_module(text, "fuzz.mlir", popt);
  kiln::stablehlo_fe::ImportOptions iopt;
  iopt.max_constant_bytes = int64_t(16) << 20;
  auto r = kiln::stablehlo_fe::import_text(text, "fuzz.mlir", iopt);
  if (!r.is_ok()) return 0;
  for (const auto &f : r.value()->functions) {
    kiln::Status s = kiln::verify_function(*f);
    if (!s.is_ok()) {
      std::fprintf(stderr, "imported module does not verify: %s\n", s.message().c_str());
      std::abort();
    }
  }
  return 0;
}
