#!/usr/bin/python3
"""Writes tap_major_f16.onnx (next to this script) for tap_major.test: f16 convolutions on
vulkan-nvidia's coop strategy, one that is lowered tap-major (3x3, constant weights, 32
channels: a multiple of the 32-deep k step) and three that are not: 24 channels, a 1x1 kernel,
and weights fed as a graph input."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
F16 = TensorProto.FLOAT16


def weights(m, c, k):
    return ((np.arange(m * c * k * k).reshape(m, c, k, k) % 7 - 3) / 16).astype(np.float16)


nodes = [helper.make_node('Conv', ['x32', 'W3'], ['tap'], pads=[1, 1, 1, 1], name='tap'),
         helper.make_node('Conv', ['x24', 'W24'], ['c24'], pads=[1, 1, 1, 1], name='c24'),
         helper.make_node('Conv', ['x32', 'W1'], ['one'], name='one'),
         helper.make_node('Conv', ['x32', 'Win'], ['win'], pads=[1, 1, 1, 1], name='win')]
g = helper.make_graph(nodes, 'tap_major_f16',
                      [helper.make_tensor_value_info('x32', F16, [4, 32, 48, 48]),
                       helper.make_tensor_value_info('x24', F16, [4, 24, 48, 48]),
                       helper.make_tensor_value_info('Win', F16, [64, 32, 3, 3])],
                      [helper.make_tensor_value_info(n, F16, [4, 64, 48, 48])
                       for n in ['tap', 'c24', 'one', 'win']],
                      [numpy_helper.from_array(weights(64, 32, 3), 'W3'),
                       numpy_helper.from_array(weights(64, 24, 3), 'W24'),
                       numpy_helper.from_array(weights(64, 32, 1), 'W1')])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]),
          os.path.join(here, 'tap_major_f16.onnx'))
