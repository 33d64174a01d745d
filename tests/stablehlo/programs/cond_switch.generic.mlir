"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x5xf32>, tensor<i1>, tensor<i32>) -> (tensor<4x5xf32>, tensor<4x5xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x5xf32>, %arg1: tensor<i1>, %arg2: tensor<i32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<i1>) -> tensor<i32>
    %1 = "stablehlo.case"(%0) ({
      %17 = "stablehlo.negate"(%arg0) : (tensor<4x5xf32>) -> tensor<4x5xf32>
      "stablehlo.return"(%17) : (tensor<4x5xf32>) -> ()
    }, {
      %14 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x5xf32>
      %16 = "stablehlo.multiply"(%arg0, %15) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
      "stablehlo.return"(%16) : (tensor<4x5xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4x5xf32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.clamp"(%2, %arg2, %3) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.case"(%4) ({
      %11 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.broadcast_in_dim"(%11) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x5xf32>
      %13 = "stablehlo.add"(%arg0, %12) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
      "stablehlo.return"(%13) : (tensor<4x5xf32>) -> ()
    }, {
      %7 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x5xf32>
      %9 = "stablehlo.multiply"(%arg0, %8) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
      %10 = "stablehlo.exponential"(%9) : (tensor<4x5xf32>) -> tensor<4x5xf32>
      "stablehlo.return"(%10) : (tensor<4x5xf32>) -> ()
    }, {
      %6 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
      "stablehlo.return"(%6) : (tensor<4x5xf32>) -> ()
    }) : (tensor<i32>) -> tensor<4x5xf32>
    "func.return"(%1, %5) : (tensor<4x5xf32>, tensor<4x5xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
