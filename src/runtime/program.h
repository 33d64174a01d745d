// The validated, driver-neutral form of an artifact. Produced by parse_artifact() after the
// FlatBuffer has been verified and every index, offset and size checked, so drivers may trust
// it. It keeps no pointer into the artifact: executable code and constant data are reached
// through an ArtifactBytes, which exists only while a driver builds the module.
#pragma once

#include "kiln/artifact/lists.h"
#include "kiln/kiln.h"
#include "runtime/status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
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
#define KILN_X(field, name) bool field = false;
  KILN_DEVICE_FEATURES(KILN_X) // float16, ..., cooperative_matrix
#undef KILN_X
  uint32_t subgroup_size = 0, shared_memory_bytes = 0, max_workgroup_invocations = 0;
  uint64_t loop_iterations = 0; // per invocation, all loops counted; 0 = unknown
};

// The code of an executable (schema ExecutableCode): which kind it is and how large; the bytes
// themselves are read through ArtifactBytes::code() while a module is built.
struct SpirvCode {
  size_t words = 0; // at least the 5-word header, starting with the SPIR-V magic number
};
struct NativeCode {
  std::string format; // e.g. "elf-x86_64-so"; never empty
  size_t bytes = 0;   // never 0
};
using ExecutableCode = std::variant<SpirvCode, NativeCode>;

// "SPIR-V" or "native object (FORMAT)", for messages and `kiln inspect`.
std::string code_kind_name(const ExecutableCode &code);

struct Executable {
  std::string name;
  ExecutableCode code;
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
  // The graph ops it computes, comma-separated (artifact Dispatch.source_ops); "" when the
  // artifact does not say. Informational: kiln_command_info.ops.
  std::string source_ops;
  // Copy
  BufferRef src, dst;
  // Waits for every earlier command; false: may run together with those since the last one
  // that waits (artifact CommandEntry.waits).
  bool waits = true;
};

// The shared object a CPU artifact's executables point into (schema NativeLibrary); its bytes
// are read through ArtifactBytes::native_library().
struct NativeLibrary {
  std::string format; // "elf-x86_64-so"
  std::string isa;
  std::vector<std::string> cpu_features;
  size_t bytes = 0; // 0: the artifact has none
};

struct Program {
  std::array<uint8_t, 32> digest{}; // SHA-256 of the artifact content, checked at load
  std::string producer, target;
  std::vector<TensorSig> inputs, outputs;
  uint64_t constant_bytes = 0; // size of the constant data (read through ArtifactBytes)
  std::vector<Executable> executables;
  std::vector<Command> commands;
  // Run once when the module is loaded (schema Model.init_commands): every buffer they bind is
  // a constant; they fill the derived bytes that follow the constant data.
  std::vector<Command> init_commands;
  uint64_t derived_bytes = 0;
  uint64_t arena_bytes = 0;
  NativeLibrary native_library;
};

// The parts of a verified artifact a driver reads while it builds a module: the code of each
// executable and the constant data. It borrows the caller's bytes (or, when they are not
// 8-byte aligned, a temporary aligned copy), so it is valid only during module creation; no
// driver may keep a pointer into it.
class ArtifactBytes {
public:
  ArtifactBytes() = default;
  ArtifactBytes(const ArtifactBytes &) = delete;
  ArtifactBytes &operator=(const ArtifactBytes &) = delete;

  // The code of `executable`: SPIR-V words (count: SpirvCode::words) or native object bytes
  // (count: NativeCode::bytes), as Program::executables[executable].code says.
  const uint32_t *spirv(size_t executable) const {
    return reinterpret_cast<const uint32_t *>(code_[executable]);
  }
  const uint8_t *native(size_t executable) const { return code_[executable]; }
  // The bytes of Program::native_library (count: NativeLibrary::bytes), or nullptr.
  const uint8_t *native_library() const { return library_; }
  // Copies bytes [offset, offset + n) of the constant data (within Program::constant_bytes)
  // into `dst`: from memory, or with pread() from the artifact file when read_from_file() was
  // called, so the constant pages of a mapped file are never touched.
  Status read_constants(uint64_t offset, void *dst, size_t n) const;
  // Reads constants from `fd` (which must outlive this object) instead of from memory; the
  // bytes passed to parse_artifact must be the file's contents from offset 0. Called before
  // parse_artifact, which then also hashes the content from the file.
  void read_from_file(int fd) { fd_ = fd; }

private:
  friend Status parse_artifact(const void *, size_t, std::unique_ptr<Program> *, ArtifactBytes *);
  std::vector<const uint8_t *> code_; // per executable
  const uint8_t *library_ = nullptr;   // Model.native_library bytes
  const uint8_t *constants_ = nullptr; // constant data in memory
  uint64_t constants_offset_ = 0;      // its offset from the start of the artifact
  int fd_ = -1;
  std::unique_ptr<uint64_t[]> aligned_copy_; // only for misaligned input
};

// Verifies and validates `size` bytes of an artifact without copying them (unless misaligned).
// `bytes` borrows `data`, which must stay valid while `bytes` is used. KILN_INVALID_ARTIFACT
// with a message naming the first problem on failure.
Status parse_artifact(const void *data, size_t size, std::unique_ptr<Program> *out,
                      ArtifactBytes *bytes);

const char *buffer_kind_name(BufferKind kind);

} // namespace kiln::rt
