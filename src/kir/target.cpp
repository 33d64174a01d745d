#include "kir/target.h"

#include "kiln/artifact/cpu_features.h"

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
TargetDesc make_cpu(const char *name, int level) {
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
  t.cpu_isa = "x86-64-v" + std::to_string(level);
  // The features of each x86-64 microarchitecture level (psABI), as __builtin_cpu_supports
  // names them.
  t.cpu_features = {"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt"};
  if (level >= 3)
    for (const char *f : {"avx", "avx2", "bmi", "bmi2", "fma", "f16c", "movbe", "lzcnt"})
      t.cpu_features.emplace_back(f);
  if (level >= 4)
    for (const char *f : {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})
      t.cpu_features.emplace_back(f);
  return t;
}

// "cpu": the highest level this machine runs.
TargetDesc make_cpu_host() {
  int level = 2;
#if defined(__x86_64__)
  const TargetDesc v3 = make_cpu("", 3), v4 = make_cpu("", 4);
  auto has_all = [](const TargetDesc &t) {
    for (const std::string &f : t.cpu_features)
      if (!artifact::host_cpu_supports(f)) return false;
    return true;
  };
  level = has_all(v4) ? 4 : has_all(v3) ? 3 : 2;
#endif
  return make_cpu("cpu", level);
}

const std::vector<TargetDesc> &presets() {
  static const std::vector<TargetDesc> all = {make_portable(),
                                              make_lavapipe(),
                                              make_nvidia(),
                                              make_cpu_host(),
                                              make_cpu("cpu-x86-64-v2", 2),
                                              make_cpu("cpu-x86-64-v3", 3),
                                              make_cpu("cpu-x86-64-v4", 4)};
  return all;
}

} // namespace

const TargetDesc *find_target(std::string_view name) {
  for (const TargetDesc &t : presets())
    if (t.name == name) return &t;
  return nullptr;
}

std::string target_for_device(std::string_view driver, std::string_view name) {
  if (driver == "cpu") return "cpu";
  if (driver != "vulkan") return "vulkan";
  if (name.find("llvmpipe") != std::string_view::npos) return "vulkan-lavapipe";
  if (name.find("NVIDIA") != std::string_view::npos) return "vulkan-nvidia";
  return "vulkan";
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const TargetDesc &t : presets()) names.push_back(t.name);
  return names;
}

} // namespace kiln::kir
