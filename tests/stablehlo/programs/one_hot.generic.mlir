"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<6xi32>, tensor<10x4xf32>) -> (tensor<6x10xf32>, tensor<6x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<6xi32>, %arg2: tensor<10x4xf32>):
    %6 = "func.call"(%arg1) <{callee = @_one_hot}> : (tensor<6xi32>) -> tensor<6x10xf32>
    %7 = "stablehlo.dot_general"(%6, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x10xf32>, tensor<10x4xf32>) -> tensor<6x4xf32>
    "func.return"(%6, %7) : (tensor<6x10xf32>, tensor<6x4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<6xi32>) -> tensor<6x10xf32>, res_attrs = [{}], sym_name = "_one_hot", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<6xi32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xi32>) -> tensor<6x1xi32>
    %1 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x10xi32>
    %2 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xi32>) -> tensor<6x10xi32>
    %3 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x10xi32>) -> tensor<6x10xi32>
    %4 = "stablehlo.compare"(%2, %3) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<6x10xi32>, tensor<6x10xi32>) -> tensor<6x10xi1>
    %5 = "stablehlo.convert"(%4) : (tensor<6x10xi1>) -> tensor<6x10xf32>
    "func.return"(%5) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
