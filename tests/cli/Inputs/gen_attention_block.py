# Writes attention_block.onnx (next to this script, or into argv[1]): a small attention block in
# float32 for precision.test, MatMul + Softmax + LayerNormalization:
#   q = x Wq + bq, k = x Wk, v = x Wv
#   p = Softmax(q k^T * 1/sqrt(32))        (axis -1)
#   y = LayerNormalization(p v + x) * g + b (axis -1, epsilon 1e-5)
# x: [2, 16, 32], y: [2, 16, 32]. Weights seeded (numpy, seed 12), opset 17, IR version 8.
# Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(12)
D = 32


def weight(name, *shape, scale=1.0):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


inits = [weight("Wq", D, D, scale=D ** -0.5), weight("bq", D, scale=0.1),
         weight("Wk", D, D, scale=D ** -0.5), weight("Wv", D, D, scale=D ** -0.5),
         numpy_helper.from_array(np.array(D ** -0.5, np.float32), "scale"),
         weight("g", D, scale=0.2), weight("b", D, scale=0.1)]
inits[5].CopyFrom(numpy_helper.from_array(1.0 + numpy_helper.to_array(inits[5]), "g"))
nodes = [
    helper.make_node("MatMul", ["x", "Wq"], ["q0"], name="q_proj"),
    helper.make_node("Add", ["q0", "bq"], ["q"], name="q_bias"),
    helper.make_node("MatMul", ["x", "Wk"], ["k"], name="k_proj"),
    helper.make_node("MatMul", ["x", "Wv"], ["v"], name="v_proj"),
    helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="k_t"),
    helper.make_node("MatMul", ["q", "kt"], ["s0"], name="scores"),
    helper.make_node("Mul", ["s0", "scale"], ["s"], name="scaled"),
    helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="softmax"),
    helper.make_node("MatMul", ["p", "v"], ["a"], name="attend"),
    helper.make_node("Add", ["a", "x"], ["r"], name="residual"),
    helper.make_node("LayerNormalization", ["r", "g", "b"], ["y"], axis=-1, epsilon=1e-5,
                     name="norm"),
]
g = helper.make_graph(nodes, "attention_block",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, D])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16, D])],
                      initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
with open(os.path.join(out, "attention_block.onnx"), "wb") as f:
    f.write(m.SerializeToString())
