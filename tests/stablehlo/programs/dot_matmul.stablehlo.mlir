module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x12xf32>, %arg2: tensor<12xf32>) -> (tensor<8x12xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<12xf32>) -> tensor<1x12xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x12xf32>) -> tensor<8x12xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x12xf32>
    return %3 : tensor<8x12xf32>
  }
}
