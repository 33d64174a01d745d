module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x6xi1>, %arg1: tensor<5x6xf32>) -> (tensor<5xi1> {jax.result_info = "result[0]"}, tensor<6xi1> {jax.result_info = "result[1]"}, tensor<i1> {jax.result_info = "result[2]"}, tensor<i1> {jax.result_info = "result[3]"}) {
    %c = stablehlo.constant dense<false> : tensor<i1>
    %0 = stablehlo.reduce(%arg0 init: %c) applies stablehlo.or across dimensions = [1] : (tensor<5x6xi1>, tensor<i1>) -> tensor<5xi1>
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<5x6xf32>
    %2 = stablehlo.compare GT, %arg1, %1, FLOAT : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xi1>
    %3 = stablehlo.or %arg0, %2 : tensor<5x6xi1>
    %c_0 = stablehlo.constant dense<true> : tensor<i1>
    %4 = stablehlo.reduce(%3 init: %c_0) applies stablehlo.and across dimensions = [0] : (tensor<5x6xi1>, tensor<i1>) -> tensor<6xi1>
    %cst_1 = stablehlo.constant dense<1.500000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<5x6xf32>
    %6 = stablehlo.compare GT, %arg1, %5, FLOAT : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xi1>
    %c_2 = stablehlo.constant dense<false> : tensor<i1>
    %7 = stablehlo.reduce(%6 init: %c_2) applies stablehlo.or across dimensions = [0, 1] : (tensor<5x6xi1>, tensor<i1>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %8 = stablehlo.reduce(%arg0 init: %c_3) applies stablehlo.and across dimensions = [0, 1] : (tensor<5x6xi1>, tensor<i1>) -> tensor<i1>
    return %0, %4, %7, %8 : tensor<5xi1>, tensor<6xi1>, tensor<i1>, tensor<i1>
  }
}
