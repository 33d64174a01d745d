#!/usr/bin/python3
"""Writes cpu_tiles.onnx (next to this script) for cpu_tiles.test: a batch-1 MatMul with
constant [512, 2048] weights (a matrix-vector product), a 1x1 convolution of 256 channels on a
14x14 plane (196 positions: one N tile), one on 128 channels (too few M tiles for that), and an
LRN of size 5 (beta 0.75) and one of size 3 (beta 0.5)."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(5)
F32 = TensorProto.FLOAT
inits = [numpy_helper.from_array((0.05 * rng.standard_normal([512, 2048])).astype(np.float32), 'W'),
         numpy_helper.from_array((0.1 * rng.standard_normal([256, 256, 1, 1])).astype(np.float32), 'K'),
         numpy_helper.from_array((0.1 * rng.standard_normal([128, 128, 1, 1])).astype(np.float32), 'K2')]
nodes = [helper.make_node('MatMul', ['v', 'W'], ['mv'], name='mv'),
         helper.make_node('Conv', ['x', 'K'], ['c256'], name='c256'),
         helper.make_node('Conv', ['x2', 'K2'], ['c128'], name='c128'),
         helper.make_node('LRN', ['l'], ['lrn5'], name='lrn5', size=5, alpha=1e-3, beta=0.75, bias=2.0),
         helper.make_node('LRN', ['l'], ['lrn3'], name='lrn3', size=3, alpha=1e-3, beta=0.5)]
inputs = [helper.make_tensor_value_info('v', F32, [1, 512]),
          helper.make_tensor_value_info('x', F32, [1, 256, 14, 14]),
          helper.make_tensor_value_info('x2', F32, [1, 128, 14, 14]),
          helper.make_tensor_value_info('l', F32, [1, 16, 9, 9])]
outputs = [helper.make_tensor_value_info(n, F32, None) for n in ['mv', 'c256', 'c128', 'lrn5', 'lrn3']]
g = helper.make_graph(nodes, 'cpu_tiles', inputs, outputs, inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(here, 'cpu_tiles.onnx'))
