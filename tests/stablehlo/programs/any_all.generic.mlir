"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<5x6xi1>, tensor<5x6xf32>) -> (tensor<5xi1>, tensor<6xi1>, tensor<i1>, tensor<i1>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<5x6xi1>, %arg1: tensor<5x6xf32>):
    %0 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg8: tensor<i1>, %arg9: tensor<i1>):
      %18 = "stablehlo.or"(%arg8, %arg9) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%18) : (tensor<i1>) -> ()
    }) : (tensor<5x6xi1>, tensor<i1>) -> tensor<5xi1>
    %2 = "stablehlo.constant"() <{value = dense<-1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5x6xf32>
    %4 = "stablehlo.compare"(%arg1, %3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xi1>
    %5 = "stablehlo.or"(%arg0, %4) : (tensor<5x6xi1>, tensor<5x6xi1>) -> tensor<5x6xi1>
    %6 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %7 = "stablehlo.reduce"(%5, %6) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<i1>, %arg7: tensor<i1>):
      %17 = "stablehlo.and"(%arg6, %arg7) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%17) : (tensor<i1>) -> ()
    }) : (tensor<5x6xi1>, tensor<i1>) -> tensor<6xi1>
    %8 = "stablehlo.constant"() <{value = dense<1.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<5x6xf32>
    %10 = "stablehlo.compare"(%arg1, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<5x6xf32>, tensor<5x6xf32>) -> tensor<5x6xi1>
    %11 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %12 = "stablehlo.reduce"(%10, %11) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg4: tensor<i1>, %arg5: tensor<i1>):
      %16 = "stablehlo.or"(%arg4, %arg5) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }) : (tensor<5x6xi1>, tensor<i1>) -> tensor<i1>
    %13 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %14 = "stablehlo.reduce"(%arg0, %13) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
      %15 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<5x6xi1>, tensor<i1>) -> tensor<i1>
    "func.return"(%1, %7, %12, %14) : (tensor<5xi1>, tensor<6xi1>, tensor<i1>, tensor<i1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
