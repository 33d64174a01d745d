module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<12x12xf32>) -> (tensor<12x12xf32> {jax.result_info = "result[0]"}, tensor<12xi32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<"0x000101010100010100000001010001010000000101010100010101000001010100010101000100010100010100000100010000000000000100000101010101000101000100010000000000000101010000000000000101010001000101010101000100000000000001010101010100010000000100000001000101000100000000010101000001010001000101010100"> : tensor<12x12xi1>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = call @_where(%c, %arg0, %cst) : (tensor<12x12xi1>, tensor<12x12xf32>, tensor<f32>) -> tensor<12x12xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<12x12xf32>
    %2 = stablehlo.compare GT, %arg0, %1, FLOAT : (tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xi1>
    %3 = stablehlo.and %c, %2 : tensor<12x12xi1>
    %4 = stablehlo.convert %3 : (tensor<12x12xi1>) -> tensor<12x12xi32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %5 = stablehlo.reduce(%4 init: %c_1) applies stablehlo.add across dimensions = [1] : (tensor<12x12xi32>, tensor<i32>) -> tensor<12xi32>
    return %0, %5 : tensor<12x12xf32>, tensor<12xi32>
  }
  func.func private @_where(%arg0: tensor<12x12xi1>, %arg1: tensor<12x12xf32>, %arg2: tensor<f32>) -> tensor<12x12xf32> {
    %0 = stablehlo.convert %arg2 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<12x12xf32>
    %2 = stablehlo.select %arg0, %arg1, %1 : tensor<12x12xi1>, tensor<12x12xf32>
    return %2 : tensor<12x12xf32>
  }
}
