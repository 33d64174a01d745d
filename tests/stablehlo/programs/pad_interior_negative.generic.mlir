"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x5xf32>) -> (tensor<7x14xf32>, tensor<10x2xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x5xf32>):
    %0 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.pad"(%arg0, %0) <{edge_padding_high = array<i64: -1, 2>, edge_padding_low = array<i64: 1, -1>, interior_padding = array<i64: 1, 2>}> : (tensor<4x5xf32>, tensor<f32>) -> tensor<7x14xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.pad"(%arg0, %2) <{edge_padding_high = array<i64: 0, -1>, edge_padding_low = array<i64: 0, -2>, interior_padding = array<i64: 2, 0>}> : (tensor<4x5xf32>, tensor<f32>) -> tensor<10x2xf32>
    "func.return"(%1, %3) : (tensor<7x14xf32>, tensor<10x2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
