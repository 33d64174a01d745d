#!/usr/bin/env python3
"""H200 acceptance workloads as ONNX (opset 17) with every weight a graph INPUT, not an
initializer, so the .onnx and the compiled .kiln stay tiny (resnet50's 102 MB / bert-base's
~340 MB of f32 weights would not fit the device tool's 64 MiB carry). Weights and inputs are
regenerated from a seed on either machine by `--npy` (numpy only, no onnx needed).

  python3 gen.py --onnx DIR [--small]   # here: write NAME.onnx (needs the onnx package)
  python3 gen.py --npy DIR [--small] [--only NAME,...]   # here or on the GPU machine:
                                        # write NAME.in.INPUT.npy for every graph input
  --baked: weights as initializers instead (same values), only x / A / B stay inputs.

Models: matmul4096 (A,B 4096x4096), mm_qkv / mm_ffn1 / mm_ffn2 (bert-base b8's linear layers
alone: 1024x768 @ 768x768, 1024x768 @ 768x3072, 1024x3072 @ 3072x768), resnet50_b32, resnet50_b1 (224x224, conv+bias, no
BatchNorm: BN folded into conv bias), bert_base_b8 (12 layers, hidden 768, 12 heads, ffn 3072,
seq 128; input = embedding output x[8,128,768], no attention mask, Erf-form GELU,
LayerNormalization). --small: matmul 64, resnet50 at 32x32 (b1 and b2), bert 2 layers seq 16 b1.

Real models (not synthetic; --baked only, --onnx needs SOURCE.onnx): squeezenet1_1_b1,
squeezenet1_1_b32, mobilenet_v2_b1, mobilenet_v2_b32 (+ _f16 with --f16). --onnx rewrites
SOURCE.onnx (torchvision export, batch 1, float32, input 'input' [1,3,224,224], output 'logits')
to the batch of the name (graph input/output dim 0; value_info dropped; the graphs have no
Reshape, Flatten is batch-agnostic) and for _f16 converts every float tensor (initializers,
Constant values, graph input/output, Cast-to-float) to float16. SOURCE.onnx is looked for in
--models-dir if given, else in the output dir (prepare.sh BAKED=1 copies it there), else in
../shared/models of the checkout. --npy writes NAME.in.input.npy: normal(0,1), seeded by name
like the others (float16 for _f16); no source needed.
"""
import argparse, os, zlib
import numpy as np

F32 = np.float32


class G:
    """Collects nodes, float graph inputs (name, shape, init) and small int64 constants."""
    def __init__(self):
        self.nodes, self.inputs, self.consts, self.n = [], [], [], 0

    def inp(self, name, shape, init):
        self.inputs.append((name, list(shape), init)); return name

    def const(self, arr, name=None):
        name = name or f"c{len(self.consts)}"; self.consts.append((name, np.asarray(arr))); return name

    def op(self, t, ins, nout=1, **attrs):
        self.n += 1
        outs = [f"{t.lower()}{self.n}_{i}" for i in range(nout)]
        self.nodes.append((t, list(ins), outs, attrs))
        return outs[0] if nout == 1 else outs


def matmul(n):
    g = G()
    a = g.inp("A", [n, n], ("normal", 1.0)); b = g.inp("B", [n, n], ("normal", 1.0))
    return g, [(g.op("MatMul", [a, b]), [n, n])]


