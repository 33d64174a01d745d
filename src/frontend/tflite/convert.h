// The TFLite -> core op mapping, shared by the importer (model.cpp) and the converter files.
// Converters see one operator through OpCtx; flatbuffers types stay in the .cpp files.
#pragma once

#include "ir/builder.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::tflite_fb {
struct Operator;
}

namespace kiln::tflite_fe {

// What the importer knows about one TFLite tensor.
struct TensorInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::f32; // storage dtype in the file
  bool quantized = false;   // int8/uint8/int16/int32 with scale and zero point
  std::vector<double> scale;
  std::vector<int64_t> zero_point;
  int64_t quant_dim = 0;
  const uint8_t *data = nullptr; // constant data (nullptr when the tensor has none)
  size_t size = 0;
};

// A tensor's value in the graph. Quantised tensors are held as dequantised f32. A rank-4
// value may be held in NCHW order while the model sees NHWC; the other layout is made on
// demand and cached.
struct Held {
  Value *nhwc = nullptr; // the model's layout
  Value *nchw = nullptr; // rank 4 only: dims permuted (0, 3, 1, 2)
};

enum class Act { none, relu, relu_n1_to_1, relu6, tanh, sign_bit };

class Importer;

struct OpCtx {
  Importer *imp = nullptr;
  const tflite_fb::Operator *op = nullptr;
  int index = 0;            // operator index in the subgraph
  int code = 0;             // builtin code
  std::string opname;       // "CONV_2D"
  int version = 1;
  std::vector<int> inputs;  // tensor indices (-1: omitted optional input)
  std::vector<int> outputs;
  Builder *b = nullptr;

  Status error(const std::string &msg) const;
  const TensorInfo &tensor(size_t i) const; // inputs[i]'s info
  const TensorInfo &out_tensor(size_t i) const;
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] >= 0; }
  Status need_inputs(size_t n) const;
  // Input i in the model's layout (float for quantised tensors).
  Result<Value *> in(size_t i);
  // Input i of rank 4 in NCHW order.
  Result<Value *> in_nchw(size_t i);
  // True when input i is held in NCHW (a layout-neutral op can then stay in NCHW).
  bool held_nchw(size_t i) const;
  // Constant input i as integers (shape operands: int32/int64), or an error naming the input.
  Result<std::vector<int64_t>> const_ints(size_t i) const;
  // Sets output i (applies the fused activation first when `act` is given, then the
  // output's quantisation). `nchw` says the value is the NCHW form of a rank-4 tensor.
  Status set_out(size_t i, Value *v, bool nchw = false, Act act = Act::none);

  Result<Value *> op1(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {});
};

Act act_from(int code);
Result<Value *> apply_act(OpCtx &c, Value *v, Act act);
// NHWC <-> NCHW of a rank-4 value (folded when the value is constant).
Result<Value *> to_nchw(Builder &b, Value *v);
Result<Value *> to_nhwc(Builder &b, Value *v);
Result<Value *> transpose(Builder &b, Value *v, std::vector<int64_t> perm);

using ConvertFn = Status (*)(OpCtx &);
// The converter for a builtin code, or nullptr when kiln does not support it.
ConvertFn find_converter(int code);
ConvertFn find_converter_nn(int code);   // convert_nn.cpp
ConvertFn find_converter_misc(int code); // convert_misc.cpp
// "CONV_2D" for a builtin code ("BUILTIN_<n>" for codes this build does not name).
std::string builtin_name(int code);

// TFLite builtin codes kiln converts.
namespace op {
inline constexpr int ADD = 0, AVERAGE_POOL_2D = 1, CONCATENATION = 2, CONV_2D = 3,
                     DEPTHWISE_CONV_2D = 4, DEPTH_TO_SPACE = 5, DEQUANTIZE = 6, FLOOR = 8, FULLY_CONNECTED = 9,
                     LOGISTIC = 14, MAX_POOL_2D = 17, MUL = 18, RELU = 19, RELU_N1_TO_1 = 20,
                     RELU6 = 21, RESHAPE = 22, RESIZE_BILINEAR = 23, SOFTMAX = 25, TANH = 28,
                     CUSTOM = 32, PAD = 34, TRANSPOSE = 39, MEAN = 40, SUB = 41, DIV = 42,
                     SQUEEZE = 43, EXP = 47, PRELU = 54, MAXIMUM = 55, MINIMUM = 57, NEG = 59,
                     PADV2 = 60, TRANSPOSE_CONV = 67, LOG = 73, SUM = 74, SQRT = 75, RSQRT = 76,
                     REDUCE_MAX = 82, RESIZE_NEAREST_NEIGHBOR = 97, LEAKY_RELU = 98, ABS = 101,
                     QUANTIZE = 114, HARD_SWISH = 117, DENSIFY = 124;
}

} // namespace kiln::tflite_fe
