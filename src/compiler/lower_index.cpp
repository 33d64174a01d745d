// Vulkan lowerings: indexing, scatter/gather and data-movement ops.
#include "compiler/lower.h"

namespace kiln::compiler {

void add_index_lowerings(LoweringTable &t) { (void)t; }

} // namespace kiln::compiler
