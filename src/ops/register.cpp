#include "ops/ops.h"

namespace kiln {

const OpRegistry &core_ops() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_core_basic_ops(r);
    register_elementwise_ops(r);
    register_reduce_ops(r);
    register_shape_ops(r);
    register_nn_ops(r);
    register_misc_ops(r);
    register_control_ops(r);
    return r;
  }();
  return registry;
}

} // namespace kiln
