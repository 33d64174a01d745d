module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x3xf32>, %arg1: tensor<4x3xi32>) -> (tensor<4x3xf32> {jax.result_info = "result[0]"}, tensor<4x3xi32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<[1.500000e+00, -2.000000e+00, 2.500000e-01]> : tensor<3xf32>
    %cst_0 = stablehlo.constant dense<[7.500000e+00, 1.250000e+00, -2.500000e+00]> : tensor<3xf32>
    %c = stablehlo.constant dense<[1, -2, 3]> : tensor<3xi32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %2 = stablehlo.multiply %arg0, %1 : tensor<4x3xf32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %5 = stablehlo.add %2, %4 : tensor<4x3xf32>
    %6 = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xi32>) -> tensor<1x3xi32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x3xi32>) -> tensor<4x3xi32>
    %8 = stablehlo.multiply %arg1, %7 : tensor<4x3xi32>
    %c_1 = stablehlo.constant dense<7> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<4x3xi32>
    %10 = stablehlo.add %8, %9 : tensor<4x3xi32>
    return %5, %10 : tensor<4x3xf32>, tensor<4x3xi32>
  }
}