def resnet50(batch, hw):
    g = G(); cnt = [0]
    def conv(x, cin, cout, k, s=1, relu=True):
        cnt[0] += 1; i = cnt[0]
        w = g.inp(f"conv{i}_w", [cout, cin, k, k], ("he", cin * k * k))
        b = g.inp(f"conv{i}_b", [cout], ("normal", 0.01))
        y = g.op("Conv", [x, w, b], kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)
        return g.op("Relu", [y]) if relu else y
    x = g.inp("x", [batch, 3, hw, hw], ("normal", 1.0))
    y = conv(x, 3, 64, 7, 2)
    y = g.op("MaxPool", [y], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for bi in range(blocks):
            s = stride if bi == 0 else 1
            t = conv(y, cin, width, 1)
            t = conv(t, width, width, 3, s)
            t = conv(t, width, width * 4, 1, relu=False)
            sc = conv(y, cin, width * 4, 1, s, relu=False) if bi == 0 else y
            y = g.op("Relu", [g.op("Add", [t, sc])])
            cin = width * 4
    y = g.op("Flatten", [g.op("GlobalAveragePool", [y])], axis=1)
    w = g.inp("fc_w", [1000, 2048], ("he", 2048)); b = g.inp("fc_b", [1000], ("normal", 0.01))
    return g, [(g.op("Gemm", [y, w, b], transB=1), [batch, 1000])]


def bert(batch, seq, layers, hid=768, heads=12, ffn=3072):
    g = G(); dh = hid // heads
    x = g.inp("x", [batch, seq, hid], ("normal", 1.0))
    shp_split = g.const(np.array([batch, seq, heads, dh], np.int64), "shape_split")
    shp_merge = g.const(np.array([batch, seq, hid], np.int64), "shape_merge")
    scale = g.const(np.array(1.0 / np.sqrt(dh), F32), "scale")
    half = g.const(np.array(0.5, F32), "half"); one = g.const(np.array(1.0, F32), "one")
    rsqrt2 = g.const(np.array(1.0 / np.sqrt(2.0), F32), "rsqrt2")
    def lin(t, p, k, n):
        w = g.inp(p + "_w", [k, n], ("normal", 0.02)); b = g.inp(p + "_b", [n], ("normal", 0.02))
        return g.op("Add", [g.op("MatMul", [t, w]), b])
    def ln(t, p):
        s = g.inp(p + "_g", [hid], ("ones_jitter", 0.02)); b = g.inp(p + "_b", [hid], ("normal", 0.02))
        return g.op("LayerNormalization", [t, s, b], axis=-1, epsilon=1e-12)
    def heads_of(t, perm):
        return g.op("Transpose", [g.op("Reshape", [t, shp_split])], perm=perm)
    for l in range(layers):
        p = f"l{l}_"
        q = heads_of(lin(x, p + "q", hid, hid), [0, 2, 1, 3])
        k = heads_of(lin(x, p + "k", hid, hid), [0, 2, 3, 1])
        v = heads_of(lin(x, p + "v", hid, hid), [0, 2, 1, 3])
        s = g.op("Softmax", [g.op("Mul", [g.op("MatMul", [q, k]), scale])], axis=-1)
        c = g.op("Reshape", [g.op("Transpose", [g.op("MatMul", [s, v])], perm=[0, 2, 1, 3]), shp_merge])
        x = ln(g.op("Add", [lin(c, p + "o", hid, hid), x]), p + "ln1")
        h = lin(x, p + "ff1", hid, ffn)
        h = g.op("Mul", [g.op("Mul", [h, half]),
                         g.op("Add", [g.op("Erf", [g.op("Mul", [h, rsqrt2])]), one])])
        x = ln(g.op("Add", [lin(h, p + "ff2", ffn, hid), x]), p + "ln2")
    return g, [(x, [batch, seq, hid])]


def matmul_mnk(m, n, k):
    g = G()
    a = g.inp("A", [m, k], ("normal", 1.0)); b = g.inp("B", [k, n], ("normal", 0.05))
    return g, [(g.op("MatMul", [a, b]), [m, n])]


def ffn_chain(layers, shared, m=1024, hid=768, ffn=3072):
    """`layers` x (x @ W1 -> @ W2), no bias or activation: bert-base's FFN matmuls alone, with
    distinct weights per layer (read from DRAM, as in the model) or one pair shared by all."""
    g = G()
    x = g.inp("x", [m, hid], ("normal", 1.0))
    ws = {}
    for l in range(layers):
        p = "" if shared else f"l{l}_"
        for n, shp in (("w1", [hid, ffn]), ("w2", [ffn, hid])):
            if p + n not in ws:
                ws[p + n] = g.inp(p + n, shp, ("normal", 1.0 / np.sqrt(shp[0])))
        x = g.op("MatMul", [g.op("MatMul", [x, ws[p + "w1"]]), ws[p + "w2"]])
    return g, [(x, [m, hid])]


def models(small):
    if small:
        return {"matmul64": lambda: matmul(64), "resnet50_s32_b1": lambda: resnet50(1, 32),
                "resnet50_s32_b2": lambda: resnet50(2, 32), "bert_l2_s16_b1": lambda: bert(1, 16, 2)}
    return {"matmul4096": lambda: matmul(4096), "resnet50_b32": lambda: resnet50(32, 224),
            "resnet50_b1": lambda: resnet50(1, 224), "bert_base_b8": lambda: bert(8, 128, 12),
            # bert-base b8's linear layers alone (M = batch x seq): QKV/out, FFN1, FFN2
            "mm_qkv": lambda: matmul_mnk(1024, 768, 768), "mm_ffn1": lambda: matmul_mnk(1024, 3072, 768),
            "mm_ffn2": lambda: matmul_mnk(1024, 768, 3072),
            "ffn_cold": lambda: ffn_chain(12, False), "ffn_warm": lambda: ffn_chain(12, True)}


# real models: NAME -> (SOURCE stem, batch)
REAL = {f"{src}_b{b}": (src, b) for src in ("squeezenet1_1", "mobilenet_v2") for b in (1, 32)}
REAL_INPUT = ("input", 3, 224, 224)


def find_source(src, dirs):
    here = os.path.dirname(os.path.abspath(__file__))
    for d in list(dirs) + [os.path.join(here, "..", "..", "..", "shared", "models")]:
        if d and os.path.isfile(os.path.join(d, src + ".onnx")):
            return os.path.join(d, src + ".onnx")
    raise SystemExit(f"gen.py: {src}.onnx not found in {[d for d in dirs if d]} or ../shared/models "
                     f"(prepare.sh BAKED=1 copies it into the folder; or pass --models-dir)")


def write_real(src_path, batch, f16, path):
    """SOURCE.onnx at batch `batch`, and for f16 every float32 tensor as float16."""
    import onnx
    from onnx import TensorProto, numpy_helper
    m = onnx.load(src_path); g = m.graph
    del g.value_info[:]  # intermediate shapes pin batch 1; kiln infers them
    FL, HF = TensorProto.FLOAT, TensorProto.FLOAT16
    def half_tensor(t):
        if t.data_type == FL:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for v in list(g.input) + list(g.output):
        tt = v.type.tensor_type
        if tt.shape.dim and tt.shape.dim[0].HasField("dim_value"):
            tt.shape.dim[0].dim_value = batch
        if f16 and tt.elem_type == FL:
            tt.elem_type = HF
    inits = {t.name for t in g.initializer}
    for v in list(g.input):  # old exports list initializers as inputs too
        if v.name in inits and f16 and v.type.tensor_type.elem_type == FL:
            v.type.tensor_type.elem_type = HF
    for n in g.node:
        if n.op_type == "Reshape":
            raise SystemExit(f"gen.py: {src_path} has a Reshape ({n.name}): batch rewrite not supported")
        if not f16:
            continue
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value":
                half_tensor(a.t)
            elif n.op_type in ("Constant", "ConstantOfShape") and a.name in ("value_float", "value_floats"):
                raise SystemExit(f"gen.py: {n.op_type} {a.name} not converted to float16")
            elif n.op_type == "ConstantOfShape" and a.name == "value":
                half_tensor(a.t)
            elif n.op_type == "Cast" and a.name == "to" and a.i == FL:
                a.i = HF
    if f16:
        for t in g.initializer:
            half_tensor(t)
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return len(g.node)


def make_array(model, name, shape, init):
    rng = np.random.default_rng(zlib.crc32(f"{model}/{name}".encode()))
    kind, a = init
    z = rng.standard_normal(shape, dtype=F32)
    if kind == "he":  # He init, halved so the residual stream stays O(1) without BatchNorm
        return z * F32(np.sqrt(2.0 / a) * 0.5)
    if kind == "ones_jitter":
        return F32(1) + z * F32(a)
    return z * F32(a)


DATA_INPUTS = {"x", "A", "B"}


def half_if(a, f16):
    """f16 models: every float array (weights, inputs, constants) as float16."""
    a = np.asarray(a)
    return a.astype(np.float16) if f16 and a.dtype == F32 else a


def write_onnx(name, g, outs, path, baked=False, f16=False):
    import onnx
    from onnx import helper, TensorProto, numpy_helper
    ft = TensorProto.FLOAT16 if f16 else TensorProto.FLOAT
    nodes = [helper.make_node(t, i, o, **a) for t, i, o, a in g.nodes]
    ins = [helper.make_tensor_value_info(n, ft, s) for n, s, _ in g.inputs
           if not baked or n in DATA_INPUTS]
    outv = [helper.make_tensor_value_info(o, ft, s) for o, s in outs]
    inits = [numpy_helper.from_array(half_if(a, f16), n) for n, a in g.consts]
    if baked:  # the same seeded weights as --npy writes, stored as initializers
        inits += [numpy_helper.from_array(half_if(make_array(name, n, s, i), f16), n)
                  for n, s, i in g.inputs if n not in DATA_INPUTS]
    graph = helper.make_graph(nodes, name, ins, outv, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kiln-bench")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx"); ap.add_argument("--npy"); ap.add_argument("--small", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--models-dir", default="",
                    help="where SOURCE.onnx of the real models is (default: the output dir, "
                         "then ../shared/models of the checkout)")
    ap.add_argument("--f16", action="store_true",
                    help="also write NAME_f16: the same model (same seeded values, rounded) in "
                         "float16, weights, inputs and outputs")
    ap.add_argument("--baked", action="store_true",
                    help="weights as initializers (too big to carry at full size; for compiling "
                         "on the GPU machine with a carried kiln, see measuring.md)")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    variants = [(n, fn, False) for n, fn in models(a.small).items()]
    if a.f16:
        variants += [(n + "_f16", fn, True) for n, fn in models(a.small).items()]
    if a.baked and not a.small:  # the real models
        variants += [(n, None, False) for n in REAL]
        if a.f16:
            variants += [(n + "_f16", None, True) for n in REAL]
    for name, fn, f16 in variants:
        if only and name not in only:
            continue
        if fn is None:
            src, batch = REAL[name[:-4] if f16 else name]
            if a.onnx:
                os.makedirs(a.onnx, exist_ok=True)
                sp = find_source(src, [a.models_dir, a.onnx])
                k = write_real(sp, batch, f16, os.path.join(a.onnx, name + ".onnx"))
                print(f"{name}: {k} nodes, from {sp}, batch {batch}{', float16' if f16 else ''}")
            if a.npy:
                os.makedirs(a.npy, exist_ok=True)
                n, *chw = REAL_INPUT
                np.save(os.path.join(a.npy, f"{name}.in.{n}.npy"),
                        half_if(make_array(name[:-4] if f16 else name, n, [batch] + chw, ("normal", 1.0)), f16))
            continue
        g, outs = fn()
        seed = name[:-4] if f16 else name  # the f32 model's values
        if a.onnx:
            os.makedirs(a.onnx, exist_ok=True)
            write_onnx(seed, g, outs, os.path.join(a.onnx, name + ".onnx"), a.baked, f16)
            print(f"{name}: {len(g.nodes)} nodes, {len(g.inputs)} inputs, "
                  f"{sum(int(np.prod(s)) for _, s, _ in g.inputs) / 1e6:.1f} M input floats")
        if a.npy:
            os.makedirs(a.npy, exist_ok=True)
            for n, s, init in g.inputs:
                if a.baked and n not in DATA_INPUTS:
                    continue
                np.save(os.path.join(a.npy, f"{name}.in.{n}.npy"),
                        half_if(make_array(seed, n, s, init), f16))


if __name__ == "__main__":
    main()
