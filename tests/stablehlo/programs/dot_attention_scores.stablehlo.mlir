module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x5x8xf32>, %arg1: tensor<2x3x6x8xf32>, %arg2: tensor<2x3x6x8xf32>) -> (tensor<2x3x5x6xf32> {jax.result_info = "result[0]"}, tensor<2x5x3x8xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x5x6xf32>
    %1 = stablehlo.dot_general %arg2, %0, batching_dims = [0, 1] x [0, 1], contracting_dims = [2] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x3x6x8xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x8x5xf32>
    %2 = stablehlo.transpose %1, dims = [0, 3, 1, 2] : (tensor<2x3x8x5xf32>) -> tensor<2x5x3x8xf32>
    return %0, %2 : tensor<2x3x5x6xf32>, tensor<2x5x3x8xf32>
  }
}
