// Target descriptions for kernel generation: what a device (or a named preset for
// ahead-of-time compilation) offers. Capabilities are data; emitters check a kernel's needs
// against them and record what the kernel actually used in Requirements.
#pragma once

#include "kir/kir.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kir {

// Subgroup operation classes, the bits of VkSubgroupFeatureFlags (VkPhysicalDeviceSubgroup
// Properties::supportedOperations).
namespace subgroup_ops {
constexpr uint32_t basic = 0x1;       // subgroup builtins, elect, barriers
constexpr uint32_t vote = 0x2;
constexpr uint32_t arithmetic = 0x4;  // SubgroupReduce
constexpr uint32_t ballot = 0x8;      // SubgroupBroadcast
constexpr uint32_t shuffle = 0x10;    // SubgroupShuffle (index and xor)
constexpr uint32_t shuffle_relative = 0x20;
constexpr uint32_t clustered = 0x40;
constexpr uint32_t quad = 0x80;
} // namespace subgroup_ops

// One multiply-add shape a device offers (VkCooperativeMatrixPropertiesKHR, subgroup scope):
// A is m x k, B is k x n, C and the result m x n.
struct CoopMatrixShape {
  uint32_t m, n, k;
  ScalarType a, b, c, result;
};

struct TargetDesc {
  std::string name;
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
  bool cooperative_matrix = false; // VK_KHR_cooperative_matrix (subgroup scope)
  // The multiply-add shapes offered; empty = not known (not checked).
  std::vector<CoopMatrixShape> cooperative_matrix_shapes;
  // Subgroup operations offered in compute shaders (subgroup_ops bits; Vulkan 1.1 guarantees
  // basic).
  uint32_t subgroup_operations = subgroup_ops::basic;
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
  uint32_t subgroup_operations = 0; // subgroup_ops bits the kernel uses (not in the schema yet)
  uint32_t max_workgroup_invocations = 0; // the kernel's workgroup size product
  uint64_t loop_iterations = 0; // per invocation, every loop counted; 0 when unknown
};

// Named presets: "vulkan" (portable baseline: int8/int16/int64 and 8/16-bit storage, no
// f16/f64 arithmetic), "vulkan-lavapipe", "vulkan-nvidia". nullptr for an unknown name.
const TargetDesc *find_target(std::string_view name);
std::vector<std::string> target_names();

} // namespace kiln::kir
