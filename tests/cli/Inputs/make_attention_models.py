#!/usr/bin/env python3
"""Writes the attention models of attention.test next to this script (onnx + numpy; every
tensor a graph input, so the files are small):

attn_mask.onnx    the classic export: MatMul(q, Transpose(k, 0,1,3,2)) / sqrt(20) + mask ->
                  Softmax(-1) -> MatMul(v); q [2, 3, 37, 20], k [2, 3, 45, 20], v [2, 3, 45, 12],
                  mask [2, 1, 1, 45]: sequence lengths not multiples of a key block, d != dv.
attn_bert.onnx    no mask, Mul by 0.125, k^T a Transpose(0, 2, 3, 1) of [1, 50, 4, 64] (bert's
                  head split), Softmax(axis 3), the context merged back by Transpose(0, 2, 1, 3)
                  + Reshape to [1, 50, 256].
attn_torch.onnx   PyTorch's scaled_dot_product_attention export: q and k^T each scaled by
                  sqrt(1/sqrt(128)), a bool mask turned additive by Where(keep, 0, -inf),
                  Where(IsNaN(p), 0, p) after the softmax; head size 128, 40 positions.
attn_f16.onnx     attn_mask.onnx in float16.
attn_shared.onnx  attn_mask.onnx with the probabilities also a graph output: not fused.
attn_long.onnx    attn_torch.onnx with 3 queries of 16,000 keys: more than one workgroup's
                  loops may walk on llvmpipe, so the keys are split over workgroups and a
                  second kernel combines the splits.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(file, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, file[:-5],
                          [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    with open(os.path.join(HERE, file), "wb") as f:
        f.write(m.SerializeToString())


def classic(file, et, np_t, shared=False):
    b, h, sq, skv, d, dv = 2, 3, 37, 45, 20, 12
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "c"], ["t"]),
             helper.make_node("Add", ["t", "mask"], ["u"]),
             helper.make_node("Softmax", ["u"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    outputs = [("y", et, [b, h, sq, dv])] + ([("p", et, [b, h, sq, skv])] if shared else [])
    save(file, nodes,
         [("q", et, [b, h, sq, d]), ("k", et, [b, h, skv, d]), ("v", et, [b, h, skv, dv]),
          ("mask", et, [b, 1, 1, skv])],
         outputs, [("c", np.array(np.sqrt(d), np_t))])


def bert():
    n, h, d = 50, 4, 64
    nodes = [helper.make_node("Transpose", ["kp"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["t"]),
             helper.make_node("Softmax", ["t"], ["p"], axis=3),
             helper.make_node("MatMul", ["p", "v"], ["ctx"]),
             helper.make_node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["ctx_t", "merge"], ["y"])]
    f = TensorProto.FLOAT
    save("attn_bert.onnx", nodes,
         [("q", f, [1, h, n, d]), ("kp", f, [1, n, h, d]), ("v", f, [1, h, n, d])],
         [("y", f, [1, n, h * d])],
         [("c", np.array(0.125, np.float32)), ("merge", np.array([1, n, h * d], np.int64))])


def torch_sdpa(file="attn_torch.onnx", n=40, skv=40, h=2, d=128):
    r = np.float32(np.sqrt(1 / np.sqrt(d)))
    nodes = [helper.make_node("Where", ["keep", "zero", "ninf"], ["mask"]),
             helper.make_node("Transpose", ["kp"], ["kt"], perm=[0, 2, 3, 1]),
             helper.make_node("Mul", ["q", "r"], ["qs"]),
             helper.make_node("Mul", ["kt", "r"], ["ks"]),
             helper.make_node("MatMul", ["qs", "ks"], ["s"]),
             helper.make_node("Add", ["s", "mask"], ["u"]),
             helper.make_node("Softmax", ["u"], ["p"], axis=-1),
             helper.make_node("IsNaN", ["p"], ["nan"]),
             helper.make_node("Where", ["nan", "zero", "p"], ["pz"]),
             helper.make_node("MatMul", ["pz", "v"], ["y"])]
    f = TensorProto.FLOAT
    save(file, nodes,
         [("q", f, [1, h, n, d]), ("kp", f, [1, skv, h, d]), ("v", f, [1, h, skv, d]),
          ("keep", TensorProto.BOOL, [1, 1, n, skv])],
         [("y", f, [1, h, n, d])],
         [("r", np.array(r, np.float32)), ("zero", np.array([0.0], np.float32)),
          ("ninf", np.array([-np.inf], np.float32))])


if __name__ == "__main__":
    classic("attn_mask.onnx", TensorProto.FLOAT, np.float32)
    classic("attn_f16.onnx", TensorProto.FLOAT16, np.float16)
    classic("attn_shared.onnx", TensorProto.FLOAT, np.float32, shared=True)
    bert()
    torch_sdpa()
    torch_sdpa("attn_long.onnx", n=3, skv=16000, h=1)
