module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x7xf32>, %arg1: tensor<4x7xi1>) -> (tensor<4x7xf32> {jax.result_info = "result[0]"}, tensor<4x7xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = call @_where(%arg1, %arg0, %cst) : (tensor<4x7xi1>, tensor<4x7xf32>, tensor<f32>) -> tensor<4x7xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %3 = stablehlo.maximum %2, %1 : tensor<4xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %6 = stablehlo.subtract %0, %5 : tensor<4x7xf32>
    %7 = stablehlo.exponential %6 : tensor<4x7xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %11 = stablehlo.divide %7, %10 : tensor<4x7xf32>
    %12 = call @log_softmax(%0) : (tensor<4x7xf32>) -> tensor<4x7xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = call @_where(%arg1, %12, %cst_3) : (tensor<4x7xi1>, tensor<4x7xf32>, tensor<f32>) -> tensor<4x7xf32>
    return %11, %13 : tensor<4x7xf32>, tensor<4x7xf32>
  }
  func.func private @_where(%arg0: tensor<4x7xi1>, %arg1: tensor<4x7xf32>, %arg2: tensor<f32>) -> tensor<4x7xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x7xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<4x7xi1>, tensor<4x7xf32>
    return %2 : tensor<4x7xf32>
  }
  func.func private @log_softmax(%arg0: tensor<4x7xf32>) -> tensor<4x7xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x7xf32>
    %6 = stablehlo.exponential %5 : tensor<4x7xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %9 = stablehlo.log %8 : tensor<4x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<4x7xf32>
    return %11 : tensor<4x7xf32>
  }
}
