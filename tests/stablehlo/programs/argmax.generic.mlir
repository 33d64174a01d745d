"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5x7xf32>) -> (tensor<5xi32>, tensor<7xi32>, tensor<i32>, tensor<5xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg15: tensor<5x7xf32>):
    %39 = "func.call"(%arg15) <{callee = @argmax}> : (tensor<5x7xf32>) -> tensor<5xi32>
    %40 = "func.call"(%arg15) <{callee = @argmin}> : (tensor<5x7xf32>) -> tensor<7xi32>
    %41 = "stablehlo.reshape"(%arg15) : (tensor<5x7xf32>) -> tensor<35xf32>
    %42 = "func.call"(%41) <{callee = @argmax_0}> : (tensor<35xf32>) -> tensor<i32>
    %43 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %44 = "stablehlo.reduce"(%arg15, %43) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg16: tensor<f32>, %arg17: tensor<f32>):
      %45 = "stablehlo.maximum"(%arg16, %arg17) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%45) : (tensor<f32>) -> ()
    }) : (tensor<5x7xf32>, tensor<f32>) -> tensor<5xf32>
    "func.return"(%39, %40, %42, %44) : (tensor<5xi32>, tensor<7xi32>, tensor<i32>, tensor<5xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x7xf32>) -> tensor<5xi32>, sym_name = "argmax", sym_visibility = "private"}> ({
  ^bb0(%arg10: tensor<5x7xf32>):
    %26 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<5x7xi32>
    %27 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %28 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %29:2 = "stablehlo.reduce"(%arg10, %26, %27, %28) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg11: tensor<f32>, %arg12: tensor<i32>, %arg13: tensor<f32>, %arg14: tensor<i32>):
      %30 = "stablehlo.compare"(%arg11, %arg13) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %31 = "stablehlo.compare"(%arg11, %arg11) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %32 = "stablehlo.or"(%30, %31) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %33 = "stablehlo.compare"(%arg11, %arg13) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %34 = "stablehlo.compare"(%arg12, %arg14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %35 = "stablehlo.and"(%33, %34) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %36 = "stablehlo.or"(%32, %35) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %37 = "stablehlo.select"(%32, %arg11, %arg13) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %38 = "stablehlo.select"(%36, %arg12, %arg14) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%37, %38) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<5x7xf32>, tensor<5x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<5xf32>, tensor<5xi32>)
    "func.return"(%29#1) : (tensor<5xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<5x7xf32>) -> tensor<7xi32>, sym_name = "argmin", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<5x7xf32>):
    %13 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5x7xi32>
    %14 = "stablehlo.constant"() <{value = dense<0x7F800000> : tensor<f32>}> : () -> tensor<f32>
    %15 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %16:2 = "stablehlo.reduce"(%arg5, %13, %14, %15) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg6: tensor<f32>, %arg7: tensor<i32>, %arg8: tensor<f32>, %arg9: tensor<i32>):
      %17 = "stablehlo.compare"(%arg6, %arg8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %18 = "stablehlo.compare"(%arg6, %arg6) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %19 = "stablehlo.or"(%17, %18) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %20 = "stablehlo.compare"(%arg6, %arg8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %21 = "stablehlo.compare"(%arg7, %arg9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %22 = "stablehlo.and"(%20, %21) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %23 = "stablehlo.or"(%19, %22) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %24 = "stablehlo.select"(%19, %arg6, %arg8) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %25 = "stablehlo.select"(%23, %arg7, %arg9) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%24, %25) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<5x7xf32>, tensor<5x7xi32>, tensor<f32>, tensor<i32>) -> (tensor<7xf32>, tensor<7xi32>)
    "func.return"(%16#1) : (tensor<7xi32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<35xf32>) -> tensor<i32>, sym_name = "argmax_0", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<35xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<35xi32>
    %1 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:2 = "stablehlo.reduce"(%arg0, %0, %1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<i32>, %arg3: tensor<f32>, %arg4: tensor<i32>):
      %4 = "stablehlo.compare"(%arg1, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %5 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.or"(%4, %5) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %7 = "stablehlo.compare"(%arg1, %arg3) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = "stablehlo.compare"(%arg2, %arg4) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %9 = "stablehlo.and"(%7, %8) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %10 = "stablehlo.or"(%6, %9) : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %11 = "stablehlo.select"(%6, %arg1, %arg3) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.select"(%10, %arg2, %arg4) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%11, %12) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<35xf32>, tensor<35xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    "func.return"(%3#1) : (tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
