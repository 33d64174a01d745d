"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xi1>) -> (tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xi1>, tensor<4x6xi1>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xi32>, %arg2: tensor<4x6xi1>):
    %0 = "stablehlo.convert"(%arg0) : (tensor<4x6xf32>) -> tensor<4x6xi32>
    %1 = "stablehlo.convert"(%arg1) : (tensor<4x6xi32>) -> tensor<4x6xf32>
    %2 = "stablehlo.convert"(%arg2) : (tensor<4x6xi1>) -> tensor<4x6xf32>
    %3 = "stablehlo.convert"(%arg2) : (tensor<4x6xi1>) -> tensor<4x6xi32>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %6 = "stablehlo.compare"(%arg0, %5) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %7 = "stablehlo.convert"(%6) : (tensor<4x6xi1>) -> tensor<4x6xi1>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %10 = "stablehlo.compare"(%arg1, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %11 = "stablehlo.convert"(%10) : (tensor<4x6xi1>) -> tensor<4x6xi1>
    "func.return"(%0, %1, %2, %3, %7, %11) : (tensor<4x6xi32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xi1>, tensor<4x6xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
