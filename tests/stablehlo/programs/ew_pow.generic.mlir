"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>) -> (tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x7xf32>, %arg1: tensor<3x7xf32>, %arg2: tensor<3x7xf32>):
    %0 = "stablehlo.power"(%arg0, %arg1) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    %1 = "stablehlo.constant"() <{value = dense<2.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x7xf32>
    %3 = "stablehlo.power"(%arg0, %2) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    %4 = "stablehlo.multiply"(%arg2, %arg2) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    %5 = "stablehlo.multiply"(%4, %arg2) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    %6 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    %7 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x7xf32>
    %9 = "stablehlo.divide"(%8, %6) : (tensor<3x7xf32>, tensor<3x7xf32>) -> tensor<3x7xf32>
    "func.return"(%0, %3, %5, %9) : (tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>, tensor<3x7xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
