module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<4x8xi32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xf32> {jax.result_info = "result[2]"}, tensor<4x8xi32> {jax.result_info = "result[3]"}) {
    %cst = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %2 = stablehlo.clamp %0, %arg0, %1 : tensor<4x8xf32>
    %3 = stablehlo.clamp %arg1, %arg0, %arg2 : tensor<4x8xf32>
    %cst_1 = stablehlo.constant dense<-2.500000e-01> : tensor<f32>
    %cst_2 = stablehlo.constant dense<7.500000e-01> : tensor<f32>
    %4 = call @clip(%arg0, %cst_1, %cst_2) : (tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
    %c = stablehlo.constant dense<-3> : tensor<i32>
    %c_3 = stablehlo.constant dense<4> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x8xi32>
    %6 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<4x8xi32>
    %7 = stablehlo.clamp %5, %arg3, %6 : tensor<4x8xi32>
    return %2, %3, %4, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>
  }
  func.func private @clip(%arg0: tensor<4x8xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<4x8xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4x8xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<4x8xf32>
    return %5 : tensor<4x8xf32>
  }
}
