#!/usr/bin/env python3
"""Writes attention.onnx (next to this script) for transpose_stores.test without the onnx
package: one bert-style attention block, scaled down (batch 2, sequence 8, hidden 32, 4
heads of 8; every weight a graph input): the q / k / v projections with bias, heads split by
Reshape + Transpose (k as 0,2,3,1), softmax of the scaled scores, the context merged back by
Transpose + Reshape, the output projection. Must not fire: y = x @ wm is a graph output and
also feeds a Transpose (output `yt`). Protobuf wire format by hand (make_rows_onnx.py)."""
import struct

from make_rows_onnx import attr_int, field, intf, node, s, value_info, write_model


def attr_ints(name, vs):  # AttributeProto type INTS (7)
    return field(1, s(name)) + b"".join(intf(8, v) for v in vs) + intf(20, 7)


def i64s(name, vs):  # TensorProto, int64, raw data
    return (intf(1, len(vs)) + intf(2, 7) + field(8, s(name)) +
            field(9, struct.pack("<%dq" % len(vs), *vs)))


def f32(name, v):  # a float scalar
    return intf(2, 1) + field(8, s(name)) + field(9, struct.pack("<f", v))


def main():
    b, n, hid, heads = 2, 8, 32, 4
    dh = hid // heads
    nodes, inputs = [], [value_info("x", [b, n, hid])]
    for p, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        inputs += [value_info("w" + p, [hid, hid]), value_info("b" + p, [hid])]
        nodes += [node("MatMul", ["x", "w" + p], [p + "_mm"]),
                  node("Add", [p + "_mm", "b" + p], [p + "_lin"]),
                  node("Reshape", [p + "_lin", "split"], [p + "_split"]),
                  node("Transpose", [p + "_split"], [p], [attr_ints("perm", perm)])]
    inputs += [value_info("wo", [hid, hid]), value_info("bo", [hid]),
               value_info("wm", [hid, hid])]
    nodes += [node("MatMul", ["q", "k"], ["scores"]),
              node("Mul", ["scores", "scale"], ["scaled"]),
              node("Softmax", ["scaled"], ["probs"], [attr_int("axis", -1)]),
              node("MatMul", ["probs", "v"], ["ctx_heads"]),
              node("Transpose", ["ctx_heads"], ["ctx_t"], [attr_ints("perm", [0, 2, 1, 3])]),
              node("Reshape", ["ctx_t", "merge"], ["ctx"]),
              node("MatMul", ["ctx", "wo"], ["o_mm"]),
              node("Add", ["o_mm", "bo"], ["out"]),
              node("MatMul", ["x", "wm"], ["y"]),
              node("Transpose", ["y"], ["yt"], [attr_ints("perm", [0, 2, 1])])]
    graph = b"".join([field(1, nd) for nd in nodes] + [
        field(2, s("attention")),
        field(5, i64s("split", [b, n, heads, dh])),
        field(5, i64s("merge", [b, n, hid])),
        field(5, f32("scale", dh ** -0.5)),
    ] + [field(11, v) for v in inputs] + [
        field(12, value_info("out", [b, n, hid])),
        field(12, value_info("y", [b, n, hid])),
        field(12, value_info("yt", [b, hid, n])),
    ])
    write_model(graph, 17, "attention.onnx")


if __name__ == "__main__":
    main()
