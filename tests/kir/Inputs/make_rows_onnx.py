#!/usr/bin/env python3
"""Writes rows.onnx (next to this script) for row_reduction_schedules.test without the onnx
package: x [6, 128] -> Softmax, LayerNormalization (scale, bias), ReduceMean over the rows;
z [16, 8] -> Softmax (rows too short for any table row). Protobuf wire format by hand."""
import os
import struct


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # length-delimited
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def intf(num, v):
    return varint(num << 3) + varint(v)


def s(x):
    return x.encode()


def value_info(name, dims):  # ValueInfoProto: float tensor of static shape
    shape = b"".join(field(1, intf(1, d)) for d in dims)
    tensor_type = intf(1, 1) + field(2, shape)
    return field(1, s(name)) + field(2, field(1, tensor_type))


def write_model(graph, opset, filename):  # ModelProto (IR version 8) next to this script
    model = intf(1, 8) + field(8, field(1, b"") + intf(2, opset)) + field(7, graph)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), filename), "wb") as f:
        f.write(model)


def attr_int(name, v):  # AttributeProto type INT (2)
    return field(1, s(name)) + intf(3, v & ((1 << 64) - 1)) + intf(20, 2)


def node(op, ins, outs, attrs=()):
    return (b"".join(field(1, s(i)) for i in ins) + b"".join(field(2, s(o)) for o in outs) +
            field(3, s(outs[0] + "_node")) + field(4, s(op)) +
            b"".join(field(5, a) for a in attrs))


def initializer(name, values):  # TensorProto, float, raw data
    raw = struct.pack("<%df" % len(values), *values)
    return intf(1, len(values)) + intf(2, 1) + field(8, s(name)) + field(9, raw)


def main():
    n = 128
    graph = b"".join([
        field(1, node("Softmax", ["x"], ["sm"], [attr_int("axis", -1)])),
        field(1, node("LayerNormalization", ["x", "gamma", "beta"], ["ln"],
                      [attr_int("axis", -1)])),
        field(1, node("ReduceMean", ["x", "axes"], ["mean"], [attr_int("keepdims", 0)])),
        field(1, node("Softmax", ["z"], ["short"], [attr_int("axis", -1)])),
        field(2, s("rows")),
        field(5, initializer("gamma", [1.0 + 0.01 * i for i in range(n)])),
        field(5, initializer("beta", [0.001 * i for i in range(n)])),
        field(5, intf(1, 1) + intf(2, 7) + field(8, s("axes")) + field(9, struct.pack("<q", 1))),
        field(11, value_info("x", [6, n])),
        field(11, value_info("z", [16, 8])),
        field(12, value_info("sm", [6, n])),
        field(12, value_info("ln", [6, n])),
        field(12, value_info("mean", [6])),
        field(12, value_info("short", [16, 8])),
    ])
    write_model(graph, 18, "rows.onnx")


if __name__ == "__main__":
    main()
