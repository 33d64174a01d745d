#!/usr/bin/python3
"""Writes QLinearMatMul / QLinearConv models, inputs and goldens for tests/cli/qlinear.test.

  gen_qlinear.py OUTDIR

The goldens follow the ONNX reference implementation (onnx/reference/ops/op_qlinear_matmul.py
and op_qlinear_conv.py; Debian's onnx 1.12 has no onnx.reference, so its arithmetic is written
out here): the multiplier a_scale * b_scale / y_scale is computed on float32 scalars (rounded
after the product and after the quotient), the int32 accumulator is multiplied by it in float64,
the zero point added, the sum rounded half to even (np.rint) and saturated to the output type.

The scales are chosen so that the float32 multiplier is exactly 0.5 while the exact one is
0.5 + 2^-25: every odd accumulator is then a tie that the reference rounds to even, and a
requantisation in double from the exact scales would round up. Large accumulators saturate.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

A_SCALE = np.float32(1 + 2.0**-23)
B_SCALE = np.float32(0.5 - 2.0**-25)
Y_SCALE = np.float32(1.0)


def const(name, v, dtype):
    return numpy_helper.from_array(np.asarray(v, dtype=dtype), name)


def requant(acc, s1, s2, s3, zp, qtype):
    m = (np.float32(s1) * np.float32(s2)) / np.float32(s3)  # float32 scalar arithmetic
    d = acc.astype(np.int32) * m + zp  # float64
    info = np.iinfo(qtype)
    return np.clip(np.rint(d), info.min, info.max).astype(qtype)


def save_model(out, name, node, inputs, output, inits, opset=10):
    g = helper.make_graph([node], 'g', inputs, [output], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    with open(os.path.join(out, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def matmul_case(out, name, qtype, a, b, a_zp, b_zp, y_zp):
    onnx_t = TensorProto.UINT8 if qtype == np.uint8 else TensorProto.INT8
    inits = [const('as', A_SCALE, np.float32), const('az', a_zp, qtype), const('b', b, qtype),
             const('bs', B_SCALE, np.float32), const('bz', b_zp, qtype),
             const('ys', Y_SCALE, np.float32), const('yz', y_zp, qtype)]
    node = helper.make_node('QLinearMatMul', ['a', 'as', 'az', 'b', 'bs', 'bz', 'ys', 'yz'], ['y'],
                            name='qmm')
    M, N = a.shape[0], b.shape[1]
    save_model(out, name, node, [helper.make_tensor_value_info('a', onnx_t, list(a.shape))],
               helper.make_tensor_value_info('y', onnx_t, [M, N]), inits)
    acc = (a.astype(np.int32) - a_zp) @ (b.astype(np.int32) - b_zp)
    np.save(os.path.join(out, name + '.a.npy'), a)
    np.save(os.path.join(out, name + '.golden.npy'),
            requant(acc, A_SCALE, B_SCALE, Y_SCALE, y_zp, qtype))
    # What a requantisation from the exact scales in double would give (must differ).
    exact = np.clip(np.rint(acc * (float(A_SCALE) * float(B_SCALE) / float(Y_SCALE))) + y_zp,
                    np.iinfo(qtype).min, np.iinfo(qtype).max)
    assert (exact != np.load(os.path.join(out, name + '.golden.npy'))).any()


def conv_case(out):
    """1x1 convolution, 2 input and 2 output channels, per-channel w_scale, u8."""
    x = np.array([1, 3, 5, 7, 9, 11, 200, 250, 2, 4, 6, 8, 0, 1, 255, 254],
                 np.uint8).reshape(1, 2, 2, 4)
    w = np.array([1, 0, 1, 2], np.uint8).reshape(2, 2, 1, 1)
    w_scale = np.array([B_SCALE, B_SCALE * np.float32(2)], np.float32)
    inits = [const('xs', A_SCALE, np.float32), const('xz', 0, np.uint8), const('w', w, np.uint8),
             const('ws', w_scale, np.float32), const('wz', [0, 0], np.uint8),
             const('ys', Y_SCALE, np.float32), const('yz', 3, np.uint8)]
    node = helper.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'], ['y'],
                            name='qconv')
    save_model(out, 'qconv', node,
               [helper.make_tensor_value_info('x', TensorProto.UINT8, [1, 2, 2, 4])],
               helper.make_tensor_value_info('y', TensorProto.UINT8, [1, 2, 2, 4]), inits)
    acc = np.einsum('nchw,mc->nmhw', x.astype(np.int32), w[:, :, 0, 0].astype(np.int32))
    y = np.stack([requant(acc[:, m], A_SCALE, w_scale[m], Y_SCALE, 3, np.uint8)
                  for m in range(2)], axis=1)
    np.save(os.path.join(out, 'qconv.x.npy'), x)
    np.save(os.path.join(out, 'qconv.golden.npy'), y)


def main(out):
    os.makedirs(out, exist_ok=True)
    # u8: accumulators 1, 3, 5, ... (ties), and large ones that saturate at 255.
    a = np.array([[1, 0], [3, 0], [5, 0], [7, 0], [9, 200], [255, 255]], np.uint8)
    b = np.array([[1, 3, 5], [0, 1, 2]], np.uint8)
    matmul_case(out, 'qmm_u8', np.uint8, a, b, 0, 0, 10)
    # i8 with zero points: negative ties and saturation at -128 / 127.
    a8 = np.array([[1, 0], [-3, 0], [5, 1], [-7, 0], [127, -128]], np.int8)
    b8 = np.array([[1, -3, 5], [0, 1, 127]], np.int8)
    matmul_case(out, 'qmm_i8', np.int8, a8, b8, 0, 0, -1)
    conv_case(out)


if __name__ == '__main__':
    main(sys.argv[1])
