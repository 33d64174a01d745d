module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x10x3xf32>, %arg1: tensor<3x3x4xf32>, %arg2: tensor<4x3x2xf32>) -> (tensor<2x10x4xf32> {jax.result_info = "result[0]"}, tensor<2x4x5xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [1], pad = [[1, 1]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x10x3xf32>, tensor<3x3x4xf32>) -> tensor<2x10x4xf32>
    %1 = stablehlo.transpose %arg0, dims = [0, 2, 1] : (tensor<2x10x3xf32>) -> tensor<2x3x10xf32>
    %2 = stablehlo.convolution(%1, %arg2) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [2], pad = [[0, 0]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x10xf32>, tensor<4x3x2xf32>) -> tensor<2x4x5xf32>
    return %0, %2 : tensor<2x10x4xf32>, tensor<2x4x5xf32>
  }
}
