"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xf32>, %arg1: tensor<8x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2:4 = "stablehlo.while"(%arg1, %1, %0, %arg0) ({
    ^bb0(%arg6: tensor<8x8xf32>, %arg7: tensor<i32>, %arg8: tensor<i32>, %arg9: tensor<4x8xf32>):
      %14 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %15 = "stablehlo.compare"(%arg7, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<8x8xf32>, %arg3: tensor<i32>, %arg4: tensor<i32>, %arg5: tensor<4x8xf32>):
      %3 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %4 = "stablehlo.add"(%arg4, %3) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %5 = "stablehlo.dot_general"(%arg5, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
      %6 = "stablehlo.tanh"(%5) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %7 = "stablehlo.convert"(%arg4) : (tensor<i32>) -> tensor<f32>
      %8 = "stablehlo.constant"() <{value = dense<1.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.multiply"(%8, %7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
      %11 = "stablehlo.add"(%6, %10) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
      %12 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.add"(%arg3, %12) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg2, %13, %4, %11) : (tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<4x8xf32>) -> ()
    }) : (tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<4x8xf32>)
    "func.return"(%2#3) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
