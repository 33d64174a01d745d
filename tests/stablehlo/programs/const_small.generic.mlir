"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x3xf32>, tensor<4x3xi32>) -> (tensor<4x3xf32>, tensor<4x3xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x3xf32>, %arg1: tensor<4x3xi32>):
    %0 = "stablehlo.constant"() <{value = dense<[1.500000e+00, -2.000000e+00, 2.500000e-01]> : tensor<3xf32>}> : () -> tensor<3xf32>
    %1 = "stablehlo.constant"() <{value = dense<[7.500000e+00, 1.250000e+00, -2.500000e+00]> : tensor<3xf32>}> : () -> tensor<3xf32>
    %2 = "stablehlo.constant"() <{value = dense<[1, -2, 3]> : tensor<3xi32>}> : () -> tensor<3xi32>
    %3 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<1x3xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %5 = "stablehlo.multiply"(%arg0, %4) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %6 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<1x3xf32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %8 = "stablehlo.add"(%5, %7) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xi32>) -> tensor<1x3xi32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xi32>) -> tensor<4x3xi32>
    %11 = "stablehlo.multiply"(%arg1, %10) : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
    %12 = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x3xi32>
    %14 = "stablehlo.add"(%11, %13) : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
    "func.return"(%8, %14) : (tensor<4x3xf32>, tensor<4x3xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
