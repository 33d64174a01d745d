# Writes the tiny narrow-dtype ONNX models of narrow.test (python3-onnx 1.12 has no names for
# these dtypes, so they are given by number: 17 FLOAT8E4M3FN, 22 INT4; 1 FLOAT, 10 FLOAT16).
import sys
from onnx import helper
out = sys.argv[1]


def save(file, name, nodes, inputs, outputs, initializer=()):
    """An opset-21 model of `nodes`; inputs and outputs as (name, elem type, shape)."""
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs],
                          initializer=list(initializer))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 8
    open(out + "/" + file, "wb").write(m.SerializeToString())


scale = helper.make_tensor("s", 1, [], [2.0])
# Cast f32 -> float8e4m3fn (17, saturate 0) -> f32
save("cast_f8.onnx", "narrow_cast",
     [helper.make_node("Cast", ["x"], ["y"], to=17, saturate=0),
      helper.make_node("Cast", ["y"], ["z"], to=1)],
     [("x", 1, [5])], [("y", 17, [5]), ("z", 1, [5])])
# DequantizeLinear of an int4 input, scale 2
save("dq_i4.onnx", "narrow_dq", [helper.make_node("DequantizeLinear", ["q", "s"], ["y"])],
     [("q", 22, [3])], [("y", 1, [3])], [scale])
# Cast f32 -> int4 (22): wraps like any narrowing integer cast
save("cast_i4.onnx", "narrow_cast_i4", [helper.make_node("Cast", ["x"], ["y"], to=22)],
     [("x", 1, [5])], [("y", 22, [5])])
# Neg of an int4: the reference wraps; a compiled device has no 4-bit arithmetic
save("neg_i4.onnx", "narrow_neg", [helper.make_node("Neg", ["q"], ["y"])],
     [("q", 22, [3])], [("y", 22, [3])])
# DequantizeLinear of a float8e4m3fn (17) input, scale 2, then Cast of it to float16
save("dq_f8.onnx", "narrow_dq_f8",
     [helper.make_node("DequantizeLinear", ["q", "s"], ["y"]),
      helper.make_node("Cast", ["q"], ["h"], to=10)],
     [("q", 17, [3])], [("y", 1, [3]), ("h", 10, [3])], [scale])
