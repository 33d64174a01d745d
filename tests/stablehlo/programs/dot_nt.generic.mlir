"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<6x8xf32>, tensor<5x8xf32>, tensor<6x4xf32>) -> (tensor<6x5xf32>, tensor<8x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<6x8xf32>, %arg1: tensor<5x8xf32>, %arg2: tensor<6x4xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x8xf32>, tensor<5x8xf32>) -> tensor<6x5xf32>
    %1 = "stablehlo.dot_general"(%arg0, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x8xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
    "func.return"(%0, %1) : (tensor<6x5xf32>, tensor<8x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
