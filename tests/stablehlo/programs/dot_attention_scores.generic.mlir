"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>, tensor<2x3x6x8xf32>) -> (tensor<2x3x5x6xf32>, tensor<2x5x3x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2x3x5x8xf32>, %arg1: tensor<2x3x6x8xf32>, %arg2: tensor<2x3x6x8xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x3x5x8xf32>, tensor<2x3x6x8xf32>) -> tensor<2x3x5x6xf32>
    %1 = "stablehlo.dot_general"(%arg2, %0) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x3x6x8xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x8x5xf32>
    %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 0, 3, 1, 2>}> : (tensor<2x3x8x5xf32>) -> tensor<2x5x3x8xf32>
    "func.return"(%0, %2) : (tensor<2x3x5x6xf32>, tensor<2x5x3x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
