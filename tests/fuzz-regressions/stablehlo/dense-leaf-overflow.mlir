"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2x10x3xf32>, tensor<3x3x4xf32>, tensor<4x3x2xf32>) -> (tensor<2x10x4xf32>, tensor<2x4x5xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x10x3xf32>, %arg1: tensor<3x3x4xf32>, %arg2: tensor<4x3x2xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, padding = dense<1> : tensor<1x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1>, window_reversal = array<i1: false>, window_strides = array<i64: 1>}> : (tensor<2x10x3xf32>, tensor<3x3x4xf32>) -> tensor<2x10x4xf32>
    %1 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x10x3xf32>) -> tensor<2x3x10xf32>
    %2 = "stablehlo.convolution"(%1, %arg2) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, padding = dense<0> : tensor<0x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1>, window_reversal = array<i1: false>, window_strides = array<i64: 2>}> : (tensor<2x3x10xf32>, tensor<4x3x2xf32>) -> tensor<2x485xf32>
    "func.return"(%0, %2) : (tensor<2x10x4xf32>, tensor<2x4x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
