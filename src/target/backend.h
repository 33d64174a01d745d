// The compiler-side backend interface: a backend is configured from a kir::TargetDesc and
// serialises one kernel-IR kernel into an executable payload for its runtime driver, reporting
// the device capabilities the payload uses (kir::Requirements, recorded in the artifact so the
// runtime can refuse a device that lacks them).
//
// Backends are registered explicitly: each backend folder (target/spirv, later target/cpu)
// exports a BackendInfo, and the compiler lists them in one function (compiler/backends.cpp).
// Nothing registers itself from a static constructor.
#pragma once

#include "kir/kir.h"
#include "kir/target.h"
#include "support/status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kiln::target {

// A SPIR-V module (Vulkan): its 32-bit words.
struct SpirvPayload {
  std::vector<uint32_t> words;
  bool operator==(const SpirvPayload &) const = default;
};

// Native machine code for the CPU driver: an object in `format` (e.g. "elf-x86_64-so").
struct NativePayload {
  std::string format;
  std::vector<uint8_t> bytes;
  bool operator==(const NativePayload &) const = default;
};

// What an artifact's executable holds; the schema's ExecutableCode union mirrors it.
using Payload = std::variant<SpirvPayload, NativePayload>;

// One native library shared by an artifact's executables (the C backend's shared object);
// each executable's payload then names its entry symbol (NativePayload format "symbol").
struct NativeLibrary {
  std::string format;                    // "elf-x86_64-so"
  std::string isa;                       // "x86-64-v3"
  std::vector<std::string> cpu_features; // what the code needs: "avx2", "fma", ...
  std::vector<uint8_t> bytes;
};

// "spirv" or "native".
const char *payload_kind_name(const Payload &p);

class Backend {
public:
  virtual ~Backend() = default;
  // The backend's registered name ("spirv").
  virtual std::string_view name() const = 0;
  // Serialises `k`, which must verify (kir::verify), for the target the backend was created
  // with. An error names the kernel and what the target lacks. `used`, when not null,
  // receives what the payload needs from the device (loop_iterations is left to the caller).
  virtual Result<Payload> serialize(const kir::Kernel &k, kir::Requirements *used) const = 0;
  // Called once after every kernel of a program was serialised, with their payloads in
  // executable order: a backend whose executables share one library builds it here (and may
  // rewrite the payloads). The default: no library.
  virtual Result<std::optional<NativeLibrary>> link(std::vector<Payload *> &payloads) const {
    (void)payloads;
    return std::optional<NativeLibrary>();
  }
};

// One registered backend: its name (matched against TargetDesc::backend) and its factory.
struct BackendInfo {
  const char *name;
  std::unique_ptr<Backend> (*create)(const kir::TargetDesc &target);
};

} // namespace kiln::target
