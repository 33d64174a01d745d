// libFuzzer target: ONNX import from bytes (protobuf parse, graph scan, every converter, shape
// inference and constant folding in the Builder). Any outcome other than a module that verifies
// or an error Status is a finding: a crash, a sanitizer report, an abort, or an imported module
// that fails verification or cannot be printed as text IR.
#include "onnx_import_check.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::import_and_check(std::string(reinterpret_cast<const char *>(data), size));
  return 0;
}
