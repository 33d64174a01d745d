// Linear quantisation: kiln.quantize_linear, kiln.dequantize_linear and
// kiln.dynamic_quantize_linear.
//
// kiln.quantize_linear(x, scale, zero_point?) -> q
//   q = saturate(round_half_even(x / scale) + zero_point); q's dtype is zero_point's dtype,
//   else attribute output_dtype (DType, default u8). Integer q dtypes (i4 / u4 / i2 / u2
//   included, clamped to their range), or a float8 / float4 type: q = x / scale + zero_point
//   in f32, rounded to nearest even to q's type; attribute saturate (default 1, float8 only)
//   as kiln.cast has it.
// kiln.dequantize_linear(q, scale, zero_point?) -> (q - zero_point) * scale, scale's dtype;
//   q may be any type quantize_linear produces.
// Both take axis (default 1) and block_size (default 0): scale (and zero_point) is a scalar /
// 1-element tensor (per tensor), 1-D of x.shape[axis] (per axis, block_size 0), or x's rank
// with dim axis = ceil(x.shape[axis] / block_size) and the other dims equal (blocked).
// kiln.dynamic_quantize_linear(x f32) -> (y u8, scale f32 [], zero_point u8 []).
#include "ops/nn_extra_internal.h"
#include "ops/quant_params.h"

#include "support/narrow.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// For every element of x (shape `xs`), the flat index of its scale; error on a bad layout.
Result<std::vector<int64_t>> scale_index(const Op &op, const Shape &xs, const Shape &ss) {
  const int64_t n = shape_numel(xs);
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t block = op.attr_int("block_size", 0);
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  if (shape_numel(ss) == 1 && block == 0 && ss.size() <= 1) return idx;
  if (rank == 0) return Status::error(fmt::format("{}: a scalar input needs a scalar scale", op.describe()));
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 1), rank));
  const size_t a = static_cast<size_t>(axis);
  int64_t inner = 1;
  for (size_t d = a + 1; d < xs.size(); ++d) inner *= xs[d];
  if (block <= 0) {
    if (ss.size() != 1 || ss[0] != xs[a])
      return Status::error(fmt::format("{}: per-axis scale must have shape [{}], got [{}]",
                                       op.describe(), xs[a], shape_str(ss)));
    for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = (i / inner) % xs[a];
    return idx;
  }
  bool ok = ss.size() == xs.size();
  for (size_t d = 0; ok && d < xs.size(); ++d)
    ok = d == a ? ss[d] == (xs[d] + block - 1) / block : ss[d] == xs[d];
  if (!ok)
    return Status::error(fmt::format("{}: blocked scale shape [{}] does not match input [{}] "
                                     "with block_size {} on axis {}",
                                     op.describe(), shape_str(ss), shape_str(xs), block, axis));
  const int64_t outer_stride = xs[a] * inner, sa = ss[a];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t o = i / outer_stride, k = (i / inner) % xs[a], j = i % inner;
    idx[static_cast<size_t>(i)] = (o * sa + k / block) * inner + j;
  }
  return idx;
}

Status check_zero_point(const Op &op, const TensorType &scale, const TensorType *zp) {
  if (!zp || !scale.ranked || !zp->ranked) return Status::ok();
  if (shape_numel(zp->dims) != shape_numel(scale.dims) &&
      (zp->is_static() && scale.is_static()))
    return Status::error(fmt::format("{}: zero_point shape {} does not match scale shape {}",
                                     op.describe(), zp->str(), scale.str()));
  return Status::ok();
}

const std::initializer_list<DType> kQuantTypes = {
    DType::i8, DType::u8,       DType::i16,        DType::u16,    DType::i32,
    DType::u32, DType::i4,      DType::u4,         DType::i2,     DType::u2,
    DType::f8e4m3fn, DType::f8e4m3fnuz, DType::f8e5m2, DType::f8e5m2fnuz, DType::f4e2m1};

Status infer_quantize(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_dtype_in(ctx.op, "input", x.dtype,
                           {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32}));
  KILN_TRY(expect_float(ctx.op, "scale", ctx.type(1).dtype));
  DType out = ctx.present(2) ? ctx.type(2).dtype : ctx.op.attr_dtype("output_dtype", DType::u8);
  KILN_TRY(expect_dtype_in(ctx.op, "quantized type", out, kQuantTypes));
  KILN_TRY(check_zero_point(ctx.op, ctx.type(1), ctx.present(2) ? &ctx.type(2) : nullptr));
  KILN_TRY(quant::check_layout(ctx.op, x, ctx.type(1)));
  KILN_TRY(quant::check_const_scale(ctx, 1, "y_scale"));
  ctx.out = {TensorType{out, x.dims, x.ranked}};
  return Status::ok();
}

