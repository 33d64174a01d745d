"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}], function_type = (tensor<3x4xf32>, tensor<3x2xf32>, tensor<2x4xf32>, tensor<5xi32>, tensor<3xi32>) -> (tensor<3x6xf32>, tensor<8x4xf32>, tensor<3x2x4xf32>, tensor<8xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<2x4xf32>, %arg3: tensor<5xi32>, %arg4: tensor<3xi32>):
    %0 = "stablehlo.concatenate"(%arg0, %arg1) <{dimension = 1 : i64}> : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x6xf32>
    %1 = "stablehlo.concatenate"(%arg0, %arg2, %arg0) <{dimension = 0 : i64}> : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<8x4xf32>
    %2 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32>
    %4 = "stablehlo.multiply"(%3, %arg0) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %5 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %6 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
    %7 = "stablehlo.concatenate"(%5, %6) <{dimension = 1 : i64}> : (tensor<3x1x4xf32>, tensor<3x1x4xf32>) -> tensor<3x2x4xf32>
    %8 = "stablehlo.concatenate"(%arg3, %arg4) <{dimension = 0 : i64}> : (tensor<5xi32>, tensor<3xi32>) -> tensor<8xi32>
    "func.return"(%0, %1, %7, %8) : (tensor<3x6xf32>, tensor<8x4xf32>, tensor<3x2x4xf32>, tensor<8xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
