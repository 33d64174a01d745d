module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>, %arg3: tensor<2x3x8xf32>, %arg4: tensor<8x4xf32>) -> (tensor<5xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}, tensor<2x3x4xf32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<5x8xf32>, tensor<8xf32>) -> tensor<5xf32>
    %1 = stablehlo.dot_general %arg1, %arg2, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
    %2 = stablehlo.dot_general %arg3, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3x8xf32>, tensor<8x4xf32>) -> tensor<2x3x4xf32>
    return %0, %1, %2 : tensor<5xf32>, tensor<f32>, tensor<2x3x4xf32>
  }
}
