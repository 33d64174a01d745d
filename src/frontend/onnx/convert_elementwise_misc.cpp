// ONNX elementwise ops with versioned or structural semantics: Clip, Cast, CastLike, Identity,
// Dropout, Where, variadic Max/Min/Sum/Mean, Mod, BitShift, IsInf, Gelu, SwiGLU, BitCast.
#include "frontend/onnx/convert_elementwise.h"

#include <cstring>
#include <fmt/format.h>

namespace kiln::onnx_fe {

namespace {

Result<Value *> required(const NodeCtx &c, size_t i) {
  if (!c.has_input(i)) return c.error(fmt::format("input {} is required", i));
  return c.input(i);
}

// A bool tensor of x's shape, all true (Dropout's inference mask).
Result<Value *> true_like(NodeCtx &c, Value *x) {
  if (x->type.ranked && x->type.is_static()) {
    Tensor t(DType::boolean, x->type.dims);
    if (t.nbytes()) std::memset(t.raw_mut(), 1, t.nbytes());
    return c.builder().constant(std::move(t));
  }
  if (!is_float(x->type.dtype))
    return c.error("the mask output needs a floating-point input of static shape");
  KILN_ASSIGN(Value * nan, c.op("kiln.isnan", {x}));
  KILN_ASSIGN(Value * not_nan, c.op("kiln.not", {nan}));
  return c.op("kiln.or", {nan, not_nan});
}

// Dropout whose training_mode is a graph input: kiln.dropout decides when it runs (identity
// outside training or with ratio 0, an error otherwise).
Outs dropout_at_run_time(NodeCtx &c, Value *x, double attr_ratio) {
  Value *ratio = c.has_input(1) ? c.input(1) : nullptr;
  if (!ratio) ratio = c.builder().scalar_f(DType::f32, attr_ratio);
  if (ratio->type.ranked && ratio->type.rank() != 0)
    return c.error(fmt::format("ratio must be a scalar, got {}", ratio->type.str()));
  if (c.input(2)->type.ranked && c.input(2)->type.rank() != 0)
    return c.error(fmt::format("training_mode must be a scalar, got {}", c.input(2)->type.str()));
  KILN_ASSIGN(auto outs, c.op_n("kiln.dropout", {x, ratio, c.input(2)}, {}, 2));
  if (c.num_outputs < 2 || !c.output_used[1]) outs.resize(1);
  return outs;
}

Outs dropout(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  double ratio = c.attr_float("ratio", 0.5);
  bool ratio_known = true, training = false;
  if (c.opset >= 12) {
    if (c.has_input(1)) {
      const Tensor *r = c.const_input(1);
      ratio_known = r && r->numel() == 1;
      if (ratio_known) ratio = r->get_f64(0);
    }
    if (c.has_input(2)) {
      const Tensor *tm = c.const_input(2);
      if (!tm) return dropout_at_run_time(c, x, ratio);
      if (tm->numel() != 1) return c.error("training_mode must be a scalar");
      training = tm->get_i64(0) != 0;
    }
  } else if (c.opset < 7) {
    training = c.attr_int("is_test", 0) == 0;
  }
  if (training && (!ratio_known || ratio != 0.0))
    return c.error("training-mode Dropout is not supported");
  std::vector<Value *> outs{x};
  if (c.num_outputs > 1 && c.output_used[1]) {
    KILN_ASSIGN(Value * mask, true_like(c, x));
    if (c.opset < 10) { // the mask had the input's dtype before opset 10
      KILN_ASSIGN(mask, c.op("kiln.cast", {mask}, {{"to", x->type.dtype}}));
    }
    outs.push_back(mask);
  }
  return outs;
}

// A Clip bound as a scalar of x's dtype (constant [1]-shaped bounds are reshaped to scalars).
Result<Value *> clip_bound(NodeCtx &c, size_t i) {
  Value *v = c.input(i);
  if (!v || !v->type.ranked || v->type.rank() == 0) return v;
  if (const Tensor *t = c.const_input(i)) {
    if (t->numel() != 1) return c.error(fmt::format("input {} (a bound) must be a scalar", i));
    return c.builder().constant(t->reshaped({}));
  }
  return c.error(fmt::format("input {} (a bound) must be a scalar, got {}", i, v->type.str()));
}

Outs clip(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  Value *lo = nullptr, *hi = nullptr;
  if (c.opset < 11) {
    if (c.has_attr("min")) lo = c.builder().scalar_f(x->type.dtype, c.attr_float("min", 0));
    if (c.has_attr("max")) hi = c.builder().scalar_f(x->type.dtype, c.attr_float("max", 0));
  } else {
    KILN_ASSIGN(lo, clip_bound(c, 1));
    KILN_ASSIGN(hi, clip_bound(c, 2));
  }
  // min(max(x, lo), hi): where lo > hi every element becomes hi, as ONNX specifies.
  Value *v = x;
  if (lo) {
    KILN_ASSIGN(v, c.op("kiln.max", {v, lo}));
  }
  if (hi) {
    KILN_ASSIGN(v, c.op("kiln.min", {v, hi}));
  }
  return std::vector<Value *>{v};
}

// Cast / CastLike. saturate (opset 19+) matters only for float8 targets and round_mode
// (opset 24+) only for float8e8m0; kiln.cast carries them when they differ from the defaults.
Outs cast_to(NodeCtx &c, Value *x, DType to) {
  if (x->type.dtype == to) return std::vector<Value *>{x};
  AttrMap a{{"to", to}};
  const int64_t sat = c.attr_int("saturate", 1);
  if (sat != 0 && sat != 1) return c.error(fmt::format("saturate must be 0 or 1, got {}", sat));
  if (sat == 0) a["saturate"] = int64_t(0);
  const std::string round = c.attr_str("round_mode", "up");
  if (round != "up" && round != "down" && round != "nearest")
    return c.error(fmt::format("round_mode must be up, down or nearest, got '{}'", round));
  if (round != "up") a["round_mode"] = round;
  return single(c, "kiln.cast", {x}, std::move(a));
}

Outs cast(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  KILN_ASSIGN(DType to, c.attr_dtype("to"));
  return cast_to(c, x, to);
}

Outs cast_like(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  KILN_ASSIGN(Value * like, required(c, 1));
  return cast_to(c, x, like->type.dtype);
}

Outs identity(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  return std::vector<Value *>{x};
}

// Max/Min/Sum/Mean: a left fold of the binary op over the inputs; Mean divides by the count.
ConvertFn variadic(const char *core, bool mean) {
  return [core, mean](NodeCtx &c) -> Outs {
    if (c.in.empty()) return c.error("needs at least one input");
    KILN_ASSIGN(Value * v, required(c, 0));
    for (size_t i = 1; i < c.in.size(); ++i) {
      KILN_ASSIGN(Value * x, required(c, i));
      KILN_ASSIGN(v, c.op(core, {v, x}));
    }
    if (mean && c.in.size() > 1) {
      if (!is_float(v->type.dtype))
        return c.error(fmt::format("dtype {} is not supported (Mean needs floats)",
                                   dtype_name(v->type.dtype)));
      Value *n = c.builder().scalar_f(v->type.dtype, static_cast<double>(c.in.size()));
      KILN_ASSIGN(v, c.op("kiln.div", {v, n}));
    }
    return std::vector<Value *>{v};
  };
}

Outs mod(NodeCtx &c) {
  int64_t f = c.attr_int("fmod", 0);
  if (f != 0 && f != 1) return c.error(fmt::format("fmod must be 0 or 1, got {}", f));
  // fmod=0 on floats is outside the ONNX spec; it gets the numpy (sign of divisor) semantics.
  return single(c, f ? "kiln.fmod" : "kiln.mod", {c.input(0), c.input(1)});
}

Outs bit_shift(NodeCtx &c) {
  std::string dir = c.attr_str("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return c.error(fmt::format("direction must be LEFT or RIGHT, got '{}'", dir));
  return single(c, dir == "LEFT" ? "kiln.shl" : "kiln.shr", {c.input(0), c.input(1)});
}

Outs is_inf(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  const bool pos = c.attr_int("detect_positive", 1) != 0;
  const bool neg = c.attr_int("detect_negative", 1) != 0;
  if (pos && neg) return single(c, "kiln.isinf", {x});
  if (pos) return single(c, "kiln.isposinf", {x});
  if (neg) return single(c, "kiln.isneginf", {x});
  // Neither: all false (no value is both +inf and -inf).
  KILN_ASSIGN(Value * p, c.op("kiln.isposinf", {x}));
  KILN_ASSIGN(Value * n, c.op("kiln.isneginf", {x}));
  return single(c, "kiln.and", {p, n});
}

Outs gelu(NodeCtx &c) {
  std::string approx = c.attr_str("approximate", "none");
  if (approx == "none") return single(c, "kiln.gelu", {c.input(0)});
  if (approx == "tanh") return single(c, "kiln.gelu_tanh", {c.input(0)});
  return c.error(fmt::format("approximate='{}' is not supported (none or tanh)", approx));
}

// SwiGLU(A, B) = Swish_alpha(A) * B, A and B of identical shapes.
Outs swiglu(NodeCtx &c) {
  KILN_ASSIGN(Value * a, required(c, 0));
  KILN_ASSIGN(Value * b, required(c, 1));
  const TensorType &ta = a->type, &tb = b->type;
  if (ta.ranked && tb.ranked && ta.is_static() && tb.is_static() && ta.dims != tb.dims)
    return c.error(fmt::format("inputs must have identical shapes, got {} and {}", ta.str(),
                               tb.str()));
  KILN_ASSIGN(Value * gate, c.op("kiln.swish", {a}, {{"alpha", c.attr_float("alpha", 1.0)}}));
  return single(c, "kiln.mul", {gate, b});
}

Outs bit_cast(NodeCtx &c) {
  KILN_ASSIGN(Value * x, required(c, 0));
  KILN_ASSIGN(DType to, c.attr_dtype("to"));
  return single(c, "kiln.bitcast", {x}, {{"to", to}});
}

} // namespace

void register_onnx_elementwise_misc(ConverterTable &t) {
  t.add("", "Clip", clip);
  t.add("", "Cast", cast);
  t.add("", "CastLike", cast_like);
  t.add("", "Identity", identity);
  t.add("", "Dropout", dropout);
  t.add("", "Where", [](NodeCtx &c) { return single(c, "kiln.where", {c.input(0), c.input(1), c.input(2)}); });
  t.add("", "Max", variadic("kiln.max", false));
  t.add("", "Min", variadic("kiln.min", false));
  t.add("", "Sum", variadic("kiln.add", false));
  t.add("", "Mean", variadic("kiln.add", true));
  t.add("", "Mod", mod);
  t.add("", "BitShift", bit_shift);
  t.add("", "IsInf", is_inf);
  t.add("", "Gelu", gelu);
  t.add("", "SwiGLU", swiglu);
  t.add("", "BitCast", bit_cast);
}

} // namespace kiln::onnx_fe
