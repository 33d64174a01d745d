#!/usr/bin/python3
"""Helpers of quantize.test (kiln quantize).

  quant_tool.py gen DIR
      writes DIR/mlp.onnx (opset 13: MatMul 64x48 + bias, Relu, ReduceMean with an `axes`
      attribute, MatMul 48x40), DIR/mlp_cal/{0,1,2}/x.npy (calibration samples), DIR/x.npy
      (a test input) and DIR/old.onnx (opset 11)
  quant_tool.py ops MODEL
      prints the opset, then "OP COUNT" for every op type of the main graph, sorted
  quant_tool.py ref MODEL X.npy OUT.npy
      computes MODEL (a float MLP, possibly with DequantizeLinear weights: per tensor, per axis
      or blocked, int8 / uint8 / int32 / int4 storage) on X with numpy, independently of kiln
  quant_tool.py close GOT.npy WANT.npy TOL [TOP1]
      max |got - want| <= TOL * range(want); TOP1: same argmax per row too
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

INT4 = 22


def gen(d):
    rng = np.random.default_rng(7)
    w1 = rng.normal(0, 0.3, (64, 48)).astype(np.float32)
    b1 = rng.normal(0, 0.1, (48,)).astype(np.float32)
    w2 = rng.normal(0, 0.3, (48, 40)).astype(np.float32)
    nodes = [
        helper.make_node('MatMul', ['x', 'w1'], ['h'], name='fc1'),
        helper.make_node('Add', ['h', 'b1'], ['hb'], name='bias1'),
        helper.make_node('Relu', ['hb'], ['r'], name='relu1'),
        helper.make_node('ReduceMean', ['r'], ['m'], name='mean', axes=[1], keepdims=1),
        helper.make_node('Sub', ['r', 'm'], ['c'], name='center'),
        helper.make_node('MatMul', ['c', 'w2'], ['y'], name='fc2'),
    ]
    g = helper.make_graph(nodes, 'mlp', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [4, 40])],
                          [numpy_helper.from_array(w1, 'w1'), numpy_helper.from_array(b1, 'b1'),
                           numpy_helper.from_array(w2, 'w2')])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), os.path.join(d, 'mlp.onnx'))
    for i in range(3):
        os.makedirs(os.path.join(d, 'mlp_cal', str(i)), exist_ok=True)
        np.save(os.path.join(d, 'mlp_cal', str(i), 'x.npy'), rng.normal(0, 1, (4, 64)).astype(np.float32))
    np.save(os.path.join(d, 'x.npy'), rng.normal(0, 1, (4, 64)).astype(np.float32))
    old = helper.make_graph([helper.make_node('MatMul', ['x', 'w1'], ['y'])], 'old',
                            [helper.make_tensor_value_info('x', TensorProto.FLOAT, [4, 64])],
                            [helper.make_tensor_value_info('y', TensorProto.FLOAT, [4, 48])],
                            [numpy_helper.from_array(w1, 'w1')])
    onnx.save(helper.make_model(old, opset_imports=[helper.make_opsetid('', 11)]), os.path.join(d, 'old.onnx'))


def opset(m):
    return [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')][0]


def ops(path):
    m = onnx.load(path)
    print('opset', opset(m))
    counts = {}
    for n in m.graph.node:
        counts[n.op_type] = counts.get(n.op_type, 0) + 1
    for k in sorted(counts):
        print(k, counts[k])


def array(t):
    """A TensorProto as numpy, int4 (packed two a byte, low nibble first) included."""
    if t.data_type == INT4:
        raw = np.frombuffer(t.raw_data, np.uint8)
        nib = np.stack([raw & 15, raw >> 4], axis=-1).reshape(-1)[:int(np.prod(t.dims))]
        return np.where(nib >= 8, nib.astype(np.int32) - 16, nib.astype(np.int32)).reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def dequantize(n, vals):
    q = vals[n.input[0]].astype(np.float64)
    s = vals[n.input[1]].astype(np.float64)
    z = vals[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else np.zeros_like(s)
    a = {x.name: x for x in n.attribute}
    axis = a['axis'].i if 'axis' in a else 1
    block = a['block_size'].i if 'block_size' in a else 0
    if s.size == 1 and block == 0:
        return ((q - z.reshape(())) * s.reshape(())).astype(np.float32)
    axis %= q.ndim
    if block:
        s, z = np.repeat(s, block, axis), np.repeat(z, block, axis)
        idx = [slice(None)] * q.ndim
        idx[axis] = slice(0, q.shape[axis])
        s, z = s[tuple(idx)], z[tuple(idx)]
    else:
        shape = [1] * q.ndim
        shape[axis] = -1
        s, z = s.reshape(shape), z.reshape(shape)
    return ((q - z) * s).astype(np.float32)


def ref(path, xfile, out):
    m = onnx.load(path)
    vals = {t.name: array(t) for t in m.graph.initializer}
    vals[m.graph.input[0].name] = np.load(xfile)
    for n in m.graph.node:
        i = [vals[x] if x else None for x in n.input]
        if n.op_type == 'DequantizeLinear':
            r = dequantize(n, vals)
        elif n.op_type == 'MatMul':
            r = (i[0].astype(np.float64) @ i[1].astype(np.float64)).astype(np.float32)
        elif n.op_type == 'Add':
            r = i[0] + i[1]
        elif n.op_type == 'Sub':
            r = i[0] - i[1]
        elif n.op_type == 'Relu':
            r = np.maximum(i[0], 0)
        elif n.op_type == 'ReduceMean':
            axes = tuple(int(a) for a in i[1]) if len(i) > 1 else tuple(
                [x for x in n.attribute if x.name == 'axes'][0].ints)
            r = i[0].mean(axis=axes, keepdims=True)
        else:
            sys.exit(f'ref: {n.op_type} not handled')
        vals[n.output[0]] = r
    np.save(out, vals[m.graph.output[0].name])


def close(got, want, tol, top1=None):
    g, w = np.load(got), np.load(want)
    if g.shape != w.shape:
        sys.exit(f'shape {g.shape} != {w.shape}')
    rng = float(w.max() - w.min()) or 1.0
    err = float(np.abs(g.astype(np.float64) - w).max())
    print(f'max abs err {err / rng:.2e} of the range')
    if not err <= float(tol) * rng:
        sys.exit(f'error {err} > {tol} * range {rng}')
    if top1 and (g.reshape(g.shape[0], -1).argmax(1) != w.reshape(w.shape[0], -1).argmax(1)).any():
        sys.exit('top-1 differs')


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'gen': gen, 'ops': ops, 'ref': ref, 'close': close}[cmd](*args)
