"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}, {}], function_type = (tensor<2x4x20xf32>, tensor<20x32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32x5xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<2x4x20xf32>, %arg2: tensor<20x32xf32>, %arg3: tensor<32xf32>, %arg4: tensor<32x32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<32x5xf32>, %arg7: tensor<5xf32>):
    %3 = "stablehlo.dot_general"(%arg1, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x20xf32>, tensor<20x32xf32>) -> tensor<2x4x32xf32>
    %4 = "stablehlo.broadcast_in_dim"(%arg3) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x4x32xf32>
    %6 = "stablehlo.add"(%3, %5) : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    %7 = "func.call"(%6) <{callee = @relu}> : (tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    %8 = "stablehlo.dot_general"(%7, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x32xf32>, tensor<32x32xf32>) -> tensor<2x4x32xf32>
    %9 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x4x32xf32>
    %11 = "stablehlo.add"(%8, %10) : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    %12 = "stablehlo.tanh"(%11) : (tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    %13 = "stablehlo.dot_general"(%12, %arg6) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x32xf32>, tensor<32x5xf32>) -> tensor<2x4x5xf32>
    %14 = "stablehlo.broadcast_in_dim"(%arg7) <{broadcast_dimensions = array<i64: 2>}> : (tensor<5xf32>) -> tensor<1x1x5xf32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x5xf32>) -> tensor<2x4x5xf32>
    %16 = "stablehlo.add"(%13, %15) : (tensor<2x4x5xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
    "func.return"(%16) : (tensor<2x4x5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x4x32xf32>) -> tensor<2x4x32xf32>, res_attrs = [{}], sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x4x32xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x32xf32>
    %2 = "stablehlo.maximum"(%arg0, %1) : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
    "func.return"(%2) : (tensor<2x4x32xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
