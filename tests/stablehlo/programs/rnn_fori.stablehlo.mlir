module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<5x2x6xf32>, %arg1: tensor<2x8xf32>, %arg2: tensor<6x8xf32>, %arg3: tensor<8x8xf32>, %arg4: tensor<6x8xf32>, %arg5: tensor<8x8xf32>) -> (tensor<2x8xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0:8 = stablehlo.while(%iterArg = %arg0, %iterArg_1 = %arg2, %iterArg_2 = %arg3, %iterArg_3 = %arg4, %iterArg_4 = %arg5, %iterArg_5 = %c_0, %iterArg_6 = %c, %iterArg_7 = %arg1) : tensor<5x2x6xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8xf32>
    cond {
      %c_8 = stablehlo.constant dense<5> : tensor<i32>
      %1 = stablehlo.compare LT, %iterArg_5, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %1 = stablehlo.add %iterArg_6, %c_8 : tensor<i32>
      %2 = stablehlo.convert %iterArg_6 : tensor<i32>
      %c_9 = stablehlo.constant dense<0> : tensor<i32>
      %3 = stablehlo.compare LT, %2, %c_9, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_10 = stablehlo.constant dense<5> : tensor<i32>
      %4 = stablehlo.add %2, %c_10 : tensor<i32>
      %5 = stablehlo.select %3, %4, %2 : tensor<i1>, tensor<i32>
      %c_11 = stablehlo.constant dense<0> : tensor<i32>
      %c_12 = stablehlo.constant dense<0> : tensor<i32>
      %6 = stablehlo.compare LT, %c_11, %c_12, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_13 = stablehlo.constant dense<0> : tensor<i32>
      %c_14 = stablehlo.constant dense<2> : tensor<i32>
      %7 = stablehlo.add %c_13, %c_14 : tensor<i32>
      %c_15 = stablehlo.constant dense<0> : tensor<i32>
      %8 = stablehlo.select %6, %7, %c_15 : tensor<i1>, tensor<i32>
      %c_16 = stablehlo.constant dense<0> : tensor<i32>
      %c_17 = stablehlo.constant dense<0> : tensor<i32>
      %9 = stablehlo.compare LT, %c_16, %c_17, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_18 = stablehlo.constant dense<0> : tensor<i32>
      %c_19 = stablehlo.constant dense<6> : tensor<i32>
      %10 = stablehlo.add %c_18, %c_19 : tensor<i32>
      %c_20 = stablehlo.constant dense<0> : tensor<i32>
      %11 = stablehlo.select %9, %10, %c_20 : tensor<i1>, tensor<i32>
      %12 = stablehlo.dynamic_slice %iterArg, %5, %8, %11, sizes = [1, 2, 6] : (tensor<5x2x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x6xf32>
      %13 = stablehlo.reshape %12 : (tensor<1x2x6xf32>) -> tensor<2x6xf32>
      %14 = stablehlo.dot_general %13, %iterArg_1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
      %15 = stablehlo.dot_general %iterArg_7, %iterArg_2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %16 = stablehlo.add %14, %15 : tensor<2x8xf32>
      %17 = stablehlo.negate %16 : tensor<2x8xf32>
      %18 = stablehlo.exponential %17 : tensor<2x8xf32>
      %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %19 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
      %20 = stablehlo.add %19, %18 : tensor<2x8xf32>
      %cst_21 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %21 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
      %22 = stablehlo.divide %21, %20 : tensor<2x8xf32>
      %23 = stablehlo.convert %iterArg_6 : tensor<i32>
      %c_22 = stablehlo.constant dense<0> : tensor<i32>
      %24 = stablehlo.compare LT, %23, %c_22, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_23 = stablehlo.constant dense<5> : tensor<i32>
      %25 = stablehlo.add %23, %c_23 : tensor<i32>
      %26 = stablehlo.select %24, %25, %23 : tensor<i1>, tensor<i32>
      %c_24 = stablehlo.constant dense<0> : tensor<i32>
      %c_25 = stablehlo.constant dense<0> : tensor<i32>
      %27 = stablehlo.compare LT, %c_24, %c_25, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_26 = stablehlo.constant dense<0> : tensor<i32>
      %c_27 = stablehlo.constant dense<2> : tensor<i32>
      %28 = stablehlo.add %c_26, %c_27 : tensor<i32>
      %c_28 = stablehlo.constant dense<0> : tensor<i32>
      %29 = stablehlo.select %27, %28, %c_28 : tensor<i1>, tensor<i32>
      %c_29 = stablehlo.constant dense<0> : tensor<i32>
      %c_30 = stablehlo.constant dense<0> : tensor<i32>
      %30 = stablehlo.compare LT, %c_29, %c_30, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %c_31 = stablehlo.constant dense<0> : tensor<i32>
      %c_32 = stablehlo.constant dense<6> : tensor<i32>
      %31 = stablehlo.add %c_31, %c_32 : tensor<i32>
      %c_33 = stablehlo.constant dense<0> : tensor<i32>
      %32 = stablehlo.select %30, %31, %c_33 : tensor<i1>, tensor<i32>
      %33 = stablehlo.dynamic_slice %iterArg, %26, %29, %32, sizes = [1, 2, 6] : (tensor<5x2x6xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x6xf32>
      %34 = stablehlo.reshape %33 : (tensor<1x2x6xf32>) -> tensor<2x6xf32>
      %35 = stablehlo.dot_general %34, %iterArg_3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
      %36 = stablehlo.multiply %iterArg_7, %22 : tensor<2x8xf32>
      %37 = stablehlo.dot_general %36, %iterArg_4, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
      %38 = stablehlo.add %35, %37 : tensor<2x8xf32>
      %39 = stablehlo.tanh %38 : tensor<2x8xf32>
      %cst_34 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
      %40 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<2x8xf32>
      %41 = stablehlo.subtract %40, %22 : tensor<2x8xf32>
      %42 = stablehlo.multiply %41, %iterArg_7 : tensor<2x8xf32>
      %43 = stablehlo.multiply %22, %39 : tensor<2x8xf32>
      %44 = stablehlo.add %42, %43 : tensor<2x8xf32>
      %c_35 = stablehlo.constant dense<1> : tensor<i32>
      %45 = stablehlo.add %iterArg_5, %c_35 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_1, %iterArg_2, %iterArg_3, %iterArg_4, %45, %1, %44 : tensor<5x2x6xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<6x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8xf32>
    }
    return %0#7 : tensor<2x8xf32>
  }
}
