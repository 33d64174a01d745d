module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x12x12x3xf32>, %arg1: tensor<3x3x3x8xf32>, %arg2: tensor<3x3x1x8xf32>, %arg3: tensor<8x4xf32>) -> (tensor<2x4xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x12x12x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x6x6x8xf32>
    %1 = call @relu6(%0) : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %2 = stablehlo.convolution(%1, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 8 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x8xf32>, tensor<3x3x1x8xf32>) -> tensor<2x6x6x8xf32>
    %3 = call @silu(%2) : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [1, 2] : (tensor<2x6x6x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %cst_0 = stablehlo.constant dense<3.600000e+01> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
    %6 = stablehlo.divide %4, %5 : tensor<2x8xf32>
    %7 = stablehlo.dot_general %6, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    return %7 : tensor<2x4xf32>
  }
  func.func private @relu6(%arg0: tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x6x6x8xf32>
    %cst_0 = stablehlo.constant dense<6.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %3 = stablehlo.minimum %1, %2 : tensor<2x6x6x8xf32>
    return %3 : tensor<2x6x6x8xf32>
  }
  func.func private @silu(%arg0: tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32> {
    %0 = stablehlo.negate %arg0 : tensor<2x6x6x8xf32>
    %1 = stablehlo.exponential %0 : tensor<2x6x6x8xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %3 = stablehlo.add %2, %1 : tensor<2x6x6x8xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %5 = stablehlo.divide %4, %3 : tensor<2x6x6x8xf32>
    %6 = stablehlo.multiply %arg0, %5 : tensor<2x6x6x8xf32>
    return %6 : tensor<2x6x6x8xf32>
  }
}
