#!/usr/bin/env python3
"""Parallel-kernel microbenchmarks with seeded inputs (no numpy or onnx needed), one op each
over x [1, 144, H, H] (H = 56 by default: 451,584 elements, mobilenet_v2's widest activation).
Writes to the current folder:
  add.onnx        x + y, y [1, 144, 1, 1] (broadcast), Relu fused into the store
  transpose.onnx  x transposed to [1, H, H, 144]
  concat.onnx     x and z [1, 16, H, H] along the channels (two copies into slices)
  gather.onnx     channels [143, 141, ..., 1] of x (72 indices, axis 1)
and NAME.in.x.npy (and .in.y / .in.z).
  python3 bench/parallel/gen.py [H]   (any folder; the ONNX writers are in tests/kir/Inputs/ and
                                       bench/window/gen.py)"""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "kir", "Inputs"))
# first on the path, so that `gen` is the window benchmarks' writer, not this script
sys.path.insert(0, os.path.join(here, "..", "window"))
from gen import model, npy  # noqa: E402
from make_parallel_onnx import attr_ints  # noqa: E402
from make_rows_onnx import attr_int, field, intf, node, s  # noqa: E402

def int64_initializer(name, values):  # TensorProto, int64, raw data, 1-D
    raw = struct.pack("<%dq" % len(values), *values)
    return intf(1, len(values)) + intf(2, 7) + field(8, s(name)) + field(9, raw)


def main():
    h = int(sys.argv[1]) if len(sys.argv) > 1 else 56
    X = [1, 144, h, h]
    npy("add.in.x.npy", X, 1)
    npy("add.in.y.npy", [1, X[1], 1, 1], 2)
    model("add.onnx", [node("Add", ["x", "y"], ["sum"]), node("Relu", ["sum"], ["out"])], [],
          [("x", X), ("y", [1, X[1], 1, 1])], [("out", X)])
    npy("transpose.in.x.npy", X, 1)
    model("transpose.onnx", [node("Transpose", ["x"], ["out"], [attr_ints("perm", [0, 2, 3, 1])])],
          [], [("x", X)], [("out", [1, h, h, X[1]])])
    npy("concat.in.x.npy", X, 1)
    npy("concat.in.z.npy", [1, 16, h, h], 3)
    model("concat.onnx", [node("Concat", ["x", "z"], ["out"], [attr_int("axis", 1)])], [],
          [("x", X), ("z", [1, 16, h, h])], [("out", [1, X[1] + 16, h, h])])
    npy("gather.in.x.npy", X, 1)
    idx = list(range(X[1] - 1, 0, -2))
    model("gather.onnx", [node("Gather", ["x", "idx"], ["out"], [attr_int("axis", 1)])],
          [int64_initializer("idx", idx)], [("x", X)], [("out", [1, len(idx), h, h])])


if __name__ == "__main__":
    main()