Status eval_quantize(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  const Tensor *zp = ctx.present(2) ? &ctx.input(2) : nullptr;
  if (zp && zp->numel() != s.numel())
    return ctx.error("zero_point and scale have different sizes");
  KILN_TRY(quant::check_scale_values(ctx.op, s, "y_scale"));
  KILN_ASSIGN(std::vector<int64_t> si, scale_index(ctx.op, x.shape(), s.shape()));
  const DType out_t = zp ? zp->dtype() : ctx.op.attr_dtype("output_dtype", DType::u8);
  Tensor y(out_t, x.shape());
  // Divide in the input's precision (f32 for f32/f16/bf16), as the ONNX reference does.
  const bool single = x.dtype() != DType::f64 && s.dtype() != DType::f64;
  const int64_t sat = ctx.op.attr_int("saturate", 1);
  if (sat != 0 && sat != 1) return ctx.error(fmt::format("saturate must be 0 or 1, got {}", sat));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = si[static_cast<size_t>(i)];
    double q = single ? static_cast<double>(static_cast<float>(x.get_f64(i)) /
                                            static_cast<float>(s.get_f64(k)))
                      : x.get_f64(i) / s.get_f64(k);
    if (is_narrow_float(out_t)) {
      // No integer rounding: the sum (in f32) is rounded once, to the float8 / float4 type.
      const double z = zp ? zp->get_f64(k) : 0.0;
      y.set_f64(i, static_cast<double>(static_cast<float>(q) + static_cast<float>(z)), sat != 0);
      continue;
    }
    q = std::nearbyint(q) + static_cast<double>(zp ? zp->get_i64(k) : 0);
    y.set_i64(i, round_saturate(q, out_t));
  }
  ctx.out = {y};
  return Status::ok();
}

Status infer_dequantize(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_dtype_in(ctx.op, "input", x.dtype, kQuantTypes));
  KILN_TRY(expect_float(ctx.op, "scale", ctx.type(1).dtype));
  if (ctx.present(2))
    KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(2).dtype, x.dtype, "x_zero_point", "x"));
  KILN_TRY(check_zero_point(ctx.op, ctx.type(1), ctx.present(2) ? &ctx.type(2) : nullptr));
  KILN_TRY(quant::check_layout(ctx.op, x, ctx.type(1)));
  KILN_TRY(quant::check_const_scale(ctx, 1, "x_scale"));
  ctx.out = {TensorType{ctx.type(1).dtype, x.dims, x.ranked}};
  return Status::ok();
}

Status eval_dequantize(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &s = ctx.input(1);
  const Tensor *zp = ctx.present(2) ? &ctx.input(2) : nullptr;
  if (zp && zp->numel() != s.numel())
    return ctx.error("zero_point and scale have different sizes");
  KILN_TRY(quant::check_scale_values(ctx.op, s, "x_scale"));
  KILN_ASSIGN(std::vector<int64_t> si, scale_index(ctx.op, x.shape(), s.shape()));
  Tensor y(s.dtype(), x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t k = si[static_cast<size_t>(i)];
    if (is_narrow_float(x.dtype())) { // float8 / float4: (x - zero_point) * scale in f32
      const float d = static_cast<float>(x.get_f64(i)) -
                      static_cast<float>(zp ? zp->get_f64(k) : 0.0);
      y.set_f64(i, static_cast<double>(d * static_cast<float>(s.get_f64(k))));
      continue;
    }
    const int64_t q = x.get_i64(i) - (zp ? zp->get_i64(k) : 0);
    y.set_f64(i, static_cast<double>(q) * s.get_f64(k));
  }
  ctx.out = {y};
  return Status::ok();
}

Status infer_dynamic_quantize(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_dtype_in(ctx.op, "input", x.dtype, {DType::f32}));
  ctx.out = {TensorType{DType::u8, x.dims, x.ranked}, TensorType{DType::f32, {}, true},
             TensorType{DType::u8, {}, true}};
  return Status::ok();
}

// Computed in f32 like the ONNX reference: scale = (max(0, max x) - min(0, min x)) / 255.
Status eval_dynamic_quantize(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  const float *p = x.data<float>();
  float mx = 0, mn = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (!std::isfinite(p[i]))
      return ctx.error(fmt::format("input element {} is {}: no finite scale quantises it", i,
                                   std::isnan(p[i]) ? "NaN" : p[i] > 0 ? "inf" : "-inf"));
    mx = std::max(mx, p[i]);
    mn = std::min(mn, p[i]);
  }
  const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
  const float zpf = std::clamp(0.0f - mn / scale, 0.0f, 255.0f);
  const float zp = std::nearbyint(zpf);
  Tensor y(DType::u8, x.shape());
  uint8_t *q = y.data_mut<uint8_t>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = std::nearbyint(p[i] / scale) + zp;
    q[i] = static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
  }
  Tensor ts(DType::f32, {}), tz(DType::u8, {});
  ts.data_mut<float>()[0] = scale;
  tz.data_mut<uint8_t>()[0] = static_cast<uint8_t>(zp);
  ctx.out = {y, ts, tz};
  return Status::ok();
}

} // namespace

void register_nn_quant_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.quantize_linear",
      .min_operands = 2,
      .max_operands = 3,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_quantize,
      .eval = eval_quantize,
  });
  r.add(OpDef{
      .name = "kiln.dequantize_linear",
      .min_operands = 2,
      .max_operands = 3,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_dequantize,
      .eval = eval_dequantize,
  });
  r.add(OpDef{
      .name = "kiln.dynamic_quantize_linear",
      .min_operands = 1,
      .max_operands = 1,
      .min_results = 3,
      .max_results = 3,
      .verify = nullptr,
      .infer = infer_dynamic_quantize,
      .eval = eval_dynamic_quantize,
  });
}

} // namespace kiln
