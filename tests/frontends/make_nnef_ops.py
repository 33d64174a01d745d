#!/usr/bin/python3
"""Writes small NNEF op-level models (NAME/graph.nnef + .dat) with numpy golden outputs into a
folder, in the NAME.in.K.npy / NAME.out.K.npy layout `kiln conform` reads.

  make_nnef_ops.py OUTDIR

Goldens are computed here in float64 numpy from the NNEF 1.0 specification's definitions, never
by kiln. They cover what the shared models do not: a compound fragment (inlined, with an
attribute parameter and a default), NNEF's left-aligned broadcasting, batch_normalization,
multilinear_upsample, nearest_upsample, max_pool with a 'constant' border (zeros take part),
avg_pool counting the border, pad reflect/replicate, partial reshape and transpose, squeeze /
unsqueeze, sum/max reductions, softmax on axis 2, and float16, integer and linear-quantised
tensor files.
"""
import os
import struct
import sys

import numpy as np

rng = np.random.RandomState(11)


def rand(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def f64(a):
    return np.asarray(a, np.float64)


def dat(array, code=0, params=(0.0,) * 8, bits=None):
    a = np.asarray(array)
    bits = bits or a.dtype.itemsize * 8
    head = b'\x4e\xef\x01\x00' + struct.pack('<II', a.nbytes, a.ndim)
    head += struct.pack('<8I', *(list(a.shape) + [0] * (8 - a.ndim)))
    head += struct.pack('<II', bits, code) + struct.pack('<8f', *params)
    return head + b'\0' * (128 - len(head)) + a.tobytes()


def write(out, name, graph, files, ins, outs):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'graph.nnef'), 'w') as f:
        f.write(graph)
    for fn, data in files.items():
        with open(os.path.join(d, fn), 'wb') as f:
            f.write(data)
    for k, a in enumerate(ins):
        np.save(os.path.join(out, f'{name}.in.{k}.npy'), a)
    for k, a in enumerate(outs):
        np.save(os.path.join(out, f'{name}.out.{k}.npy'), np.asarray(a, np.float32))


def t_fragment(out):
    graph = """version 1.0;
extension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;

fragment scaled_tanh( x: tensor<scalar>, s: tensor<scalar>, lo: scalar = -0.5 ) -> ( y: tensor<scalar> )
{
    t = mul(x, s);
    u = tanh(t);
    y = max(u, lo);
}

graph frag( a ) -> ( b, c )
{
    a = external<scalar>(shape = [2, 3, 4]);
    s = variable<scalar>(shape = [2, 3], label = 'scale');
    b = scaled_tanh(a, s);
    c = scaled_tanh(a, 2.0, lo = 0.25);
}
"""
    a, s = rand(2, 3, 4), rand(2, 3)
    b = np.maximum(np.tanh(f64(a) * f64(s)[:, :, None]), -0.5)
    c = np.maximum(np.tanh(f64(a) * 2.0), 0.25)
    write(out, 'nnef_fragment', graph, {'scale.dat': dat(s)}, [a], [b, c])


def t_bn_upsample(out):
    graph = """version 1.0;

graph bn_up( x ) -> ( y, z, n )
{
    x = external<scalar>(shape = [1, 3, 3, 4]);
    mean = variable<scalar>(shape = [1, 3], label = 'mean');
    var = variable<scalar>(shape = [1, 3], label = 'var');
    off = variable<scalar>(shape = [1, 3], label = 'off');
    sc = variable<scalar>(shape = [1, 3], label = 'sc');
    y = batch_normalization(x, mean, var, off, sc, epsilon = 0.001);
    z = multilinear_upsample(y, factor = [2, 2]);
    n = nearest_upsample(x, factor = [2, 3]);
}
"""
    x = rand(1, 3, 3, 4)
    mean, off, sc = rand(1, 3), rand(1, 3), rand(1, 3)
    var = rng.uniform(0.5, 2, (1, 3)).astype(np.float32)
    col = lambda v: f64(v).reshape(1, 3, 1, 1)
    y = (f64(x) - col(mean)) / np.sqrt(col(var) + 0.001) * col(sc) + col(off)

    def up_axis(a, axis):
        n = a.shape[axis]
        o = np.arange(2 * n)
        c = (o + 0.5) / 2 - 0.5
        lo = np.floor(c)
        fr = c - lo
        i0 = np.clip(lo, 0, n - 1).astype(int)
        i1 = np.clip(lo + 1, 0, n - 1).astype(int)
        shp = [1] * a.ndim
        shp[axis] = -1
        return np.take(a, i0, axis) * (1 - fr).reshape(shp) + np.take(a, i1, axis) * fr.reshape(shp)
    z = up_axis(up_axis(y, 2), 3)
    n = np.repeat(np.repeat(f64(x), 2, axis=2), 3, axis=3)
    files = {f'{k}.dat': dat(v) for k, v in [('mean', mean), ('var', var), ('off', off), ('sc', sc)]}
    write(out, 'nnef_bn_upsample', graph, files, [x], [y, z, n])


