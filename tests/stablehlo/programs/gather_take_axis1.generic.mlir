"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x9xf32>, tensor<6xi32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<4x9xf32>, %arg8: tensor<6xi32>):
    %25 = "func.call"(%arg7, %arg8) <{callee = @_take}> : (tensor<4x9xf32>, tensor<6xi32>) -> tensor<4x6xf32>
    "func.return"(%25) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x9xf32>, tensor<6xi32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "_take", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x9xf32>, %arg4: tensor<6xi32>):
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<6xi32>
    %3 = "stablehlo.compare"(%arg4, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi1>
    %4 = "stablehlo.constant"() <{value = dense<9> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<6xi32>
    %6 = "stablehlo.add"(%arg4, %5) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    %7 = "func.call"(%3, %6, %arg4) <{callee = @_where}> : (tensor<6xi1>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xi32>) -> tensor<6x1xi32>
    %9 = "stablehlo.constant"() <{value = dense<8> : tensor<1xi32>}> : () -> tensor<1xi32>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<6x1xi32>
    %12 = "stablehlo.compare"(%8, %11) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x1xi1>
    %13 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 1>}> : (tensor<1xi32>) -> tensor<1x1xi32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x1xi32>) -> tensor<6x1xi32>
    %15 = "stablehlo.compare"(%8, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<6x1xi32>, tensor<6x1xi32>) -> tensor<6x1xi1>
    %16 = "stablehlo.and"(%12, %15) : (tensor<6x1xi1>, tensor<6x1xi1>) -> tensor<6x1xi1>
    %17 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %18 = "stablehlo.reduce"(%16, %17) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<i1>, %arg6: tensor<i1>):
      %24 = "stablehlo.and"(%arg5, %arg6) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%24) : (tensor<i1>) -> ()
    }) : (tensor<6x1xi1>, tensor<i1>) -> tensor<6xi1>
    %19 = "stablehlo.gather"(%arg3, %8) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 4, 1>}> : (tensor<4x9xf32>, tensor<6x1xi32>) -> tensor<4x6xf32>
    %20 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 1>}> : (tensor<6xi1>) -> tensor<4x6xi1>
    %21 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x6xf32>
    %23 = "stablehlo.select"(%20, %19, %22) : (tensor<4x6xi1>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%23) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<6xi1>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<6xi1>, %arg1: tensor<6xi32>, %arg2: tensor<6xi32>):
    %0 = "stablehlo.select"(%arg0, %arg1, %arg2) : (tensor<6xi1>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    "func.return"(%0) : (tensor<6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
