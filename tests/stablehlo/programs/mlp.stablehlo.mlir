module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x4x20xf32>, %arg1: tensor<20x32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32xf32>, %arg5: tensor<32x5xf32>, %arg6: tensor<5xf32>) -> (tensor<2x4x5xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x20xf32>, tensor<20x32xf32>) -> tensor<2x4x32xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x4x32xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x4x32xf32>
    %4 = call @relu(%3) : (tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    %5 = stablehlo.dot_general %4, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x32xf32>, tensor<32x32xf32>) -> tensor<2x4x32xf32>
    %6 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x4x32xf32>
    %8 = stablehlo.add %5, %7 : tensor<2x4x32xf32>
    %9 = stablehlo.tanh %8 : tensor<2x4x32xf32>
    %10 = stablehlo.dot_general %9, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x4x32xf32>, tensor<32x5xf32>) -> tensor<2x4x5xf32>
    %11 = stablehlo.broadcast_in_dim %arg6, dims = [2] : (tensor<5xf32>) -> tensor<1x1x5xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1, 2] : (tensor<1x1x5xf32>) -> tensor<2x4x5xf32>
    %13 = stablehlo.add %10, %12 : tensor<2x4x5xf32>
    return %13 : tensor<2x4x5xf32>
  }
  func.func private @relu(%arg0: tensor<2x4x32xf32>) -> tensor<2x4x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x4x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x4x32xf32>
    return %1 : tensor<2x4x32xf32>
  }
}
