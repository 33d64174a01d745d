"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>):
    %0 = "stablehlo.sine"(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %1 = "stablehlo.cosine"(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %2 = "stablehlo.log_plus_one"(%arg1) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %3 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %5 = "stablehlo.multiply"(%4, %arg0) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %6 = "stablehlo.exponential_minus_one"(%5) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %7 = "stablehlo.atan2"(%arg0, %arg1) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %8 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %10 = "stablehlo.multiply"(%arg0, %9) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %11 = "stablehlo.remainder"(%10, %arg1) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%0, %1, %2, %6, %7, %11) : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
