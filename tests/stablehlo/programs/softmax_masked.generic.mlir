"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x7xf32>, tensor<4x7xi1>) -> (tensor<4x7xf32>, tensor<4x7xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg8: tensor<4x7xf32>, %arg9: tensor<4x7xi1>):
    %20 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %21 = "func.call"(%arg9, %arg8, %20) <{callee = @_where}> : (tensor<4x7xi1>, tensor<4x7xf32>, tensor<f32>) -> tensor<4x7xf32>
    %22 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %23 = "stablehlo.reduce"(%21, %22) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
      %40 = "stablehlo.maximum"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%40) : (tensor<f32>) -> ()
    }) : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %24 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %26 = "stablehlo.maximum"(%25, %23) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %28 = "stablehlo.broadcast_in_dim"(%27) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %29 = "stablehlo.subtract"(%21, %28) : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
    %30 = "stablehlo.exponential"(%29) : (tensor<4x7xf32>) -> tensor<4x7xf32>
    %31 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %32 = "stablehlo.reduce"(%30, %31) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %39 = "stablehlo.add"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%39) : (tensor<f32>) -> ()
    }) : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %35 = "stablehlo.divide"(%30, %34) : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
    %36 = "func.call"(%21) <{callee = @log_softmax}> : (tensor<4x7xf32>) -> tensor<4x7xf32>
    %37 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %38 = "func.call"(%arg9, %36, %37) <{callee = @_where}> : (tensor<4x7xi1>, tensor<4x7xf32>, tensor<f32>) -> tensor<4x7xf32>
    "func.return"(%35, %38) : (tensor<4x7xf32>, tensor<4x7xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x7xi1>, tensor<4x7xf32>, tensor<f32>) -> tensor<4x7xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<4x7xi1>, %arg6: tensor<4x7xf32>, %arg7: tensor<f32>):
    %17 = "stablehlo.convert"(%arg7) : (tensor<f32>) -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x7xf32>
    %19 = "stablehlo.select"(%arg5, %arg6, %18) : (tensor<4x7xi1>, tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
    "func.return"(%19) : (tensor<4x7xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x7xf32>) -> tensor<4x7xf32>, res_attrs = [{}], sym_name = "log_softmax", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x7xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %16 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %2 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.maximum"(%3, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %7 = "stablehlo.subtract"(%arg0, %6) : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
    %8 = "stablehlo.exponential"(%7) : (tensor<4x7xf32>) -> tensor<4x7xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.reduce"(%8, %9) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %15 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<4x7xf32>, tensor<f32>) -> tensor<4xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %12 = "stablehlo.log"(%11) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x7xf32>
    %14 = "stablehlo.subtract"(%7, %13) : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xf32>
    "func.return"(%14) : (tensor<4x7xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