def t_pool_pad(out):
    graph = """version 1.0;

graph pool_pad( x ) -> ( mp, ap, rf, rp )
{
    x = external<scalar>(shape = [1, 2, 5, 5]);
    mp = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], padding = [(0, 0), (0, 0), (1, 1), (1, 1)], border = 'constant');
    ap = avg_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 1, 1], padding = [(0, 0), (0, 0), (1, 0), (0, 1)], border = 'constant');
    rf = pad(x, padding = [(0, 0), (0, 0), (2, 1), (1, 2)], border = 'reflect');
    rp = pad(x, padding = [(0, 0), (1, 0), (0, 1), (2, 0)], border = 'replicate');
}
"""
    x = rand(1, 2, 5, 5) - 0.6  # mostly negative: a zero border wins many maxima
    xd = f64(x)
    zp = np.pad(xd, [(0, 0), (0, 0), (1, 1), (1, 1)])
    mp = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            mp[:, :, i, j] = zp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
    zp2 = np.pad(xd, [(0, 0), (0, 0), (1, 0), (0, 1)])
    ap = np.zeros((1, 2, 5, 5))
    for i in range(5):
        for j in range(5):
            ap[:, :, i, j] = zp2[:, :, i:i + 2, j:j + 2].mean(axis=(2, 3))
    rf = np.pad(xd, [(0, 0), (0, 0), (2, 1), (1, 2)], mode='reflect')
    rp = np.pad(xd, [(0, 0), (1, 0), (0, 1), (2, 0)], mode='edge')
    write(out, 'nnef_pool_pad', graph, {}, [x], [mp, ap, rf, rp])


def t_shapes(out):
    graph = """version 1.0;

graph shapes( x, v ) -> ( r, t, s, m, p, q, r0 )
{
    x = external<scalar>(shape = [2, 3, 4, 5]);
    v = external<scalar>(shape = [2, 3]);
    r = reshape(x, shape = [-1], axis_start = 1, axis_count = 2);
    r0 = reshape(x, shape = [0, -1, 0]);
    t = transpose(x, axes = [1, 0]);
    u = unsqueeze(v, axes = [0, 3]);
    s = squeeze(u, axes = [0]);
    m = sum_reduce(x, axes = [1, 3]);
    mx = max_reduce(x, axes = [2]);
    d = div(mx, v);
    p = sub(d, 0.5);
    q = softmax(x, axes = [2]);
}
"""
    x, v = rand(2, 3, 4, 5), rand(2, 3) + 2.0
    xd = f64(x)
    r = xd.reshape(2, 12, 5)
    t = xd.transpose(1, 0, 2, 3)
    s = f64(v).reshape(2, 3, 1)
    m = xd.sum(axis=(1, 3), keepdims=True)
    mx = xd.max(axis=2, keepdims=True)
    p = mx / f64(v).reshape(2, 3, 1, 1) - 0.5
    e = np.exp(xd - xd.max(axis=2, keepdims=True))
    q = e / e.sum(axis=2, keepdims=True)
    write(out, 'nnef_shapes', graph, {}, [x, v], [r, t, s, m, p, q, xd.reshape(2, 15, 4)])


def t_tensor_files(out):
    graph = """version 1.0;

graph files( x ) -> ( y )
{
    x = external<scalar>(shape = [4, 3]);
    h = variable<scalar>(shape = [3, 2], label = 'half');
    i = variable<scalar>(shape = [1, 2], label = 'ints');
    q = variable<scalar>(shape = [4, 2], label = 'quant');
    l = linear(x, q, i);
    m = matmul(x, h);
    y = add(l, m);
}
"""
    x = rand(4, 3)
    half = rand(3, 2).astype(np.float16)
    ints = np.array([[3, -7]], np.int32)
    qraw = rng.randint(0, 256, (2, 3)).astype(np.uint8)
    lo, hi = -1.5, 2.5
    qv = lo + f64(qraw) * (hi - lo) / 255.0
    # linear's filter is [out, in]: declared [4, 2] would not fit, so use [2, 3].
    graph = graph.replace("shape = [4, 2], label = 'quant'", "shape = [2, 3], label = 'quant'")
    y = f64(x) @ qv.T + f64(ints) + f64(x) @ f64(half)
    files = {'half.dat': dat(half), 'ints.dat': dat(ints, code=1, params=(1.0,) + (0.0,) * 7),
             'quant.dat': dat(qraw, code=0x10, params=(lo, hi) + (0.0,) * 6)}
    write(out, 'nnef_tensor_files', graph, files, [x], [y])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for f in [t_fragment, t_bn_upsample, t_pool_pad, t_shapes, t_tensor_files]:
        f(out)


if __name__ == '__main__':
    main()
