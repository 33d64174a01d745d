/* The calling convention between kiln's CPU runtime driver and the kernels the C backend
 * (src/target/c) compiles into an artifact's native library. Header-only, C and C++: the
 * runtime includes it; the C backend pastes KILN_CPU_ABI_TEXT (the same declarations as text)
 * at the top of every generated source, so both sides read one definition.
 *
 * A kernel is `void kiln_exe_N(const kiln_cpu_dispatch *d, uint32_t first, uint32_t last)`:
 * it runs workgroups [first, last) of the dispatch's grid, numbered x fastest
 * (id = (z * groups[1] + y) * groups[0] + x), every invocation of each. Workgroups are
 * independent, so the driver hands disjoint ranges to its threads. `bindings[i]` is the
 * address of binding i's byte range; `push` the push-constant words. The library exports
 * `kiln_cpu_abi_version` (an int equal to KILN_CPU_ABI_VERSION). */
#ifndef KILN_ARTIFACT_CPU_ABI_H
#define KILN_ARTIFACT_CPU_ABI_H

#include <stdint.h>

#define KILN_CPU_ABI_VERSION 2
/* Every buffer the runtime binds is followed by at least this many readable bytes (zeros, never
 * written by a kernel). Kernels may read up to that far past a binding's last byte, and only
 * into results they drop: the matrix strategy multiplies the last tile of a row-major operand
 * whole instead of copying it (ABI version 2 added this guarantee). */
#define KILN_CPU_BINDING_TAIL 256

#define KILN_CPU_ABI_DECLS                                                                      \
  typedef struct kiln_cpu_dispatch {                                                            \
    void *const *bindings;                                                                      \
    const uint32_t *push;                                                                       \
    uint32_t groups[3];                                                                         \
  } kiln_cpu_dispatch;                                                                          \
  typedef void (*kiln_cpu_kernel_fn)(const kiln_cpu_dispatch *d, uint32_t first, uint32_t last);

KILN_CPU_ABI_DECLS

#define KILN_CPU_ABI_STR_(...) #__VA_ARGS__
#define KILN_CPU_ABI_STR(...) KILN_CPU_ABI_STR_(__VA_ARGS__)
/* The declarations above as C text, for generated sources. */
#define KILN_CPU_ABI_TEXT KILN_CPU_ABI_STR(KILN_CPU_ABI_DECLS)

#endif
