#!/usr/bin/env python3
"""A small ONNX interpreter, PyTorch eager (CUDA, fp32, TF32 off, cudnn.benchmark) or numpy
(reference, for checking the generated graphs on a machine without torch). Runs exactly the
ops bench/h200_models/gen.py emits, node by node, from the same .onnx and .npy inputs that
kiln_bench gets. Requires the `onnx` python package (for parsing).

  python3 onnx_torch.py MODEL.onnx --inputs DIR [--backend torch|numpy] [--warmup 10]
      [--iters 50] [--save PREFIX]      # saves PREFIX.OUTPUT.npy for each graph output
Inputs are read from DIR/NAME.in.INPUT.npy (NAME = the .onnx file's stem).
Prints one line: `torch MODEL: median X ms (min Y) over N calls` (numpy: one timed call).
"""
import argparse, os, statistics, sys, time
import numpy as np
import onnx
from onnx import numpy_helper


def attrs_of(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def np_conv(x, w, b, strides, pads):
    n, c, h, wd = x.shape; o, _, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    sh, sw = strides
    oh = (x.shape[2] - kh) // sh + 1; ow = (x.shape[3] - kw) // sw + 1
    cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
    y = np.tensordot(w.reshape(o, -1), cols.reshape(n, c * kh * kw, oh * ow), axes=([1], [1]))
    y = y.transpose(1, 0, 2).reshape(n, o, oh, ow)
    return y + b.reshape(1, -1, 1, 1) if b is not None else y


def np_maxpool(x, k, s, pads):
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])), constant_values=-np.inf)
    oh = (x.shape[2] - k[0]) // s[0] + 1; ow = (x.shape[3] - k[1]) // s[1] + 1
    y = np.full(x.shape[:2] + (oh, ow), -np.inf, x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, x[:, :, i:i + s[0] * oh:s[0], j:j + s[1] * ow:s[1]])
    return y


def np_erf(x):
    try:
        from scipy.special import erf
        return erf(x).astype(x.dtype)
    except ImportError:
        import math
        return np.vectorize(math.erf, otypes=[x.dtype])(x)


def np_ops():
    def softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True)); return e / e.sum(axis=axis, keepdims=True)
    def ln(x, s, b, axis=-1, epsilon=1e-5):
        m = x.mean(axis=axis, keepdims=True); v = ((x - m) ** 2).mean(axis=axis, keepdims=True)
        return (x - m) / np.sqrt(v + epsilon) * s + b
    def gemm(a, b, c=None, transA=0, transB=0, alpha=1.0, beta=1.0):
        y = alpha * ((a.T if transA else a) @ (b.T if transB else b))
        return y + beta * c if c is not None else y
    return {
        "Conv": lambda x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), **_: np_conv(x, w, b, strides, pads),
        "Relu": lambda x: np.maximum(x, 0), "Add": np.add, "Mul": np.multiply, "Sub": np.subtract,
        "Div": np.divide, "Erf": np_erf, "Tanh": np.tanh, "Sqrt": np.sqrt,
        "MaxPool": lambda x, kernel_shape, strides, pads=(0, 0, 0, 0): np_maxpool(x, kernel_shape, strides, pads),
        "GlobalAveragePool": lambda x: x.mean(axis=(2, 3), keepdims=True),
        "Flatten": lambda x, axis=1: x.reshape(int(np.prod(x.shape[:axis])), -1),
        "Gemm": gemm, "MatMul": np.matmul,
        "Reshape": lambda x, s: x.reshape([int(v) for v in s]),
        "Transpose": lambda x, perm: x.transpose(perm),
        "Softmax": lambda x, axis=-1: softmax(x, axis),
        "LayerNormalization": ln,
    }


def torch_ops(torch):
    F = torch.nn.functional
    def conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), **_):
        assert pads[0] == pads[2] and pads[1] == pads[3]
        return F.conv2d(x, w, b, stride=tuple(strides), padding=(pads[0], pads[1]))
    def maxpool(x, kernel_shape, strides, pads=(0, 0, 0, 0)):
        return F.max_pool2d(x, tuple(kernel_shape), tuple(strides), (pads[0], pads[1]))
    def gemm(a, b, c=None, transA=0, transB=0, alpha=1.0, beta=1.0):
        y = (a.t() if transA else a) @ (b.t() if transB else b)
        if alpha != 1.0: y = y * alpha
        return y + (beta * c if beta != 1.0 else c) if c is not None else y
    def ln(x, s, b, axis=-1, epsilon=1e-5):
        assert axis == -1 or axis == x.dim() - 1
        return F.layer_norm(x, (x.shape[-1],), s, b, epsilon)
    return {
        "Conv": conv, "Relu": F.relu, "Add": torch.add, "Mul": torch.mul, "Sub": torch.sub,
        "Div": torch.div, "Erf": torch.erf, "Tanh": torch.tanh, "Sqrt": torch.sqrt,
        "MaxPool": maxpool, "GlobalAveragePool": lambda x: x.mean(dim=(2, 3), keepdim=True),
        "Flatten": lambda x, axis=1: x.flatten(axis) if axis > 0 else x.reshape(1, -1),
        "Gemm": gemm, "MatMul": torch.matmul,
        "Reshape": lambda x, s: x.reshape([int(v) for v in s.tolist()]),
        "Transpose": lambda x, perm: x.permute(*perm),
        "Softmax": lambda x, axis=-1: torch.softmax(x, dim=axis),
        "LayerNormalization": ln,
    }


