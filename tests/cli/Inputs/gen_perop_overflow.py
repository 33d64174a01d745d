# Writes perop_overflow.onnx and perop_conv_bn.onnx (below) next to this script, or into
# argv[1], for perop.test. perop_overflow.onnx: a model whose f32 values fit float32 but not
# float16, so that `kiln validate --per-op --precision fp16` has a real first divergence to
# find (no testing hook):
#   h = x W1 (embed), a = Relu(h) (act), b = a W2 (blowup: W2 and b ~ 1e5, beyond f16's
#   65504: in f16 W2 holds infinities, and b gets infinities and NaN (0 * inf)),
#   y = b / 1e5 (shrink; kept in f32 by --precision fp16, but it reads the overflowed b),
#   q = QuantizeLinear(x, 0.02, 128) (quant, uint8), dq = DequantizeLinear(q, 0.02, 128)
#   (dequant): per-op shows their errors in quantisation steps.
# x: [4, 16]; outputs y [4, 8], dq [4, 16]. Weights seeded (numpy, seed 14), opset 17.
# Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(14)
inits = [
    numpy_helper.from_array((rng.standard_normal((16, 16)) * 0.25).astype(np.float32), "W1"),
    numpy_helper.from_array((rng.standard_normal((16, 8)) * 1e5).astype(np.float32), "W2"),
    numpy_helper.from_array(np.array(1e5, np.float32), "k"),
    numpy_helper.from_array(np.array(0.02, np.float32), "s"),
    numpy_helper.from_array(np.array(128, np.uint8), "zp"),
]
nodes = [
    helper.make_node("MatMul", ["x", "W1"], ["h"], name="embed"),
    helper.make_node("Relu", ["h"], ["a"], name="act"),
    helper.make_node("MatMul", ["a", "W2"], ["b"], name="blowup"),
    helper.make_node("Div", ["b", "k"], ["y"], name="shrink"),
    helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="quant"),
    helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["dq"], name="dequant"),
]
g = helper.make_graph(nodes, "perop_overflow",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
                       helper.make_tensor_value_info("dq", TensorProto.FLOAT, [4, 16])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(out, "perop_overflow.onnx"), "wb") as f:
    f.write(m.SerializeToString())

# perop_conv_bn.onnx: Conv (conv) -> BatchNormalization (bn) -> Relu (relu), x: [1, 2, 5, 5].
# fold-batch-norm folds bn into conv's weights: the folded conv computes bn's output, and
# --per-op must compare it with bn's reference value, not conv's.
inits = [
    numpy_helper.from_array((rng.standard_normal((3, 2, 3, 3)) * 0.5).astype(np.float32), "Wc"),
    numpy_helper.from_array(rng.uniform(0.5, 2, 3).astype(np.float32), "gamma"),
    numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "beta"),
    numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "mean"),
    numpy_helper.from_array(rng.uniform(0.5, 2, 3).astype(np.float32), "var"),
]
nodes = [
    helper.make_node("Conv", ["x", "Wc"], ["c"], pads=[1, 1, 1, 1], name="conv"),
    helper.make_node("BatchNormalization", ["c", "gamma", "beta", "mean", "var"], ["n"],
                     name="bn"),
    helper.make_node("Relu", ["n"], ["y"], name="relu"),
]
g = helper.make_graph(nodes, "perop_conv_bn",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 5, 5])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(out, "perop_conv_bn.onnx"), "wb") as f:
    f.write(m.SerializeToString())
