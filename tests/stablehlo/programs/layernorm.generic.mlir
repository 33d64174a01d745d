"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x16xf32>, %arg1: tensor<16xf32>, %arg2: tensor<16xf32>):
    %0 = "stablehlo.multiply"(%arg0, %arg0) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %47 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%47) : (tensor<f32>) -> ()
    }) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %3 = "stablehlo.broadcast_in_dim"(%2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %4 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x1xf32>
    %6 = "stablehlo.divide"(%3, %5) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    %7 = "stablehlo.constant"() <{value = dense<9.99999997E-7> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x1xf32>
    %9 = "stablehlo.add"(%6, %8) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    %10 = "stablehlo.rsqrt"(%9) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %12 = "stablehlo.multiply"(%arg0, %11) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %13 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %15 = "stablehlo.multiply"(%12, %14) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %16 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %17 = "stablehlo.reduce"(%arg0, %16) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %46 = "stablehlo.add"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%46) : (tensor<f32>) -> ()
    }) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %19 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x1xf32>
    %21 = "stablehlo.divide"(%18, %20) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %23 = "stablehlo.subtract"(%arg0, %22) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %24 = "stablehlo.multiply"(%23, %23) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %25 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %26 = "stablehlo.reduce"(%24, %25) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %45 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%45) : (tensor<f32>) -> ()
    }) : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xf32>) -> tensor<4x1xf32>
    %28 = "stablehlo.constant"() <{value = dense<1.600000e+01> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.broadcast_in_dim"(%28) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x1xf32>
    %30 = "stablehlo.divide"(%27, %29) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    %31 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %32 = "stablehlo.subtract"(%arg0, %31) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %33 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %34 = "stablehlo.broadcast_in_dim"(%33) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x1xf32>
    %35 = "stablehlo.add"(%30, %34) : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
    %36 = "stablehlo.rsqrt"(%35) : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %37 = "stablehlo.broadcast_in_dim"(%36) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %38 = "stablehlo.multiply"(%32, %37) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %39 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %40 = "stablehlo.broadcast_in_dim"(%39) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %41 = "stablehlo.multiply"(%38, %40) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %42 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64: 1>}> : (tensor<16xf32>) -> tensor<1x16xf32>
    %43 = "stablehlo.broadcast_in_dim"(%42) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x16xf32>) -> tensor<4x16xf32>
    %44 = "stablehlo.add"(%41, %43) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    "func.return"(%44, %15) : (tensor<4x16xf32>, tensor<4x16xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
