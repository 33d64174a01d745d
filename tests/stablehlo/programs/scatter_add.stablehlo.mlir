module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x4xf32>, %arg1: tensor<5xi32>, %arg2: tensor<5x4xf32>, %arg3: tensor<6x5xf32>) -> (tensor<6x4xf32> {jax.result_info = "result[0]"}, tensor<6x4xf32> {jax.result_info = "result[1]"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<5xi32>, tensor<5xi32>) -> tensor<5xi1>
    %c_0 = stablehlo.constant dense<6> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<5xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<5xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<5xi1>, tensor<5xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<5xi32>) -> tensor<5x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %17 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %17 : tensor<f32>
    }) : (tensor<6x4xf32>, tensor<5x1xi32>, tensor<5x4xf32>) -> tensor<6x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %8 = stablehlo.slice %arg1 [0:4] : (tensor<5xi32>) -> tensor<4xi32>
    %9 = stablehlo.slice %arg3 [0:6, 0:4] : (tensor<6x5xf32>) -> tensor<6x4xf32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %10 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %11 = stablehlo.compare LT, %8, %10, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %c_2 = stablehlo.constant dense<4> : tensor<i32>
    %12 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %13 = stablehlo.add %8, %12 : tensor<4xi32>
    %14 = stablehlo.select %11, %13, %8 : tensor<4xi1>, tensor<4xi32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %16 = "stablehlo.scatter"(%7, %15, %9) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
      %17 = stablehlo.add %arg4, %arg5 : tensor<f32>
      stablehlo.return %17 : tensor<f32>
    }) : (tensor<6x4xf32>, tensor<4x1xi32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    return %6, %16 : tensor<6x4xf32>, tensor<6x4xf32>
  }
}
