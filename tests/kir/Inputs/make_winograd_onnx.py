#!/usr/bin/python3
"""Writes winograd.onnx (next to this script) for winograd.test: f32 convolutions on one input.
'w' (3x3, stride 1, pads 1, 30x29 outputs: partial tiles on both axes, bias, fused Relu) takes
Winograd on the cpu target; 's' (stride 2), 'g' (two groups) and 'small' (13x13 outputs, below
196 positions) must not."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)
F32 = TensorProto.FLOAT
cases = [  # name, input, weight shape, attributes
    ('w', 'x', [20, 8, 3, 3], dict(pads=[1] * 4)),
    ('s', 'x', [12, 8, 3, 3], dict(pads=[1] * 4, strides=[2, 2])),
    ('g', 'x', [12, 4, 3, 3], dict(pads=[1] * 4, group=2)),
    ('small', 'x13', [8, 8, 3, 3], dict(pads=[1] * 4)),
]
nodes, outputs, inits = [], [], []
for name, x, ws, attrs in cases:
    nodes.append(helper.make_node('Conv', [x, f'w_{name}', f'b_{name}'], [f'y_{name}'],
                                  name=name, **attrs))
    nodes.append(helper.make_node('Relu', [f'y_{name}'], [name], name=f'relu_{name}'))
    outputs.append(helper.make_tensor_value_info(name, F32, None))
    inits.append(numpy_helper.from_array((0.3 * rng.standard_normal(ws)).astype(np.float32),
                                         f'w_{name}'))
    inits.append(numpy_helper.from_array(rng.standard_normal(ws[0]).astype(np.float32), f'b_{name}'))
inputs = [helper.make_tensor_value_info('x', F32, [1, 8, 30, 29]),
          helper.make_tensor_value_info('x13', F32, [1, 8, 13, 13])]
g = helper.make_graph(nodes, 'winograd', inputs, outputs, inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(here, 'winograd.onnx'))
