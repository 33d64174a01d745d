module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x12xf32>, %arg1: tensor<6xi32>) -> (tensor<3x12xf32> {jax.result_info = "result[0]"}, tensor<6xi32> {jax.result_info = "result[1]"}, tensor<3x4xi32> {jax.result_info = "result[2]"}, tensor<3x4xf32> {jax.result_info = "result[3]"}) {
    %0 = stablehlo.iota dim = 0 : tensor<12xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [1] : (tensor<12xf32>) -> tensor<1x12xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x12xf32>) -> tensor<3x12xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<3x12xf32>
    %4 = stablehlo.iota dim = 0 : tensor<6xi32>
    %5 = stablehlo.add %arg1, %4 : tensor<6xi32>
    %6 = stablehlo.iota dim = 1 : tensor<3x4xi32>
    %c = stablehlo.constant dense<10> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<3x4xi32>
    %8 = stablehlo.multiply %6, %7 : tensor<3x4xi32>
    %9 = stablehlo.iota dim = 0 : tensor<3x4xi32>
    %10 = stablehlo.add %8, %9 : tensor<3x4xi32>
    %11 = stablehlo.slice %arg0 [0:3, 0:4] : (tensor<3x12xf32>) -> tensor<3x4xf32>
    %12 = stablehlo.iota dim = 0 : tensor<4xf32>
    %cst = stablehlo.constant dense<3.000000e+00> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %14 = stablehlo.multiply %13, %12 : tensor<4xf32>
    %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %16 = stablehlo.add %15, %14 : tensor<4xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<3x4xf32>
    %19 = stablehlo.add %11, %18 : tensor<3x4xf32>
    return %3, %5, %10, %19 : tensor<3x12xf32>, tensor<6xi32>, tensor<3x4xi32>, tensor<3x4xf32>
  }
}
