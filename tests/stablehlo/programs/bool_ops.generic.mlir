"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x8xi1>, tensor<4x8xi1>) -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xi1>, %arg1: tensor<4x8xi1>):
    %0 = "stablehlo.and"(%arg0, %arg1) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
    %1 = "stablehlo.or"(%arg0, %arg1) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
    %2 = "stablehlo.xor"(%arg0, %arg1) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
    %3 = "stablehlo.not"(%arg0) : (tensor<4x8xi1>) -> tensor<4x8xi1>
    %4 = "stablehlo.not"(%arg0) : (tensor<4x8xi1>) -> tensor<4x8xi1>
    %5 = "stablehlo.and"(%4, %arg1) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
    "func.return"(%0, %1, %2, %3, %5) : (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
