module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xi1>, %arg1: tensor<4x8xi1>) -> (tensor<4x8xi1> {jax.result_info = "result[0]"}, tensor<4x8xi1> {jax.result_info = "result[1]"}, tensor<4x8xi1> {jax.result_info = "result[2]"}, tensor<4x8xi1> {jax.result_info = "result[3]"}, tensor<4x8xi1> {jax.result_info = "result[4]"}) {
    %0 = stablehlo.and %arg0, %arg1 : tensor<4x8xi1>
    %1 = stablehlo.or %arg0, %arg1 : tensor<4x8xi1>
    %2 = stablehlo.xor %arg0, %arg1 : tensor<4x8xi1>
    %3 = stablehlo.not %arg0 : tensor<4x8xi1>
    %4 = stablehlo.not %arg0 : tensor<4x8xi1>
    %5 = stablehlo.and %4, %arg1 : tensor<4x8xi1>
    return %0, %1, %2, %3, %5 : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
  }
}
