module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<2x4xf32>, %arg3: tensor<5xi32>, %arg4: tensor<3xi32>) -> (tensor<3x6xf32> {jax.result_info = "result[0]"}, tensor<8x4xf32> {jax.result_info = "result[1]"}, tensor<3x2x4xf32> {jax.result_info = "result[2]"}, tensor<8xi32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x6xf32>
    %1 = stablehlo.concatenate %arg0, %arg2, %arg0, dim = 0 : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x4xf32>
    %3 = stablehlo.multiply %2, %arg0 : tensor<3x4xf32>
    %4 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2] : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %5 = stablehlo.broadcast_in_dim %3, dims = [0, 2] : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %6 = stablehlo.concatenate %4, %5, dim = 1 : (tensor<3x1x4xf32>, tensor<3x1x4xf32>) -> tensor<3x2x4xf32>
    %7 = stablehlo.concatenate %arg3, %arg4, dim = 0 : (tensor<5xi32>, tensor<3xi32>) -> tensor<8xi32>
    return %0, %1, %6, %7 : tensor<3x6xf32>, tensor<8x4xf32>, tensor<3x2x4xf32>, tensor<8xi32>
  }
}
