module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x7xf32>, %arg1: tensor<3x7xf32>, %arg2: tensor<3x7xf32>) -> (tensor<3x7xf32> {jax.result_info = "result[0]"}, tensor<3x7xf32> {jax.result_info = "result[1]"}, tensor<3x7xf32> {jax.result_info = "result[2]"}, tensor<3x7xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.power %arg0, %arg1 : tensor<3x7xf32>
    %cst = stablehlo.constant dense<2.500000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x7xf32>
    %2 = stablehlo.power %arg0, %1 : tensor<3x7xf32>
    %3 = stablehlo.multiply %arg2, %arg2 : tensor<3x7xf32>
    %4 = stablehlo.multiply %3, %arg2 : tensor<3x7xf32>
    %5 = stablehlo.multiply %arg0, %arg0 : tensor<3x7xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %6 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<3x7xf32>
    %7 = stablehlo.divide %6, %5 : tensor<3x7xf32>
    return %0, %2, %4, %7 : tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>
  }
}
