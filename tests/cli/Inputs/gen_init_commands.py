#!/usr/bin/python3
"""Writes init_commands.onnx (next to this script) for init_commands.test: y = x @ W + 1 with
x [2, 256] an input and W [256, 512] = sin(reshape(range(0, 131072) * 1e-3)), a constant
expression too large for the importer's folding (65536 elements): fold-constants folds it at
compile time by default, and it runs as load-time init commands when KILN_MAX_FOLD_BYTES is
below its 512 KiB."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
c = lambda name, v: numpy_helper.from_array(np.array(v), name)
nodes = [
    helper.make_node('Range', ['start', 'limit', 'delta'], ['r']),
    helper.make_node('Mul', ['r', 'step'], ['rs']),
    helper.make_node('Reshape', ['rs', 'shape'], ['w0']),
    helper.make_node('Sin', ['w0'], ['w']),
    helper.make_node('MatMul', ['x', 'w'], ['xw']),
    helper.make_node('Add', ['xw', 'one'], ['y']),
]
g = helper.make_graph(nodes, 'init_commands',
                      [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 256])],
                      [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 512])],
                      [c('start', np.float32(0)), c('limit', np.float32(131072)), c('delta', np.float32(1)),
                       c('step', np.float32(1e-3)), c('shape', np.array([256, 512], np.int64)),
                       c('one', np.float32(1))])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'init_commands.onnx'))
