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

// The CPU targets (C backend, runtime driver "cpu"): every scalar type, workgroups of up to
// 1024 invocations run one after another by one thread, subgroups of one invocation (every
// subgroup operation is then the identity), no cooperative matrices.
TargetDesc make_cpu(const char *name, const char *isa, bool avx512) {
  TargetDesc t;
  t.name = name;
  t.backend = "c";
  t.vulkan_version = 0;
  t.subgroup_size = 1;
  t.shared_memory_bytes = 65536;
  t.max_workgroup_invocations = 1024;
  t.max_workgroup_size[0] = 1024;
  t.max_workgroup_size[1] = 1024;
  t.max_workgroup_size[2] = 64;
  t.max_storage_buffer_range = uint64_t(1) << 31; // indices are 32-bit
  t.min_storage_buffer_offset_alignment = 64;
  t.float16 = t.float64 = t.int8 = t.int16 = t.int64 = t.storage8 = t.storage16 = true;
  t.subgroup_operations = 0xff;
  t.cpu_isa = isa;
  t.cpu_features = {"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx",  "avx2",
                    "bmi",  "bmi2",  "fma",    "f16c",   "movbe",  "lzcnt"};
  if (avx512)
    for (const char *f : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})
      t.cpu_features.emplace_back(f);
  return t;
}

// "cpu": the best preset this machine runs.
TargetDesc make_cpu_host() {
  bool v4 = false;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  v4 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
       __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
       __builtin_cpu_supports("avx512vl");
#endif
  return v4 ? make_cpu("cpu", "x86-64-v4", true) : make_cpu("cpu", "x86-64-v3", false);
}

const std::vector<TargetDesc> &presets() {
  static const std::vector<TargetDesc> all = {make_portable(),
                                              make_lavapipe(),
                                              make_nvidia(),
                                              make_cpu_host(),
                                              make_cpu("cpu-x86-64-v3", "x86-64-v3", false),
                                              make_cpu("cpu-x86-64-v4", "x86-64-v4", true)};
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
