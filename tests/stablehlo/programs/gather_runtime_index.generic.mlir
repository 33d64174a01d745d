"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> (tensor<5xf32>, tensor<6xf32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<6x5xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg1, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.add"(%arg1, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.select"(%1, %3, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %7 = "stablehlo.compare"(%5, %6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.add"(%8, %9) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %12 = "stablehlo.select"(%7, %10, %11) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %13 = "stablehlo.dynamic_slice"(%arg0, %4, %12) <{slice_sizes = array<i64: 1, 5>}> : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x5xf32>
    %14 = "stablehlo.reshape"(%13) : (tensor<1x5xf32>) -> tensor<5xf32>
    %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %16 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %17 = "stablehlo.compare"(%15, %16) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %18 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %19 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %20 = "stablehlo.add"(%18, %19) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %21 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %22 = "stablehlo.select"(%17, %20, %21) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %23 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.compare"(%arg1, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %25 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %26 = "stablehlo.add"(%arg1, %25) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %27 = "stablehlo.select"(%24, %26, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %28 = "stablehlo.dynamic_slice"(%arg0, %22, %27) <{slice_sizes = array<i64: 6, 1>}> : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<6x1xf32>
    %29 = "stablehlo.reshape"(%28) : (tensor<6x1xf32>) -> tensor<6xf32>
    %30 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %31 = "stablehlo.compare"(%arg1, %30) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %32 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %33 = "stablehlo.add"(%arg1, %32) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %34 = "stablehlo.select"(%31, %33, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %35 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %36 = "stablehlo.compare"(%arg2, %35) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %37 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %38 = "stablehlo.add"(%arg2, %37) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %39 = "stablehlo.select"(%36, %38, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %40 = "stablehlo.dynamic_slice"(%arg0, %34, %39) <{slice_sizes = array<i64: 1, 1>}> : (tensor<6x5xf32>, tensor<i32>, tensor<i32>) -> tensor<1x1xf32>
    %41 = "stablehlo.reshape"(%40) : (tensor<1x1xf32>) -> tensor<f32>
    "func.return"(%14, %29, %41) : (tensor<5xf32>, tensor<6xf32>, tensor<f32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
