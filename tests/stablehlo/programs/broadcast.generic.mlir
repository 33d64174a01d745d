"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<4xf32>, tensor<6xf32>, tensor<4x1xf32>, tensor<f32>) -> (tensor<4x6xf32>, tensor<3x4x6xf32>, tensor<4xf32>, tensor<4x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<6xf32>, %arg2: tensor<4x1xf32>, %arg3: tensor<f32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<6xf32>) -> tensor<1x6xf32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %4 = "stablehlo.multiply"(%2, %3) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %5 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4x1xf32>) -> tensor<3x4x6xf32>
    %6 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %7 = "stablehlo.multiply"(%6, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %8 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<6xf32>) -> tensor<1x6xf32>
    %9 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x6xf32>
    %10 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %11 = "stablehlo.add"(%9, %10) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%4, %5, %7, %11) : (tensor<4x6xf32>, tensor<3x4x6xf32>, tensor<4xf32>, tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
