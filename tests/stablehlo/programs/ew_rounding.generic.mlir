"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4x6xf32>):
    %8 = "stablehlo.floor"(%arg5) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %9 = "stablehlo.ceil"(%arg5) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %10 = "stablehlo.sign"(%arg5) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %11 = "func.call"(%arg5) <{callee = @round}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %12 = "func.call"(%arg5) <{callee = @trunc}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%8, %9, %10, %11, %12) : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "round", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x6xf32>):
    %7 = "stablehlo.round_nearest_even"(%arg4) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%7) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "trunc", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x6xf32>):
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %3 = "stablehlo.compare"(%arg3, %2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
    %4 = "stablehlo.ceil"(%arg3) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %5 = "stablehlo.floor"(%arg3) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %6 = "func.call"(%3, %4, %5) <{callee = @_where}> : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%6) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xi1>, %arg1: tensor<4x6xf32>, %arg2: tensor<4x6xf32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%0) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
