module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x8x32xf32>, %arg1: tensor<32xf32>, %arg2: tensor<32xf32>, %arg3: tensor<32x32xf32>, %arg4: tensor<32x32xf32>, %arg5: tensor<32x32xf32>, %arg6: tensor<32x32xf32>, %arg7: tensor<32xf32>, %arg8: tensor<32xf32>, %arg9: tensor<32x64xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64x32xf32>, %arg12: tensor<32xf32>) -> (tensor<2x8x32xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_0 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %2 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %3 = stablehlo.divide %1, %2 : tensor<2x8x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x8x32xf32>
    %6 = stablehlo.multiply %5, %5 : tensor<2x8x32xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_2 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %9 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %10 = stablehlo.divide %8, %9 : tensor<2x8x1xf32>
    %11 = stablehlo.broadcast_in_dim %3, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %12 = stablehlo.subtract %arg0, %11 : tensor<2x8x32xf32>
    %cst_3 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %13 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %14 = stablehlo.add %10, %13 : tensor<2x8x1xf32>
    %15 = stablehlo.rsqrt %14 : tensor<2x8x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %17 = stablehlo.multiply %12, %16 : tensor<2x8x32xf32>
    %18 = stablehlo.broadcast_in_dim %arg1, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %20 = stablehlo.multiply %17, %19 : tensor<2x8x32xf32>
    %21 = stablehlo.broadcast_in_dim %arg2, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %23 = stablehlo.add %20, %22 : tensor<2x8x32xf32>
    %24 = stablehlo.dot_general %23, %arg3, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %25 = stablehlo.reshape %24 : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %26 = stablehlo.transpose %25, dims = [0, 2, 1, 3] : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %27 = stablehlo.dot_general %23, %arg4, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %28 = stablehlo.reshape %27 : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %29 = stablehlo.transpose %28, dims = [0, 2, 1, 3] : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %30 = stablehlo.dot_general %23, %arg5, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %31 = stablehlo.reshape %30 : (tensor<2x8x32xf32>) -> tensor<2x8x4x8xf32>
    %32 = stablehlo.transpose %31, dims = [0, 2, 1, 3] : (tensor<2x8x4x8xf32>) -> tensor<2x4x8x8xf32>
    %33 = stablehlo.dot_general %26, %29, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [DEFAULT, DEFAULT] : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %cst_4 = stablehlo.constant dense<2.82842708> : tensor<f32>
    %34 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<2x4x8x8xf32>
    %35 = stablehlo.divide %33, %34 : tensor<2x4x8x8xf32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %36 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %37 = call @tril(%36) : (tensor<8x8xi1>) -> tensor<8x8xi1>
    %cst_5 = stablehlo.constant dense<-3.40282347E+38> : tensor<f32>
    %38 = call @_where(%37, %35, %cst_5) : (tensor<8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %cst_6 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_6) applies stablehlo.maximum across dimensions = [3] : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %cst_7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<2x4x8xf32>
    %41 = stablehlo.maximum %40, %39 : tensor<2x4x8xf32>
    %42 = stablehlo.broadcast_in_dim %41, dims = [0, 1, 2] : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %43 = stablehlo.broadcast_in_dim %42, dims = [0, 1, 2, 3] : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %44 = stablehlo.subtract %38, %43 : tensor<2x4x8x8xf32>
    %45 = stablehlo.exponential %44 : tensor<2x4x8x8xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_8) applies stablehlo.add across dimensions = [3] : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1, 2] : (tensor<2x4x8xf32>) -> tensor<2x4x8x1xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1, 2, 3] : (tensor<2x4x8x1xf32>) -> tensor<2x4x8x8xf32>
    %49 = stablehlo.divide %45, %48 : tensor<2x4x8x8xf32>
    %50 = stablehlo.dot_general %49, %32, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [DEFAULT, DEFAULT] : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %51 = stablehlo.transpose %50, dims = [0, 2, 1, 3] : (tensor<2x4x8x8xf32>) -> tensor<2x8x4x8xf32>
    %52 = stablehlo.reshape %51 : (tensor<2x8x4x8xf32>) -> tensor<2x8x32xf32>
    %53 = stablehlo.dot_general %52, %arg6, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x32xf32>) -> tensor<2x8x32xf32>
    %54 = stablehlo.add %arg0, %53 : tensor<2x8x32xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.reduce(%54 init: %cst_9) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %56 = stablehlo.broadcast_in_dim %55, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_10 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %58 = stablehlo.divide %56, %57 : tensor<2x8x1xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %60 = stablehlo.subtract %54, %59 : tensor<2x8x32xf32>
    %61 = stablehlo.multiply %60, %60 : tensor<2x8x32xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.reduce(%61 init: %cst_11) applies stablehlo.add across dimensions = [2] : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x1xf32>
    %cst_12 = stablehlo.constant dense<3.200000e+01> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %65 = stablehlo.divide %63, %64 : tensor<2x8x1xf32>
    %66 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %67 = stablehlo.subtract %54, %66 : tensor<2x8x32xf32>
    %cst_13 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %68 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<2x8x1xf32>
    %69 = stablehlo.add %65, %68 : tensor<2x8x1xf32>
    %70 = stablehlo.rsqrt %69 : tensor<2x8x1xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1, 2] : (tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
    %72 = stablehlo.multiply %67, %71 : tensor<2x8x32xf32>
    %73 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %74 = stablehlo.broadcast_in_dim %73, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %75 = stablehlo.multiply %72, %74 : tensor<2x8x32xf32>
    %76 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %77 = stablehlo.broadcast_in_dim %76, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %78 = stablehlo.add %75, %77 : tensor<2x8x32xf32>
    %79 = stablehlo.dot_general %78, %arg9, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x32xf32>, tensor<32x64xf32>) -> tensor<2x8x64xf32>
    %80 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %81 = stablehlo.broadcast_in_dim %80, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<2x8x64xf32>
    %82 = stablehlo.add %79, %81 : tensor<2x8x64xf32>
    %cst_14 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %83 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %84 = stablehlo.multiply %83, %82 : tensor<2x8x64xf32>
    %85 = stablehlo.negate %82 : tensor<2x8x64xf32>
    %cst_15 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %86 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<2x8x64xf32>
    %87 = stablehlo.multiply %85, %86 : tensor<2x8x64xf32>
    %88 = chlo.erfc %87 : tensor<2x8x64xf32> -> tensor<2x8x64xf32>
    %89 = stablehlo.multiply %84, %88 : tensor<2x8x64xf32>
    %90 = stablehlo.dot_general %89, %arg11, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8x64xf32>, tensor<64x32xf32>) -> tensor<2x8x32xf32>
    %91 = stablehlo.add %54, %90 : tensor<2x8x32xf32>
    %92 = stablehlo.broadcast_in_dim %arg12, dims = [2] : (tensor<32xf32>) -> tensor<1x1x32xf32>
    %93 = stablehlo.broadcast_in_dim %92, dims = [0, 1, 2] : (tensor<1x1x32xf32>) -> tensor<2x8x32xf32>
    %94 = stablehlo.add %91, %93 : tensor<2x8x32xf32>
    return %94 : tensor<2x8x32xf32>
  }
  func.func private @tril(%arg0: tensor<8x8xi1>) -> tensor<8x8xi1> {
    %0 = stablehlo.iota dim = 0 : tensor<8x8xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8x8xi32>
    %2 = stablehlo.add %0, %1 : tensor<8x8xi32>
    %3 = stablehlo.iota dim = 1 : tensor<8x8xi32>
    %4 = stablehlo.compare GE, %2, %3, SIGNED : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
    %c_0 = stablehlo.constant dense<false> : tensor<i1>
    %5 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i1>) -> tensor<8x8xi1>
    %6 = stablehlo.select %4, %arg0, %5 : tensor<8x8xi1>, tensor<8x8xi1>
    return %6 : tensor<8x8xi1>
  }
  func.func private @_where(%arg0: tensor<8x8xi1>, %arg1: tensor<2x4x8x8xf32>, %arg2: tensor<f32>) -> tensor<2x4x8x8xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [2, 3] : (tensor<8x8xi1>) -> tensor<2x4x8x8xi1>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<2x4x8x8xf32>
    %2 = stablehlo.select %0, %arg1, %1 : tensor<2x4x8x8xi1>, tensor<2x4x8x8xf32>
    return %2 : tensor<2x4x8x8xf32>
  }
}
