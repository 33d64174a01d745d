// libFuzzer target: the runtime's load path through the public C API on the null device: the
// FlatBuffers verifier, kiln's own checks of every index, offset and size (runtime/artifact.cpp),
// the signature and command queries, and a run with zero-filled tensors. A load may fail with
// INVALID_ARTIFACT or UNSUPPORTED; a crash, a sanitizer report or KILN_INTERNAL (an escaped
// exception) is a finding.
#include "kiln/artifact/digest.h"
#include "kiln/kiln.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kMaxRunBytes = size_t(16) << 20; // run only modules whose tensors fit this

void expect_no_internal(kiln_status s, const char *what) {
  if (kiln_status_code_of(s) == KILN_INTERNAL) {
    std::fprintf(stderr, "%s: %s\n", what, kiln_status_message(s));
    std::abort();
  }
  kiln_status_free(s);
}

kiln_device *null_device() {
  static kiln_device *device = [] {
    kiln_device *d = nullptr;
    kiln_status s = kiln_device_open("null", &d);
    if (s) {
      std::fprintf(stderr, "cannot open the null device: %s\n", kiln_status_message(s));
      std::abort();
    }
    return d;
  }();
  return device;
}

struct Tensors {
  std::vector<kiln_tensor> views;
  std::vector<std::vector<unsigned char>> storage;
  size_t total = 0;
};

// Zero-filled tensors matching a signature; false when they would exceed kMaxRunBytes.
bool make_tensors(const kiln_module *m, bool inputs, Tensors *out) {
  size_t n = inputs ? kiln_module_input_count(m) : kiln_module_output_count(m);
  for (size_t i = 0; i < n; ++i) {
    kiln_tensor_info info;
    kiln_status s = inputs ? kiln_module_input_info(m, i, &info) : kiln_module_output_info(m, i, &info);
    if (s) {
      expect_no_internal(s, "tensor info");
      return false;
    }
    if (info.bytes > kMaxRunBytes - out->total) return false;
    out->total += info.bytes;
    out->storage.emplace_back(info.bytes);
    kiln_tensor t{info.dtype, info.rank, info.shape, out->storage.back().data(), info.bytes};
    out->views.push_back(t);
  }
  for (size_t i = 0; i < n; ++i) out->views[i].data = out->storage[i].data();
  return true;
}

} // namespace

// Loads one artifact image and exercises the module; 0 always (findings abort).
int load_and_run(const uint8_t *data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const uint8_t empty = 0;
  // The input as it is: exercises the digest trailer check.
  load_and_run(size ? data : &empty, size);
  // The input as an unsealed payload, sealed here, so mutations reach the FlatBuffers verifier
  // and kiln's own checks instead of stopping at the checksum. A sealed seed is unsealed first.
  size_t payload = size;
  if (size >= kiln::artifact::kTrailerBytes &&
      std::memcmp(data + size - 8, kiln::artifact::kTrailerTag, 8) == 0)
    payload = size - kiln::artifact::kTrailerBytes;
  std::vector<uint8_t> sealed(data, data + payload);
  kiln::artifact::seal_artifact(&sealed);
  return load_and_run(sealed.data(), sealed.size());
}

int load_and_run(const uint8_t *data, size_t size) {
  kiln_module *m = nullptr;
  kiln_status s = kiln_module_load_memory(null_device(), data, size, &m);
  if (s) {
    expect_no_internal(s, "load");
    return 0;
  }
  size_t commands = kiln_module_command_count(m);
  for (size_t i = 0; i < commands; ++i) {
    kiln_command_info info;
    kiln_status s = kiln_module_command_info(m, i, &info);
    if (!s) { // ops: a terminated string, "" when the artifact does not record it
      volatile size_t ops_length = std::strlen(info.ops);
      (void)ops_length;
    }
    expect_no_internal(s, "command info");
  }
  Tensors in, out;
  if (make_tensors(m, true, &in) && make_tensors(m, false, &out)) {
    std::vector<uint64_t> ns(commands);
    kiln_run_options opt{ns.data(), ns.size()};
    expect_no_internal(kiln_module_run_with_options(m, in.views.data(), in.views.size(),
                                                    out.views.data(), out.views.size(), &opt),
                       "run");
  }
  kiln_module_release(m);
  return 0;
}
