// Vulkan lowerings: resampling, transposed/deformable conv, quantisation.
#include "compiler/lower.h"

namespace kiln::compiler {

void add_nn2_lowerings(LoweringTable &t) { (void)t; }

} // namespace kiln::compiler
