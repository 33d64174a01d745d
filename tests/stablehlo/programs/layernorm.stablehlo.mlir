module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>) -> (tensor<4x16xf32> {jax.result_info = "result[0]"}, tensor<4x16xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4x16xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_0 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %4 = stablehlo.divide %2, %3 : tensor<4x1xf32>
    %cst_1 = stablehlo.constant dense<9.99999997E-7> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %6 = stablehlo.add %4, %5 : tensor<4x1xf32>
    %7 = stablehlo.rsqrt %6 : tensor<4x1xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %9 = stablehlo.multiply %arg0, %8 : tensor<4x16xf32>
    %10 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %12 = stablehlo.multiply %9, %11 : tensor<4x16xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %13 = stablehlo.reduce(%arg0 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_3 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %16 = stablehlo.divide %14, %15 : tensor<4x1xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %18 = stablehlo.subtract %arg0, %17 : tensor<4x16xf32>
    %19 = stablehlo.multiply %18, %18 : tensor<4x16xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %20 = stablehlo.reduce(%19 init: %cst_4) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_5 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %23 = stablehlo.divide %21, %22 : tensor<4x1xf32>
    %24 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %25 = stablehlo.subtract %arg0, %24 : tensor<4x16xf32>
    %cst_6 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %27 = stablehlo.add %23, %26 : tensor<4x1xf32>
    %28 = stablehlo.rsqrt %27 : tensor<4x1xf32>
    %29 = stablehlo.broadcast_in_dim %28, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %30 = stablehlo.multiply %25, %29 : tensor<4x16xf32>
    %31 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %33 = stablehlo.multiply %30, %32 : tensor<4x16xf32>
    %34 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %36 = stablehlo.add %33, %35 : tensor<4x16xf32>
    return %36, %12 : tensor<4x16xf32>, tensor<4x16xf32>
  }
}
