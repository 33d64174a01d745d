module @jit_f {
  func.func public @main(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xi32>, %arg3: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xi32>) {
    %0 = stablehlo.divide %arg0, %arg1 : tensor<8xf32>
    %1 = stablehlo.multiply %arg0, %arg1 : tensor<8xf32>
    %2 = stablehlo.divide %arg2, %arg3 : tensor<8xi32>
    %3 = stablehlo.remainder %arg2, %arg3 : tensor<8xi32>
    return %0, %1, %2, %3 : tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xi32>
  }
}
