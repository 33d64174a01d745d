"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x5xf32>) -> (tensor<8x9xf32>, tensor<5x8xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg6: tensor<4x5xf32>):
    %32 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %33 = "func.call"(%arg6, %32) <{callee = @_pad}> : (tensor<4x5xf32>, tensor<i32>) -> tensor<8x9xf32>
    %34 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %35 = "func.call"(%arg6, %34) <{callee = @_pad_1}> : (tensor<4x5xf32>, tensor<i32>) -> tensor<5x8xf32>
    "func.return"(%33, %35) : (tensor<8x9xf32>, tensor<5x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x5xf32>, tensor<i32>) -> tensor<8x9xf32>, res_attrs = [{}], sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg4: tensor<4x5xf32>, %arg5: tensor<i32>):
    %16 = "stablehlo.slice"(%arg4) <{limit_indices = array<i64: 1, 5>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %17 = "stablehlo.slice"(%arg4) <{limit_indices = array<i64: 3, 5>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<4x5xf32>) -> tensor<2x5xf32>
    %18 = "func.call"(%17) <{callee = @_flip}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
    %19 = "stablehlo.concatenate"(%18, %arg4) <{dimension = 0 : i64}> : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
    %20 = "stablehlo.slice"(%19) <{limit_indices = array<i64: 6, 5>, start_indices = array<i64: 5, 0>, strides = array<i64: 1, 1>}> : (tensor<6x5xf32>) -> tensor<1x5xf32>
    %21 = "stablehlo.slice"(%19) <{limit_indices = array<i64: 5, 5>, start_indices = array<i64: 3, 0>, strides = array<i64: 1, 1>}> : (tensor<6x5xf32>) -> tensor<2x5xf32>
    %22 = "func.call"(%21) <{callee = @_flip}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
    %23 = "stablehlo.concatenate"(%19, %22) <{dimension = 0 : i64}> : (tensor<6x5xf32>, tensor<2x5xf32>) -> tensor<8x5xf32>
    %24 = "stablehlo.slice"(%23) <{limit_indices = array<i64: 8, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<8x5xf32>) -> tensor<8x1xf32>
    %25 = "stablehlo.slice"(%23) <{limit_indices = array<i64: 8, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>}> : (tensor<8x5xf32>) -> tensor<8x2xf32>
    %26 = "func.call"(%25) <{callee = @_flip_0}> : (tensor<8x2xf32>) -> tensor<8x2xf32>
    %27 = "stablehlo.concatenate"(%26, %23) <{dimension = 1 : i64}> : (tensor<8x2xf32>, tensor<8x5xf32>) -> tensor<8x7xf32>
    %28 = "stablehlo.slice"(%27) <{limit_indices = array<i64: 8, 7>, start_indices = array<i64: 0, 6>, strides = array<i64: 1, 1>}> : (tensor<8x7xf32>) -> tensor<8x1xf32>
    %29 = "stablehlo.slice"(%27) <{limit_indices = array<i64: 8, 6>, start_indices = array<i64: 0, 4>, strides = array<i64: 1, 1>}> : (tensor<8x7xf32>) -> tensor<8x2xf32>
    %30 = "func.call"(%29) <{callee = @_flip_0}> : (tensor<8x2xf32>) -> tensor<8x2xf32>
    %31 = "stablehlo.concatenate"(%27, %30) <{dimension = 1 : i64}> : (tensor<8x7xf32>, tensor<8x2xf32>) -> tensor<8x9xf32>
    "func.return"(%31) : (tensor<8x9xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x5xf32>) -> tensor<2x5xf32>, res_attrs = [{}], sym_name = "_flip", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<2x5xf32>):
    %15 = "stablehlo.reverse"(%arg3) <{dimensions = array<i64: 0>}> : (tensor<2x5xf32>) -> tensor<2x5xf32>
    "func.return"(%15) : (tensor<2x5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x2xf32>) -> tensor<8x2xf32>, res_attrs = [{}], sym_name = "_flip_0", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<8x2xf32>):
    %14 = "stablehlo.reverse"(%arg2) <{dimensions = array<i64: 1>}> : (tensor<8x2xf32>) -> tensor<8x2xf32>
    "func.return"(%14) : (tensor<8x2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x5xf32>, tensor<i32>) -> tensor<5x8xf32>, res_attrs = [{}], sym_name = "_pad_1", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x5xf32>, %arg1: tensor<i32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 1, 5>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<1x5xf32>) -> tensor<1x1x5xf32>
    %2 = "stablehlo.reshape"(%1) : (tensor<1x1x5xf32>) -> tensor<1x5xf32>
    %3 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 4, 5>, start_indices = array<i64: 3, 0>, strides = array<i64: 1, 1>}> : (tensor<4x5xf32>) -> tensor<1x5xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<1x5xf32>) -> tensor<1x0x5xf32>
    %5 = "stablehlo.reshape"(%4) : (tensor<1x0x5xf32>) -> tensor<0x5xf32>
    %6 = "stablehlo.concatenate"(%2, %arg0, %5) <{dimension = 0 : i64}> : (tensor<1x5xf32>, tensor<4x5xf32>, tensor<0x5xf32>) -> tensor<5x5xf32>
    %7 = "stablehlo.slice"(%6) <{limit_indices = array<i64: 5, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<5x5xf32>) -> tensor<5x1xf32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<5x1xf32>) -> tensor<5x1x2xf32>
    %9 = "stablehlo.reshape"(%8) : (tensor<5x1x2xf32>) -> tensor<5x2xf32>
    %10 = "stablehlo.slice"(%6) <{limit_indices = array<i64: 5, 5>, start_indices = array<i64: 0, 4>, strides = array<i64: 1, 1>}> : (tensor<5x5xf32>) -> tensor<5x1xf32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<5x1xf32>) -> tensor<5x1x1xf32>
    %12 = "stablehlo.reshape"(%11) : (tensor<5x1x1xf32>) -> tensor<5x1xf32>
    %13 = "stablehlo.concatenate"(%9, %6, %12) <{dimension = 1 : i64}> : (tensor<5x2xf32>, tensor<5x5xf32>, tensor<5x1xf32>) -> tensor<5x8xf32>
    "func.return"(%13) : (tensor<5x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
