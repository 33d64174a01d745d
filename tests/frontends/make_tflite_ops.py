#!/usr/bin/python3
"""Writes small TFLite op-level models with numpy golden outputs into a folder, in the
NAME.tflite / NAME.in.K.npy / NAME.out.K.npy layout `kiln conform` reads.

  make_tflite_ops.py OUTDIR

Models are flatbuffer JSON compiled by Debian's flatc against kiln's schema subset
(src/frontend/tflite/tflite.fbs). Goldens are computed here in float64 numpy from TFLite's
documented semantics (NHWC, SAME/VALID padding, OHWI weights, half-away-from-zero quantisation),
never by kiln. They cover what the shared models do not: TRANSPOSE_CONV, both resize ops in
each coordinate mode, broadcasting SUB/MUL/DIV with fused activations, QUANTIZE/DEQUANTIZE ties,
int8 ADD, PADV2, MEAN, SOFTMAX beta, PRELU, LEAKY_RELU, HARD_SWISH, FULLY_CONNECTED
keep_num_dims, depthwise multiplier 2, AVERAGE_POOL SAME and CONCATENATION on the last axis.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, '..', '..', 'src', 'frontend', 'tflite', 'tflite.fbs')
CODES = {'ADD': 0, 'AVERAGE_POOL_2D': 1, 'CONCATENATION': 2, 'CONV_2D': 3, 'DEPTHWISE_CONV_2D': 4,
         'DEQUANTIZE': 6, 'FULLY_CONNECTED': 9, 'MUL': 18, 'RESIZE_BILINEAR': 23, 'SOFTMAX': 25,
         'MEAN': 40, 'SUB': 41, 'DIV': 42, 'PRELU': 54, 'MAXIMUM': 55, 'MINIMUM': 57, 'PADV2': 60,
         'TRANSPOSE_CONV': 67, 'RESIZE_NEAREST_NEIGHBOR': 97, 'LEAKY_RELU': 98, 'QUANTIZE': 114,
         'HARD_SWISH': 117}


class Model:
    def __init__(self):
        self.tensors, self.buffers, self.ops, self.codes = [], [{}], [], []
        self.inputs, self.outputs = [], []

    def tensor(self, name, shape, dtype='FLOAT32', data=None, quant=None):
        t = {'name': name, 'shape': list(shape), 'type': dtype, 'buffer': 0}
        if data is not None:
            t['buffer'] = len(self.buffers)
            self.buffers.append({'data': list(np.ascontiguousarray(data).tobytes())})
        if quant is not None:
            t['quantization'] = {'scale': [quant[0]], 'zero_point': [quant[1]]}
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, name, array, dtype='FLOAT32'):
        np_type = {'FLOAT32': '<f4', 'INT32': '<i4'}[dtype]
        return self.tensor(name, array.shape, dtype, np.asarray(array, np_type))

    def op(self, code, inputs, outputs, opt_type=None, **opts):
        if code not in self.codes:
            self.codes.append(code)
        o = {'opcode_index': self.codes.index(code), 'inputs': inputs, 'outputs': outputs}
        if opt_type:
            o['builtin_options_type'] = opt_type
            o['builtin_options'] = opts
        self.ops.append(o)

    def write(self, out, name, ins, outs):
        m = {'version': 3,
             'operator_codes': [{'deprecated_builtin_code': CODES[c], 'version': 1} for c in self.codes],
             'subgraphs': [{'tensors': self.tensors, 'inputs': self.inputs, 'outputs': self.outputs,
                            'operators': self.ops, 'name': 'main'}],
             'description': 'kiln op test', 'buffers': self.buffers}
        js = os.path.join(out, name + '.json')
        with open(js, 'w') as f:
            json.dump(m, f)
        subprocess.run(['flatc', '-b', '-o', out, SCHEMA, js], check=True)
        os.remove(js)
        for k, a in enumerate(ins):
            np.save(os.path.join(out, f'{name}.in.{k}.npy'), a)
        for k, a in enumerate(outs):
            np.save(os.path.join(out, f'{name}.out.{k}.npy'), a)


rng = np.random.RandomState(7)


def rand(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def f64(a):
    return np.asarray(a, np.float64)


def round_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def transpose_conv_ref(x, w, b, stride, out_hw):
    """x [1,H,W,I], w [O,KH,KW,I]; SAME padding; out [1,OH,OW,O]."""
    _, h, wd, _ = x.shape
    o, kh, kw, _ = w.shape
    full_h, full_w = (h - 1) * stride + kh, (wd - 1) * stride + kw
    buf = np.zeros((full_h, full_w, o))
    for i in range(h):
        for j in range(wd):
            buf[i * stride:i * stride + kh, j * stride:j * stride + kw, :] += np.einsum(
                'c,okjc->kjo', f64(x[0, i, j]), f64(w))
    pt = max(full_h - out_hw[0], 0) // 2
    pl = max(full_w - out_hw[1], 0) // 2
    return (buf[pt:pt + out_hw[0], pl:pl + out_hw[1], :] + f64(b))[None]


def t_transpose_conv(out):
    m = Model()
    x = rand(1, 4, 4, 2)
    w = rand(3, 3, 3, 2)
    b = rand(3)
    xi = m.tensor('x', x.shape)
    shape = m.const('output_shape', np.array([1, 8, 8, 3]), 'INT32')
    wi, bi = m.const('w', w), m.const('b', b)
    yi = m.tensor('y', (1, 8, 8, 3))
    m.op('TRANSPOSE_CONV', [shape, wi, xi, bi], [yi], 'TransposeConvOptions', padding='SAME', stride_w=2, stride_h=2)
    m.inputs, m.outputs = [xi], [yi]
    m.write(out, 'tfl_transpose_conv', [x], [transpose_conv_ref(x, w, b, 2, (8, 8)).astype(np.float32)])


def resize_nearest_ref(x, oh, ow, align, half):
    _, h, w, _ = x.shape
    def idx(o, n, out_n):
        if align and out_n > 1:
            s = (n - 1) / (out_n - 1)
            v = np.floor(o * s + 0.5)
        else:
            s = n / out_n
            v = np.floor((o + 0.5) * s) if half else np.floor(o * s)
        return np.minimum(v, n - 1).astype(int)
    ys, xs = idx(np.arange(oh), h, oh), idx(np.arange(ow), w, ow)
    return x[:, ys][:, :, xs]


def resize_bilinear_ref(x, oh, ow, align, half):
    _, h, w, _ = x.shape
    def coords(o, n, out_n):
        if align and out_n > 1:
            c = o * (n - 1) / (out_n - 1)
        elif half:
            c = (o + 0.5) * n / out_n - 0.5
        else:
            c = o * n / out_n
        lo = np.floor(c)
        frac = c - lo
        i0 = np.clip(lo, 0, n - 1).astype(int)
        i1 = np.clip(lo + 1, 0, n - 1).astype(int)
        return i0, i1, frac
    y0, y1, fy = coords(np.arange(oh), h, oh)
    x0, x1, fx = coords(np.arange(ow), w, ow)
    xd = f64(x)
    top = xd[:, y0][:, :, x0] * (1 - fx)[None, None, :, None] + xd[:, y0][:, :, x1] * fx[None, None, :, None]
    bot = xd[:, y1][:, :, x0] * (1 - fx)[None, None, :, None] + xd[:, y1][:, :, x1] * fx[None, None, :, None]
    return top * (1 - fy)[None, :, None, None] + bot * fy[None, :, None, None]


def t_resize(out):
    m = Model()
    x = rand(1, 3, 5, 2)
    xi = m.tensor('x', x.shape)
    size = m.const('size', np.array([6, 7]), 'INT32')
    small = m.const('size_small', np.array([2, 3]), 'INT32')
    outs, refs = [], []
    for k, (align, half) in enumerate([(False, False), (False, True), (True, False)]):
        yi = m.tensor(f'nearest{k}', (1, 6, 7, 2))
        m.op('RESIZE_NEAREST_NEIGHBOR', [xi, size], [yi], 'ResizeNearestNeighborOptions',
             align_corners=align, half_pixel_centers=half)
        outs.append(yi)
        refs.append(resize_nearest_ref(x, 6, 7, align, half))
    for k, (align, half, s) in enumerate([(False, False, (6, 7)), (True, False, (6, 7)), (False, True, (2, 3))]):
        yi = m.tensor(f'bilinear{k}', (1, s[0], s[1], 2))
        m.op('RESIZE_BILINEAR', [xi, size if s == (6, 7) else small], [yi], 'ResizeBilinearOptions',
             align_corners=align, half_pixel_centers=half)
        outs.append(yi)
        refs.append(resize_bilinear_ref(x, s[0], s[1], align, half).astype(np.float32))
    m.inputs, m.outputs = [xi], outs
    m.write(out, 'tfl_resize', [x], refs)


def t_binary(out):
    m = Model()
    a, b = rand(1, 4, 4, 3), rand(3)
    c = (rng.uniform(0.5, 2, (4, 1, 3)) * rng.choice([-1, 1], (4, 1, 3))).astype(np.float32)
    ai, bi = m.tensor('a', a.shape), m.tensor('b', b.shape)
    ci = m.const('c', c)
    s, p, q, mx, mn = (m.tensor(n, (1, 4, 4, 3)) for n in ['sub', 'mul', 'div', 'max', 'min'])
    m.op('SUB', [ai, bi], [s], 'SubOptions', fused_activation_function='RELU_N1_TO_1')
    m.op('MUL', [s, ci], [p], 'MulOptions', fused_activation_function='TANH')
    m.op('DIV', [ai, ci], [q], 'DivOptions', fused_activation_function='RELU')
    m.op('MAXIMUM', [q, bi], [mx])
    m.op('MINIMUM', [ai, ci], [mn])
    m.inputs, m.outputs = [ai, bi], [p, mx, mn]
    sub = np.clip(f64(a) - f64(b), -1, 1)
    mul = np.tanh(sub * f64(c))
    div = np.maximum(f64(a) / f64(c), 0)
    m.write(out, 'tfl_binary', [a, b], [mul.astype(np.float32), np.maximum(div, f64(b)).astype(np.float32),
                                         np.minimum(f64(a), f64(c)).astype(np.float32)])


def t_quant(out):
    m = Model()
    s, zp = 0.5, 3
    # x / s = ties +-0.5, 1.5, -2.5 (away from zero: 1, -1, 2, -3), saturation both ends.
    x = np.array([0.25, -0.25, 0.75, -1.25, 0.1, 100.0, -100.0, 1.3], np.float32)
    xi = m.tensor('x', x.shape)
    qi = m.tensor('q', x.shape, 'INT8', quant=(s, zp))
    di = m.tensor('d', x.shape)
    m.op('QUANTIZE', [xi], [qi])
    m.op('DEQUANTIZE', [qi], [di])
    # int8 ADD of the quantised tensor and a quantised constant, requantised to another scale.
    k = np.array([10, -20, 30, -40, 50, -60, 70, -80], np.int8)
    ki = m.tensor('k', x.shape, 'INT8', data=k, quant=(0.25, -2))
    ai = m.tensor('sum', x.shape, 'INT8', quant=(0.3, 1))
    m.op('ADD', [qi, ki], [ai], 'AddOptions')
    # uint8 with a per-tensor zero point of 128.
    ui = m.tensor('u', x.shape, 'UINT8', quant=(0.25, 128))
    m.op('QUANTIZE', [xi], [ui])
    m.inputs, m.outputs = [xi], [qi, di, ai, ui]
    u = np.clip(round_away(f64(x) / 0.25) + 128, 0, 255)
    q = np.clip(round_away(f64(x) / s) + zp, -128, 127)
    d = (q - zp) * s
    total = d + (f64(k) + 2) * 0.25
    a = np.clip(round_away(total / 0.3) + 1, -128, 127)
    m.write(out, 'tfl_quantize', [x], [q.astype(np.int8), d.astype(np.float32), a.astype(np.int8),
                                       u.astype(np.uint8)])


def t_misc(out):
    m = Model()
    x = rand(1, 3, 4, 3)
    xi = m.tensor('x', x.shape)
    pads = m.const('pads', np.array([[0, 0], [1, 0], [0, 2], [0, 0]]), 'INT32')
    val = m.const('value', np.array([0.5], np.float32))
    pi = m.tensor('padded', (1, 4, 6, 3))
    m.op('PADV2', [xi, pads, val], [pi])
    axes = m.const('axes', np.array([1, 2]), 'INT32')
    mi = m.tensor('mean', (1, 3))
    m.op('MEAN', [pi, axes], [mi], 'ReducerOptions', keep_dims=False)
    si = m.tensor('soft', (1, 3))
    m.op('SOFTMAX', [mi], [si], 'SoftmaxOptions', beta=0.5)
    alpha = rand(3)
    ali = m.const('alpha', alpha)
    pri = m.tensor('prelu', x.shape)
    m.op('PRELU', [xi, ali], [pri])
    lri = m.tensor('leaky', x.shape)
    m.op('LEAKY_RELU', [pri], [lri], 'LeakyReluOptions', alpha=0.2)
    hsi = m.tensor('hswish', x.shape)
    m.op('HARD_SWISH', [lri], [hsi])
    w, b = rand(5, 3), rand(5)
    wi, bi = m.const('w', w), m.const('b', b)
    fci = m.tensor('fc', (1, 3, 4, 5))
    m.op('FULLY_CONNECTED', [hsi, wi, bi], [fci], 'FullyConnectedOptions', keep_num_dims=True,
         fused_activation_function='RELU6')
    m.inputs, m.outputs = [xi], [si, fci]
    xd = f64(x)
    padded = np.pad(xd, [(0, 0), (1, 0), (0, 2), (0, 0)], constant_values=0.5)
    mean = padded.mean(axis=(1, 2))
    e = np.exp(0.5 * mean - (0.5 * mean).max())
    soft = e / e.sum()
    pr = np.where(xd < 0, f64(alpha) * xd, xd)
    lr = np.where(pr < 0, 0.2 * pr, pr)
    hs = lr * np.clip(lr + 3, 0, 6) / 6
    fc = np.clip(hs @ f64(w).T + f64(b), 0, 6)
    m.write(out, 'tfl_misc', [x], [soft.astype(np.float32), fc.astype(np.float32)])


def dwconv_ref(x, w, b, mult):
    """x [1,H,W,C], w [1,3,3,C*mult], VALID, stride 1."""
    _, h, wd, c = x.shape
    kh, kw = w.shape[1:3]
    oh, ow = h - kh + 1, wd - kw + 1
    y = np.zeros((1, oh, ow, c * mult))
    for i in range(oh):
        for j in range(ow):
            patch = f64(x[0, i:i + kh, j:j + kw, :])  # [kh, kw, c]
            for ch in range(c):
                for k in range(mult):
                    o = ch * mult + k
                    y[0, i, j, o] = (patch[:, :, ch] * f64(w[0, :, :, o])).sum() + b[o]
    return y


def avgpool_same_ref(x, k, s):
    _, h, w, c = x.shape
    oh, ow = -(-h // s), -(-w // s)
    th, tw = max((oh - 1) * s + k - h, 0), max((ow - 1) * s + k - w, 0)
    pt, pl = th // 2, tw // 2
    y = np.zeros((1, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s - pt, j * s - pl
            r = slice(max(r0, 0), min(r0 + k, h))
            cc = slice(max(c0, 0), min(c0 + k, w))
            y[0, i, j] = f64(x[0, r, cc]).mean(axis=(0, 1))
    return y


def t_dw_pool_concat(out):
    m = Model()
    x = rand(1, 6, 5, 2)
    w, b = rand(1, 3, 3, 4), rand(4)
    xi = m.tensor('x', x.shape)
    wi, bi = m.const('w', w), m.const('b', b)
    di = m.tensor('dw', (1, 4, 3, 4))
    m.op('DEPTHWISE_CONV_2D', [xi, wi, bi], [di], 'DepthwiseConv2DOptions', padding='VALID',
         stride_w=1, stride_h=1, depth_multiplier=2)
    pi = m.tensor('pool', (1, 2, 2, 4))
    m.op('AVERAGE_POOL_2D', [di], [pi], 'Pool2DOptions', padding='SAME', stride_w=2, stride_h=2,
         filter_width=3, filter_height=3, fused_activation_function='RELU6')
    extra = rand(1, 2, 2, 1)
    ei = m.tensor('extra', extra.shape)
    ci = m.tensor('cat', (1, 2, 2, 5))
    m.op('CONCATENATION', [pi, ei], [ci], 'ConcatenationOptions', axis=-1)
    m.inputs, m.outputs = [xi, ei], [ci]
    dw = dwconv_ref(x, w, f64(b), 2)
    pool = np.clip(avgpool_same_ref(dw, 3, 2), 0, 6)
    cat = np.concatenate([pool, f64(extra)], axis=3)
    m.write(out, 'tfl_dw_pool_concat', [x, extra], [cat.astype(np.float32)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f in [t_transpose_conv, t_resize, t_binary, t_quant, t_misc, t_dw_pool_concat]:
        f(out)


if __name__ == '__main__':
    main()
