// The compiled program before serialisation: logical buffers (constants, model inputs and
// outputs, transients in the arena), executables (backend payloads with their needs) and the
// ordered command list. Lowering fills it, the memory plan places transients, the artifact writer
// serialises it.
#pragma once

#include "ir/graph.h"
#include "kir/target.h"
#include "target/backend.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::compiler {

enum class BufKind : uint8_t { constant, input, output, transient };

// Storage of one or more graph values (a reshape shares its operand's buffer).
struct Buffer {
  BufKind kind = BufKind::transient;
  uint32_t index = 0;   // input / output / constant index (unused for transients)
  uint64_t size = 0;    // bytes
  uint64_t offset = 0;  // arena offset of a transient (memory plan)
  Tensor data;          // a constant's value
  // A constant computed at load by Program::init_commands (no data in the artifact: it lives
  // past the constant data, in the derived bytes).
  bool derived = false;
};

// A byte range of a buffer.
struct ByteRange {
  uint64_t offset = 0, size = 0;
};

struct Dispatch {
  uint32_t executable = 0;
  std::vector<int> buffers; // bound at bindings 0..n-1 (ids into Program::buffers)
  // The range of its buffer each binding covers (a tensor larger than the target's storage
  // buffer range is bound as several consecutive ranges). Empty: every binding covers its
  // whole buffer.
  std::vector<ByteRange> ranges;
  std::vector<uint32_t> push_constants;
  uint32_t workgroups[3] = {1, 1, 1};
  // Graph-IR names of the ops it computes: the lowered op, then those fused into its kernel
  // (artifact Dispatch.source_ops).
  std::vector<std::string> source_ops;
};

struct Copy {
  int src = -1, dst = -1; // whole-buffer byte copy
};

using Command = std::variant<Dispatch, Copy>;

struct Executable {
  std::string name;
  target::Payload code;  // SPIR-V words or a native object, as the backend serialised it
  uint32_t workgroup_size[3] = {1, 1, 1};
  uint32_t num_bindings = 0;
  std::vector<bool> binding_writes; // per binding: the kernel may write it (not read-only)
  uint32_t push_constant_bytes = 0;
  kir::Requirements requirements;
};

struct Signature {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
};

struct Program {
  std::string target;
  std::vector<Signature> inputs, outputs;
  std::vector<Buffer> buffers;
  std::vector<Executable> executables;
  std::vector<Command> commands;
  // Per command: 1 when it waits for every earlier command (a barrier before it), 0 when it may
  // run together with the commands since the last barrier. Empty: every command waits.
  std::vector<uint8_t> waits;
  // Commands that depend on no model input (a weight computed from constants: a light model's
  // ConstantOfShape, a transposed or dequantised constant the graph passes did not fold): run
  // once when the module is loaded, before any call (hoist_init_commands).
  std::vector<Command> init_commands;
  uint64_t arena_bytes = 0;
  // The library the executables' "symbol" payloads point into (CPU targets).
  std::optional<target::NativeLibrary> native_library;
  // The precision the module was compiled at (schema PrecisionChoice): "fp32", "fp16",
  // "bf16" or "auto", and for auto the search's choice.
  std::string precision_mode = "fp32";
  double max_error = 0;
  std::vector<std::string> f32_nodes;
  uint32_t half_nodes = 0;
  std::vector<double> output_errors;
};

inline constexpr uint64_t kAlign = 64;
inline uint64_t align_up(uint64_t v, uint64_t a = kAlign) { return (v + a - 1) / a * a; }

// Orders the commands by dependency level and sets Program::waits so that only the first
// command of each level waits; commands of one level write no bytes another of them reads or
// writes (barriers.cpp). Runs before plan_memory, on buffers not yet placed.
void schedule_barriers(Program &p);

// Moves the commands that read only constants (and what such commands wrote) out of
// Program::commands into Program::init_commands, in order, and makes the transients they write
// derived constants; a barrier that stood before a moved command moves to the next command that
// stays. Transients that a remaining command also writes keep their commands (init_commands.cpp).
// Runs after schedule_barriers, before plan_memory.
void hoist_init_commands(Program &p);

// Places every transient buffer in the arena: liveness over the steps between barriers (every
// command when Program::waits is empty), then greedy first-fit by offset (largest buffers
// first), 64-byte aligned. Sets Program::arena_bytes.
void plan_memory(Program &p);

// Serialises `p` as a FlatBuffers artifact (identifier KLN1, schema version 3).
std::vector<uint8_t> write_artifact(const Program &p);

} // namespace kiln::compiler
