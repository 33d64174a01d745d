"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}, {jax.result_info = "result[8]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg21: tensor<4x16xf32>):
    %90 = "func.call"(%arg21) <{callee = @relu}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %91 = "func.call"(%arg21) <{callee = @relu6}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %92 = "func.call"(%arg21) <{callee = @silu}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %93 = "func.call"(%arg21) <{callee = @softplus}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %94 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %95 = "func.call"(%arg21, %94) <{callee = @leaky_relu}> : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %96 = "func.call"(%arg21) <{callee = @elu}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %97 = "func.call"(%arg21) <{callee = @selu}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %98 = "func.call"(%arg21) <{callee = @log_sigmoid}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %99 = "func.call"(%arg21) <{callee = @hard_tanh}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%90, %91, %92, %93, %95, %96, %97, %98, %99) : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%arg20: tensor<4x16xf32>):
    %87 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %88 = "stablehlo.broadcast_in_dim"(%87) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %89 = "stablehlo.maximum"(%arg20, %88) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%89) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "relu6", sym_visibility = "private"}> ({
  ^bb0(%arg19: tensor<4x16xf32>):
    %81 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %82 = "stablehlo.broadcast_in_dim"(%81) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %83 = "stablehlo.maximum"(%arg19, %82) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %84 = "stablehlo.constant"() <{value = dense<6.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %85 = "stablehlo.broadcast_in_dim"(%84) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %86 = "stablehlo.minimum"(%83, %85) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%86) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "silu", sym_visibility = "private"}> ({
  ^bb0(%arg18: tensor<4x16xf32>):
    %72 = "stablehlo.negate"(%arg18) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %73 = "stablehlo.exponential"(%72) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %74 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %75 = "stablehlo.broadcast_in_dim"(%74) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %76 = "stablehlo.add"(%75, %73) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %77 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %78 = "stablehlo.broadcast_in_dim"(%77) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %79 = "stablehlo.divide"(%78, %76) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %80 = "stablehlo.multiply"(%arg18, %79) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%80) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "softplus", sym_visibility = "private"}> ({
  ^bb0(%arg17: tensor<4x16xf32>):
    %58 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %59 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %60 = "stablehlo.maximum"(%arg17, %59) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %61 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %62 = "stablehlo.subtract"(%arg17, %61) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %63 = "stablehlo.compare"(%62, %62) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %64 = "stablehlo.broadcast_in_dim"(%58) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %65 = "stablehlo.add"(%arg17, %64) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %66 = "stablehlo.abs"(%62) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %67 = "stablehlo.negate"(%66) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %68 = "stablehlo.exponential"(%67) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %69 = "stablehlo.log_plus_one"(%68) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %70 = "stablehlo.add"(%60, %69) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %71 = "stablehlo.select"(%63, %65, %70) : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%71) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "leaky_relu", sym_visibility = "private"}> ({
  ^bb0(%arg15: tensor<4x16xf32>, %arg16: tensor<f32>):
    %51 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %53 = "stablehlo.compare"(%arg15, %52) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %54 = "stablehlo.convert"(%arg16) : (tensor<f32>) -> tensor<f32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %56 = "stablehlo.multiply"(%55, %arg15) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %57 = "func.call"(%53, %arg15, %56) <{callee = @_where}> : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%57) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg12: tensor<4x16xi1>, %arg13: tensor<4x16xf32>, %arg14: tensor<4x16xf32>):
    %50 = "stablehlo.select"(%arg12, %arg13, %arg14) : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%50) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "elu", sym_visibility = "private"}> ({
  ^bb0(%arg11: tensor<4x16xf32>):
    %37 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %39 = "stablehlo.compare"(%arg11, %38) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %40 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %41 = "stablehlo.broadcast_in_dim"(%40) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %42 = "stablehlo.compare"(%arg11, %41) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %43 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %44 = "func.call"(%42, %43, %arg11) <{callee = @_where_0}> : (tensor<4x16xi1>, tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %45 = "stablehlo.exponential_minus_one"(%44) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %46 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %47 = "stablehlo.broadcast_in_dim"(%46) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %48 = "stablehlo.multiply"(%47, %45) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %49 = "func.call"(%39, %arg11, %48) <{callee = @_where}> : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%49) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x16xi1>, tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "_where_0", sym_visibility = "private"}> ({
  ^bb0(%arg8: tensor<4x16xi1>, %arg9: tensor<f32>, %arg10: tensor<4x16xf32>):
    %34 = "stablehlo.convert"(%arg9) : (tensor<f32>) -> tensor<f32>
    %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %36 = "stablehlo.select"(%arg8, %35, %arg10) : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%36) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "selu", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<4x16xf32>):
    %29 = "stablehlo.constant"() <{value = dense<1.67326319> : tensor<f32>}> : () -> tensor<f32>
    %30 = "func.call"(%arg7, %29) <{callee = @elu_1}> : (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %31 = "stablehlo.constant"() <{value = dense<1.05070102> : tensor<f32>}> : () -> tensor<f32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %33 = "stablehlo.multiply"(%32, %30) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%33) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x16xf32>, tensor<f32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "elu_1", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<4x16xf32>, %arg6: tensor<f32>):
    %16 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %18 = "stablehlo.compare"(%arg5, %17) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %19 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %21 = "stablehlo.compare"(%arg5, %20) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %22 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %23 = "func.call"(%21, %22, %arg5) <{callee = @_where_0}> : (tensor<4x16xi1>, tensor<f32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %24 = "stablehlo.exponential_minus_one"(%23) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %25 = "stablehlo.convert"(%arg6) : (tensor<f32>) -> tensor<f32>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %27 = "stablehlo.multiply"(%26, %24) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %28 = "func.call"(%18, %arg5, %27) <{callee = @_where}> : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%28) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "log_sigmoid", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x16xf32>):
    %13 = "stablehlo.negate"(%arg4) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %14 = "func.call"(%13) <{callee = @softplus}> : (tensor<4x16xf32>) -> tensor<4x16xf32>
    %15 = "stablehlo.negate"(%14) : (tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%15) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "hard_tanh", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x16xf32>):
    %3 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %5 = "stablehlo.compare"(%arg3, %4) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %6 = "stablehlo.constant"() <{value = dense<-1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %8 = "stablehlo.compare"(%arg3, %7) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xi1>
    %9 = "stablehlo.constant"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
    %10 = "func.call"(%8, %9, %arg3) <{callee = @_where_2}> : (tensor<4x16xi1>, tensor<i32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %11 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %12 = "func.call"(%5, %11, %10) <{callee = @_where_2}> : (tensor<4x16xi1>, tensor<i32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%12) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x16xi1>, tensor<i32>, tensor<4x16xf32>) -> tensor<4x16xf32>, res_attrs = [{}], sym_name = "_where_2", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x16xi1>, %arg1: tensor<i32>, %arg2: tensor<4x16xf32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<i32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x16xf32>
    %2 = "stablehlo.select"(%arg0, %1, %arg2) : (tensor<4x16xi1>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%2) : (tensor<4x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
