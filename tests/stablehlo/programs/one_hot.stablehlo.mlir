module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6xi32>, %arg1: tensor<10x4xf32>) -> (tensor<6x10xf32> {jax.result_info = "result[0]"}, tensor<6x4xf32> {jax.result_info = "result[1]"}) {
    %0 = call @_one_hot(%arg0) : (tensor<6xi32>) -> tensor<6x10xf32>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<6x10xf32>, tensor<10x4xf32>) -> tensor<6x4xf32>
    return %0, %1 : tensor<6x10xf32>, tensor<6x4xf32>
  }
  func.func private @_one_hot(%arg0: tensor<6xi32>) -> tensor<6x10xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x10xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<6x1xi32>) -> tensor<6x10xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x10xi32>) -> tensor<6x10xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<6x10xi32>, tensor<6x10xi32>) -> tensor<6x10xi1>
    %5 = stablehlo.convert %4 : (tensor<6x10xi1>) -> tensor<6x10xf32>
    return %5 : tensor<6x10xf32>
  }
}
