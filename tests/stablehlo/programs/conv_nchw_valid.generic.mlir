"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x7x7xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x3x9x9xf32>, %arg1: tensor<4x3x3x3xf32>, %arg2: tensor<4xf32>):
    %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<0> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x7x7xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4x1x1xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x4x1x1xf32>) -> tensor<2x4x7x7xf32>
    %3 = "stablehlo.add"(%0, %2) : (tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32>
    "func.return"(%3) : (tensor<2x4x7x7xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
