"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xf32>, tensor<4x3xi32>, tensor<2x6xi32>) -> (tensor<4x3xf32>, tensor<2x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg8: tensor<4x6xf32>, %arg9: tensor<4x3xi32>, %arg10: tensor<2x6xi32>):
    %46 = "func.call"(%arg8, %arg9) <{callee = @take_along_axis}> : (tensor<4x6xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>
    %47 = "func.call"(%arg8, %arg10) <{callee = @take_along_axis_0}> : (tensor<4x6xf32>, tensor<2x6xi32>) -> tensor<2x6xf32>
    "func.return"(%46, %47) : (tensor<4x3xf32>, tensor<2x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<4x3xi32>) -> tensor<4x3xf32>, res_attrs = [{}], sym_name = "take_along_axis", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x6xf32>, %arg5: tensor<4x3xi32>):
    %23 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x3xi32>
    %25 = "stablehlo.compare"(%arg5, %24) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi1>
    %26 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x3xi32>
    %28 = "stablehlo.add"(%arg5, %27) : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
    %29 = "stablehlo.select"(%25, %28, %arg5) : (tensor<4x3xi1>, tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
    %30 = "stablehlo.reshape"(%29) : (tensor<4x3xi32>) -> tensor<4x3x1xi32>
    %31 = "stablehlo.constant"() <{value = dense<5> : tensor<1xi32>}> : () -> tensor<1xi32>
    %32 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x3x1xi32>
    %34 = "stablehlo.compare"(%30, %33) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<4x3x1xi32>, tensor<4x3x1xi32>) -> tensor<4x3x1xi1>
    %35 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<4x3x1xi32>
    %37 = "stablehlo.compare"(%30, %36) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<4x3x1xi32>, tensor<4x3x1xi32>) -> tensor<4x3x1xi1>
    %38 = "stablehlo.and"(%34, %37) : (tensor<4x3x1xi1>, tensor<4x3x1xi1>) -> tensor<4x3x1xi1>
    %39 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %40 = "stablehlo.reduce"(%38, %39) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg6: tensor<i1>, %arg7: tensor<i1>):
      %45 = "stablehlo.and"(%arg6, %arg7) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%45) : (tensor<i1>) -> ()
    }) : (tensor<4x3x1xi1>, tensor<i1>) -> tensor<4x3xi1>
    %41 = "stablehlo.gather"(%arg4, %30) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x6xf32>, tensor<4x3x1xi32>) -> tensor<4x3xf32>
    %42 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %43 = "stablehlo.broadcast_in_dim"(%42) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x3xf32>
    %44 = "stablehlo.select"(%40, %41, %43) : (tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    "func.return"(%44) : (tensor<4x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<2x6xi32>) -> tensor<2x6xf32>, res_attrs = [{}], sym_name = "take_along_axis_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<2x6xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x6xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x6xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<2x6xi1>, tensor<2x6xi32>, tensor<2x6xi32>) -> tensor<2x6xi32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x6xi32>) -> tensor<2x6x1xi32>
    %8 = "stablehlo.constant"() <{value = dense<3> : tensor<1xi32>}> : () -> tensor<1xi32>
    %9 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x6x1xi32>
    %11 = "stablehlo.compare"(%7, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<2x6x1xi32>, tensor<2x6x1xi32>) -> tensor<2x6x1xi1>
    %12 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 2>}> : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x1xi32>) -> tensor<2x6x1xi32>
    %14 = "stablehlo.compare"(%7, %13) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<2x6x1xi32>, tensor<2x6x1xi32>) -> tensor<2x6x1xi1>
    %15 = "stablehlo.and"(%11, %14) : (tensor<2x6x1xi1>, tensor<2x6x1xi1>) -> tensor<2x6x1xi1>
    %16 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg2: tensor<i1>, %arg3: tensor<i1>):
      %22 = "stablehlo.and"(%arg2, %arg3) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%22) : (tensor<i1>) -> ()
    }) : (tensor<2x6x1xi1>, tensor<i1>) -> tensor<2x6xi1>
    %18 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], operand_batching_dims = [1], start_indices_batching_dims = [1], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<4x6xf32>, tensor<2x6x1xi32>) -> tensor<2x6xf32>
    %19 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6xf32>
    %21 = "stablehlo.select"(%17, %18, %20) : (tensor<2x6xi1>, tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
    "func.return"(%21) : (tensor<2x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
