module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x6xf32>) -> (tensor<2x6xf32> {jax.result_info = "result[0]"}, tensor<8x4xf32> {jax.result_info = "result[1]"}, tensor<8x6xf32> {jax.result_info = "result[2]"}, tensor<8x3xf32> {jax.result_info = "result[3]"}, tensor<3x3xf32> {jax.result_info = "result[4]"}, tensor<3x4xf32> {jax.result_info = "result[5]"}) {
    %0 = stablehlo.slice %arg0 [1:5:2, 0:6] : (tensor<8x6xf32>) -> tensor<2x6xf32>
    %1 = stablehlo.slice %arg0 [0:8, 2:6] : (tensor<8x6xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.reverse %arg0, dims = [0] : tensor<8x6xf32>
    %3 = stablehlo.slice %arg0 [0:8, 1:6:2] : (tensor<8x6xf32>) -> tensor<8x3xf32>
    %4 = stablehlo.reverse %3, dims = [1] : tensor<8x3xf32>
    %5 = stablehlo.slice %arg0 [2:7:2, 1:6:2] : (tensor<8x6xf32>) -> tensor<3x3xf32>
    %6 = stablehlo.slice %arg0 [5:8, 1:5] : (tensor<8x6xf32>) -> tensor<3x4xf32>
    return %0, %1, %2, %4, %5, %6 : tensor<2x6xf32>, tensor<8x4xf32>, tensor<8x6xf32>, tensor<8x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>
  }
}
