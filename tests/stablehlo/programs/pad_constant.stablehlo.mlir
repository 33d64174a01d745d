module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<6x7xf32> {jax.result_info = "result[0]"}, tensor<5x6xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<3x4xf32>, tensor<i32>) -> tensor<6x7xf32>
    %cst = stablehlo.constant dense<-1.500000e+00> : tensor<f32>
    %1 = call @_pad_0(%arg0, %cst) : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>
    return %0, %1 : tensor<6x7xf32>, tensor<5x6xf32>
  }
  func.func private @_pad(%arg0: tensor<3x4xf32>, %arg1: tensor<i32>) -> tensor<6x7xf32> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [2, 3], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x7xf32>
    return %1 : tensor<6x7xf32>
  }
  func.func private @_pad_0(%arg0: tensor<3x4xf32>, %arg1: tensor<f32>) -> tensor<5x6xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 1], high = [1, 1], interior = [0, 0] : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>
    return %1 : tensor<5x6xf32>
  }
}
