module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x2x8xf32>, %arg1: tensor<2x16xf32>, %arg2: tensor<8x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16xf32>) -> (tensor<2x16xf32> {jax.result_info = "result[0]"}, tensor<6x2x16xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x2x16xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:7 = stablehlo.while(%iterArg = %arg0, %iterArg_0 = %arg2, %iterArg_1 = %arg3, %iterArg_2 = %arg4, %iterArg_3 = %c, %iterArg_4 = %arg1, %iterArg_5 = %0) : tensor<6x2x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<i32>, tensor<2x16xf32>, tensor<6x2x16xf32>
    cond {
      %c_6 = stablehlo.constant dense<6> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg_3, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_3) : (tensor<6x2x8xf32>, tensor<i32>) -> tensor<2x8xf32>
      %3 = stablehlo.dot_general %2, %iterArg_0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
      %4 = stablehlo.dot_general %iterArg_4, %iterArg_1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
      %5 = stablehlo.add %3, %4 : tensor<2x16xf32>
      %6 = stablehlo.broadcast_in_dim %iterArg_2, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
      %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<2x16xf32>
      %8 = stablehlo.add %5, %7 : tensor<2x16xf32>
      %9 = stablehlo.tanh %8 : tensor<2x16xf32>
      %10 = func.call @dynamic_update_index_in_dim(%iterArg_5, %9, %iterArg_3) : (tensor<6x2x16xf32>, tensor<2x16xf32>, tensor<i32>) -> tensor<6x2x16xf32>
      %c_6 = stablehlo.constant dense<1> : tensor<i32>
      %11 = stablehlo.add %iterArg_3, %c_6 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_0, %iterArg_1, %iterArg_2, %11, %9, %10 : tensor<6x2x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<i32>, tensor<2x16xf32>, tensor<6x2x16xf32>
    }
    return %1#5, %1#6 : tensor<2x16xf32>, tensor<6x2x16xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<6x2x8xf32>, %arg1: tensor<i32>) -> tensor<2x8xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 2, 8] : (tensor<6x2x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x8xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x8xf32>) -> tensor<2x8xf32>
    return %1 : tensor<2x8xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<6x2x16xf32>, %arg1: tensor<2x16xf32>, %arg2: tensor<i32>) -> tensor<6x2x16xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<2x16xf32>) -> tensor<1x2x16xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c_0 : (tensor<6x2x16xf32>, tensor<1x2x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<6x2x16xf32>
    return %1 : tensor<6x2x16xf32>
  }
}
