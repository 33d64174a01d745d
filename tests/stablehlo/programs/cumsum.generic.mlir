"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg8: tensor<3x8xf32>):
    %9 = "func.call"(%arg8) <{callee = @cumsum}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
    %10 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x8xf32>
    %12 = "stablehlo.multiply"(%11, %arg8) : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
    %13 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x8xf32>
    %15 = "stablehlo.add"(%14, %12) : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
    %16 = "func.call"(%15) <{callee = @cumprod}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
    "func.return"(%9, %16) : (tensor<3x8xf32>, tensor<3x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x8xf32>) -> tensor<3x8xf32>, res_attrs = [{}], sym_name = "cumsum", sym_visibility = "private"}> ({
  ^bb0(%arg7: tensor<3x8xf32>):
    %8 = "func.call"(%arg7) <{callee = @cumsum_0}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
    "func.return"(%8) : (tensor<3x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x8xf32>) -> tensor<3x8xf32>, sym_name = "cumsum_0", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<3x8xf32>):
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %6 = "stablehlo.reduce_window"(%arg4, %5) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 1, 8>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %7 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%7) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
    "func.return"(%6) : (tensor<3x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x8xf32>) -> tensor<3x8xf32>, res_attrs = [{}], sym_name = "cumprod", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<3x8xf32>):
    %3 = "func.call"(%arg3) <{callee = @cumprod_1}> : (tensor<3x8xf32>) -> tensor<3x8xf32>
    "func.return"(%3) : (tensor<3x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3x8xf32>) -> tensor<3x8xf32>, sym_name = "cumprod_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[2, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 1, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.multiply"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<3x8xf32>, tensor<f32>) -> tensor<3x8xf32>
    "func.return"(%1) : (tensor<3x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
