module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<10xi32>) -> (tensor<10xi32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<"0xCEFFFFFFF3FFFFFF18000000D8FFFFFFFDFFFFFF22000000E2FFFFFF070000002C000000ECFFFFFF11000000D1FFFFFFF6FFFFFF1B000000DBFFFFFF0000000025000000E5FFFFFF0A0000002F000000EFFFFFFF14000000D4FFFFFFF9FFFFFF1E000000DEFFFFFF0300000028000000E8FFFFFF0D00000032000000F2FFFFFF17000000D7FFFFFFFCFFFFFF21000000E1FFFFFF060000002B000000EBFFFFFF10000000D0FFFFFFF5FFFFFF1A000000DAFFFFFFFFFFFFFF24000000E4FFFFFF090000002E000000EEFFFFFF13000000D3FFFFFFF8FFFFFF1D000000DDFFFFFF0200000027000000E7FFFFFF0C00000031000000F1FFFFFF16000000D6FFFFFFFBFFFFFF20000000E0FFFFFF050000002A000000EAFFFFFF0F000000CFFFFFFFF4FFFFFF19000000D9FFFFFFFEFFFFFF23000000E3FFFFFF080000002D000000EDFFFFFF12000000D2FFFFFFF7FFFFFF1C000000DCFFFFFF0100000026000000E6FFFFFF0B00000030000000F0FFFFFF15000000D5FFFFFFFAFFFFFF1F000000DFFFFFFF0400000029000000E9FFFFFF0E000000CEFFFFFFF3FFFFFF18000000D8FFFFFFFDFFFFFF22000000E2FFFFFF070000002C000000ECFFFFFF11000000D1FFFFFFF6FFFFFF1B000000DBFFFFFF0000000025000000E5FFFFFF0A0000002F000000EFFFFFFF14000000D4FFFFFFF9FFFFFF1E000000DEFFFFFF03000000"> : tensor<128xi32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %1 = stablehlo.compare LT, %arg0, %0, SIGNED : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %c_1 = stablehlo.constant dense<128> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %3 = stablehlo.add %arg0, %2 : tensor<10xi32>
    %4 = stablehlo.select %1, %3, %arg0 : tensor<10xi1>, tensor<10xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<10xi32>) -> tensor<10x1xi32>
    %6 = "stablehlo.gather"(%c, %5) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<128xi32>, tensor<10x1xi32>) -> tensor<10xi32>
    %c_2 = stablehlo.constant dense<2> : tensor<i32>
    %7 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<10xi32>
    %8 = stablehlo.multiply %6, %7 : tensor<10xi32>
    return %8 : tensor<10xi32>
  }
}
