#!/usr/bin/env python3
"""Writes parallel.onnx (next to this script) for parallel_schedules.test without the onnx
package: x [8, 64, 65] + y [65] (broadcast; 33,280 elements, above lavapipe's blocked row) ->
Relu (fused into the add's store); Transpose of z [7, 33] (perm 1, 0; 231 elements, below the
row); ReduceSum of x over axis 1 (one invocation per output, looping over the row: a kernel no
parallel strategy takes). Protobuf wire format by hand (make_rows_onnx.py)."""
import struct

from make_rows_onnx import attr_int, field, intf, node, s, value_info, write_model


def attr_ints(name, vs):  # AttributeProto type INTS (7)
    return field(1, s(name)) + b"".join(intf(8, v) for v in vs) + intf(20, 7)


def main():
    graph = b"".join([
        field(1, node("Add", ["x", "y"], ["sum"])),
        field(1, node("Relu", ["sum"], ["act"])),
        field(1, node("Transpose", ["z"], ["zt"], [attr_ints("perm", [1, 0])])),
        field(1, node("ReduceSum", ["x", "axes"], ["red"], [attr_int("keepdims", 0)])),
        field(2, s("parallel")),
        field(5, intf(1, 1) + intf(2, 7) + field(8, s("axes")) + field(9, struct.pack("<q", 1))),
        field(11, value_info("x", [8, 64, 65])),
        field(11, value_info("y", [65])),
        field(11, value_info("z", [7, 33])),
        field(12, value_info("act", [8, 64, 65])),
        field(12, value_info("zt", [33, 7])),
        field(12, value_info("red", [8, 65])),
    ])
    write_model(graph, 18, "parallel.onnx")


if __name__ == "__main__":
    main()
