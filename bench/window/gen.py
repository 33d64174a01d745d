#!/usr/bin/env python3
"""Window microbenchmarks with seeded inputs (no numpy or onnx needed). Writes to the current
folder:
  dw.onnx    mobilenet_v2's depthwise shapes: x [1, 144, 56, 56] -> 3x3 pads 1 stride 1 (+ bias,
             Relu) and 3x3 pads 1 stride 2
  pool.onnx  squeezenet1_1's max pool (y [1, 64, 111, 111] -> 3x3 stride 2 ceil_mode) and an
             average pool 3x3 pads 1 over x
  lp.onnx    LpPool over x: p = 2, 3x3 pads 1; p = 1, 3x3 stride 2
and dw.in.x.npy, pool.in.x.npy, pool.in.y.npy, lp.in.x.npy.
  python3 bench/window/gen.py   (any folder; the ONNX writers are in tests/kir/Inputs/)"""
import os
import random
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "kir", "Inputs"))
from make_rows_onnx import attr_int, field, intf, node, s, value_info  # noqa: E402
from make_windows_onnx import attr_ints, initializer  # noqa: E402

X = [1, 144, 56, 56]
Y = [1, 64, 111, 111]


def npy(path, shape, seed):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d," % d for d in shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    rnd = random.Random(seed)
    n = 1
    for d in shape:
        n *= d
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % n, *[rnd.gauss(0, 1) for _ in range(n)]))


def model(path, nodes, inits, ins, outs):
    graph = b"".join([field(1, n) for n in nodes] + [field(2, s("window"))] +
                     [field(5, i) for i in inits] +
                     [field(11, value_info(n, d)) for n, d in ins] +
                     [field(12, value_info(n, d)) for n, d in outs])
    with open(path, "wb") as f:
        f.write(intf(1, 8) + field(8, field(1, b"") + intf(2, 18)) + field(7, graph))


def main():
    rnd = random.Random(5)
    c = X[1]
    k3 = [3, 3]
    model("dw.onnx", [
        node("Conv", ["x", "w", "b"], ["c1"], [attr_int("group", c), attr_ints("kernel_shape", k3),
                                               attr_ints("pads", [1, 1, 1, 1])]),
        node("Relu", ["c1"], ["dw1"]),
        node("Conv", ["x", "w", "b"], ["dw2"], [attr_int("group", c), attr_ints("kernel_shape", k3),
                                                attr_ints("pads", [1, 1, 1, 1]),
                                                attr_ints("strides", [2, 2])]),
    ], [initializer("w", [rnd.uniform(-0.5, 0.5) for _ in range(c * 9)], [c, 1, 3, 3]),
        initializer("b", [0.01 * i for i in range(c)], [c])],
        [("x", X)], [("dw1", X), ("dw2", [1, c, 28, 28])])
    model("pool.onnx", [
        node("MaxPool", ["y"], ["mp"], [attr_ints("kernel_shape", k3), attr_ints("strides", [2, 2]),
                                        attr_int("ceil_mode", 1)]),
        node("AveragePool", ["x"], ["ap"], [attr_ints("kernel_shape", k3),
                                            attr_ints("pads", [1, 1, 1, 1])]),
    ], [], [("x", X), ("y", Y)], [("mp", [1, 64, 55, 55]), ("ap", X)])
    model("lp.onnx", [
        node("LpPool", ["x"], ["lp2"], [attr_ints("kernel_shape", k3), attr_ints("pads", [1, 1, 1, 1]),
                                        attr_int("p", 2)]),
        node("LpPool", ["x"], ["lp1"], [attr_ints("kernel_shape", k3), attr_ints("strides", [2, 2]),
                                        attr_int("p", 1)]),
    ], [], [("x", X)], [("lp2", X), ("lp1", [1, c, 27, 27])])
    npy("dw.in.x.npy", X, 1)
    npy("lp.in.x.npy", X, 1)
    npy("pool.in.x.npy", X, 1)
    npy("pool.in.y.npy", Y, 2)


if __name__ == "__main__":
    main()
