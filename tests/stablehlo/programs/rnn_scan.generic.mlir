"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}], function_type = (tensor<6x2x8xf32>, tensor<2x16xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> (tensor<2x16xf32>, tensor<6x2x16xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<6x2x8xf32>, %arg6: tensor<2x16xf32>, %arg7: tensor<8x16xf32>, %arg8: tensor<16x16xf32>, %arg9: tensor<16xf32>):
    %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6x2x16xf32>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %11:7 = "stablehlo.while"(%arg5, %arg7, %arg8, %arg9, %10, %arg6, %9) ({
    ^bb0(%arg17: tensor<6x2x8xf32>, %arg18: tensor<8x16xf32>, %arg19: tensor<16x16xf32>, %arg20: tensor<16xf32>, %arg21: tensor<i32>, %arg22: tensor<2x16xf32>, %arg23: tensor<6x2x16xf32>):
      %23 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
      %24 = "stablehlo.compare"(%arg21, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%24) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg10: tensor<6x2x8xf32>, %arg11: tensor<8x16xf32>, %arg12: tensor<16x16xf32>, %arg13: tensor<16xf32>, %arg14: tensor<i32>, %arg15: tensor<2x16xf32>, %arg16: tensor<6x2x16xf32>):
      %12 = "func.call"(%arg10, %arg14) <{callee = @dynamic_index_in_dim}> : (tensor<6x2x8xf32>, tensor<i32>) -> tensor<2x8xf32>
      %13 = "stablehlo.dot_general"(%12, %arg11) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
      %14 = "stablehlo.dot_general"(%arg15, %arg12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
      %15 = "stablehlo.add"(%13, %14) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
      %16 = "stablehlo.broadcast_in_dim"(%arg13) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
      %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<2x16xf32>
      %18 = "stablehlo.add"(%15, %17) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
      %19 = "stablehlo.tanh"(%18) : (tensor<2x16xf32>) -> tensor<2x16xf32>
      %20 = "func.call"(%arg16, %19, %arg14) <{callee = @dynamic_update_index_in_dim}> : (tensor<6x2x16xf32>, tensor<2x16xf32>, tensor<i32>) -> tensor<6x2x16xf32>
      %21 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %22 = "stablehlo.add"(%arg14, %21) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg10, %arg11, %arg12, %arg13, %22, %19, %20) : (tensor<6x2x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<i32>, tensor<2x16xf32>, tensor<6x2x16xf32>) -> ()
    }) : (tensor<6x2x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<i32>, tensor<2x16xf32>, tensor<6x2x16xf32>) -> (tensor<6x2x8xf32>, tensor<8x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<i32>, tensor<2x16xf32>, tensor<6x2x16xf32>)
    "func.return"(%11#5, %11#6) : (tensor<2x16xf32>, tensor<6x2x16xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<6x2x8xf32>, tensor<i32>) -> tensor<2x8xf32>, res_attrs = [{}], sym_name = "dynamic_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<6x2x8xf32>, %arg4: tensor<i32>):
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.dynamic_slice"(%arg3, %arg4, %4, %5) <{slice_sizes = array<i64: 1, 2, 8>}> : (tensor<6x2x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x8xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<1x2x8xf32>) -> tensor<2x8xf32>
    "func.return"(%7) : (tensor<2x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<6x2x16xf32>, tensor<2x16xf32>, tensor<i32>) -> tensor<6x2x16xf32>, res_attrs = [{}], sym_name = "dynamic_update_index_in_dim", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<6x2x16xf32>, %arg1: tensor<2x16xf32>, %arg2: tensor<i32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x16xf32>) -> tensor<1x2x16xf32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.dynamic_update_slice"(%arg0, %0, %arg2, %1, %2) : (tensor<6x2x16xf32>, tensor<1x2x16xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<6x2x16xf32>
    "func.return"(%3) : (tensor<6x2x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
