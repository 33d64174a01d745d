"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<6x16xf32>, tensor<16x10xf32>, tensor<10xf32>, tensor<6xi32>) -> (tensor<6x10xf32>, tensor<6x10xf32>, tensor<6xi32>, tensor<f32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg11: tensor<6x16xf32>, %arg12: tensor<16x10xf32>, %arg13: tensor<10xf32>, %arg14: tensor<6xi32>):
    %36 = "stablehlo.dot_general"(%arg11, %arg12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<6x16xf32>, tensor<16x10xf32>) -> tensor<6x10xf32>
    %37 = "stablehlo.broadcast_in_dim"(%arg13) <{broadcast_dimensions = array<i64: 1>}> : (tensor<10xf32>) -> tensor<1x10xf32>
    %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x10xf32>) -> tensor<6x10xf32>
    %39 = "stablehlo.add"(%36, %38) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %40 = "func.call"(%39) <{callee = @log_softmax}> : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %41 = "func.call"(%arg14) <{callee = @_one_hot}> : (tensor<6xi32>) -> tensor<6x10xf32>
    %42 = "stablehlo.multiply"(%41, %40) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %43 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %44 = "stablehlo.reduce"(%42, %43) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %68 = "stablehlo.add"(%arg21, %arg22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%68) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %45 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %46 = "stablehlo.reduce"(%44, %45) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg19: tensor<f32>, %arg20: tensor<f32>):
      %67 = "stablehlo.add"(%arg19, %arg20) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%67) : (tensor<f32>) -> ()
    }) : (tensor<6xf32>, tensor<f32>) -> tensor<f32>
    %47 = "stablehlo.constant"() <{value = dense<6.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %48 = "stablehlo.divide"(%46, %47) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %49 = "stablehlo.negate"(%48) : (tensor<f32>) -> tensor<f32>
    %50 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %51 = "stablehlo.reduce"(%39, %50) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg17: tensor<f32>, %arg18: tensor<f32>):
      %66 = "stablehlo.maximum"(%arg17, %arg18) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%66) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %52 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %53 = "stablehlo.broadcast_in_dim"(%52) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6xf32>
    %54 = "stablehlo.maximum"(%53, %51) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x1xf32>
    %56 = "stablehlo.broadcast_in_dim"(%55) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %57 = "stablehlo.subtract"(%39, %56) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %58 = "stablehlo.exponential"(%57) : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %59 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %60 = "stablehlo.reduce"(%58, %59) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %65 = "stablehlo.add"(%arg15, %arg16) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%65) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %61 = "stablehlo.broadcast_in_dim"(%60) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x1xf32>
    %62 = "stablehlo.broadcast_in_dim"(%61) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %63 = "stablehlo.divide"(%58, %62) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %64 = "func.call"(%39) <{callee = @argmax}> : (tensor<6x10xf32>) -> tensor<6xi32>
    "func.return"(%63, %40, %64, %49) : (tensor<6x10xf32>, tensor<6x10xf32>, tensor<6xi32>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<6x10xf32>) -> tensor<6x10xf32>, res_attrs = [{}], sym_name = "log_softmax", sym_visibility = "private"}> ({
  ^bb0(%arg6: tensor<6x10xf32>):
    %19 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %20 = "stablehlo.reduce"(%arg6, %19) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %35 = "stablehlo.maximum"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%35) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %21 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.broadcast_in_dim"(%21) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6xf32>
    %23 = "stablehlo.maximum"(%22, %20) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %24 = "stablehlo.broadcast_in_dim"(%23) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x1xf32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %26 = "stablehlo.subtract"(%arg6, %25) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    %27 = "stablehlo.exponential"(%26) : (tensor<6x10xf32>) -> tensor<6x10xf32>
    %28 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.reduce"(%27, %28) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %34 = "stablehlo.add"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%34) : (tensor<f32>) -> ()
    }) : (tensor<6x10xf32>, tensor<f32>) -> tensor<6xf32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xf32>) -> tensor<6x1xf32>
    %31 = "stablehlo.log"(%30) : (tensor<6x1xf32>) -> tensor<6x1xf32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xf32>) -> tensor<6x10xf32>
    %33 = "stablehlo.subtract"(%26, %32) : (tensor<6x10xf32>, tensor<6x10xf32>) -> tensor<6x10xf32>
    "func.return"(%33) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<6xi32>) -> tensor<6x10xf32>, res_attrs = [{}], sym_name = "_one_hot", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<6xi32>):
    %13 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64: 0>}> : (tensor<6xi32>) -> tensor<6x1xi32>
    %14 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<1x10xi32>
    %15 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<6x1xi32>) -> tensor<6x10xi32>
    %16 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x10xi32>) -> tensor<6x10xi32>
    %17 = "stablehlo.compare"(%15, %16) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<6x10xi32>, tensor<6x10xi32>) -> tensor<6x10xi1>
    %18 = "stablehlo.convert"(%17) : (tensor<6x10xi1>) -> tensor<6x10xf32>
    "func.return"(%18) : (tensor<6x10xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<6x10xf32>) -> tensor<6xi32>, sym_name = "argmax", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<6x10xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<6x10xi32>
    %1 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3:2 = "stablehlo.reduce"(%arg0, %0, %1, %2) <{dimensions = array<i64: 1>}> ({
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
    }) : (tensor<6x10xf32>, tensor<6x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<6xf32>, tensor<6xi32>)
    "func.return"(%3#1) : (tensor<6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
