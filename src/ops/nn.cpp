// The nn op family: contractions (matmul, gemm, einsum, det), convolutions and pooling. Each
// group lives in its own nn_*.cpp file (see nn_internal.h).
#include "ops/nn_internal.h"
#include "ops/ops.h"

namespace kiln {

void register_nn_ops(OpRegistry &r) {
  register_nn_matmul_ops(r);
  register_nn_einsum_ops(r);
  register_nn_conv_ops(r);
  register_nn_deform_ops(r);
  register_nn_pool_ops(r);
  register_nn_extra_ops(r);
}

} // namespace kiln
