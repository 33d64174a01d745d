"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x8xf32>, %arg1: tensor<4x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %2 = "stablehlo.multiply"(%1, %arg0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = "stablehlo.exponential"(%2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = "stablehlo.log"(%arg1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %5 = "stablehlo.tanh"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %6 = "stablehlo.negate"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %7 = "stablehlo.exponential"(%6) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %8 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %10 = "stablehlo.add"(%9, %7) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %13 = "stablehlo.divide"(%12, %10) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %14 = "stablehlo.negate"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %15 = "stablehlo.exponential"(%14) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %16 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %18 = "stablehlo.add"(%17, %15) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %19 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %21 = "stablehlo.divide"(%20, %18) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %22 = "stablehlo.sqrt"(%arg1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %23 = "stablehlo.rsqrt"(%arg1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %24 = "stablehlo.abs"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%3, %4, %5, %13, %21, %22, %23, %24) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
