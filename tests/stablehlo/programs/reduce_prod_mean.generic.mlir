"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<3x8xf32>) -> (tensor<4xf32>, tensor<3xf32>, tensor<f32>, tensor<8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg9: tensor<4x6xf32>, %arg10: tensor<3x8xf32>):
    %25 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %26 = "stablehlo.reduce"(%arg9, %25) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %40 = "stablehlo.multiply"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%40) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
    %27 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.reduce"(%arg10, %27) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg13: tensor<f32>, %arg14: tensor<f32>):
      %39 = "stablehlo.add"(%arg13, %arg14) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%39) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3xf32>
    %29 = "stablehlo.constant"() <{value = dense<8.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3xf32>
    %31 = "stablehlo.divide"(%28, %30) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %32 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %33 = "stablehlo.reduce"(%arg10, %32) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg11: tensor<f32>, %arg12: tensor<f32>):
      %38 = "stablehlo.add"(%arg11, %arg12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%38) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<f32>
    %34 = "stablehlo.constant"() <{value = dense<2.400000e+01> : tensor<f32>}> : () -> tensor<f32>
    %35 = "stablehlo.divide"(%33, %34) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %36 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %37 = "func.call"(%arg10, %36) <{callee = @_var}> : (tensor<3x8xf32>, tensor<i32>) -> tensor<8xf32>
    "func.return"(%26, %31, %35, %37) : (tensor<4xf32>, tensor<3xf32>, tensor<f32>, tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x8xf32>, tensor<i32>) -> tensor<8xf32>, res_attrs = [{}], sym_name = "_var", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x8xf32>, %arg4: tensor<i32>):
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.reduce"(%arg3, %3) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %24 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%24) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<8xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %6 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x8xf32>
    %8 = "stablehlo.divide"(%5, %7) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<3x8xf32>
    %10 = "stablehlo.subtract"(%arg3, %9) : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
    %11 = "chlo.square"(%10) : (tensor<3x8xf32>) -> tensor<3x8xf32>
    %12 = "stablehlo.convert"(%arg4) : (tensor<i32>) -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.subtract"(%13, %12) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %15 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.reduce"(%11, %15) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %23 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%23) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<8xf32>
    %17 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %18 = "stablehlo.divide"(%16, %17) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %19 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.compare"(%14, %19) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %21 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %22 = "func.call"(%20, %18, %21) <{callee = @_where}> : (tensor<i1>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    "func.return"(%22) : (tensor<8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<i1>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<i1>, %arg1: tensor<8xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8xf32>
    %2 = "stablehlo.select"(%arg0, %arg1, %1) : (tensor<i1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "func.return"(%2) : (tensor<8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
