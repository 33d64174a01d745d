// libFuzzer target: the TFLite frontend on arbitrary bytes (flatbuffer verification, index and
// size checks, densification, conversion). It promises to never crash: every outcome other than
// a module or an error Status is a finding. An imported module must also verify.
#include "frontend/tflite/importer.h"
#include "ir/op_registry.h"
#include "support/limits.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Tensors a file declares may be large; keep them within the fuzzer's memory limit.
  static const bool limited = [] {
    setenv("KILN_MAX_TENSOR_BYTES", "16M", 1);
    return kiln::load_limits_from_env().is_ok();
  }();
  (void)limited;
  // A private, aligned copy: the importer reads the flatbuffer in place.
  std::vector<uint8_t> buf(data, data + size);
  auto r = kiln::tflite_fe::import_buffer(buf, "fuzz.tflite");
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
