// Vulkan lowerings: attention, recurrent and sequence-model ops.
#include "compiler/lower.h"

namespace kiln::compiler {

void add_seq_lowerings(LoweringTable &t) { (void)t; }

} // namespace kiln::compiler
