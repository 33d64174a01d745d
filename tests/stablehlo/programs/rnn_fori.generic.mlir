"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}], function_type = (tensor<5x2x6xf32>, tensor<2x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<5x2x6xf32>, %arg1: tensor<2x8xf32>, %arg2: tensor<6x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<6x8xf32>, %arg5: tensor<8x8xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2:8 = "stablehlo.while"(%arg0, %arg2, %arg3, %arg4, %arg5, %1, %0, %arg1) ({
    ^bb0(%arg14: tensor<5x2x6xf32>, %arg15: tensor<6x8xf32>, %arg16: tensor<8x8xf32>, %arg17: tensor<6x8xf32>, %arg18: tensor<8x8xf32>, %arg19: tensor<i32>, %arg20: tensor<i32>, %arg21: tensor<2x8xf32>):
      %77 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %78 = "stablehlo.compare"(%arg19, %77) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%78) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg6: tensor<5x2x6xf32>, %arg7: tensor<6x8xf32>, %arg8: tensor<8x8xf32>, %arg9: tensor<6x8xf32>, %arg10: tensor<8x8xf32>, %arg11: tensor<i32>, %arg12: tensor<i32>, %arg13: tensor<2x8xf32>):
      %3 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %4 = "stablehlo.add"(%arg12, %3) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %5 = "stablehlo.convert"(%arg12) : (tensor<i32>) -> tensor<i32>
      %6 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %7 = "stablehlo.compare"(%5, %6) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %8 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %9 = "stablehlo.add"(%5, %8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %10 = "stablehlo.select"(%7, %9, %5) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %11 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %12 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %13 = "stablehlo.compare"(%11, %12) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %14 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %15 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
      %16 = "stablehlo.add"(%14, %15) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %17 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %18 = "stablehlo.select"(%13, %16, %17) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %19 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %20 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %21 = "stablehlo.compare"(%19, %20) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %22 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %23 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
      %24 = "stablehlo.add"(%22, %23) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %25 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %26 = "stablehlo.select"(%21, %24, %25) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %27 = "stablehlo.dynamic_slice"(%arg6, %10, %18, %26) <{slice_sizes = array<i64: 1, 2, 6>}> : (tensor<5x2x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x6xf32>
      %28 = "stablehlo.reshape"(%27) : (tensor<1x2x6xf32>) -> tensor<2x6xf32>
      %29 = "stablehlo.dot_general"(%28, %arg7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
      %30 = "stablehlo.dot_general"(%arg13, %arg8) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %31 = "stablehlo.add"(%29, %30) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %32 = "stablehlo.negate"(%31) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %33 = "stablehlo.exponential"(%32) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %34 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %35 = "stablehlo.broadcast_in_dim"(%34) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8xf32>
      %36 = "stablehlo.add"(%35, %33) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %37 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %38 = "stablehlo.broadcast_in_dim"(%37) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8xf32>
      %39 = "stablehlo.divide"(%38, %36) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %40 = "stablehlo.convert"(%arg12) : (tensor<i32>) -> tensor<i32>
      %41 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %42 = "stablehlo.compare"(%40, %41) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %43 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
      %44 = "stablehlo.add"(%40, %43) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %45 = "stablehlo.select"(%42, %44, %40) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %46 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %47 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %48 = "stablehlo.compare"(%46, %47) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %49 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %50 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
      %51 = "stablehlo.add"(%49, %50) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %52 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %53 = "stablehlo.select"(%48, %51, %52) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %54 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %55 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %56 = "stablehlo.compare"(%54, %55) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %57 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %58 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
      %59 = "stablehlo.add"(%57, %58) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %60 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %61 = "stablehlo.select"(%56, %59, %60) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %62 = "stablehlo.dynamic_slice"(%arg6, %45, %53, %61) <{slice_sizes = array<i64: 1, 2, 6>}> : (tensor<5x2x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x6xf32>
      %63 = "stablehlo.reshape"(%62) : (tensor<1x2x6xf32>) -> tensor<2x6xf32>
      %64 = "stablehlo.dot_general"(%63, %arg9) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
      %65 = "stablehlo.multiply"(%arg13, %39) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %66 = "stablehlo.dot_general"(%65, %arg10) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %67 = "stablehlo.add"(%64, %66) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %68 = "stablehlo.tanh"(%67) : (tensor<2x8xf32>) -> tensor<2x8xf32>
      %69 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %70 = "stablehlo.broadcast_in_dim"(%69) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8xf32>
      %71 = "stablehlo.subtract"(%70, %39) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %72 = "stablehlo.multiply"(%71, %arg13) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %73 = "stablehlo.multiply"(%39, %68) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %74 = "stablehlo.add"(%72, %73) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %75 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %76 = "stablehlo.add"(%arg11, %75) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%arg6, %arg7, %arg8, %arg9, %arg10, %76, %4, %74) : (tensor<5x2x6xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8xf32>) -> ()
    }) : (tensor<5x2x6xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8xf32>) -> (tensor<5x2x6xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8xf32>)
    "func.return"(%2#7) : (tensor<2x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
