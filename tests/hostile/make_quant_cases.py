#!/usr/bin/python3
"""Writes the hostile quantisation models of tests/hostile/quant.test into a folder.

  make_quant_cases.py OUTDIR

Each model is one quantisation node (QuantizeLinear, DequantizeLinear, QLinearMatMul,
QLinearConv, MatMulInteger, ConvInteger, DynamicQuantizeLinear) that is valid except for the one
parameter its name says is wrong. Parameters are initializers unless the name says `runtime`
(then they are graph inputs, fed from the .npy files written here).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32, U8, I8 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def const(name, value, dtype=None):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def save(out, name, node, inputs, output, inits, opset=21):
    g = helper.make_graph([node], 'g', inputs, [output], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def quantize(out, name, scale, zp=None, x_shape=(2, 4), opset=21, **attrs):
    """y = QuantizeLinear(x f32, scale, zp?)."""
    ins = ['x', 's'] + (['zp'] if zp is not None else [])
    inits = [scale if isinstance(scale, TensorProto) else const('s', scale, np.float32)]
    if zp is not None:
        inits.append(zp if isinstance(zp, TensorProto) else const('zp', zp, np.uint8))
    node = helper.make_node('QuantizeLinear', ins, ['y'], name='q', **attrs)
    save(out, name, node, [vi('x', F32, x_shape)], vi('y', U8, x_shape), inits, opset)


def dequantize(out, name, scale, zp=None, x_dtype=U8, x_shape=(2, 4), **attrs):
    """y = DequantizeLinear(x, scale, zp?)."""
    ins = ['x', 's'] + (['zp'] if zp is not None else [])
    inits = [const('s', scale, np.float32)] + ([zp] if zp is not None else [])
    node = helper.make_node('DequantizeLinear', ins, ['y'], name='dq', **attrs)
    save(out, name, node, [vi('x', x_dtype, x_shape)], vi('y', F32, x_shape), inits)


def qlinear_matmul(out, name, a_scale=0.5, b_zp=None, y_scale=0.25):
    """y = QLinearMatMul(a u8 [2,3], b u8 [3,4]) with the given parameters."""
    inits = [const('as', a_scale, np.float32), const('az', 1, np.uint8),
             const('bs', 0.5, np.float32),
             b_zp if b_zp is not None else const('bz', 2, np.uint8),
             const('ys', y_scale, np.float32), const('yz', 3, np.uint8)]
    node = helper.make_node('QLinearMatMul', ['a', 'as', 'az', 'b', 'bs', 'bz', 'ys', 'yz'],
                            ['y'], name='qmm')
    save(out, name, node, [vi('a', U8, (2, 3)), vi('b', U8, (3, 4))], vi('y', U8, (2, 4)),
         inits, opset=10)


def qlinear_conv(out, name, x_scale=0.5, w_scale=0.25, w_zp=0):
    """y = QLinearConv(x u8 [1,2,3,3], w u8 [2,2,1,1])."""
    inits = [const('xs', x_scale, np.float32), const('xz', 1, np.uint8),
             const('w', np.ones((2, 2, 1, 1)), np.uint8), const('ws', w_scale, np.float32),
             const('wz', w_zp, np.uint8), const('ys', 0.5, np.float32),
             const('yz', 0, np.uint8)]
    node = helper.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'],
                            ['y'], name='qconv')
    save(out, name, node, [vi('x', U8, (1, 2, 3, 3))], vi('y', U8, (1, 2, 3, 3)), inits,
         opset=10)


def matmul_integer(out, name, a_zp):
    node = helper.make_node('MatMulInteger', ['a', 'b', 'az'], ['y'], name='mmi')
    save(out, name, node, [vi('a', U8, (2, 3)), vi('b', U8, (3, 4))],
         vi('y', TensorProto.INT32, (2, 4)), [a_zp], opset=10)


def conv_integer(out, name, x_zp):
    node = helper.make_node('ConvInteger', ['x', 'w', 'xz'], ['y'], name='convi')
    save(out, name, node, [vi('x', U8, (1, 2, 3, 3))], vi('y', TensorProto.INT32, (1, 2, 3, 3)),
         [const('w', np.ones((2, 2, 1, 1)), np.uint8), x_zp], opset=10)


def main(out):
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, 'x.npy'), np.arange(8, dtype=np.float32).reshape(2, 4) - 3.5)
    np.save(os.path.join(out, 'x25.npy'), np.arange(10, dtype=np.float32).reshape(2, 5))
    np.save(os.path.join(out, 'q.npy'), np.arange(8, dtype=np.uint8).reshape(2, 4))
    np.save(os.path.join(out, 'a.npy'), np.arange(6, dtype=np.uint8).reshape(2, 3))
    np.save(os.path.join(out, 'b.npy'), np.arange(12, dtype=np.uint8).reshape(3, 4))
    np.save(os.path.join(out, 'img.npy'), np.arange(18, dtype=np.uint8).reshape(1, 2, 3, 3))
    np.save(os.path.join(out, 's_zero.npy'), np.float32(0))
    np.save(os.path.join(out, 's_nan.npy'), np.float32('nan'))
    np.save(os.path.join(out, 's_half.npy'), np.float32(0.5))
    np.save(os.path.join(out, 'x_inf.npy'), np.array([1, np.inf, 2], dtype=np.float32))

    # Scales: zero, NaN, +-inf; a negative scale is legal (ONNX does not forbid it).
    quantize(out, 'q_scale_zero', 0.0, 0)
    quantize(out, 'q_scale_nan', float('nan'), 0)
    quantize(out, 'q_scale_inf', float('inf'), 0)
    quantize(out, 'q_scale_axis_zero', [1.0, 0.5, 0.0, 2.0], [0, 0, 0, 0], axis=1)
    quantize(out, 'q_scale_negative', -0.5, 128)
    dequantize(out, 'dq_scale_neginf', float('-inf'), const('zp', 0, np.uint8))
    dequantize(out, 'dq_scale_zero', 0.0)
    # Zero points: another dtype than the quantised tensor; out of its dtype's range.
    dequantize(out, 'dq_zp_dtype', 0.5, const('zp', 0, np.int8))
    zp300 = helper.make_tensor('zp', U8, [], [300])
    quantize(out, 'q_zp_range', 0.5, zp300)
    # Granularity: per-axis length, axis out of range, blocked shape, block_size < 0.
    quantize(out, 'q_axis_len', [1.0, 1.0, 1.0], [0, 0, 0], axis=1)
    quantize(out, 'q_axis_range', [1.0, 1.0, 1.0, 1.0], [0, 0, 0, 0], axis=2)
    quantize(out, 'q_axis_range_neg', [1.0, 1.0, 1.0, 1.0], [0, 0, 0, 0], axis=-3)
    quantize(out, 'q_block_shape', np.ones((2, 2)), np.zeros((2, 2)), x_shape=(2, 5),
             axis=1, block_size=2)
    quantize(out, 'q_block_rank', np.ones(3), np.zeros(3), x_shape=(2, 5), axis=1, block_size=2)
    quantize(out, 'q_block_negative', np.ones((2, 3)), np.zeros((2, 3)), x_shape=(2, 5),
             axis=1, block_size=-2)
    # Legal: a block size that does not divide the axis (5 = 2 + 2 + 1).
    quantize(out, 'q_block_ragged', [[1, 2, 4], [0.5, 0.25, 1]], np.full((2, 3), 10),
             x_shape=(2, 5), axis=1, block_size=2)
    # Runtime scale (a graph input): cpu-ref checks the value it is given.
    node = helper.make_node('QuantizeLinear', ['x', 's', 'zp'], ['y'], name='q')
    save(out, 'q_scale_runtime', node, [vi('x', F32, (2, 4)), vi('s', F32, ())],
         vi('y', U8, (2, 4)), [const('zp', 0, np.uint8)])

    # QLinearMatMul / QLinearConv / MatMulInteger / ConvInteger.
    qlinear_matmul(out, 'qmm_a_scale_zero', a_scale=0.0)
    qlinear_matmul(out, 'qmm_y_scale_nan', y_scale=float('nan'))
    qlinear_matmul(out, 'qmm_b_zp_dtype', b_zp=const('bz', 2, np.int8))
    qlinear_matmul(out, 'qmm_a_scale_len', a_scale=[0.5, 0.5, 0.5])
    qlinear_conv(out, 'qconv_w_scale_inf', w_scale=[0.25, float('inf')], w_zp=[0, 0])
    qlinear_conv(out, 'qconv_x_scale_axis', x_scale=[0.5, 0.5])
    qlinear_conv(out, 'qconv_w_zp_len', w_zp=[0, 0, 0])
    matmul_integer(out, 'mmi_zp_dtype', const('az', 1, np.int8))
    matmul_integer(out, 'mmi_zp_len', const('az', [1, 2, 3], np.uint8))
    conv_integer(out, 'convi_zp_axis', const('xz', [1, 2], np.uint8))
    conv_integer(out, 'convi_zp_dtype', const('xz', 1, np.int8))
    # DynamicQuantizeLinear: no finite scale quantises an infinite input.
    node = helper.make_node('DynamicQuantizeLinear', ['x'], ['y', 'ys', 'yz'], name='dql')
    g = helper.make_graph([node], 'g', [vi('x', F32, (3,))],
                          [vi('y', U8, (3,)), vi('ys', F32, ()), vi('yz', U8, ())])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 11)])
    m.ir_version = 8
    with open(os.path.join(out, 'dql_inf.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


if __name__ == '__main__':
    main(sys.argv[1])
