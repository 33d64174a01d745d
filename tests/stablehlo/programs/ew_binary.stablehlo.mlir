module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<8xf32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xf32> {jax.result_info = "result[2]"}, tensor<4x8xf32> {jax.result_info = "result[3]"}, tensor<4x8xf32> {jax.result_info = "result[4]"}, tensor<4x8xf32> {jax.result_info = "result[5]"}, tensor<4x8xf32> {jax.result_info = "result[6]"}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4x8xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.subtract %arg0, %2 : tensor<4x8xf32>
    %4 = stablehlo.multiply %arg0, %arg1 : tensor<4x8xf32>
    %5 = stablehlo.abs %arg1 : tensor<4x8xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x8xf32>
    %8 = stablehlo.divide %arg0, %7 : tensor<4x8xf32>
    %9 = stablehlo.maximum %arg0, %arg1 : tensor<4x8xf32>
    %10 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %12 = stablehlo.minimum %arg0, %11 : tensor<4x8xf32>
    %13 = stablehlo.negate %arg0 : tensor<4x8xf32>
    return %0, %3, %4, %8, %9, %12, %13 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
}
