module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6x5xf32>, %arg1: tensor<4x6xi32>) -> (tensor<4x5xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}, tensor<4x6xf32> {jax.result_info = "result[2]"}, tensor<6xf32> {jax.result_info = "result[3]"}, tensor<6xi32> {jax.result_info = "result[4]"}, tensor<i32> {jax.result_info = "result[5]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.reduce(%arg0 init: %cst_1) applies stablehlo.maximum across dimensions = [2] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x6xf32>
    %cst_2 = stablehlo.constant dense<0x7F800000> : tensor<f32>
    %3 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.minimum across dimensions = [0, 2] : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<6xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.reduce(%arg1 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %c_3 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %5 = stablehlo.reduce(%arg1 init: %c_3) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x6xi32>, tensor<i32>) -> tensor<i32>
    return %0, %1, %2, %3, %4, %5 : tensor<4x5xf32>, tensor<f32>, tensor<4x6xf32>, tensor<6xf32>, tensor<6xi32>, tensor<i32>
  }
}
