#!/usr/bin/python3
"""Writes gemm_transb.onnx, gemm_transb_in.onnx and matmul_i32.onnx (next to this script) for
cpu_matrix_schedule.test: a Gemm with transB (x [2, 64] times W [40, 64] transposed, W a
constant: the compiler stores it [64][40]), the same Gemm with W a graph input (B has unit
stride along k) and an int32 MatMul [8, 16] x [16, 16]."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
w = (np.arange(40 * 64).reshape(40, 64) % 7 - 3).astype(np.float32)
g = helper.make_graph([helper.make_node('Gemm', ['x', 'W'], ['y'], transB=1)], 'gemm_transb',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 64])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 40])],
                      [numpy_helper.from_array(w, 'W')])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'gemm_transb.onnx'))
g = helper.make_graph([helper.make_node('Gemm', ['x', 'W'], ['y'], transB=1)], 'gemm_transb_in',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 64]),
                       helper.make_tensor_value_info('W', TensorProto.FLOAT, [40, 64])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 40])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'gemm_transb_in.onnx'))
g = helper.make_graph([helper.make_node('MatMul', ['a', 'b'], ['y'])], 'matmul_i32',
                      [helper.make_tensor_value_info('a', TensorProto.INT32, [8, 16]),
                       helper.make_tensor_value_info('b', TensorProto.INT32, [16, 16])],
                      [helper.make_tensor_value_info('y', TensorProto.INT32, [8, 16])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'matmul_i32.onnx'))
