#!/usr/bin/env python3
"""bert-base's row reductions as one model, with seeded inputs (no numpy or onnx needed):
softmax over attention rows (12 heads x 128 queries, rows of 128) and layer norm over 128
tokens of 768. Writes rows.onnx, rows.in.x.npy and rows.in.y.npy to the current folder.
  python3 bench/rows/gen.py   (any folder; the ONNX writer is tests/kir/Inputs/make_rows_onnx.py)"""
import os
import random
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "kir", "Inputs"))
from make_rows_onnx import attr_int, field, initializer, intf, node, s, value_info  # noqa: E402

SM = (1536, 128)  # softmax rows x length
LN = (128, 768)   # layer-norm rows x length


def npy(path, shape, seed):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d," % d for d in shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    rnd = random.Random(seed)
    n = shape[0] * shape[1]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % n, *[rnd.gauss(0, 2) for _ in range(n)]))


def main():
    graph = b"".join([
        field(1, node("Softmax", ["x"], ["sm"], [attr_int("axis", -1)])),
        field(1, node("LayerNormalization", ["y", "gamma", "beta"], ["ln"],
                      [attr_int("axis", -1)])),
        field(2, s("rows")),
        field(5, initializer("gamma", [1.0 + 0.001 * i for i in range(LN[1])])),
        field(5, initializer("beta", [0.01 * i for i in range(LN[1])])),
        field(11, value_info("x", list(SM))), field(11, value_info("y", list(LN))),
        field(12, value_info("sm", list(SM))), field(12, value_info("ln", list(LN))),
    ])
    with open("rows.onnx", "wb") as f:
        f.write(intf(1, 8) + field(8, field(1, b"") + intf(2, 18)) + field(7, graph))
    npy("rows.in.x.npy", SM, 1)
    npy("rows.in.y.npy", LN, 2)


if __name__ == "__main__":
    main()
