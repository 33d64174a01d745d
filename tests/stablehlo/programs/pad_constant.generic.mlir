"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<3x4xf32>) -> (tensor<6x7xf32>, tensor<5x6xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<3x4xf32>):
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5 = "func.call"(%arg4, %4) <{callee = @_pad}> : (tensor<3x4xf32>, tensor<i32>) -> tensor<6x7xf32>
    %6 = "stablehlo.constant"() <{value = dense<-1.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "func.call"(%arg4, %6) <{callee = @_pad_0}> : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>
    "func.return"(%5, %7) : (tensor<6x7xf32>, tensor<5x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x4xf32>, tensor<i32>) -> tensor<6x7xf32>, res_attrs = [{}], sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<3x4xf32>, %arg3: tensor<i32>):
    %2 = "stablehlo.convert"(%arg3) : (tensor<i32>) -> tensor<f32>
    %3 = "stablehlo.pad"(%arg2, %2) <{edge_padding_high = array<i64: 2, 3>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<3x4xf32>, tensor<f32>) -> tensor<6x7xf32>
    "func.return"(%3) : (tensor<6x7xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>, res_attrs = [{}], sym_name = "_pad_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3x4xf32>, %arg1: tensor<f32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.pad"(%arg0, %0) <{edge_padding_high = array<i64: 1, 1>, edge_padding_low = array<i64: 1, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<3x4xf32>, tensor<f32>) -> tensor<5x6xf32>
    "func.return"(%1) : (tensor<5x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
