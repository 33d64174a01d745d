module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x5xf32>) -> (tensor<3x5xf32> {jax.result_info = "result[0]"}, tensor<i32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %c) : tensor<3x5xf32>, tensor<i32>
    cond {
      %1 = stablehlo.multiply %iterArg, %iterArg : tensor<3x5xf32>
      %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<3x5xf32>, tensor<f32>) -> tensor<f32>
      %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %3 = stablehlo.compare GT, %2, %cst_1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %c_2 = stablehlo.constant dense<100> : tensor<i32>
      %4 = stablehlo.compare LT, %iterArg_0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %5 = stablehlo.and %3, %4 : tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %cst = stablehlo.constant dense<7.500000e-01> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3x5xf32>
      %2 = stablehlo.multiply %iterArg, %1 : tensor<3x5xf32>
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %3 = stablehlo.add %iterArg_0, %c_1 : tensor<i32>
      stablehlo.return %2, %3 : tensor<3x5xf32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<3x5xf32>, tensor<i32>
  }
}
