#include "kir/target.h"

namespace kiln::kir {
namespace {

TargetDesc make_portable() {
  TargetDesc t;
  t.name = "vulkan";
  t.vulkan_version = 12;
  t.subgroup_size = 0;
  t.shared_memory_bytes = 16384;
  t.max_workgroup_invocations = 128;
  t.max_storage_buffer_range = uint64_t(1) << 27;
  t.int8 = true;
  t.int16 = true;
  t.int64 = true;
  t.storage8 = true;
  t.storage16 = true;
  return t;
}

TargetDesc make_lavapipe() {
  TargetDesc t = make_portable();
  t.name = "vulkan-lavapipe";
  t.vulkan_version = 13;
  t.subgroup_size = 8;
  t.shared_memory_bytes = 32768;
  t.max_workgroup_invocations = 1024;
  t.max_workgroup_size[0] = 1024;
  t.max_workgroup_size[1] = 1024;
  t.max_workgroup_size[2] = 1024;
  t.float16 = true;
  t.float64 = true;
  // Mesa 22.3's lavapipe: everything but clustered operations; no cooperative matrices.
  t.subgroup_operations = subgroup_ops::basic | subgroup_ops::vote | subgroup_ops::arithmetic |
                          subgroup_ops::ballot | subgroup_ops::shuffle |
                          subgroup_ops::shuffle_relative | subgroup_ops::quad;
  return t;
}

TargetDesc make_nvidia() {
  TargetDesc t = make_portable();
  t.name = "vulkan-nvidia";
  t.vulkan_version = 13;
  t.subgroup_size = 32;
  t.shared_memory_bytes = 49152;
  t.max_workgroup_invocations = 1024;
  t.max_workgroup_size[0] = 1024;
  t.max_workgroup_size[1] = 1024;
  t.max_workgroup_size[2] = 64;
  t.max_storage_buffer_range = (uint64_t(1) << 32) - 1;
  t.compute_units = 132; // H100 / H200 SXM; tuning only (smaller parts get fewer waves)
  t.float16 = true;
  t.float64 = true;
  t.fdiv_via_f64 = true;
  t.cooperative_matrix = true;
  // A subset of what NVIDIA's driver advertises on Ampere and later (A/B are never f32).
  using S = ScalarType;
  t.cooperative_matrix_shapes = {{16, 16, 16, S::f16, S::f16, S::f32, S::f32},
                                 {16, 16, 16, S::f16, S::f16, S::f16, S::f16},
                                 {16, 8, 16, S::f16, S::f16, S::f32, S::f32},
                                 {16, 8, 16, S::f16, S::f16, S::f16, S::f16},
                                 {16, 16, 32, S::i8, S::i8, S::i32, S::i32},
                                 {16, 16, 32, S::u8, S::u8, S::u32, S::u32}};
  t.subgroup_operations = 0xff;  // every class up to quad
  return t;
}

const std::vector<TargetDesc> &presets() {
  static const std::vector<TargetDesc> all = {make_portable(), make_lavapipe(), make_nvidia()};
  return all;
}

} // namespace

const TargetDesc *find_target(std::string_view name) {
  for (const TargetDesc &t : presets())
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const TargetDesc &t : presets()) names.push_back(t.name);
  return names;
}

} // namespace kiln::kir
