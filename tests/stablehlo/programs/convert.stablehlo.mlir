module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xi32>, %arg2: tensor<4x6xi1>) -> (tensor<4x6xi32> {jax.result_info = "result[0]"}, tensor<4x6xf32> {jax.result_info = "result[1]"}, tensor<4x6xf32> {jax.result_info = "result[2]"}, tensor<4x6xi32> {jax.result_info = "result[3]"}, tensor<4x6xi1> {jax.result_info = "result[4]"}, tensor<4x6xi1> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.convert %arg0 : (tensor<4x6xf32>) -> tensor<4x6xi32>
    %1 = stablehlo.convert %arg1 : (tensor<4x6xi32>) -> tensor<4x6xf32>
    %2 = stablehlo.convert %arg2 : (tensor<4x6xi1>) -> tensor<4x6xf32>
    %3 = stablehlo.convert %arg2 : (tensor<4x6xi1>) -> tensor<4x6xi32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %5 = stablehlo.compare NE, %arg0, %4, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %6 = stablehlo.convert %5 : tensor<4x6xi1>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x6xi32>
    %8 = stablehlo.compare NE, %arg1, %7, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %9 = stablehlo.convert %8 : tensor<4x6xi1>
    return %0, %1, %2, %3, %6, %9 : tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xi1>, tensor<4x6xi1>
  }
}
