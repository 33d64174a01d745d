module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> (tensor<4x6xf32> {jax.result_info = "result[0]"}, tensor<4x6xf32> {jax.result_info = "result[1]"}, tensor<4x6xf32> {jax.result_info = "result[2]"}, tensor<4x6xf32> {jax.result_info = "result[3]"}, tensor<4x6xf32> {jax.result_info = "result[4]"}, tensor<4x6xf32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.sine %arg0 : tensor<4x6xf32>
    %1 = stablehlo.cosine %arg0 : tensor<4x6xf32>
    %2 = stablehlo.log_plus_one %arg1 : tensor<4x6xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %4 = stablehlo.multiply %3, %arg0 : tensor<4x6xf32>
    %5 = stablehlo.exponential_minus_one %4 : tensor<4x6xf32>
    %6 = stablehlo.atan2 %arg0, %arg1 : tensor<4x6xf32>
    %cst_0 = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %8 = stablehlo.multiply %arg0, %7 : tensor<4x6xf32>
    %9 = stablehlo.remainder %8, %arg1 : tensor<4x6xf32>
    return %0, %1, %2, %5, %6, %9 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
  }
}
