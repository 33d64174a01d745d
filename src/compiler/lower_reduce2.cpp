// Vulkan lowerings: reductions, losses, cumulative ops, normalisation extras.
#include "compiler/lower.h"

namespace kiln::compiler {

void add_reduce2_lowerings(LoweringTable &t) { (void)t; }

} // namespace kiln::compiler
