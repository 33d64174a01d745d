// The CPU features a native-code artifact may require (NativeLibrary.cpu_features), by the
// names GCC's __builtin_cpu_supports uses, and whether this machine has one. Shared by the
// "cpu" target preset (compile for the host) and the cpu runtime driver (refuse code the CPU
// cannot run).
#pragma once

#include <string_view>

namespace kiln::artifact {

// Whether the running CPU has feature `f`; false for a name this list does not know.
inline bool host_cpu_supports(std::string_view f) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
#define KILN_FEATURE(name)                                                                     \
  if (f == name) return __builtin_cpu_supports(name);
  KILN_FEATURE("sse3") KILN_FEATURE("ssse3") KILN_FEATURE("sse4.1") KILN_FEATURE("sse4.2")
  KILN_FEATURE("popcnt") KILN_FEATURE("avx") KILN_FEATURE("avx2") KILN_FEATURE("bmi")
  KILN_FEATURE("bmi2") KILN_FEATURE("fma") KILN_FEATURE("f16c") KILN_FEATURE("movbe")
  KILN_FEATURE("lzcnt") KILN_FEATURE("avx512f") KILN_FEATURE("avx512bw")
  KILN_FEATURE("avx512cd") KILN_FEATURE("avx512dq") KILN_FEATURE("avx512vl")
  KILN_FEATURE("avx512vnni") KILN_FEATURE("avx512bf16")
#undef KILN_FEATURE
#endif
  (void)f;
  return false;
}

} // namespace kiln::artifact
