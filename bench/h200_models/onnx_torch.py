#!/usr/bin/env python3
"""A small ONNX interpreter, PyTorch eager (CUDA, fp32, TF32 off, cudnn.benchmark) or numpy
(reference, for checking the generated graphs on a machine without torch). Runs exactly the
ops bench/h200_models/gen.py emits (and the real models it rewrites: squeezenet1_1,
mobilenet_v2), node by node, from the same .onnx and .npy inputs that kiln_bench gets. Requires the `onnx` python package (for parsing).

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


def np_conv(x, w, b, strides, pads, group=1):
    n, c, h, wd = x.shape; o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    sh, sw = strides
    oh = (x.shape[2] - kh) // sh + 1; ow = (x.shape[3] - kw) // sw + 1
    if group == c and o == c and cg == 1:  # depthwise: no im2col
        y = np.zeros((n, o, oh, ow), x.dtype)
        for i in range(kh):
            for j in range(kw):
                y += x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] * w[:, 0, i, j].reshape(1, -1, 1, 1)
    else:
        cols = np.empty((n, c, kh, kw, oh, ow), x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, i, j] = x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
        y = np.einsum("gok,ngkl->ngol", w.reshape(group, o // group, cg * kh * kw),
                      cols.reshape(n, group, cg * kh * kw, oh * ow), optimize=True)
        y = y.reshape(n, o, oh, ow)
    return y + b.reshape(1, -1, 1, 1) if b is not None else y


def pool_out(size, k, s, p0, p1, ceil):
    """ONNX/PyTorch pooling output size; with ceil_mode a last window must start inside the
    input or left padding."""
    span = size + p0 + p1 - k
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= size + p0:
        o -= 1
    return o


def np_maxpool(x, k, s, pads, ceil_mode=0):
    oh = pool_out(x.shape[2], k[0], s[0], pads[0], pads[2], ceil_mode)
    ow = pool_out(x.shape[3], k[1], s[1], pads[1], pads[3], ceil_mode)
    eh = max(0, (oh - 1) * s[0] + k[0] - (x.shape[2] + pads[0] + pads[2]))  # ceil_mode overhang
    ew = max(0, (ow - 1) * s[1] + k[1] - (x.shape[3] + pads[1] + pads[3]))
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2] + eh), (pads[1], pads[3] + ew)), constant_values=-np.inf)
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
        "Conv": lambda x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), group=1, dilations=(1, 1), **_:
            np_conv(x, w, b, strides, pads, group) if tuple(dilations) == (1, 1) else sys.exit("dilated Conv"),
        "Relu": lambda x: np.maximum(x, 0), "Add": np.add, "Mul": np.multiply, "Sub": np.subtract,
        "Div": np.divide, "Erf": np_erf, "Tanh": np.tanh, "Sqrt": np.sqrt,
        "MaxPool": lambda x, kernel_shape, strides, pads=(0, 0, 0, 0), ceil_mode=0, dilations=(1, 1):
            np_maxpool(x, kernel_shape, strides, pads, ceil_mode),
        "Identity": lambda x: x, "Dropout": lambda x, *_, **__: x,
        "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
        "Clip": lambda x, lo=None, hi=None: np.clip(x, lo, hi).astype(x.dtype),
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
    def conv(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), group=1, dilations=(1, 1), **_):
        if pads[0] != pads[2] or pads[1] != pads[3]:  # asymmetric: pad explicitly
            x = F.pad(x, (pads[1], pads[3], pads[0], pads[2])); pads = (0, 0, 0, 0)
        return F.conv2d(x, w, b, stride=tuple(strides), padding=(pads[0], pads[1]),
                        dilation=tuple(dilations), groups=group)
    def maxpool(x, kernel_shape, strides, pads=(0, 0, 0, 0), ceil_mode=0, dilations=(1, 1)):
        if pads[0] != pads[2] or pads[1] != pads[3]:
            x = F.pad(x, (pads[1], pads[3], pads[0], pads[2]), value=float("-inf")); pads = (0, 0, 0, 0)
        return F.max_pool2d(x, tuple(kernel_shape), tuple(strides), (pads[0], pads[1]),
                            dilation=tuple(dilations), ceil_mode=bool(ceil_mode))
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
        "Reshape": lambda x, s: x.reshape(list(s)),  # s: a tuple of ints (see Model)
        "Transpose": lambda x, perm: x.permute(*perm),
        "Softmax": lambda x, axis=-1: torch.softmax(x, dim=axis),
        "LayerNormalization": ln,
        "Identity": lambda x: x, "Dropout": lambda x, *_, **__: x,
        "Concat": lambda *xs, axis: torch.cat(xs, dim=axis),
        # min / max: Python floats (Model folds constant Clip bounds into attributes)
        "Clip": lambda x, lo=None, hi=None: torch.clamp(x, lo, hi),
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
        self.nodes = []
        for n in g.node:
            t, ins, at = n.op_type, list(n.input), attrs_of(n)
            if t == "Constant":  # folded: a constant like an initializer
                if set(at) != {"value"}:
                    sys.exit(f"onnx_torch: Constant {n.name} without a tensor value")
                a = numpy_helper.to_array(n.attribute[0].t)
                self.consts[n.output[0]] = self.dev(a) if a.dtype != np.int64 else a
                continue
            if t == "Clip":  # opset 11+: min / max as (optional) inputs; here Python floats
                bounds = [None, None]
                for k, nm in enumerate(ins[1:3]):
                    if nm:
                        v = self.consts.get(nm)
                        if v is None:
                            sys.exit(f"onnx_torch: Clip {n.name} bound {nm} is not a constant")
                        bounds[k] = float(v.item() if hasattr(v, "item") else v)
                ins = ins[:1]
                at = dict(at)
                if "min" in at: bounds[0] = at.pop("min")  # opset < 11 attributes
                if "max" in at: bounds[1] = at.pop("max")
                at = {"lo": bounds[0], "hi": bounds[1]}
            if t == "Reshape" and ins[1] in self.consts:  # the shape as Python ints, which
                # torch.compile traces as constants (a numpy array there fails in dynamo)
                at = {"s": tuple(int(v) for v in np.asarray(self.consts[ins[1]]).reshape(-1))}
                ins = ins[:1]
            self.nodes.append((t, ins, list(n.output), at))
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
    ap.add_argument("--compile", action="store_true",
                    help="time torch.compile (Inductor, default mode) of the interpreter's run "
                         "instead of eager; the compile happens in the first warm-up call")
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
        run = m.run
        if a.compile:
            run = torch.compile(m.run)
            t0 = time.perf_counter()
            with torch.no_grad():
                run(feeds); torch.cuda.synchronize()
            print(f"  torch.compile: first call {time.perf_counter() - t0:.1f} s")
        with torch.no_grad():
            warm_until = time.perf_counter() + a.warmup_seconds
            for _ in range(a.warmup): run(feeds)
            while time.perf_counter() < warm_until:
                run(feeds); torch.cuda.synchronize()
            torch.cuda.synchronize(); ts = []
            for _ in range(a.iters):
                t0 = time.perf_counter(); outs = run(feeds); torch.cuda.synchronize()
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
    print(f"{a.backend}{'.compile' if a.compile else ''} {name}: median {statistics.median(ts):.3f} ms (min {min(ts):.3f}) over {len(ts)} calls")


if __name__ == "__main__":
    main()
