"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}], function_type = (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi1>) -> (tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}, {jax.result_info = "result[8]"}, {jax.result_info = "result[9]"}, {jax.result_info = "result[10]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg9: tensor<4x6xf32>, %arg10: tensor<4x6xf32>, %arg11: tensor<4x6xi32>, %arg12: tensor<4x6xi32>, %arg13: tensor<4x6xi1>):
    %5 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %6 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %7 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %8 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %9 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %10 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %11 = "stablehlo.compare"(%arg11, %arg12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %12 = "stablehlo.compare"(%arg11, %arg12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %13 = "stablehlo.compare"(%arg9, %arg10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %14 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %16 = "stablehlo.multiply"(%15, %arg10) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %17 = "func.call"(%13, %arg9, %16) <{callee = @_where}> : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %18 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %19 = "func.call"(%arg13, %arg9, %18) <{callee = @_where_0}> : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
    %20 = "func.call"(%arg13, %arg11, %arg12) <{callee = @_where_1}> : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%5, %6, %7, %8, %9, %10, %11, %12, %17, %19, %20) : (tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<4x6xi1>, %arg7: tensor<4x6xf32>, %arg8: tensor<4x6xf32>):
    %4 = "stablehlo.select"(%arg6, %arg7, %arg8) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%4) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xi1>, tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "_where_0", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x6xi1>, %arg4: tensor<4x6xf32>, %arg5: tensor<f32>):
    %1 = "stablehlo.convert"(%arg5) : (tensor<f32>) -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %3 = "stablehlo.select"(%arg3, %arg4, %2) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%3) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>, res_attrs = [{}], sym_name = "_where_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xi32>, %arg2: tensor<4x6xi32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%0) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
