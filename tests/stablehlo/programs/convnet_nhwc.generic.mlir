"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<2x12x12x3xf32>, tensor<3x3x3x8xf32>, tensor<3x3x1x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg2: tensor<2x12x12x3xf32>, %arg3: tensor<3x3x3x8xf32>, %arg4: tensor<3x3x1x8xf32>, %arg5: tensor<8x4xf32>):
    %15 = "stablehlo.convolution"(%arg2, %arg3) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<2x12x12x3xf32>, tensor<3x3x3x8xf32>) -> tensor<2x6x6x8xf32>
    %16 = "func.call"(%15) <{callee = @relu6}> : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %17 = "stablehlo.convolution"(%16, %arg4) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 8 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<2x6x6x8xf32>, tensor<3x3x1x8xf32>) -> tensor<2x6x6x8xf32>
    %18 = "func.call"(%17) <{callee = @silu}> : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %19 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.reduce"(%18, %19) <{dimensions = array<i64: 1, 2>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %25 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%25) : (tensor<f32>) -> ()
    }) : (tensor<2x6x6x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %21 = "stablehlo.constant"() <{value = dense<3.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8xf32>
    %23 = "stablehlo.divide"(%20, %22) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %24 = "stablehlo.dot_general"(%23, %arg5) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
    "func.return"(%24) : (tensor<2x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>, res_attrs = [{}], sym_name = "relu6", sym_visibility = "private"}> ({
  ^bb0(%arg1: tensor<2x6x6x8xf32>):
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %11 = "stablehlo.maximum"(%arg1, %10) : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %12 = "stablehlo.constant"() <{value = dense<6.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %14 = "stablehlo.minimum"(%11, %13) : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    "func.return"(%14) : (tensor<2x6x6x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>, res_attrs = [{}], sym_name = "silu", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x6x6x8xf32>):
    %0 = "stablehlo.negate"(%arg0) : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %1 = "stablehlo.exponential"(%0) : (tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %2 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %4 = "stablehlo.add"(%3, %1) : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %5 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6x6x8xf32>
    %7 = "stablehlo.divide"(%6, %4) : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    %8 = "stablehlo.multiply"(%arg0, %7) : (tensor<2x6x6x8xf32>, tensor<2x6x6x8xf32>) -> tensor<2x6x6x8xf32>
    "func.return"(%8) : (tensor<2x6x6x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
