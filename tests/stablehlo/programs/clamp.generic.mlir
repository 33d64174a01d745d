"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<4x8xf32>, %arg4: tensor<4x8xf32>, %arg5: tensor<4x8xf32>, %arg6: tensor<4x8xi32>):
    %6 = "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %8 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %9 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %10 = "stablehlo.clamp"(%8, %arg3, %9) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %11 = "stablehlo.clamp"(%arg4, %arg3, %arg5) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %12 = "stablehlo.constant"() <{value = dense<-2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.constant"() <{value = dense<7.500000e-01> : tensor<f32>}> : () -> tensor<f32>
    %14 = "func.call"(%arg3, %12, %13) <{callee = @clip}> : (tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
    %15 = "stablehlo.constant"() <{value = dense<-3> : tensor<i32>}> : () -> tensor<i32>
    %16 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %17 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x8xi32>
    %18 = "stablehlo.broadcast_in_dim"(%16) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x8xi32>
    %19 = "stablehlo.clamp"(%17, %arg6, %18) : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
    "func.return"(%10, %11, %14, %19) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>, res_attrs = [{}], sym_name = "clip", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x8xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %2 = "stablehlo.maximum"(%1, %arg0) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4x8xf32>
    %5 = "stablehlo.minimum"(%4, %2) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    "func.return"(%5) : (tensor<4x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
