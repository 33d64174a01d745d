module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xf32>) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<12x2xf32> {jax.result_info = "result[1]"}, tensor<4x2x3xf32> {jax.result_info = "result[2]"}, tensor<24xf32> {jax.result_info = "result[3]"}, tensor<4x3x2xf32> {jax.result_info = "result[4]"}, tensor<2x3x4xf32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %1 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x12xf32>) -> tensor<12x2xf32>
    %3 = stablehlo.transpose %arg0, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %4 = stablehlo.reshape %arg0 : (tensor<2x3x4xf32>) -> tensor<24xf32>
    %5 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %6 = stablehlo.broadcast_in_dim %arg0, dims = [0, 2, 3] : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
    %7 = stablehlo.reshape %6 : (tensor<2x1x3x4xf32>) -> tensor<2x3x4xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3x4xf32>
    %9 = stablehlo.add %7, %8 : tensor<2x3x4xf32>
    return %0, %2, %3, %4, %5, %9 : tensor<6x4xf32>, tensor<12x2xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>
  }
}
