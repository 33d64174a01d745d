module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<7x5xf32>, %arg1: tensor<5xi32>, %arg2: tensor<2x3xi32>, %arg3: tensor<5xi32>) -> (tensor<5x5xf32> {jax.result_info = "result[0]"}, tensor<2x3x5xf32> {jax.result_info = "result[1]"}, tensor<5xf32> {jax.result_info = "result[2]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_0 = stablehlo.constant dense<7> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<5xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<5xi1>, tensor<5xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %6 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<7x5xf32>, tensor<5x1xi32>) -> tensor<5x5xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    %8 = stablehlo.compare LT, %arg2, %7, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %c_2 = stablehlo.constant dense<7> : tensor<i32>
    %9 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<2x3xi32>
    %10 = stablehlo.add %arg2, %9 : tensor<2x3xi32>
    %11 = stablehlo.select %8, %10, %arg2 : tensor<2x3xi1>, tensor<2x3xi32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<2x3xi32>) -> tensor<2x3x1xi32>
    %13 = "stablehlo.gather"(%arg0, %12) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>}> : (tensor<7x5xf32>, tensor<2x3x1xi32>) -> tensor<2x3x5xf32>
    %c_3 = stablehlo.constant dense<0> : tensor<i32>
    %14 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %15 = stablehlo.compare LT, %arg1, %14, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_4 = stablehlo.constant dense<7> : tensor<i32>
    %16 = stablehlo.broadcast_in_dim %c_4, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %17 = stablehlo.add %arg1, %16 : tensor<5xi32>
    %18 = stablehlo.select %15, %17, %arg1 : tensor<5xi1>, tensor<5xi32>
    %c_5 = stablehlo.constant dense<0> : tensor<i32>
    %19 = stablehlo.broadcast_in_dim %c_5, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %20 = stablehlo.compare LT, %arg3, %19, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_6 = stablehlo.constant dense<5> : tensor<i32>
    %21 = stablehlo.broadcast_in_dim %c_6, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %22 = stablehlo.add %arg3, %21 : tensor<5xi32>
    %23 = stablehlo.select %20, %22, %arg3 : tensor<5xi1>, tensor<5xi32>
    %24 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %25 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %26 = stablehlo.concatenate %24, %25, dim = 1 : (tensor<5x1xi32>, tensor<5x1xi32>) -> tensor<5x2xi32>
    %27 = "stablehlo.gather"(%arg0, %26) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1>}> : (tensor<7x5xf32>, tensor<5x2xi32>) -> tensor<5xf32>
    return %6, %13, %27 : tensor<5x5xf32>, tensor<2x3x5xf32>, tensor<5xf32>
  }
}
