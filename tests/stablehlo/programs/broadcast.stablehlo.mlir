module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<6xf32>, %arg2: tensor<4x1xf32>, %arg3: tensor<f32>) -> (tensor<4x6xf32> {jax.result_info = "result[0]"}, tensor<3x4x6xf32> {jax.result_info = "result[1]"}, tensor<4xf32> {jax.result_info = "result[2]"}, tensor<4x6xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<4x6xf32>
    %5 = stablehlo.broadcast_in_dim %arg2, dims = [1, 2] : (tensor<4x1xf32>) -> tensor<3x4x6xf32>
    %6 = stablehlo.broadcast_in_dim %arg3, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %7 = stablehlo.multiply %6, %arg0 : tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %9 = stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %10 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %11 = stablehlo.add %9, %10 : tensor<4x6xf32>
    return %4, %5, %7, %11 : tensor<4x6xf32>, tensor<3x4x6xf32>, tensor<4xf32>, tensor<4x6xf32>
  }
}
