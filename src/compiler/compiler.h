// The ahead-of-time compiler: graph IR (one static-shaped main function) -> kernel IR ->
// SPIR-V -> a .kiln artifact (schema/kiln.fbs) for one Vulkan target.
#pragma once

#include "ir/graph.h"
#include "kir/target.h"

#include <cstdint>
#include <vector>

namespace kiln {

struct CompileOptions {
  // Invocations per workgroup along x for elementwise-style kernels (capped by the target).
  uint32_t workgroup_size = 64;
  // Run kir::verify on every generated kernel (cheap; on by default).
  bool verify_kernels = true;
};

// Statistics of the last compilation (optional out-parameter for tools and tests).
struct CompileStats {
  int dispatches = 0;
  int copies = 0;
  int executables = 0;
  int aliased_ops = 0;
  uint64_t arena_bytes = 0;
  uint64_t constant_bytes = 0;
};

Result<std::vector<uint8_t>> compile_to_artifact(const Module &m, const kir::TargetDesc &t,
                                                 const CompileOptions &o,
                                                 CompileStats *stats = nullptr);

} // namespace kiln
