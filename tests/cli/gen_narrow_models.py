# Writes the tiny narrow-dtype ONNX models of narrow.test (python3-onnx 1.12 has no names for
# these dtypes, so they are given by number: 17 FLOAT8E4M3FN, 22 INT4).
import onnx, sys
from onnx import helper, TensorProto
out = sys.argv[1]
# Cast f32 -> float8e4m3fn (17, saturate 0) -> f32
g = helper.make_graph(
    [helper.make_node("Cast", ["x"], ["y"], to=17, saturate=0),
     helper.make_node("Cast", ["y"], ["z"], to=1)],
    "narrow_cast",
    [helper.make_tensor_value_info("x", 1, [5])],
    [helper.make_tensor_value_info("y", 17, [5]), helper.make_tensor_value_info("z", 1, [5])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 8
open(out + "/cast_f8.onnx", "wb").write(m.SerializeToString())
# DequantizeLinear of an int4 input, scale 2
s = helper.make_tensor("s", 1, [], [2.0])
g = helper.make_graph(
    [helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
    "narrow_dq",
    [helper.make_tensor_value_info("q", 22, [3])],
    [helper.make_tensor_value_info("y", 1, [3])], initializer=[s])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 8
open(out + "/dq_i4.onnx", "wb").write(m.SerializeToString())
# Cast f32 -> int4 (22): wraps like any narrowing integer cast
g = helper.make_graph(
    [helper.make_node("Cast", ["x"], ["y"], to=22)],
    "narrow_cast_i4",
    [helper.make_tensor_value_info("x", 1, [5])],
    [helper.make_tensor_value_info("y", 22, [5])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 8
open(out + "/cast_i4.onnx", "wb").write(m.SerializeToString())
# Neg of an int4: the reference wraps; a compiled device has no 4-bit arithmetic
g = helper.make_graph(
    [helper.make_node("Neg", ["q"], ["y"])],
    "narrow_neg",
    [helper.make_tensor_value_info("q", 22, [3])],
    [helper.make_tensor_value_info("y", 22, [3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 8
open(out + "/neg_i4.onnx", "wb").write(m.SerializeToString())
# DequantizeLinear of a float8e4m3fn (17) input, scale 2, then Cast of it to float16
g = helper.make_graph(
    [helper.make_node("DequantizeLinear", ["q", "s"], ["y"]),
     helper.make_node("Cast", ["q"], ["h"], to=10)],
    "narrow_dq_f8",
    [helper.make_tensor_value_info("q", 17, [3])],
    [helper.make_tensor_value_info("y", 1, [3]), helper.make_tensor_value_info("h", 10, [3])],
    initializer=[s])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 8
open(out + "/dq_f8.onnx", "wb").write(m.SerializeToString())
