// The C backend: kernel IR -> C source, compiled by the system C compiler into one shared
// object per artifact for the CPU runtime driver (src/runtime/cpu).
//
// A kernel becomes one function with the kiln_cpu_dispatch calling convention
// (kiln/artifact/cpu_abi.h): a loop over the workgroups it is given and, inside, a loop over
// the workgroup's invocations running the kernel body. Shared arrays are locals of the
// workgroup loop. A kernel with barriers is split at them ("loop fission"): each
// barrier-free region runs for every invocation before the next region starts; variables that
// live across a barrier become per-invocation arrays, and loops, branches and lets that contain
// a barrier run once per workgroup (Vulkan requires them to be uniform). Subgroups have one
// invocation (subgroup_size() is 1; reductions, broadcasts and shuffles return their operand),
// so kernels that read the subgroup size at run time stay correct. Cooperative matrices are
// refused. Semantics follow kir.h: integer division by zero gives 0 instead of trapping, shift
// counts are taken modulo the width, signed arithmetic on data wraps (emitted through the
// unsigned type; index arithmetic stays plain C so that loops over it vectorise).
#pragma once

#include "kir/kir.h"
#include "kir/target.h"
#include "support/status.h"
#include "target/backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::cgen {

// The C text of one kernel: a function named by the macro KILN_FN (defined by the caller
// before the text). Needs c_prelude() earlier in the same translation unit.
Result<std::string> emit_c(const kir::Kernel &k, const kir::TargetDesc &t,
                           kir::Requirements *used);

// Includes, the ABI declarations, vector types and the helper functions every kernel uses.
std::string c_prelude();

// One translation unit holding every kernel: kernel i is exported as kiln_exe_<i>.
std::string c_translation_unit(const std::vector<std::string> &kernels);
// Kernels [begin, end) of `kernels` (keeping their numbers); `with_version` adds the
// kiln_cpu_abi_version symbol (exactly one part of a library has it).
std::string c_translation_unit_part(const std::vector<std::string> &kernels, size_t begin,
                                    size_t end, bool with_version);

// Compiles `kernels` into a shared object with the system C compiler (KILN_CC, else cc) for
// `march` (e.g. "x86-64-v3"), split over `jobs` compiler processes. The error carries the
// compiler's diagnostics.
Result<std::vector<uint8_t>> build_shared_object(const std::vector<std::string> &kernels,
                                                 const std::string &march, int jobs);

// The "c" backend (target/backend.h) for the compiler's backend list.
const target::BackendInfo &backend_info();

} // namespace kiln::cgen
