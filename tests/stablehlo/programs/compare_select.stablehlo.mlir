module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>, %arg2: tensor<4x6xi32>, %arg3: tensor<4x6xi32>, %arg4: tensor<4x6xi1>) -> (tensor<4x6xi1> {jax.result_info = "result[0]"}, tensor<4x6xi1> {jax.result_info = "result[1]"}, tensor<4x6xi1> {jax.result_info = "result[2]"}, tensor<4x6xi1> {jax.result_info = "result[3]"}, tensor<4x6xi1> {jax.result_info = "result[4]"}, tensor<4x6xi1> {jax.result_info = "result[5]"}, tensor<4x6xi1> {jax.result_info = "result[6]"}, tensor<4x6xi1> {jax.result_info = "result[7]"}, tensor<4x6xf32> {jax.result_info = "result[8]"}, tensor<4x6xf32> {jax.result_info = "result[9]"}, tensor<4x6xi32> {jax.result_info = "result[10]"}) {
    %0 = stablehlo.compare LT, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %1 = stablehlo.compare LE, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %2 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %3 = stablehlo.compare GE, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %4 = stablehlo.compare EQ, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %5 = stablehlo.compare NE, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %6 = stablehlo.compare EQ, %arg2, %arg3, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %7 = stablehlo.compare LT, %arg2, %arg3, SIGNED : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %8 = stablehlo.compare GT, %arg0, %arg1, FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %10 = stablehlo.multiply %9, %arg1 : tensor<4x6xf32>
    %11 = call @_where(%8, %arg0, %10) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = call @_where_0(%arg4, %arg0, %cst_0) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
    %13 = call @_where_1(%arg4, %arg2, %arg3) : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    return %0, %1, %2, %3, %4, %5, %6, %7, %11, %12, %13 : tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>
  }
  func.func private @_where(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xf32>, %arg2: tensor<4x6xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x6xi1>, tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
  func.func private @_where_0(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xf32>, %arg2: tensor<f32>) -> tensor<4x6xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<4x6xi1>, tensor<4x6xf32>
    return %2 : tensor<4x6xf32>
  }
  func.func private @_where_1(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xi32>, %arg2: tensor<4x6xi32>) -> tensor<4x6xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x6xi1>, tensor<4x6xi32>
    return %0 : tensor<4x6xi32>
  }
}
