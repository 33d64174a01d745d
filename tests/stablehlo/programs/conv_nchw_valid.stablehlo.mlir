module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x9x9xf32>, %arg1: tensor<4x3x3x3xf32>, %arg2: tensor<4xf32>) -> (tensor<2x4x7x7xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x7x7xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x4x1x1xf32>) -> tensor<2x4x7x7xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x4x7x7xf32>
    return %3 : tensor<2x4x7x7xf32>
  }
}
