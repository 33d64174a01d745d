"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<7x5xf32>, tensor<5xi32>, tensor<2x3xi32>, tensor<5xi32>) -> (tensor<5x5xf32>, tensor<2x3x5xf32>, tensor<5xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<7x5xf32>, %arg1: tensor<5xi32>, %arg2: tensor<2x3xi32>, %arg3: tensor<5xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %3 = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<5xi32>) -> tensor<5x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<7x5xf32>, tensor<5x1xi32>) -> tensor<5x5xf32>
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x3xi32>
    %11 = "stablehlo.compare"(%arg2, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %12 = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x3xi32>
    %14 = "stablehlo.add"(%arg2, %13) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    %15 = "stablehlo.select"(%11, %14, %arg2) : (tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x3xi32>) -> tensor<2x3x1xi32>
    %17 = "stablehlo.gather"(%arg0, %16) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<7x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x5xf32>
    %18 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %20 = "stablehlo.compare"(%arg1, %19) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %21 = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %23 = "stablehlo.add"(%arg1, %22) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %24 = "stablehlo.select"(%20, %23, %arg1) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %25 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %26 = "stablehlo.broadcast_in_dim"(%25) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %27 = "stablehlo.compare"(%arg3, %26) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %28 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %30 = "stablehlo.add"(%arg3, %29) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %31 = "stablehlo.select"(%27, %30, %arg3) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %32 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64: 0>}> : (tensor<5xi32>) -> tensor<5x1xi32>
    %33 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64: 0>}> : (tensor<5xi32>) -> tensor<5x1xi32>
    %34 = "stablehlo.concatenate"(%32, %33) <{dimension = 1 : i64}> : (tensor<5x1xi32>, tensor<5x1xi32>) -> tensor<5x2xi32>
    %35 = "stablehlo.gather"(%arg0, %34) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<7x5xf32>, tensor<5x2xi32>) -> tensor<5xf32>
    "func.return"(%8, %17, %35) : (tensor<5x5xf32>, tensor<2x3x5xf32>, tensor<5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
