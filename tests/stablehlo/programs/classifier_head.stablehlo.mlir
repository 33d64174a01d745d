module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x16xf32>, %arg1: tensor<16x10xf32>, %arg2: tensor<10xf32>, %arg3: tensor<6xi32>) -> (tensor<6x10xf32> {jax.result_info = "result[0]"}, tensor<6x10xf32> {jax.result_info = "result[1]"}, tensor<6xi32> {jax.result_info = "result[2]"}, tensor<f32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x16xf32>, tensor<16x10xf32>) -> tensor<6x10xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<6x10xf32>
    %3 = stablehlo.add %0, %2 : tensor<6x10xf32>
    %4 = call @log_softmax(%3) : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %5 = call @_one_hot(%arg3) : (tensor<6xi32>) -> tensor<6x10xf32>
    %6 = stablehlo.multiply %5, %4 : tensor<6x10xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %8 = stablehlo.reduce(%7 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %cst_1 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
    %9 = stablehlo.divide %8, %cst_1 : tensor<f32>
    %10 = stablehlo.negate %9 : tensor<f32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %11 = stablehlo.reduce(%3 init: %cst_2) applies stablehlo.maximum across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %13 = stablehlo.maximum %12, %11 : tensor<6xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %16 = stablehlo.subtract %3, %15 : tensor<6x10xf32>
    %17 = stablehlo.exponential %16 : tensor<6x10xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_4) applies stablehlo.add across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %21 = stablehlo.divide %17, %20 : tensor<6x10xf32>
    %22 = call @argmax(%3) : (tensor<6x10xf32>) -> tensor<6xi32>
    return %21, %4, %22, %10 : tensor<6x10xf32>, tensor<6x10xf32>, tensor<6xi32>, tensor<f32>
  }
  func.func private @log_softmax(%arg0: tensor<6x10xf32>) -> tensor<6x10xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<6xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<6xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<6x10xf32>
    %6 = stablehlo.exponential %5 : tensor<6x10xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<6xf32>) -> tensor<6x1xf32>
    %9 = stablehlo.log %8 : tensor<6x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<6x10xf32>
    return %11 : tensor<6x10xf32>
  }
  func.func private @_one_hot(%arg0: tensor<6xi32>) -> tensor<6x10xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x10xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<6x1xi32>) -> tensor<6x10xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x10xi32>) -> tensor<6x10xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<6x10xi32>, tensor<6x10xi32>) -> tensor<6x10xi1>
    %5 = stablehlo.convert %4 : (tensor<6x10xi1>) -> tensor<6x10xf32>
    return %5 : tensor<6x10xf32>
  }
  func.func private @argmax(%arg0: tensor<6x10xf32>) -> tensor<6xi32> {
    %0 = stablehlo.iota dim = 1 : tensor<6x10xi32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<6x10xf32>, tensor<6x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<6xf32>, tensor<6xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<6xi32>
  }
}
