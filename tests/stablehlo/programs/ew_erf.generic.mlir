"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<5x8xf32>) -> tensor<5x8xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<5x8xf32>):
    %0 = "chlo.erf"(%arg0) : (tensor<5x8xf32>) -> tensor<5x8xf32>
    "func.return"(%0) : (tensor<5x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
