module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x8xf32>, %arg1: tensor<5x8xf32>, %arg2: tensor<6x4xf32>) -> (tensor<6x5xf32> {jax.result_info = "result[0]"}, tensor<8x4xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<6x8xf32>, tensor<5x8xf32>) -> tensor<6x5xf32>
    %1 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x8xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    return %0, %1 : tensor<6x5xf32>, tensor<8x4xf32>
  }
}
