// Shared helpers of the misc op family (attention, recurrent, signal, training ops).
#pragma once

#include "ops/op_util.h"

#include <cmath>
#include <limits>
#include <vector>

namespace kiln::misc {

void register_attention_ops(OpRegistry &r);   // misc_attention.cpp
void register_linear_attn_ops(OpRegistry &r); // misc_linear_attn.cpp
void register_rnn_ops(OpRegistry &r);         // misc_rnn.cpp
void register_signal_ops(OpRegistry &r);      // misc_signal.cpp
void register_sdpa_ops(OpRegistry &r);        // misc_sdpa.cpp
void register_train_ops(OpRegistry &r);       // misc_train.cpp

inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A tensor of dtype `dt` and shape `shape` built from doubles (rounded through the dtype).
inline Tensor tensor_from_f64(const std::vector<double> &v, const Shape &shape, DType dt) {
  Tensor t(DType::f64, shape);
  double *p = t.data_mut<double>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return dt == DType::f64 ? t : t.cast(dt);
}

// A scalar (or one-element) integer operand's value; error when it has more elements.
inline Result<int64_t> scalar_i64(const EvalCtx &ctx, size_t i, const char *what) {
  const Tensor &t = ctx.input(i);
  if (t.numel() != 1)
    return ctx.error(fmt::format("{} must have one element, got shape [{}]", what,
                                 shape_str(t.shape())));
  if (is_float(t.dtype())) return static_cast<int64_t>(t.get_f64(0));
  return t.get_i64(0);
}

inline Result<double> scalar_f64(const EvalCtx &ctx, size_t i, const char *what) {
  const Tensor &t = ctx.input(i);
  if (t.numel() != 1)
    return ctx.error(fmt::format("{} must have one element, got shape [{}]", what,
                                 shape_str(t.shape())));
  return t.get_f64(0);
}

// Known constant scalar at compile time (for shape functions), else nullopt-like flag.
inline bool const_scalar_i64(const InferCtx &ctx, size_t i, int64_t &out) {
  const Tensor *t = const_operand(ctx, i);
  if (!t || t->numel() != 1) return false;
  out = is_float(t->dtype()) ? static_cast<int64_t>(t->get_f64(0)) : t->get_i64(0);
  return true;
}

// Requires rank `r` of a ranked type.
inline Status expect_rank(const Op &op, const char *what, const TensorType &t,
                          std::initializer_list<int64_t> ranks) {
  if (!t.ranked) return Status::error(op.describe() + ": " + what + " must be ranked");
  for (int64_t r : ranks)
    if (t.rank() == r) return Status::ok();
  return Status::error(fmt::format("{}: {} has unsupported rank {}", op.describe(), what, t.rank()));
}

} // namespace kiln::misc
