// SPIR-V emitter: turns one kernel-IR kernel into a Vulkan compute shader module.
//
// The module is SPIR-V 1.5 (consumable by Vulkan 1.2 and 1.3), Logical addressing with the
// GLSL450 memory model, one GLCompute entry point named "main" with LocalSize from the
// kernel's workgroup size. Buffer i is a storage buffer at set 0, binding i: a Block struct
// holding a runtime array of the element type (booleans as u8). Push constants are a Block
// struct of `push_constant_count` u32 values. Vector accesses of 2/4 lanes add a vec2/vec4
// view variable on the same binding (both Aliased). Kernels using cooperative matrices get the
// CooperativeMatrixKHR capability, SPV_KHR_cooperative_matrix and the Vulkan memory model;
// others keep GLSL450.
#pragma once

#include "kir/kir.h"
#include "kir/target.h"
#include "support/status.h"
#include "target/backend.h"

#include <cstdint>
#include <vector>

namespace kiln::spirv {

// Emits the module, or an error naming the kernel when it uses something the target lacks
// (16-bit floats, 64-bit integers, too much shared memory, a workgroup that is too large,
// a math function that GLSL.std.450 lacks for its type, ...). The kernel must verify
// (kir::verify); `used`, when not null, receives what the module actually needs.
Result<std::vector<uint32_t>> emit_spirv(const kir::Kernel &k, const kir::TargetDesc &t,
                                         kir::Requirements *used);

// The "spirv" backend (target/backend.h) for the compiler's backend list.
const target::BackendInfo &backend_info();

} // namespace kiln::spirv
