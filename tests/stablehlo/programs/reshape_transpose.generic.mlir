"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<12x2xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x3x4xf32>):
    %0 = "stablehlo.reshape"(%arg0) : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %1 = "stablehlo.reshape"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 1, 0>}> : (tensor<2x12xf32>) -> tensor<12x2xf32>
    %3 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %4 = "stablehlo.reshape"(%arg0) : (tensor<2x3x4xf32>) -> tensor<24xf32>
    %5 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 2, 1, 0>}> : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
    %6 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0, 2, 3>}> : (tensor<2x3x4xf32>) -> tensor<2x1x3x4xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x1x3x4xf32>) -> tensor<2x3x4xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3x4xf32>
    %10 = "stablehlo.add"(%7, %9) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    "func.return"(%0, %2, %3, %4, %5, %10) : (tensor<6x4xf32>, tensor<12x2xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<4x3x2xf32>, tensor<2x3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
