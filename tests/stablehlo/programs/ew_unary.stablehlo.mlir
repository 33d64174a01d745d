module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xf32> {jax.result_info = "result[2]"}, tensor<4x8xf32> {jax.result_info = "result[3]"}, tensor<4x8xf32> {jax.result_info = "result[4]"}, tensor<4x8xf32> {jax.result_info = "result[5]"}, tensor<4x8xf32> {jax.result_info = "result[6]"}, tensor<4x8xf32> {jax.result_info = "result[7]"}) {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %0, %arg0 : tensor<4x8xf32>
    %2 = stablehlo.exponential %1 : tensor<4x8xf32>
    %3 = stablehlo.log %arg1 : tensor<4x8xf32>
    %4 = stablehlo.tanh %arg0 : tensor<4x8xf32>
    %5 = stablehlo.negate %arg0 : tensor<4x8xf32>
    %6 = stablehlo.exponential %5 : tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %8 = stablehlo.add %7, %6 : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %10 = stablehlo.divide %9, %8 : tensor<4x8xf32>
    %11 = stablehlo.negate %arg0 : tensor<4x8xf32>
    %12 = stablehlo.exponential %11 : tensor<4x8xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %14 = stablehlo.add %13, %12 : tensor<4x8xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %16 = stablehlo.divide %15, %14 : tensor<4x8xf32>
    %17 = stablehlo.sqrt %arg1 : tensor<4x8xf32>
    %18 = stablehlo.rsqrt %arg1 : tensor<4x8xf32>
    %19 = stablehlo.abs %arg0 : tensor<4x8xf32>
    return %2, %3, %4, %10, %16, %17, %18, %19 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  }
}
