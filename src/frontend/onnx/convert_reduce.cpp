// ONNX reductions and along-an-axis ops: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax,
// CumSum/CumProd, TopK. Normalisations and losses are in convert_reduce_norm.cpp.
#include "frontend/onnx/convert.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

void register_onnx_norm(ConverterTable &t); // convert_reduce_norm.cpp

namespace {

// Reduce* ops: `axes` is an attribute before `axes_input_opset`, an optional input from it.
ConvertFn reduce_fn(std::string kind, int axes_input_opset) {
  return [kind, axes_input_opset](NodeCtx &c) -> Outs {
    std::vector<Value *> operands{c.input(0)};
    int64_t noop = 0;
    if (c.opset >= axes_input_opset) {
      noop = c.attr_int("noop_with_empty_axes", 0);
      if (c.has_input(1)) {
        if (c.input(1)->type.dtype != DType::i64) return c.error("axes must be an int64 tensor");
        operands.push_back(c.input(1));
      }
    } else {
      std::vector<int64_t> axes = c.attr_ints("axes");
      if (!axes.empty()) operands.push_back(c.builder().i64s(axes));
    }
    AttrMap a;
    a["kind"] = kind;
    a["keepdims"] = c.attr_int("keepdims", 1);
    a["noop_with_empty_axes"] = noop;
    KILN_ASSIGN(Value *v, c.op("kiln.reduce", operands, std::move(a)));
    return std::vector<Value *>{v};
  };
}

ConvertFn arg_fn(std::string kind) {
  return [kind](NodeCtx &c) -> Outs {
    AttrMap a;
    a["kind"] = kind;
    a["axis"] = c.attr_int("axis", 0);
    a["keepdims"] = c.attr_int("keepdims", 1);
    a["select_last_index"] = c.opset >= 12 ? c.attr_int("select_last_index", 0) : int64_t(0);
    KILN_ASSIGN(Value *v, c.op("kiln.arg_reduce", {c.input(0)}, std::move(a)));
    return std::vector<Value *>{v};
  };
}

// Softmax family: before opset 13 the input is coerced to 2-D at `axis` (default 1), i.e. the
// normalisation runs jointly over dims axis..rank-1; from 13 it runs along one axis (default -1).
ConvertFn softmax_fn(std::string kind) {
  return [kind](NodeCtx &c) -> Outs {
    AttrMap a;
    a["kind"] = kind;
    const bool old = c.opset < 13;
    a["axis"] = c.attr_int("axis", old ? 1 : -1);
    a["flatten_trailing"] = int64_t(old ? 1 : 0);
    KILN_ASSIGN(Value *v, c.op("kiln.softmax", {c.input(0)}, std::move(a)));
    return std::vector<Value *>{v};
  };
}

ConvertFn cumulative_fn(std::string kind) {
  return [kind](NodeCtx &c) -> Outs {
    if (!c.has_input(1)) return c.error("the axis input is required");
    if (!is_integer(c.input(1)->type.dtype)) return c.error("axis must be an int32 / int64 tensor");
    AttrMap a;
    a["kind"] = kind;
    a["exclusive"] = c.attr_int("exclusive", 0);
    a["reverse"] = c.attr_int("reverse", 0);
    KILN_ASSIGN(Value *v, c.op("kiln.cumulative", {c.input(0), c.input(1)}, std::move(a)));
    return std::vector<Value *>{v};
  };
}

Outs convert_topk(NodeCtx &c) {
  Value *k = nullptr;
  if (c.opset < 10) {
    if (!c.has_attr("k")) return c.error("attribute 'k' is required");
    k = c.builder().i64s({c.attr_int("k", 0)});
  } else {
    if (!c.has_input(1)) return c.error("the k input is required");
    k = c.input(1);
    if (k->type.dtype != DType::i64) return c.error("k must be an int64 tensor");
  }
  AttrMap a;
  a["axis"] = c.attr_int("axis", -1);
  a["largest"] = c.opset >= 11 ? c.attr_int("largest", 1) : int64_t(1);
  // sorted = 0 leaves the order unspecified; the sorted order is a valid answer.
  a["sorted"] = c.opset >= 11 ? c.attr_int("sorted", 1) : int64_t(1);
  return c.op_n("kiln.topk", {c.input(0), k}, std::move(a), 2);
}

} // namespace

void register_onnx_reduce(ConverterTable &t) {
  t.add("", "ReduceSum", reduce_fn("sum", 13));
  t.add("", "ReduceMean", reduce_fn("mean", 18));
  t.add("", "ReduceMax", reduce_fn("max", 18));
  t.add("", "ReduceMin", reduce_fn("min", 18));
  t.add("", "ReduceProd", reduce_fn("prod", 18));
  t.add("", "ReduceL1", reduce_fn("l1", 18));
  t.add("", "ReduceL2", reduce_fn("l2", 18));
  t.add("", "ReduceLogSum", reduce_fn("log_sum", 18));
  t.add("", "ReduceLogSumExp", reduce_fn("log_sum_exp", 18));
  t.add("", "ReduceSumSquare", reduce_fn("sum_square", 18));
  t.add("", "ArgMax", arg_fn("max"));
  t.add("", "ArgMin", arg_fn("min"));
  t.add("", "Softmax", softmax_fn("softmax"));
  t.add("", "LogSoftmax", softmax_fn("log_softmax"));
  t.add("", "Hardmax", softmax_fn("hardmax"));
  t.add("", "CumSum", cumulative_fn("sum"));
  t.add("", "CumProd", cumulative_fn("prod"));
  t.add("", "TopK", convert_topk);
  register_onnx_norm(t);
}

} // namespace kiln::onnx_fe
