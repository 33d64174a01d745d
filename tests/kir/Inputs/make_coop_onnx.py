#!/usr/bin/python3
"""Writes coop_f16.onnx (next to this script) for coop_schedule.test: f16 contractions the
cooperative-matrix strategy takes on vulkan-nvidia: a MatMul [256, 256] x [256, 256] (both
operands row-major, rows a multiple of 4: vector staging), a Gemm with transB, bias and Relu
(x [50, 64] times W [70, 64] transposed: B contiguous along k) and a 3x3 convolution (its input
gathered element by element)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
F16 = TensorProto.FLOAT16
w = ((np.arange(70 * 64).reshape(70, 64) % 7 - 3) / 4).astype(np.float16)
bias = (np.arange(70) % 5 - 2).astype(np.float16)
k = ((np.arange(16 * 8 * 9).reshape(16, 8, 3, 3) % 5 - 2) / 8).astype(np.float16)
nodes = [helper.make_node('MatMul', ['a', 'b'], ['mm']),
         helper.make_node('Gemm', ['x', 'W', 'bias'], ['g'], transB=1),
         helper.make_node('Relu', ['g'], ['gr']),
         helper.make_node('Conv', ['img', 'K'], ['conv'], pads=[1, 1, 1, 1])]
g = helper.make_graph(nodes, 'coop_f16',
                      [helper.make_tensor_value_info('a', F16, [256, 256]),
                       helper.make_tensor_value_info('b', F16, [256, 256]),
                       helper.make_tensor_value_info('x', F16, [50, 64]),
                       helper.make_tensor_value_info('img', F16, [1, 8, 20, 20])],
                      [helper.make_tensor_value_info('mm', F16, [256, 256]),
                       helper.make_tensor_value_info('gr', F16, [50, 70]),
                       helper.make_tensor_value_info('conv', F16, [1, 16, 20, 20])],
                      [numpy_helper.from_array(w, 'W'), numpy_helper.from_array(bias, 'bias'),
                       numpy_helper.from_array(k, 'K')])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'coop_f16.onnx'))
