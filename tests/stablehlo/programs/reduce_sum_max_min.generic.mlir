"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6x5xf32>, tensor<4x6xi32>) -> (tensor<4x5xf32>, tensor<f32>, tensor<4x6xf32>, tensor<6xf32>, tensor<6xi32>, tensor<i32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6x5xf32>, %arg1: tensor<4x6xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg12: tensor<f32>, %arg13: tensor<f32>):
      %17 = "stablehlo.add"(%arg12, %arg13) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%17) : (tensor<f32>) -> ()
    }) : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x5xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%arg0, %2) <{dimensions = array<i64: 0, 1, 2>}> ({
    ^bb0(%arg10: tensor<f32>, %arg11: tensor<f32>):
      %16 = "stablehlo.add"(%arg10, %arg11) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%16) : (tensor<f32>) -> ()
    }) : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.reduce"(%arg0, %4) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg8: tensor<f32>, %arg9: tensor<f32>):
      %15 = "stablehlo.maximum"(%arg8, %arg9) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%15) : (tensor<f32>) -> ()
    }) : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<4x6xf32>
    %6 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.reduce"(%arg0, %6) <{dimensions = array<i64: 0, 2>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):
      %14 = "stablehlo.minimum"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%14) : (tensor<f32>) -> ()
    }) : (tensor<4x6x5xf32>, tensor<f32>) -> tensor<6xf32>
    %8 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %9 = "stablehlo.reduce"(%arg1, %8) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg4: tensor<i32>, %arg5: tensor<i32>):
      %13 = "stablehlo.add"(%arg4, %arg5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%13) : (tensor<i32>) -> ()
    }) : (tensor<4x6xi32>, tensor<i32>) -> tensor<6xi32>
    %10 = "stablehlo.constant"() <{value = dense<-2147483648> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.reduce"(%arg1, %10) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<i32>):
      %12 = "stablehlo.maximum"(%arg2, %arg3) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%12) : (tensor<i32>) -> ()
    }) : (tensor<4x6xi32>, tensor<i32>) -> tensor<i32>
    "func.return"(%1, %3, %5, %7, %9, %11) : (tensor<4x5xf32>, tensor<f32>, tensor<4x6xf32>, tensor<6xf32>, tensor<6xi32>, tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
