module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>) -> (tensor<4x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0:4 = stablehlo.while(%iterArg = %arg1, %iterArg_1 = %c_0, %iterArg_2 = %c, %iterArg_3 = %arg0) : tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<4x8xf32>
    cond {
      %c_4 = stablehlo.constant dense<5> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_1, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_4 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg_2, %c_4 : tensor<i32>
      %2 = stablehlo.dot_general %iterArg_3, %iterArg, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %3 = stablehlo.tanh %2 : tensor<4x8xf32>
      %4 = stablehlo.convert %iterArg_2 : (tensor<i32>) -> tensor<f32>
      %cst = stablehlo.constant dense<1.000000e-01> : tensor<f32>
      %5 = stablehlo.multiply %cst, %4 : tensor<f32>
      %6 = stablehlo.broadcast_in_dim %5, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %7 = stablehlo.add %3, %6 : tensor<4x8xf32>
      %c_5 = stablehlo.constant dense<1> : tensor<i32>
      %8 = stablehlo.add %iterArg_1, %c_5 : tensor<i32>
      stablehlo.return %iterArg, %8, %1, %7 : tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<4x8xf32>
    }
    return %0#3 : tensor<4x8xf32>
  }
}
