#!/usr/bin/env python3
"""Writes windows.onnx (next to this script) for window_schedules.test without the onnx
package: x [1, 8, 14, 14] -> depthwise Conv 3x3 pads 1 (+ bias, Relu), MaxPool 3x3 stride 2
ceil_mode, AveragePool 3x3 pads 1 count_include_pad, and two windows no strategy takes: a 9x9
MaxPool (81 elements) and a full-width AveragePool [3, 14] (rows of one output)."""
import os
import random
import struct

from make_rows_onnx import attr_int, field, intf, node, s, value_info


def initializer(name, values, dims):  # TensorProto, float, raw data, any dims
    raw = struct.pack("<%df" % len(values), *values)
    return b"".join(intf(1, d) for d in dims) + intf(2, 1) + field(8, s(name)) + field(9, raw)


def attr_ints(name, vs):  # AttributeProto type INTS (7)
    return field(1, s(name)) + b"".join(intf(8, v & ((1 << 64) - 1)) for v in vs) + intf(20, 7)


def main():
    rnd = random.Random(3)
    c = 8
    graph = b"".join([
        field(1, node("Conv", ["x", "w", "b"], ["dwc"],
                      [attr_int("group", c), attr_ints("kernel_shape", [3, 3]),
                       attr_ints("pads", [1, 1, 1, 1])])),
        field(1, node("Relu", ["dwc"], ["dw"])),
        field(1, node("MaxPool", ["x"], ["mp"],
                      [attr_ints("kernel_shape", [3, 3]), attr_ints("strides", [2, 2]),
                       attr_int("ceil_mode", 1)])),
        field(1, node("AveragePool", ["x"], ["ap"],
                      [attr_ints("kernel_shape", [3, 3]), attr_ints("pads", [1, 1, 1, 1]),
                       attr_int("count_include_pad", 1)])),
        field(1, node("MaxPool", ["x"], ["big"], [attr_ints("kernel_shape", [9, 9])])),
        field(1, node("AveragePool", ["x"], ["wide"], [attr_ints("kernel_shape", [3, 14])])),
        field(2, s("windows")),
        field(5, initializer("w", [rnd.uniform(-1, 1) for _ in range(c * 9)], [c, 1, 3, 3])),
        field(5, initializer("b", [0.1 * i for i in range(c)], [c])),
        field(11, value_info("x", [1, c, 14, 14])),
        field(12, value_info("dw", [1, c, 14, 14])),
        field(12, value_info("mp", [1, c, 7, 7])),
        field(12, value_info("ap", [1, c, 14, 14])),
        field(12, value_info("big", [1, c, 6, 6])),
        field(12, value_info("wide", [1, c, 12, 1])),
    ])
    model = intf(1, 8) + field(8, field(1, b"") + intf(2, 18)) + field(7, graph)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "windows.onnx")
    with open(out, "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
