"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<12x12xf32>) -> (tensor<12x12xf32>, tensor<12xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<12x12xf32>):
    %3 = "stablehlo.constant"() <{value = dense<"0x000101010100010100000001010001010000000101010100010101000001010100010101000100010100010100000100010000000000000100000101010101000101000100010000000000000101010000000000000101010001000101010101000100000000000001010101010100010000000100000001000101000100000000010101000001010001000101010100"> : tensor<12x12xi1>}> : () -> tensor<12x12xi1>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "func.call"(%3, %arg3, %4) <{callee = @_where}> : (tensor<12x12xi1>, tensor<12x12xf32>, tensor<f32>) -> tensor<12x12xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<12x12xf32>
    %8 = "stablehlo.compare"(%arg3, %7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xi1>
    %9 = "stablehlo.and"(%3, %8) : (tensor<12x12xi1>, tensor<12x12xi1>) -> tensor<12x12xi1>
    %10 = "stablehlo.convert"(%9) : (tensor<12x12xi1>) -> tensor<12x12xi32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg4: tensor<i32>, %arg5: tensor<i32>):
      %13 = "stablehlo.add"(%arg4, %arg5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%13) : (tensor<i32>) -> ()
    }) : (tensor<12x12xi32>, tensor<i32>) -> tensor<12xi32>
    "func.return"(%5, %12) : (tensor<12x12xf32>, tensor<12xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<12x12xi1>, tensor<12x12xf32>, tensor<f32>) -> tensor<12x12xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<12x12xi1>, %arg1: tensor<12x12xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<12x12xf32>
    %2 = "stablehlo.select"(%arg0, %arg1, %1) : (tensor<12x12xi1>, tensor<12x12xf32>, tensor<12x12xf32>) -> tensor<12x12xf32>
    "func.return"(%2) : (tensor<12x12xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
