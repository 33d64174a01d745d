"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}], function_type = (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32x64xf32>, tensor<64xf32>, tensor<64x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg4: tensor<2x8x32xf32>, %arg5: tensor<32xf32>, %arg6: tensor<32xf32>, %arg7: tensor<32x32xf32>, %arg8: tensor<32x32xf32>, %arg9: tensor<32x32xf32>, %arg10: tensor<32x32xf32>, %arg11: tensor<32xf32>, %arg12: tensor<32xf32>, %arg13: tensor<32x64xf32>, %arg14: tensor<64xf32>, %arg15: tensor<64x32xf32>, %arg16: tensor<32xf32>):
    %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.reduce"(%arg4, %12) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg27: tensor<f32>, %arg28: tensor<f32>):
      %130 = "stablehlo.add"(%arg27, %arg28) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%130) : (tensor<f32>) -> ()
    }) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %15 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %16 = "stablehlo.broadcast_in_dim"(%15) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %17 = "stablehlo.divide"(%14, %16) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %18 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %19 = "stablehlo.subtract"(%arg4, %18) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %20 = "stablehlo.multiply"(%19, %19) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %21 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %22 = "stablehlo.reduce"(%20, %21) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg25: tensor<f32>, %arg26: tensor<f32>):
      %129 = "stablehlo.add"(%arg25, %arg26) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%129) : (tensor<f32>) -> ()
    }) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %23 = "stablehlo.broadcast_in_dim"(%22) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %24 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %25 = "stablehlo.broadcast_in_dim"(%24) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %26 = "stablehlo.divide"(%23, %25) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %27 = "stablehlo.broadcast_in_dim"(%17) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %28 = "stablehlo.subtract"(%arg4, %27) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %29 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %30 = "stablehlo.broadcast_in_dim"(%29) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %31 = "stablehlo.add"(%26, %30) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %32 = "stablehlo.rsqrt"(%31) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %33 = "stablehlo.broadcast_in_dim"(%32) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %34 = "stablehlo.multiply"(%28, %33) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %35 = "stablehlo.broadcast_in_dim"(%arg5) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %36 = "stablehlo.broadcast_in_dim"(%35) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %37 = "stablehlo.multiply"(%34, %36) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %38 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %39 = "stablehlo.broadcast_in_dim"(%38) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %40 = "stablehlo.add"(%37, %39) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %41 = "stablehlo.dot_general"(%40, %arg7) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %42 = "stablehlo.reshape"(%41) : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %43 = "stablehlo.transpose"(%42) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %44 = "stablehlo.dot_general"(%40, %arg8) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %45 = "stablehlo.reshape"(%44) : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %46 = "stablehlo.transpose"(%45) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %47 = "stablehlo.dot_general"(%40, %arg9) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %48 = "stablehlo.reshape"(%47) : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %49 = "stablehlo.transpose"(%48) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %50 = "stablehlo.dot_general"(%43, %46) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %51 = "stablehlo.constant"() <{value = dense<2.82842708> : tensor<f32>}> : () -> tensor<f32>
    %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x8x8xf32>
    %53 = "stablehlo.divide"(%50, %52) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %54 = "stablehlo.constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
    %55 = "stablehlo.broadcast_in_dim"(%54) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<8x8xi1>
    %56 = "func.call"(%55) <{callee = @tril}> : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %57 = "stablehlo.constant"() <{value = dense<-3.40282347E+38> : tensor<f32>}> : () -> tensor<f32>
    %58 = "func.call"(%56, %53, %57) <{callee = @_where}> : (tensor<8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %59 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %60 = "stablehlo.reduce"(%58, %59) <{dimensions = array<i64: 3>}> ({
    ^bb0(%arg23: tensor<f32>, %arg24: tensor<f32>):
      %128 = "stablehlo.maximum"(%arg23, %arg24) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%128) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %61 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %62 = "stablehlo.broadcast_in_dim"(%61) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x8xf32>
    %63 = "stablehlo.maximum"(%62, %60) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %64 = "stablehlo.broadcast_in_dim"(%63) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %65 = "stablehlo.broadcast_in_dim"(%64) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %66 = "stablehlo.subtract"(%58, %65) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %67 = "stablehlo.exponential"(%66) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %68 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %69 = "stablehlo.reduce"(%67, %68) <{dimensions = array<i64: 3>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %127 = "stablehlo.add"(%arg21, %arg22) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%127) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %70 = "stablehlo.broadcast_in_dim"(%69) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %71 = "stablehlo.broadcast_in_dim"(%70) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %72 = "stablehlo.divide"(%67, %71) : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %73 = "stablehlo.dot_general"(%72, %49) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %74 = "stablehlo.transpose"(%73) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x4x8x8xf32>) -> tensor<2x8x4x8xf32>
    %75 = "stablehlo.reshape"(%74) : (tensor<2x8x4x8xf32>) -> tensor<2x8x32xf32>
    %76 = "stablehlo.dot_general"(%75, %arg10) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %77 = "stablehlo.add"(%arg4, %76) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %78 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %79 = "stablehlo.reduce"(%77, %78) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg19: tensor<f32>, %arg20: tensor<f32>):
      %126 = "stablehlo.add"(%arg19, %arg20) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%126) : (tensor<f32>) -> ()
    }) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %80 = "stablehlo.broadcast_in_dim"(%79) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %81 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %82 = "stablehlo.broadcast_in_dim"(%81) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %83 = "stablehlo.divide"(%80, %82) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %84 = "stablehlo.broadcast_in_dim"(%83) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %85 = "stablehlo.subtract"(%77, %84) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %86 = "stablehlo.multiply"(%85, %85) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %87 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %88 = "stablehlo.reduce"(%86, %87) <{dimensions = array<i64: 2>}> ({
    ^bb0(%arg17: tensor<f32>, %arg18: tensor<f32>):
      %125 = "stablehlo.add"(%arg17, %arg18) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%125) : (tensor<f32>) -> ()
    }) : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %89 = "stablehlo.broadcast_in_dim"(%88) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %90 = "stablehlo.constant"() <{value = dense<3.200000e+01> : tensor<f32>}> : () -> tensor<f32>
    %91 = "stablehlo.broadcast_in_dim"(%90) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %92 = "stablehlo.divide"(%89, %91) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %93 = "stablehlo.broadcast_in_dim"(%83) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %94 = "stablehlo.subtract"(%77, %93) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %95 = "stablehlo.constant"() <{value = dense<9.99999974E-6> : tensor<f32>}> : () -> tensor<f32>
    %96 = "stablehlo.broadcast_in_dim"(%95) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x1xf32>
    %97 = "stablehlo.add"(%92, %96) : (tensor<2x8x1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %98 = "stablehlo.rsqrt"(%97) : (tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
    %99 = "stablehlo.broadcast_in_dim"(%98) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %100 = "stablehlo.multiply"(%94, %99) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %101 = "stablehlo.broadcast_in_dim"(%arg11) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %102 = "stablehlo.broadcast_in_dim"(%101) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %103 = "stablehlo.multiply"(%100, %102) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %104 = "stablehlo.broadcast_in_dim"(%arg12) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %105 = "stablehlo.broadcast_in_dim"(%104) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %106 = "stablehlo.add"(%103, %105) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %107 = "stablehlo.dot_general"(%106, %arg13) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
    %108 = "stablehlo.broadcast_in_dim"(%arg14) <{broadcast_dimensions = array<i64: 2>}> : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %109 = "stablehlo.broadcast_in_dim"(%108) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x64xf32>) -> tensor<2x8x64xf32>
    %110 = "stablehlo.add"(%107, %109) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %111 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %112 = "stablehlo.broadcast_in_dim"(%111) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x64xf32>
    %113 = "stablehlo.multiply"(%112, %110) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %114 = "stablehlo.negate"(%110) : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %115 = "stablehlo.constant"() <{value = dense<0.707106769> : tensor<f32>}> : () -> tensor<f32>
    %116 = "stablehlo.broadcast_in_dim"(%115) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8x64xf32>
    %117 = "stablehlo.multiply"(%114, %116) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %118 = "chlo.erfc"(%117) : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %119 = "stablehlo.multiply"(%113, %118) : (tensor<2x8x64xf32>, tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
    %120 = "stablehlo.dot_general"(%119, %arg15) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
    %121 = "stablehlo.add"(%77, %120) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    %122 = "stablehlo.broadcast_in_dim"(%arg16) <{broadcast_dimensions = array<i64: 2>}> : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %123 = "stablehlo.broadcast_in_dim"(%122) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %124 = "stablehlo.add"(%121, %123) : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
    "func.return"(%124) : (tensor<2x8x32xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8x8xi1>) -> tensor<8x8xi1>, res_attrs = [{}], sym_name = "tril", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<8x8xi1>):
    %3 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
    %4 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x8xi32>
    %6 = "stablehlo.add"(%3, %5) : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi32>
    %7 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
    %8 = "stablehlo.compare"(%6, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %9 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
    %10 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64>}> : (tensor<i1>) -> tensor<8x8xi1>
    %11 = "stablehlo.select"(%8, %arg3, %10) : (tensor<8x8xi1>, tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
    "func.return"(%11) : (tensor<8x8xi1>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<8x8xi1>, %arg1: tensor<2x4x8x8xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 2, 3>}> : (tensor<8x8xi1>) -> tensor<2x4x8x8xi1>
    %1 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x4x8x8xf32>
    %2 = "stablehlo.select"(%0, %arg1, %1) : (tensor<2x4x8x8xi1>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    "func.return"(%2) : (tensor<2x4x8x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
