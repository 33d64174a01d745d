#include "ops/op_util.h"
#include "ops/ops.h"

namespace kiln {

void register_shape_ops(OpRegistry &r) { (void)r; }

} // namespace kiln
