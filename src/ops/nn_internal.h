// Internal declarations of the nn op family (src/ops/nn*.cpp): each file registers its ops
// through one function called from register_nn_ops (nn.cpp).
#pragma once

#include "ir/op_registry.h"

namespace kiln {

void register_nn_matmul_ops(OpRegistry &r); // nn_matmul.cpp: matmul, matmul_integer, gemm
void register_nn_einsum_ops(OpRegistry &r); // nn_einsum.cpp: einsum, det
void register_nn_conv_ops(OpRegistry &r);   // nn_conv.cpp: conv, conv_transpose, conv_integer
void register_nn_deform_ops(OpRegistry &r); // nn_deform.cpp: deform_conv, col2im
void register_nn_pool_ops(OpRegistry &r);   // nn_pool.cpp: pools, global pools, max_unpool
// Defined by nn_resize*.cpp / nn_quant*.cpp (another owner); called at the end of
// register_nn_ops.
void register_nn_extra_ops(OpRegistry &r);

} // namespace kiln
