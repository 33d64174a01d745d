// Target descriptions for kernel generation: what a device (or a named preset for
// ahead-of-time compilation) offers. Capabilities are data; emitters check a kernel's needs
// against them and record what the kernel actually used in Requirements.
#pragma once

#include "kir/kir.h"
#include "kiln/artifact/lists.h" // KILN_DEVICE_FEATURES

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
  // Compute units (SMs, CUs) the device runs workgroups on concurrently; 0 = unknown. Sizes
  // schedules: a contraction whose tile grid leaves units idle picks smaller tiles or split-K.
  uint32_t compute_units = 0;
  // kir div_exact on f32 refined in f64 (needs float64): Vulkan lets OpFDiv be 2.5 ULP off,
  // and a quotient that is then rounded to an integer (quantisation, Round, Floor) moves by a
  // whole step; drivers whose division is not correctly rounded (NVIDIA's) set this. lavapipe
  // divides exactly (LLVM's fdiv), so it does not.
  bool fdiv_via_f64 = false;
  // float16, float64, int8, int16, int64, storage8, storage16, cooperative_matrix.
#define KILN_X(field, name) bool field = false;
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  // The multiply-add shapes offered; empty = not known (not checked).
  std::vector<CoopMatrixShape> cooperative_matrix_shapes;
  // Subgroup operations offered in compute shaders (subgroup_ops bits; Vulkan 1.1 guarantees
  // basic).
  uint32_t subgroup_operations = subgroup_ops::basic;
  // CPU targets (backend "c"): the ISA level the C compiler builds for (its -march) and the
  // CPU features the runtime must find before it loads the code (__builtin_cpu_supports names).
  std::string cpu_isa;
  std::vector<std::string> cpu_features;
};

// What a kernel actually uses; mirrors the artifact schema's Requirements table.
struct Requirements {
#define KILN_X(field, name) bool field = false;
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  uint32_t subgroup_size = 0; // required subgroup size, 0 = any
  uint32_t shared_memory_bytes = 0;
  uint32_t subgroup_operations = 0; // subgroup_ops bits the kernel uses (not in the schema yet)
  uint32_t max_workgroup_invocations = 0; // the kernel's workgroup size product
  uint64_t loop_iterations = 0; // per invocation, every loop counted; 0 when unknown
};

// Named presets: "vulkan" (portable baseline: int8/int16/int64 and 8/16-bit storage, no
// f16/f64 arithmetic), "vulkan-lavapipe", "vulkan-nvidia"; "cpu-x86-64-v2" (SSE4.2),
// "cpu-x86-64-v3" (AVX2 + FMA), "cpu-x86-64-v4" (AVX-512) and "cpu" (the highest of those
// this machine runs, "cpu-x86-64-v2" off x86). nullptr for an unknown name.
const TargetDesc *find_target(std::string_view name);
std::vector<std::string> target_names();
// The preset to compile for a runtime device, from its kiln_device_info driver and name: "cpu"
// for the cpu driver, "vulkan-lavapipe" / "vulkan-nvidia" where the name says so, else "vulkan".
std::string target_for_device(std::string_view driver, std::string_view name);

} // namespace kiln::kir
