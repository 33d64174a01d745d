#!/usr/bin/python3
"""Writes shifted_rows.onnx (next to this script) for shifted_rows.test: f32 convolutions the
cpu target lowers in the shifted-rows form, whose epilogue stores runs of each wide row's valid
columns. A 3-D window (its middle dim is wider than the output: rows past it are skipped), a
strided one (phase planes), a dilated one, each with a partial last tile of output channels
(70 = 64 + 6) or positions, bias and a fused Relu."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)
F32 = TensorProto.FLOAT
cases = [  # name, input shape, weight shape, attributes
    ('c3d', [2, 4, 5, 6, 7], [70, 4, 3, 3, 3], dict(pads=[1] * 6)),
    ('c2s', [1, 8, 23, 29], [70, 8, 3, 3], dict(pads=[1] * 4, strides=[2, 2])),
    ('c2d', [1, 4, 17, 40], [20, 4, 3, 3], dict(pads=[2] * 4, dilations=[2, 2])),
]
nodes, inputs, outputs, inits = [], [], [], []
for name, xs, ws, attrs in cases:
    nodes.append(helper.make_node('Conv', [f'x_{name}', f'w_{name}', f'b_{name}'], [f'y_{name}'],
                                  name=name, **attrs))
    nodes.append(helper.make_node('Relu', [f'y_{name}'], [name], name=f'relu_{name}'))
    inputs.append(helper.make_tensor_value_info(f'x_{name}', F32, xs))
    outputs.append(helper.make_tensor_value_info(name, F32, None))
    inits.append(numpy_helper.from_array(rng.standard_normal(ws).astype(np.float32), f'w_{name}'))
    inits.append(numpy_helper.from_array(rng.standard_normal(ws[0]).astype(np.float32), f'b_{name}'))
g = helper.make_graph(nodes, 'shifted_rows', inputs, outputs, inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(here, 'shifted_rows.onnx'))
