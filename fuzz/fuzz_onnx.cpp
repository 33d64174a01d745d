// libFuzzer target: ONNX import from bytes (protobuf parse, graph scan, every converter, shape
// inference and constant folding in the Builder). Any outcome other than a module that verifies
// or an error Status is a finding: a crash, a sanitizer report, an abort, or an imported module
// that fails verification or cannot be printed as text IR.
#include "frontend/onnx/importer.h"
#include "ir/op_registry.h"
#include "ir/text.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::onnx_fe::ImportOptions opt;
  // Large initializers are legal; keep them within the fuzzer's memory limit.
  opt.max_tensor_bytes = int64_t(16) << 20;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // External data must resolve inside the model's folder; this one does not exist.
  auto r = kiln::onnx_fe::import_bytes(bytes, "/nonexistent/kiln-fuzz", opt);
  if (!r.is_ok()) return 0;
  for (const auto &f : r.value()->functions) {
    kiln::Status s = kiln::verify_function(*f);
    if (!s.is_ok()) {
      std::fprintf(stderr, "imported module does not verify: %s\n", s.message().c_str());
      std::abort();
    }
  }
  (void)kiln::print_module(*r.value());
  return 0;
}
