// Target descriptions for kernel generation: what a device (or a named preset for
// ahead-of-time compilation) offers. Capabilities are data; emitters check a kernel's needs
// against them and record what the kernel actually used in Requirements.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kir {

struct TargetDesc {
  std::string name;
  // The compiler backend that serialises kernels for it (target/backend.h): "spirv".
  std::string backend = "spirv";
  // Vulkan API version as major * 10 + minor: 12 = Vulkan 1.2, 13 = Vulkan 1.3.
  uint32_t vulkan_version = 12;
  uint32_t subgroup_size = 0; // 0 = unknown / any
  uint32_t shared_memory_bytes = 16384;
  uint32_t max_workgroup_invocations = 128;
  uint32_t max_workgroup_size[3] = {128, 128, 64};
  uint64_t max_storage_buffer_range = uint64_t(1) << 27;
  uint32_t min_storage_buffer_offset_alignment = 64;
  bool float16 = false;  // shaderFloat16 arithmetic
  bool float64 = false;  // shaderFloat64
  bool int8 = false;     // shaderInt8 arithmetic
  bool int16 = false;    // shaderInt16
  bool int64 = false;    // shaderInt64
  bool storage8 = false; // storageBuffer8BitAccess
  bool storage16 = false; // storageBuffer16BitAccess
  bool cooperative_matrix = false;
};

// What a kernel actually uses; mirrors the artifact schema's Requirements table.
struct Requirements {
  bool float16 = false;
  bool float64 = false;
  bool int8 = false;
  bool int16 = false;
  bool int64 = false;
  bool storage8 = false;
  bool storage16 = false;
  uint32_t subgroup_size = 0; // required subgroup size, 0 = any
  uint32_t shared_memory_bytes = 0;
  bool cooperative_matrix = false;
  uint32_t max_workgroup_invocations = 0; // the kernel's workgroup size product
  uint64_t loop_iterations = 0; // per invocation, every loop counted; 0 when unknown
};

// Named presets: "vulkan" (portable baseline: int8/int16/int64 and 8/16-bit storage, no
// f16/f64 arithmetic), "vulkan-lavapipe", "vulkan-nvidia". nullptr for an unknown name.
const TargetDesc *find_target(std::string_view name);
std::vector<std::string> target_names();

} // namespace kiln::kir
