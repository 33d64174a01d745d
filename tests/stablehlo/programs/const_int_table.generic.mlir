"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<10xi32>) -> tensor<10xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<10xi32>):
    %0 = "stablehlo.constant"() <{value = dense<"0xCEFFFFFFF3FFFFFF18000000D8FFFFFFFDFFFFFF22000000E2FFFFFF070000002C000000ECFFFFFF11000000D1FFFFFFF6FFFFFF1B000000DBFFFFFF0000000025000000E5FFFFFF0A0000002F000000EFFFFFFF14000000D4FFFFFFF9FFFFFF1E000000DEFFFFFF0300000028000000E8FFFFFF0D00000032000000F2FFFFFF17000000D7FFFFFFFCFFFFFF21000000E1FFFFFF060000002B000000EBFFFFFF10000000D0FFFFFFF5FFFFFF1A000000DAFFFFFFFFFFFFFF24000000E4FFFFFF090000002E000000EEFFFFFF13000000D3FFFFFFF8FFFFFF1D000000DDFFFFFF0200000027000000E7FFFFFF0C00000031000000F1FFFFFF16000000D6FFFFFFFBFFFFFF20000000E0FFFFFF050000002A000000EAFFFFFF0F000000CFFFFFFFF4FFFFFF19000000D9FFFFFFFEFFFFFF23000000E3FFFFFF080000002D000000EDFFFFFF12000000D2FFFFFFF7FFFFFF1C000000DCFFFFFF0100000026000000E6FFFFFF0B00000030000000F0FFFFFF15000000D5FFFFFFFAFFFFFF1F000000DFFFFFFF0400000029000000E9FFFFFF0E000000CEFFFFFFF3FFFFFF18000000D8FFFFFFFDFFFFFF22000000E2FFFFFF070000002C000000ECFFFFFF11000000D1FFFFFFF6FFFFFF1B000000DBFFFFFF0000000025000000E5FFFFFF0A0000002F000000EFFFFFFF14000000D4FFFFFFF9FFFFFF1E000000DEFFFFFF03000000"> : tensor<128xi32>}> : () -> tensor<128xi32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10xi32>
    %3 = "stablehlo.compare"(%arg0, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi1>
    %4 = "stablehlo.constant"() <{value = dense<128> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10xi32>
    %6 = "stablehlo.add"(%arg0, %5) : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %7 = "stablehlo.select"(%3, %6, %arg0) : (tensor<10xi1>, tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64: 0>}> : (tensor<10xi32>) -> tensor<10x1xi32>
    %9 = "stablehlo.gather"(%0, %8) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<128xi32>, tensor<10x1xi32>) -> tensor<10xi32>
    %10 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<10xi32>
    %12 = "stablehlo.multiply"(%9, %11) : (tensor<10xi32>, tensor<10xi32>) -> tensor<10xi32>
    "func.return"(%12) : (tensor<10xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
