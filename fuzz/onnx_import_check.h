// Shared by fuzz_onnx and fuzz_onnx_text: imports serialized ModelProto bytes and checks the
// outcome. An error Status is fine; an imported module must verify and print as text IR.
#pragma once

#include "frontend/onnx/importer.h"
#include "ir/op_registry.h"
#include "ir/text.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::fuzz {

inline void import_and_check(const std::string &bytes) {
  onnx_fe::ImportOptions opt;
  // Large initializers are legal; keep them within the fuzzer's memory limit.
  opt.max_tensor_bytes = int64_t(16) << 20;
  // External data must resolve inside the model's folder; this one does not exist.
  auto r = onnx_fe::import_bytes(bytes, "/nonexistent/kiln-fuzz", opt);
  if (!r.is_ok()) return;
  for (const auto &f : r.value()->functions) {
    Status s = verify_function(*f);
    if (!s.is_ok()) {
      std::fprintf(stderr, "imported module does not verify: %s\n", s.message().c_str());
      std::abort();
    }
  }
  (void)print_module(*r.value());
}

} // namespace kiln::fuzz
