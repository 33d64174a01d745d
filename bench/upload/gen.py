"""Writes upload.onnx: y = x[0:1] for x f32[N] (N = 16777216: 64 MiB). The model's work is one
element, so a call's host time is the input's upload plus a fixed cost (bench/upload/run.sh).
  gen.py OUT.onnx [N] [add]   # add: y = x + x instead (tests/runtime/large_io.sh)"""
import sys

import onnx
from onnx import TensorProto, helper

n = int(sys.argv[2]) if len(sys.argv) > 2 else 16777216
add = len(sys.argv) > 3 and sys.argv[3] == "add"
starts = helper.make_tensor("starts", TensorProto.INT64, [1], [0])
ends = helper.make_tensor("ends", TensorProto.INT64, [1], [1])
if add:
    node = helper.make_node("Add", ["x", "x"], ["y"])
else:
    node = helper.make_node("Slice", ["x", "starts", "ends"], ["y"])
graph = helper.make_graph([node], "upload",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n if add else 1])],
                          [] if add else [starts, ends])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
