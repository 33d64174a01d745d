"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x6xf32>) -> (tensor<2x6xf32>, tensor<8x4xf32>, tensor<8x6xf32>, tensor<8x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8x6xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 5, 6>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 1>}> : (tensor<8x6xf32>) -> tensor<2x6xf32>
    %1 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8, 6>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 1>}> : (tensor<8x6xf32>) -> tensor<8x4xf32>
    %2 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0>}> : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %3 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8, 6>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 2>}> : (tensor<8x6xf32>) -> tensor<8x3xf32>
    %4 = "stablehlo.reverse"(%3) <{dimensions = array<i64: 1>}> : (tensor<8x3xf32>) -> tensor<8x3xf32>
    %5 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 7, 6>, start_indices = array<i64: 2, 1>, strides = array<i64: 2, 2>}> : (tensor<8x6xf32>) -> tensor<3x3xf32>
    %6 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 8, 5>, start_indices = array<i64: 5, 1>, strides = array<i64: 1, 1>}> : (tensor<8x6xf32>) -> tensor<3x4xf32>
    "func.return"(%0, %1, %2, %4, %5, %6) : (tensor<2x6xf32>, tensor<8x4xf32>, tensor<8x6xf32>, tensor<8x3xf32>, tensor<3x3xf32>, tensor<3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
