"builtin.module"() <{sym_name = "jit_f"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xi32>, tensor<4x6xi32>) -> (tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}, {jax.result_info = "result[5]"}, {jax.result_info = "result[6]"}, {jax.result_info = "result[7]"}, {jax.result_info = "result[8]"}, {jax.result_info = "result[9]"}, {jax.result_info = "result[10]"}, {jax.result_info = "result[11]"}, {jax.result_info = "result[12]"}, {jax.result_info = "result[13]"}, {jax.result_info = "result[14]"}, {jax.result_info = "result[15]"}, {jax.result_info = "result[16]"}, {jax.result_info = "result[17]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg7: tensor<4x6xi32>, %arg8: tensor<4x6xi32>):
    %34 = "stablehlo.add"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %35 = "stablehlo.subtract"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %36 = "stablehlo.multiply"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %37 = "stablehlo.divide"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %38 = "stablehlo.remainder"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %39 = "func.call"(%arg7, %arg8) <{callee = @floor_divide}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %40 = "func.call"(%arg7, %arg8) <{callee = @remainder}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %41 = "stablehlo.maximum"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %42 = "stablehlo.minimum"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %43 = "stablehlo.abs"(%arg7) : (tensor<4x6xi32>) -> tensor<4x6xi32>
    %44 = "stablehlo.negate"(%arg7) : (tensor<4x6xi32>) -> tensor<4x6xi32>
    %45 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %46 = "stablehlo.broadcast_in_dim"(%45) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %47 = "stablehlo.shift_left"(%arg7, %46) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %48 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %49 = "stablehlo.broadcast_in_dim"(%48) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %50 = "stablehlo.shift_right_arithmetic"(%arg7, %49) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %51 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %52 = "stablehlo.broadcast_in_dim"(%51) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %53 = "stablehlo.shift_right_logical"(%arg7, %52) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %54 = "stablehlo.and"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %55 = "stablehlo.or"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %56 = "stablehlo.xor"(%arg7, %arg8) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %57 = "stablehlo.not"(%arg7) : (tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %47, %50, %53, %54, %55, %56, %57) : (tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>, tensor<4x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>, res_attrs = [{}], sym_name = "floor_divide", sym_visibility = "private"}> ({
  ^bb0(%arg5: tensor<4x6xi32>, %arg6: tensor<4x6xi32>):
    %21 = "stablehlo.divide"(%arg5, %arg6) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %22 = "stablehlo.sign"(%arg5) : (tensor<4x6xi32>) -> tensor<4x6xi32>
    %23 = "stablehlo.sign"(%arg6) : (tensor<4x6xi32>) -> tensor<4x6xi32>
    %24 = "stablehlo.compare"(%22, %23) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %25 = "stablehlo.remainder"(%arg5, %arg6) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %26 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %27 = "stablehlo.broadcast_in_dim"(%26) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %28 = "stablehlo.compare"(%25, %27) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %29 = "stablehlo.and"(%24, %28) : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
    %30 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %31 = "stablehlo.broadcast_in_dim"(%30) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %32 = "stablehlo.subtract"(%21, %31) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %33 = "func.call"(%29, %32, %21) <{callee = @_where}> : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%33) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg2: tensor<4x6xi1>, %arg3: tensor<4x6xi32>, %arg4: tensor<4x6xi32>):
    %20 = "stablehlo.select"(%arg2, %arg3, %arg4) : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%20) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>, res_attrs = [{}], sym_name = "remainder", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xi32>, %arg1: tensor<4x6xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %3 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %5 = "func.call"(%2, %4, %arg1) <{callee = @_where}> : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %6 = "stablehlo.remainder"(%arg0, %5) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %7 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %9 = "stablehlo.compare"(%6, %8) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %10 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %11 = "stablehlo.broadcast_in_dim"(%10) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %12 = "stablehlo.compare"(%6, %11) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %13 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4x6xi32>
    %15 = "stablehlo.compare"(%5, %14) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi1>
    %16 = "stablehlo.compare"(%12, %15) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
    %17 = "stablehlo.and"(%16, %9) : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
    %18 = "stablehlo.add"(%6, %5) : (tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    %19 = "stablehlo.select"(%17, %18, %6) : (tensor<4x6xi1>, tensor<4x6xi32>, tensor<4x6xi32>) -> tensor<4x6xi32>
    "func.return"(%19) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