class Model:
    def __init__(self, path, backend):
        self.m = onnx.load(path); g = self.m.graph
        self.backend = backend
        if backend == "torch":
            import torch
            self.torch = torch
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch.backends.cudnn.benchmark = True
            self.ops = torch_ops(torch)
        else:
            self.ops = np_ops()
        self.consts = {}
        for t in g.initializer:
            a = numpy_helper.to_array(t)
            self.consts[t.name] = self.dev(a) if a.dtype != np.int64 else a
        self.nodes = [(n.op_type, list(n.input), list(n.output), attrs_of(n)) for n in g.node]
        missing = {n[0] for n in self.nodes} - set(self.ops)
        if missing:
            sys.exit(f"onnx_torch: unsupported ops {sorted(missing)}")
        self.input_names = [i.name for i in g.input if i.name not in self.consts]
        self.output_names = [o.name for o in g.output]

    def dev(self, a):
        if self.backend == "torch":
            return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()
        return a

    def run(self, feeds):
        env = dict(self.consts); env.update(feeds)
        for t, ins, outs, at in self.nodes:
            y = self.ops[t](*[env[i] if i else None for i in ins], **at)
            env[outs[0]] = y
        return [env[o] for o in self.output_names]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model"); ap.add_argument("--inputs", required=True)
    ap.add_argument("--backend", default="torch", choices=["torch", "numpy"])
    ap.add_argument("--warmup", type=int, default=10); ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup-seconds", type=float, default=0.0,
                    help="warm up at least this long too (the GPU raises its clock under load)")
    ap.add_argument("--save")
    ap.add_argument("--upcast", action="store_true",
                    help="run a float16 model in float32 (weights and inputs widened): the f32 "
                         "reference for a model kiln runs in half precision")
    a = ap.parse_args()
    name = os.path.splitext(os.path.basename(a.model))[0]
    m = Model(a.model, a.backend)
    feeds = {n: m.dev(np.load(os.path.join(a.inputs, f"{name}.in.{n}.npy"))) for n in m.input_names}
    if a.upcast:
        widen = lambda v: v.float() if a.backend == "torch" and v.dtype.is_floating_point else (
            v.astype(np.float32) if a.backend != "torch" and v.dtype == np.float16 else v)
        m.consts = {k: widen(v) if not isinstance(v, np.ndarray) or v.dtype != np.int64 else v
                    for k, v in m.consts.items()}
        feeds = {k: widen(v) for k, v in feeds.items()}
    if a.backend == "torch":
        torch = m.torch
        with torch.no_grad():
            warm_until = time.perf_counter() + a.warmup_seconds
            for _ in range(a.warmup): m.run(feeds)
            while time.perf_counter() < warm_until:
                m.run(feeds); torch.cuda.synchronize()
            torch.cuda.synchronize(); ts = []
            for _ in range(a.iters):
                t0 = time.perf_counter(); outs = m.run(feeds); torch.cuda.synchronize()
                ts.append((time.perf_counter() - t0) * 1e3)
        outs = [o.float().cpu().numpy() for o in outs]
    else:
        t0 = time.perf_counter(); outs = m.run(feeds); ts = [(time.perf_counter() - t0) * 1e3]
        outs = [np.asarray(o, np.float32) for o in outs]
    halves = {o.name for o in m.m.graph.output if o.type.tensor_type.elem_type == onnx.TensorProto.FLOAT16}
    for n, o in zip(m.output_names, outs):
        if a.save:  # in the output's own type (a float16 golden: the f32 result rounded once)
            np.save(f"{a.save}.{n}.npy", o.astype(np.float16) if n in halves else o)
        print(f"  output {n} {list(o.shape)} finite={bool(np.isfinite(o).all())} "
              f"mean|y|={float(np.abs(o).mean()):.4g} max|y|={float(np.abs(o).max()):.4g}")
    print(f"{a.backend} {name}: median {statistics.median(ts):.3f} ms (min {min(ts):.3f}) over {len(ts)} calls")


if __name__ == "__main__":
    main()
