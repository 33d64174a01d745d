// The validated, driver-neutral form of an artifact. Produced by parse_artifact() after the
// FlatBuffer has been verified and every index, offset and size checked, so drivers may trust
// it. It owns a copy of the artifact bytes; constant data and SPIR-V point into that copy.
#pragma once

#include "kiln/kiln.h"
#include "runtime/status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

struct TensorSig {
  std::string name;
  kiln_dtype dtype = KILN_F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

// What one executable needs from the device (schema Requirements).
struct Requirements {
  bool float16 = false, float64 = false, int8 = false, int16 = false, int64 = false;
  bool storage8 = false, storage16 = false, cooperative_matrix = false;
  uint32_t subgroup_size = 0, shared_memory_bytes = 0, max_workgroup_invocations = 0;
};

struct Executable {
  std::string name;
  const uint32_t *spirv = nullptr; // into Program::bytes
  size_t spirv_words = 0;
  std::string entry_point;
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  uint32_t num_bindings = 0;
  uint32_t push_constant_bytes = 0;
  Requirements requirements;
};

enum class BufferKind : uint8_t { constant = 0, input, output, transient };

// A byte range of a buffer. For constants, `offset` is already absolute in the constant data.
struct BufferRef {
  BufferKind kind = BufferKind::transient;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
};

struct Command {
  kiln_command_kind kind = KILN_COMMAND_DISPATCH;
  // Dispatch
  uint32_t executable = 0;
  std::vector<BufferRef> bindings;
  std::vector<uint8_t> push_constants;
  std::array<uint32_t, 3> workgroups{0, 0, 0};
  // Copy
  BufferRef src, dst;
};

struct Program {
  std::string producer, target;
  std::vector<TensorSig> inputs, outputs;
  const uint8_t *constant_data = nullptr; // into bytes
  uint64_t constant_bytes = 0;
  std::vector<Executable> executables;
  std::vector<Command> commands;
  uint64_t arena_bytes = 0;
  // The artifact copy (64-byte aligned storage) everything above may point into.
  std::shared_ptr<uint8_t[]> bytes;
  size_t size = 0;
};

// Verifies and validates `size` bytes of an artifact; copies them. KILN_INVALID_ARTIFACT with a
// message naming the first problem on failure.
Status parse_artifact(const void *data, size_t size, std::unique_ptr<Program> *out);

const char *buffer_kind_name(BufferKind kind);

} // namespace kiln::rt
