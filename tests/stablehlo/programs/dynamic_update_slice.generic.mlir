"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> (tensor<6x8xf32>, tensor<6x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<6x8xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<i32>, %arg3: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg2, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.add"(%arg2, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.select"(%1, %3, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.compare"(%arg3, %5) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %7 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.add"(%arg3, %7) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %9 = "stablehlo.select"(%6, %8, %arg3) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %10 = "stablehlo.dynamic_update_slice"(%arg0, %arg1, %4, %9) : (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.compare"(%arg3, %11) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %13 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %14 = "stablehlo.add"(%arg3, %13) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %15 = "stablehlo.select"(%12, %14, %arg3) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %16 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %17 = "stablehlo.compare"(%arg2, %16) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %18 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
    %19 = "stablehlo.add"(%arg2, %18) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %20 = "stablehlo.select"(%17, %19, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %21 = "stablehlo.dynamic_update_slice"(%arg0, %arg1, %15, %20) : (tensor<6x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<6x8xf32>
    "func.return"(%10, %21) : (tensor<6x8xf32>, tensor<6x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
