/* libkiln_runtime.so is the static runtime linked whole (src/runtime/CMakeLists.txt); CMake
 * wants at least one source of its own for a library, and this is it. */
#include <kiln/kiln.h>
