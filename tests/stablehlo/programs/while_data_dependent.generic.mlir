"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<i32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x5xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:2 = "stablehlo.while"(%arg0, %0) ({
    ^bb0(%arg3: tensor<3x5xf32>, %arg4: tensor<i32>):
      %7 = "stablehlo.multiply"(%arg3, %arg3) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
      %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.reduce"(%7, %8) <{dimensions = array<i64: 0, 1>}> ({
      ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
        %15 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%15) : (tensor<f32>) -> ()
      }) : (tensor<3x5xf32>, tensor<f32>) -> tensor<f32>
      %10 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.compare"(%9, %10) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %12 = "stablehlo.constant"() <{value = dense<100> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%arg4, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %14 = "stablehlo.and"(%11, %13) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      "stablehlo.return"(%14) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg1: tensor<3x5xf32>, %arg2: tensor<i32>):
      %2 = "stablehlo.constant"() <{value = dense<7.500000e-01> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x5xf32>
      %4 = "stablehlo.multiply"(%arg1, %3) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
      %5 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %6 = "stablehlo.add"(%arg2, %5) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%4, %6) : (tensor<3x5xf32>, tensor<i32>) -> ()
    }) : (tensor<3x5xf32>, tensor<i32>) -> (tensor<3x5xf32>, tensor<i32>)
    "func.return"(%1#0, %1#1) : (tensor<3x5xf32>, tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
