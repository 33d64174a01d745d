"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>, %arg2: tensor<8xf32>):
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = "stablehlo.subtract"(%arg0, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = "stablehlo.multiply"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %5 = "stablehlo.abs"(%arg1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %6 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %8 = "stablehlo.add"(%5, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %9 = "stablehlo.divide"(%arg0, %8) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %10 = "stablehlo.maximum"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %11 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %13 = "stablehlo.minimum"(%arg0, %12) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %14 = "stablehlo.negate"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%0, %3, %4, %9, %10, %13, %14) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
