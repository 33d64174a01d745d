// libFuzzer target: the NNEF frontend. Inputs starting with the tensor-file magic (4E EF) go to
// the .dat reader, gzip streams (1F 8B) to the .tgz unpacker; everything else is graph.nnef text, parsed and imported with no model folder
// (variables are refused, so no file is read). Neither may crash; an imported module must
// verify.
#include "frontend/nnef/archive.h"
#include "frontend/nnef/importer.h"
#include "frontend/nnef/syntax.h"
#include "frontend/nnef/tensor_file.h"
#include "ir/op_registry.h"
#include "support/limits.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Tensors a file declares may be large; keep them within the fuzzer's memory limit.
  static const bool limited = [] {
    setenv("KILN_MAX_TENSOR_BYTES", "16M", 1);
    return kiln::load_limits_from_env().is_ok();
  }();
  (void)limited;
  if (size >= 2 && data[0] == 0x4E && data[1] == 0xEF) {
    // The declared shape is taken from the header so that well-formed files get past the check.
    kiln::Shape want;
    if (size >= 128) {
      const uint32_t rank = data[8] | data[9] << 8 | data[10] << 16 | uint32_t(data[11]) << 24;
      for (uint32_t i = 0; i < rank && i < 8; ++i) {
        const uint8_t *p = data + 12 + 4 * i;
        want.push_back(p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24);
      }
    }
    (void)kiln::nnef_fe::parse_tensor_file(data, size, want, "fuzz.dat");
    return 0;
  }
  if (size >= 2 && data[0] == 0x1F && data[1] == 0x8B) {
    (void)kiln::nnef_fe::unpack_tgz(data, size, "fuzz.tgz");
    return 0;
  }
  std::string_view text(reinterpret_cast<const char *>(data), size);
  (void)kiln::nnef_fe::parse_document(text, "fuzz.nnef");
  auto r = kiln::nnef_fe::import_text(text, "fuzz.nnef", "");
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
