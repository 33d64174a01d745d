"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<6x4xf32>, tensor<5xi32>, tensor<5x4xf32>, tensor<6x5xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<6x4xf32>, %arg1: tensor<5xi32>, %arg2: tensor<5x4xf32>, %arg3: tensor<6x5xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %3 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<5xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<5xi1>, tensor<5xi32>, tensor<5xi32>) -> tensor<5xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<5xi32>) -> tensor<5x1xi32>
    %8 = "stablehlo.scatter"(%arg0, %7, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %23 = "stablehlo.add"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%23) : (tensor<f32>) -> ()
    }) : (tensor<6x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<6x4xf32>
    %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6x4xf32>
    %11 = "stablehlo.slice"(%arg1) <{limit_indices = array<i64: 4>, start_indices = array<i64: 0>, strides = array<i64: 1>}> : (tensor<5xi32>) -> tensor<4xi32>
    %12 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 6, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<6x5xf32>) -> tensor<6x4xf32>
    %13 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %15 = "stablehlo.compare"(%11, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %16 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %18 = "stablehlo.add"(%11, %17) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %19 = "stablehlo.select"(%15, %18, %11) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4x1xi32>
    %21 = "stablehlo.scatter"(%10, %20, %12) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %22 = "stablehlo.add"(%arg4, %arg5) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%22) : (tensor<f32>) -> ()
    }) : (tensor<6x4xf32>, tensor<4x1xi32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    "func.return"(%8, %21) : (tensor<6x4xf32>, tensor<6x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
