"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x12xf32>, tensor<6xi32>) -> (tensor<3x12xf32>, tensor<6xi32>, tensor<3x4xi32>, tensor<3x4xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<3x12xf32>, %arg1: tensor<6xi32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<12xf32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<12xf32>) -> tensor<1x12xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x12xf32>) -> tensor<3x12xf32>
    %3 = "stablehlo.multiply"(%arg0, %2) : (tensor<3x12xf32>, tensor<3x12xf32>) -> tensor<3x12xf32>
    %4 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<6xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
    %6 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<3x4xi32>
    %7 = "stablehlo.constant"() <{value = dense<10> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<3x4xi32>
    %9 = "stablehlo.multiply"(%6, %8) : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    %10 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3x4xi32>
    %11 = "stablehlo.add"(%9, %10) : (tensor<3x4xi32>, tensor<3x4xi32>) -> tensor<3x4xi32>
    %12 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 3, 4>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<3x12xf32>) -> tensor<3x4xf32>
    %13 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xf32>
    %14 = "stablehlo.constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %16 = "stablehlo.multiply"(%15, %13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %17 = "stablehlo.constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    %19 = "stablehlo.add"(%18, %16) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %21 = "stablehlo.broadcast_in_dim"(%20) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<3x4xf32>
    %22 = "stablehlo.add"(%12, %21) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    "func.return"(%3, %5, %11, %22) : (tensor<3x12xf32>, tensor<6xi32>, tensor<3x4xi32>, tensor<3x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
