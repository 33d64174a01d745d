"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}], function_type = (tensor<2x5x5x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x5x5x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x5x5x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<4xf32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 3>}> : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x1x4xf32>) -> tensor<2x5x5x4xf32>
    %2 = "stablehlo.subtract"(%arg0, %1) : (tensor<2x5x5x4xf32>, tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
    %3 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %5 = "stablehlo.add"(%arg4, %4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.sqrt"(%5) : (tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 3>}> : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x1x4xf32>) -> tensor<2x5x5x4xf32>
    %9 = "stablehlo.divide"(%2, %8) : (tensor<2x5x5x4xf32>, tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
    %10 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 3>}> : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x1x4xf32>) -> tensor<2x5x5x4xf32>
    %12 = "stablehlo.multiply"(%9, %11) : (tensor<2x5x5x4xf32>, tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
    %13 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 3>}> : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x1x1x4xf32>) -> tensor<2x5x5x4xf32>
    %15 = "stablehlo.add"(%12, %14) : (tensor<2x5x5x4xf32>, tensor<2x5x5x4xf32>) -> tensor<2x5x5x4xf32>
    "func.return"(%15) : (tensor<2x5x5x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
