module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5xf32>) -> (tensor<7x14xf32> {jax.result_info = "result[0]"}, tensor<10x2xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.pad %arg0, %cst, low = [1, -1], high = [-1, 2], interior = [1, 2] : (tensor<4x5xf32>, tensor<f32>) -> tensor<7x14xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.pad %arg0, %cst_0, low = [0, -2], high = [0, -1], interior = [2, 0] : (tensor<4x5xf32>, tensor<f32>) -> tensor<10x2xf32>
    return %0, %1 : tensor<7x14xf32>, tensor<10x2xf32>
  }
}
