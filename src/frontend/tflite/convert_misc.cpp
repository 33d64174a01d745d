// TFLite elementwise, activation, shape, reduction and quantisation operators. Layout-neutral
// ops (elementwise, concatenation, pad, keep-dims reductions) stay in NCHW when their input is
// held that way, so a chain of convolutions needs no transposes between them.
#include "frontend/tflite/convert.h"
#include "kiln/tflite/tflite_generated.h"

#include <fmt/format.h>

namespace kiln::tflite_fe {

namespace fb = ::kiln::tflite_fb;

namespace {

// NHWC axis -> NCHW axis.
int64_t nchw_axis(int64_t a) { return a == 0 ? 0 : a == 3 ? 1 : a + 1; }

Result<int64_t> norm_axis(OpCtx &c, int64_t a, int64_t rank) {
  if (a < -rank || a >= rank) return c.error(fmt::format("axis {} is out of range for rank {}", a, rank));
  return a < 0 ? a + rank : a;
}

// Operand i for an op computed in NCHW: a rank-4 NCHW value, or a lower-rank value broadcast
// against NHWC reshaped to rank 4 and permuted.
Result<Value *> operand_nchw(OpCtx &c, size_t i) {
  if (c.held_nchw(i)) return c.in_nchw(i);
  KILN_ASSIGN(Value * v, c.in(i));
  if (v->type.rank() > 4) return c.error(fmt::format("input {} has rank above 4", i));
  if (v->type.rank() < 4) {
    Shape s(4 - v->type.rank(), 1);
    s.insert(s.end(), v->type.dims.begin(), v->type.dims.end());
    KILN_ASSIGN(v, c.op1("kiln.reshape", {v, c.b->i64s(s)}));
  }
  return to_nchw(*c.b, v);
}

// Binary elementwise with numpy broadcasting (TFLite's ADD/SUB/MUL/DIV/MAXIMUM/...); computed
// in NCHW when an operand already is and the result has rank 4.
Status binary(OpCtx &c, const char *name, Act act) {
  KILN_TRY(c.need_inputs(2));
  const TensorInfo &out = c.out_tensor(0);
  const bool nchw = out.shape.size() == 4 && (c.held_nchw(0) || c.held_nchw(1));
  Value *a, *b;
  if (nchw) {
    KILN_ASSIGN(a, operand_nchw(c, 0));
    KILN_ASSIGN(b, operand_nchw(c, 1));
  } else {
    KILN_ASSIGN(a, c.in(0));
    KILN_ASSIGN(b, c.in(1));
  }
  if (a->type.dtype != b->type.dtype)
    return c.error(fmt::format("operand dtypes differ ({} and {})", dtype_name(a->type.dtype),
                               dtype_name(b->type.dtype)));
  KILN_ASSIGN(Value * y, c.op1(name, {a, b}));
  return c.set_out(0, y, nchw, act);
}

template <class Opt> Act fused(const Opt *o) { return o ? act_from(static_cast<int>(o->fused_activation_function())) : Act::none; }

Status unary(OpCtx &c, const char *name, AttrMap attrs = {}) {
  KILN_TRY(c.need_inputs(1));
  const bool nchw = c.held_nchw(0);
  Value *x;
  if (nchw) {
    KILN_ASSIGN(x, c.in_nchw(0));
  } else {
    KILN_ASSIGN(x, c.in(0));
  }
  KILN_ASSIGN(Value * y, c.op1(name, {x}, std::move(attrs)));
  return c.set_out(0, y, nchw);
}

Status activation(OpCtx &c, Act act) {
  KILN_TRY(c.need_inputs(1));
  const bool nchw = c.held_nchw(0);
  Value *x;
  if (nchw) {
    KILN_ASSIGN(x, c.in_nchw(0));
  } else {
    KILN_ASSIGN(x, c.in(0));
  }
  return c.set_out(0, x, nchw, act);
}

Status rsqrt(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  KILN_ASSIGN(Value * x, c.in(0));
  KILN_ASSIGN(Value * s, c.op1("kiln.sqrt", {x}));
  KILN_ASSIGN(Value * y, c.op1("kiln.reciprocal", {s}));
  return c.set_out(0, y);
}

Status concatenation(OpCtx &c) {
  const auto *o = c.op->builtin_options_as_ConcatenationOptions();
  if (!o) return c.error("ConcatenationOptions are missing");
  if (c.inputs.empty()) return c.error("has no inputs");
  KILN_TRY(c.need_inputs(c.inputs.size()));
  const int64_t rank = static_cast<int64_t>(c.out_tensor(0).shape.size());
  KILN_ASSIGN(int64_t axis, norm_axis(c, o->axis(), rank));
  bool nchw = false;
  if (rank == 4)
    for (size_t i = 0; i < c.inputs.size(); ++i) nchw = nchw || c.held_nchw(i);
  std::vector<Value *> vs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Value *v;
    if (nchw) {
      KILN_ASSIGN(v, c.in_nchw(i));
    } else {
      KILN_ASSIGN(v, c.in(i));
    }
    vs.push_back(v);
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.concat", vs, {{"axis", nchw ? nchw_axis(axis) : axis}}));
  return c.set_out(0, y, nchw, act_from(static_cast<int>(o->fused_activation_function())));
}

Status reshape(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  KILN_ASSIGN(Value * x, c.in(0));
  // The output tensor's static shape is what the model declares; a shape input or
  // new_shape option must agree with it in element count (checked by kiln.reshape).
  const Shape &s = c.out_tensor(0).shape;
  KILN_ASSIGN(Value * y, c.op1("kiln.reshape", {x, c.b->i64s(s)}));
  return c.set_out(0, y);
}

Status squeeze(OpCtx &c) { return reshape(c); }

Status pad(OpCtx &c, bool v2) {
  KILN_TRY(c.need_inputs(2));
  KILN_ASSIGN(auto p, c.const_ints(1));
  const bool nchw = c.held_nchw(0);
  Value *x;
  if (nchw) {
    KILN_ASSIGN(x, c.in_nchw(0));
  } else {
    KILN_ASSIGN(x, c.in(0));
  }
  const int64_t rank = x->type.rank();
  if (static_cast<int64_t>(p.size()) != 2 * rank)
    return c.error(fmt::format("paddings must be [{}, 2], got {} values", rank, p.size()));
  std::vector<int64_t> pads(2 * rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t to = nchw ? nchw_axis(d) : d;
    if (p[2 * d] < 0 || p[2 * d + 1] < 0 || p[2 * d] > (1 << 24) || p[2 * d + 1] > (1 << 24))
      return c.error("paddings must be in [0, 2^24]");
    pads[to] = p[2 * d];
    pads[rank + to] = p[2 * d + 1];
  }
  Value *value = nullptr;
  if (v2 && c.has_input(2)) {
    KILN_ASSIGN(value, c.in(2));
    if (shape_numel(value->type.dims) != 1) return c.error("constant_values must be a single value");
    KILN_ASSIGN(value, c.op1("kiln.reshape", {value, c.b->i64s({})}));
  } else {
    // Quantised tensors pad with their zero point, which dequantises to 0.
    value = c.b->scalar_f(x->type.dtype, 0.0);
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.pad", {x, c.b->i64s(pads), value}, {{"mode", std::string("constant")}}));
  return c.set_out(0, y, nchw);
}

Status softmax(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  const auto *o = c.op->builtin_options_as_SoftmaxOptions();
  KILN_ASSIGN(Value * x, c.in(0));
  const double beta = o ? o->beta() : 1.0;
  if (beta != 1.0) {
    KILN_ASSIGN(x, c.op1("kiln.mul", {x, c.b->scalar_f(x->type.dtype, beta)}));
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.softmax", {x}, {{"kind", std::string("softmax")}, {"axis", int64_t(-1)}}));
  return c.set_out(0, y);
}

Status reduce(OpCtx &c, const char *kind) {
  KILN_TRY(c.need_inputs(2));
  KILN_ASSIGN(auto axes, c.const_ints(1));
  const auto *o = c.op->builtin_options_as_ReducerOptions();
  const bool keep = o && o->keep_dims();
  const bool nchw = keep && c.held_nchw(0);
  Value *x;
  if (nchw) {
    KILN_ASSIGN(x, c.in_nchw(0));
  } else {
    KILN_ASSIGN(x, c.in(0));
  }
  std::vector<int64_t> ax;
  for (int64_t a : axes) {
    KILN_ASSIGN(int64_t n, norm_axis(c, a, x->type.rank()));
    ax.push_back(nchw ? nchw_axis(n) : n);
  }
  AttrMap attrs{{"kind", std::string(kind)}, {"keepdims", int64_t(keep)}, {"noop_with_empty_axes", int64_t(1)}};
  KILN_ASSIGN(Value * y, c.op1("kiln.reduce", {x, c.b->i64s(ax)}, std::move(attrs)));
  return c.set_out(0, y, nchw);
}

Status transpose_op(OpCtx &c) {
  KILN_TRY(c.need_inputs(2));
  KILN_ASSIGN(auto perm, c.const_ints(1));
  KILN_ASSIGN(Value * x, c.in(0));
  KILN_ASSIGN(Value * y, c.op1("kiln.transpose", {x}, {{"perm", perm}}));
  return c.set_out(0, y);
}

Status dequantize(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  KILN_ASSIGN(Value * x, c.in(0));
  // Quantised inputs are already held dequantised; fp16 (weights) widen to f32.
  if (x->type.dtype != DType::f32) {
    KILN_ASSIGN(x, c.op1("kiln.cast", {x}, {{"to", DType::f32}}));
  }
  return c.set_out(0, x);
}

Status quantize(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  if (!c.out_tensor(0).quantized) return c.error("the output tensor has no quantization parameters");
  return activation(c, Act::none); // set_out re-quantises onto the output's grid
}

Status prelu(OpCtx &c) {
  KILN_TRY(c.need_inputs(2));
  const bool nchw = c.out_tensor(0).shape.size() == 4 && c.held_nchw(0);
  Value *x, *alpha;
  if (nchw) {
    KILN_ASSIGN(x, c.in_nchw(0));
    KILN_ASSIGN(alpha, operand_nchw(c, 1));
  } else {
    KILN_ASSIGN(x, c.in(0));
    KILN_ASSIGN(alpha, c.in(1));
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.prelu", {x, alpha}));
  return c.set_out(0, y, nchw);
}

Status leaky_relu(OpCtx &c) {
  const auto *o = c.op->builtin_options_as_LeakyReluOptions();
  return unary(c, "kiln.leaky_relu", {{"alpha", static_cast<double>(o ? o->alpha() : 0.0f)}});
}

} // namespace

ConvertFn find_converter_misc(int code) {
  switch (code) {
  case op::ADD: return [](OpCtx &c) { return binary(c, "kiln.add", fused(c.op->builtin_options_as_AddOptions())); };
  case op::SUB: return [](OpCtx &c) { return binary(c, "kiln.sub", fused(c.op->builtin_options_as_SubOptions())); };
  case op::MUL: return [](OpCtx &c) { return binary(c, "kiln.mul", fused(c.op->builtin_options_as_MulOptions())); };
  case op::DIV: return [](OpCtx &c) { return binary(c, "kiln.div", fused(c.op->builtin_options_as_DivOptions())); };
  case op::MAXIMUM: return [](OpCtx &c) { return binary(c, "kiln.max", Act::none); };
  case op::MINIMUM: return [](OpCtx &c) { return binary(c, "kiln.min", Act::none); };
  case op::RELU: return [](OpCtx &c) { return activation(c, Act::relu); };
  case op::RELU6: return [](OpCtx &c) { return activation(c, Act::relu6); };
  case op::RELU_N1_TO_1: return [](OpCtx &c) { return activation(c, Act::relu_n1_to_1); };
  case op::TANH: return [](OpCtx &c) { return activation(c, Act::tanh); };
  case op::LOGISTIC: return [](OpCtx &c) { return unary(c, "kiln.sigmoid"); };
  case op::HARD_SWISH: return [](OpCtx &c) { return unary(c, "kiln.hard_swish"); };
  case op::LEAKY_RELU: return leaky_relu;
  case op::EXP: return [](OpCtx &c) { return unary(c, "kiln.exp"); };
  case op::LOG: return [](OpCtx &c) { return unary(c, "kiln.log"); };
  case op::SQRT: return [](OpCtx &c) { return unary(c, "kiln.sqrt"); };
  case op::RSQRT: return rsqrt;
  case op::ABS: return [](OpCtx &c) { return unary(c, "kiln.abs"); };
  case op::NEG: return [](OpCtx &c) { return unary(c, "kiln.neg"); };
  case op::FLOOR: return [](OpCtx &c) { return unary(c, "kiln.floor"); };
  case op::PRELU: return prelu;
  case op::CONCATENATION: return concatenation;
  case op::RESHAPE: return reshape;
  case op::SQUEEZE: return squeeze;
  case op::PAD: return [](OpCtx &c) { return pad(c, false); };
  case op::PADV2: return [](OpCtx &c) { return pad(c, true); };
  case op::SOFTMAX: return softmax;
  case op::MEAN: return [](OpCtx &c) { return reduce(c, "mean"); };
  case op::SUM: return [](OpCtx &c) { return reduce(c, "sum"); };
  case op::REDUCE_MAX: return [](OpCtx &c) { return reduce(c, "max"); };
  case op::TRANSPOSE: return transpose_op;
  case op::DEQUANTIZE: return dequantize;
  // Sparse constants are densified when the model is read.
  case op::DENSIFY: return [](OpCtx &c) { return activation(c, Act::none); };
  case op::QUANTIZE: return quantize;
  default: return nullptr;
  }
}

std::string builtin_name(int code) {
  static const char *const kNames[] = {
      "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
      "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED", "HASHTABLE_LOOKUP",
      "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC",
      "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE",
      "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH", "CONCAT_EMBEDDINGS",
      "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE", "PAD",
      "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND",
      "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM",
      "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX",
      "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM",
      "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN",
      "TRANSPOSE_CONV", "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG",
      "SUM", "SQRT", "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD",
      "REDUCE_MAX", "PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK",
      "REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD",
      "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
      "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK",
      "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
      "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
      "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL"};
  if (code >= 0 && code < static_cast<int>(std::size(kNames))) return kNames[code];
  return fmt::format("BUILTIN_{}", code);
}

} // namespace kiln::tflite_fe
