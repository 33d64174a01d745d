// kiln.conv, kiln.conv_integer and kiln.conv_transpose: N-d grouped convolutions through
// im2col + GEMM (f32 in float, other dtypes in double / wrapping int64).
#include "ops/nn_internal.h"
#include "ops/nn_kernels.h"
#include "ops/op_util.h"
#include "ops/quant_params.h"

#include <optional>

namespace kiln {

using nn::CType;
using nn::Window;

namespace {

// Shapes of a (transposed) convolution: x [N, C, in...], w [M, C/G, k...] (transposed:
// [C, M/G, k...]); y [N, M, out...]. Dims may be kDynamic at compile time.
struct ConvShape {
  int64_t N = 0, C = 0, M = 0, G = 1;
  Window w; // conv: in = x spatial, out = y spatial; transposed: in = y spatial, out = x spatial
  bool spatial_known = true;
  Shape out;
};

Result<std::vector<int64_t>> conv_kernel(const Op &op, const Shape &wd, bool &known) {
  const size_t r = wd.size() - 2;
  std::vector<int64_t> k(wd.begin() + 2, wd.end());
  if (op.has_attr("kernel_shape")) {
    std::vector<int64_t> ka = op.attr_ints("kernel_shape");
    if (ka.size() != r)
      return Status::error(fmt::format("{}: kernel_shape has {} values but the weights have {} "
                                       "spatial dims",
                                       op.describe(), ka.size(), r));
    for (size_t i = 0; i < r; ++i)
      if (k[i] >= 0 && k[i] != ka[i])
        return Status::error(fmt::format("{}: kernel_shape [{}] differs from the weight shape",
                                         op.describe(), shape_str(ka)));
    k = ka;
  }
  known = true;
  for (int64_t d : k) known = known && d >= 0;
  return k;
}

Result<Window> transpose_window(const Op &op, std::vector<int64_t> kernel, const Shape &xs);

Result<ConvShape> conv_shape(const Op &op, const Shape &xd, const Shape &wd, bool transpose) {
  if (xd.size() < 3 || wd.size() != xd.size())
    return Status::error(fmt::format("{}: input [{}] and weights [{}] must have the same rank >= 3",
                                     op.describe(), shape_str(xd), shape_str(wd)));
  ConvShape s;
  s.G = op.attr_int("group", 1);
  if (s.G < 1) return Status::error(op.describe() + ": group must be >= 1");
  s.N = xd[0];
  s.C = xd[1];
  const int64_t wc = transpose ? wd[0] : wd[1];
  const std::optional<int64_t> wcg = checked_mul(wc, s.G);
  if (!transpose && wc >= 0 && !wcg)
    return overflow_error(op, fmt::format("weight channels {} x group {}", wc, s.G));
  if (s.C >= 0 && wc >= 0 && (transpose ? s.C != wc : s.C != *wcg))
    return Status::error(fmt::format("{}: input channels {} do not match weights [{}] with group {}",
                                     op.describe(), s.C, shape_str(wd), s.G));
  if (transpose && s.C >= 0 && s.C % s.G != 0)
    return Status::error(fmt::format("{}: channels {} not divisible by group {}", op.describe(), s.C, s.G));
  s.M = wd[0];
  if (transpose) {
    const std::optional<int64_t> m = checked_mul(wd[1], s.G);
    if (wd[1] >= 0 && !m)
      return overflow_error(op, fmt::format("output channels {} x group {}", wd[1], s.G));
    s.M = wd[1] < 0 ? kDynamic : *m;
  }
  if (!transpose && s.M >= 0 && s.M % s.G != 0)
    return Status::error(fmt::format("{}: output channels {} not divisible by group {}",
                                     op.describe(), s.M, s.G));
  KILN_ASSIGN(std::vector<int64_t> k, conv_kernel(op, wd, s.spatial_known));
  const Shape xs(xd.begin() + 2, xd.end());
  s.out = {s.N, s.M};
  if (!s.spatial_known) {
    for (size_t i = 0; i < xs.size(); ++i) s.out.push_back(kDynamic);
    return s;
  }
  if (transpose) {
    KILN_ASSIGN(s.w, transpose_window(op, k, xs));
    s.out.insert(s.out.end(), s.w.in.begin(), s.w.in.end());
  } else {
    KILN_ASSIGN(s.w, nn::make_window(op, k, xs, false));
    s.out.insert(s.out.end(), s.w.out.begin(), s.w.out.end());
  }
  return s;
}

// The geometry of a transposed conv as the window of the adjoint conv from y to x.
Result<Window> transpose_window(const Op &op, std::vector<int64_t> kernel, const Shape &xs) {
  const size_t r = kernel.size();
  Window w;
  w.kernel = std::move(kernel);
  for (int64_t k : w.kernel)
    if (k < 1) return Status::error(op.describe() + ": kernel dims must be >= 1");
  KILN_ASSIGN(w.strides, nn::attr_list(op, "strides", r, 1, 1));
  KILN_ASSIGN(w.dilations, nn::attr_list(op, "dilations", r, 1, 1));
  KILN_ASSIGN(std::vector<int64_t> pads, nn::attr_list(op, "pads", 2 * r, 0, 0));
  KILN_ASSIGN(std::vector<int64_t> opad, nn::attr_list(op, "output_padding", r, 0, 0));
  std::vector<int64_t> oshape = op.attr_ints("output_shape");
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  if (!oshape.empty() && oshape.size() != r)
    return Status::error(fmt::format("{}: output_shape has {} values, expected {}", op.describe(),
                                     oshape.size(), r));
  const std::string ap = op.attr_str("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return Status::error(fmt::format("{}: auto_pad '{}' is not supported", op.describe(), ap));
  w.pad_begin.assign(pads.begin(), pads.begin() + r);
  w.pad_end.assign(pads.begin() + r, pads.end());
  w.out = xs;
  w.in.assign(r, kDynamic);
  for (size_t i = 0; i < r; ++i) {
    if (xs[i] < 0) continue;
    if (!oshape.empty() && oshape[i] < 0)
      return Status::error(fmt::format("{}: output_shape [{}] has a negative dim", op.describe(),
                                       shape_str(oshape)));
    // full = strides * (x - 1) + output_padding + (kernel - 1) * dilations + 1, every step
    // checked: hostile attributes and dims reach INT64_MAX.
    std::optional<int64_t> full = checked_mul(w.kernel[i] - 1, w.dilations[i]);
    if (full) full = checked_add(*full, 1);
    if (full) full = checked_add(*full, opad[i]);
    if (full) {
      const std::optional<int64_t> sx = checked_mul(w.strides[i], xs[i] - 1);
      full = sx ? checked_add(*full, *sx) : std::nullopt;
    }
    if (!full)
      return overflow_error(op, fmt::format("the output size of spatial dim {} (input {}, kernel "
                                            "{}, stride {}, dilation {}, output_padding {})",
                                            i, xs[i], w.kernel[i], w.strides[i], w.dilations[i],
                                            opad[i]));
    const bool same = ap == "SAME_UPPER" || ap == "SAME_LOWER";
    if (!oshape.empty() || same) {
      std::optional<int64_t> in = !oshape.empty() ? oshape[i] : checked_mul(xs[i], w.strides[i]);
      std::optional<int64_t> total = in ? checked_sub(*full, *in) : std::nullopt;
      if (!total)
        return overflow_error(op, fmt::format("the padding of spatial dim {}", i));
      w.in[i] = *in;
      const int64_t half = *total / 2 - (*total % 2 < 0 ? 1 : 0); // floor(total / 2)
      w.pad_begin[i] = ap == "SAME_UPPER" ? half : *total - half;
      w.pad_end[i] = *total - w.pad_begin[i];
    } else {
      if (ap == "VALID") w.pad_begin[i] = w.pad_end[i] = 0;
      std::optional<int64_t> in = checked_sub(*full, w.pad_begin[i]);
      if (in) in = checked_sub(*in, w.pad_end[i]);
      if (!in)
        return overflow_error(op, fmt::format("the output size of spatial dim {} (pads {}, {})",
                                              i, w.pad_begin[i], w.pad_end[i]));
      w.in[i] = *in;
    }
    if (w.in[i] < 0)
      return Status::error(fmt::format("{}: negative output dim {}", op.describe(), w.in[i]));
  }
  return w;
}

// ---- forward convolution -------------------------------------------------------------------

template <class T>
void conv_group(const T *X, const T *W, const ConvShape &s, T *Y, std::vector<T> &col) {
  const Window &w = s.w;
  const int64_t Cg = s.C / s.G, Mg = s.M / s.G, ks = w.kernel_size(), Kc = Cg * ks;
  const int64_t P = w.out_size(), OW = w.out.back();
  bool pointwise = true;
  for (int64_t i = 0; i < w.rank(); ++i)
    pointwise = pointwise && w.kernel[i] == 1 && w.strides[i] == 1 && w.pad_begin[i] == 0 &&
                w.pad_end[i] == 0;
  if (pointwise) {
    nn::gemm<T>(Mg, P, Cg, W, Kc, X, w.in_size(), Y, P, false);
    return;
  }
  if (OW == 0) return;
  const int64_t lines = P / OW;
  const int64_t target = std::max<int64_t>(int64_t(1) << 18, Kc * 256);
  const int64_t chunk = std::clamp<int64_t>(target / std::max<int64_t>(1, Kc * OW), 1, lines);
  col.resize(static_cast<size_t>(Kc * chunk * OW));
  for (int64_t l0 = 0; l0 < lines; l0 += chunk) {
    const int64_t nl = std::min(chunk, lines - l0), cp = nl * OW;
    nn::im2col<T>(X, Cg, w, l0, nl, col.data());
    nn::gemm<T>(Mg, cp, Kc, W, Kc, col.data(), cp, Y + l0 * OW, P, false);
  }
}

template <class T>
std::vector<T> conv_run(const T *X, const T *W, const T *B, const ConvShape &s) {
  const int64_t Cg = s.C / s.G, Mg = s.M / s.G, Kc = Cg * s.w.kernel_size();
  const int64_t in = s.w.in_size(), P = s.w.out_size();
  std::vector<T> Y(static_cast<size_t>(s.N * s.M * P));
  std::vector<T> col;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t g = 0; g < s.G; ++g)
      conv_group<T>(X + (n * s.C + g * Cg) * in, W + g * Mg * Kc, s,
                    Y.data() + (n * s.M + g * Mg) * P, col);
  if (B)
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t m = 0; m < s.M; ++m) {
        T *y = Y.data() + (n * s.M + m) * P;
        for (int64_t p = 0; p < P; ++p) y[p] += B[m];
      }
  return Y;
}

template <class T>
Tensor conv_typed(const Tensor &x, const Tensor &w, const Tensor *b, const ConvShape &s, DType dt) {
  nn::View<T> vx(x), vw(w);
  std::optional<nn::View<T>> vb;
  if (b) vb.emplace(*b);
  return nn::store<T>(conv_run<T>(vx.data(), vw.data(), vb ? vb->data() : nullptr, s), dt, s.out);
}

Status check_bias(const Op &op, const Tensor *b, int64_t M) {
  if (b && (b->rank() != 1 || b->numel() != M))
    return Status::error(fmt::format("{}: bias of shape [{}] must be 1-D of {} values",
                                     op.describe(), shape_str(b->shape()), M));
  return Status::ok();
}

Status eval_conv(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  const Tensor *b = ctx.present(2) ? &ctx.input(2) : nullptr;
  KILN_ASSIGN(ConvShape s, conv_shape(ctx.op, x.shape(), w.shape(), false));
  KILN_TRY(nn::check_result_size(ctx.op, s.out));
  KILN_TRY(check_bias(ctx.op, b, s.M));
  switch (nn::compute_type(x.dtype())) {
  case CType::f32: ctx.out = {conv_typed<float>(x, w, b, s, x.dtype())}; break;
  case CType::f64: ctx.out = {conv_typed<double>(x, w, b, s, x.dtype())}; break;
  case CType::u64: ctx.out = {conv_typed<uint64_t>(x, w, b, s, x.dtype())}; break;
  }
  return Status::ok();
}

// x - x_zero_point (per tensor) or w - w_zero_point (per tensor or per output channel).
Result<std::vector<uint64_t>> minus_zp(const Op &op, const Tensor &t, const Tensor *zp,
                                       int64_t channels) {
  std::vector<uint64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<uint64_t>(t.get_i64(i));
  if (!zp) return v;
  if (zp->numel() != 1 && !(zp->rank() == 1 && zp->numel() == channels))
    return Status::error(fmt::format("{}: zero point of shape [{}] is not supported",
                                     op.describe(), shape_str(zp->shape())));
  const int64_t per = channels > 0 ? t.numel() / channels : 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    v[i] -= static_cast<uint64_t>(zp->get_i64(zp->numel() == 1 ? 0 : i / per));
  return v;
}

// ConvInteger's zero points: x's per tensor, w's per tensor or per output channel, each of
// its tensor's dtype.
Status check_integer_zero_points(const InferCtx &ctx) {
  if (ctx.present(2)) {
    KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(2).dtype, ctx.type(0).dtype,
                                           "x_zero_point", "x"));
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(2), 1, "x_zero_point", "tensor"));
  }
  if (ctx.present(3)) {
    KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(3).dtype, ctx.type(1).dtype,
                                           "w_zero_point", "w"));
    const TensorType &w = ctx.type(1);
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(3), w.ranked && w.rank() >= 1 ? w.dims[0] : -1,
                                      "w_zero_point", "output channel"));
  }
  return Status::ok();
}

Status eval_conv_integer(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  KILN_ASSIGN(ConvShape s, conv_shape(ctx.op, x.shape(), w.shape(), false));
  KILN_TRY(nn::check_result_size(ctx.op, s.out));
  KILN_ASSIGN(auto vx, minus_zp(ctx.op, x, ctx.present(2) ? &ctx.input(2) : nullptr, 1));
  KILN_ASSIGN(auto vw, minus_zp(ctx.op, w, ctx.present(3) ? &ctx.input(3) : nullptr, s.M));
  ctx.out = {nn::store<uint64_t>(conv_run<uint64_t>(vx.data(), vw.data(), nullptr, s), DType::i32,
                                 s.out)};
  return Status::ok();
}

// ---- transposed convolution ----------------------------------------------------------------

template <class T>
std::vector<T> convt_run(const T *X, const T *W, const T *B, const ConvShape &s) {
  const Window &w = s.w;
  const int64_t Cg = s.C / s.G, Mg = s.M / s.G, ks = w.kernel_size(), Kc = Mg * ks;
  const int64_t xin = w.out_size(), yout = w.in_size();
  std::vector<T> Y(static_cast<size_t>(s.N * s.M * yout));
  std::vector<T> wt(static_cast<size_t>(Kc * Cg)), col(static_cast<size_t>(Kc * xin));
  for (int64_t g = 0; g < s.G; ++g) {
    const T *Wg = W + g * Cg * Kc; // [Cg][Kc]
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t k = 0; k < Kc; ++k) wt[k * Cg + c] = Wg[c * Kc + k];
    for (int64_t n = 0; n < s.N; ++n) {
      nn::gemm<T>(Kc, xin, Cg, wt.data(), Cg, X + (n * s.C + g * Cg) * xin, xin, col.data(), xin,
                  false);
      nn::col2im_add<T>(col.data(), Mg, w, Y.data() + (n * s.M + g * Mg) * yout);
    }
  }
  if (B)
    for (int64_t n = 0; n < s.N; ++n)
      for (int64_t m = 0; m < s.M; ++m) {
        T *y = Y.data() + (n * s.M + m) * yout;
        for (int64_t p = 0; p < yout; ++p) y[p] += B[m];
      }
  return Y;
}

template <class T>
Tensor convt_typed(const Tensor &x, const Tensor &w, const Tensor *b, const ConvShape &s, DType dt) {
  nn::View<T> vx(x), vw(w);
  std::optional<nn::View<T>> vb;
  if (b) vb.emplace(*b);
  return nn::store<T>(convt_run<T>(vx.data(), vw.data(), vb ? vb->data() : nullptr, s), dt, s.out);
}

Status eval_conv_transpose(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &w = ctx.input(1);
  const Tensor *b = ctx.present(2) ? &ctx.input(2) : nullptr;
  KILN_ASSIGN(ConvShape s, conv_shape(ctx.op, x.shape(), w.shape(), true));
  KILN_TRY(nn::check_result_size(ctx.op, s.out));
  KILN_TRY(check_bias(ctx.op, b, s.M));
  switch (nn::compute_type(x.dtype())) {
  case CType::f32: ctx.out = {convt_typed<float>(x, w, b, s, x.dtype())}; break;
  case CType::f64: ctx.out = {convt_typed<double>(x, w, b, s, x.dtype())}; break;
  case CType::u64: ctx.out = {convt_typed<uint64_t>(x, w, b, s, x.dtype())}; break;
  }
  return Status::ok();
}

// ---- registration --------------------------------------------------------------------------

Status infer_conv(InferCtx &ctx, bool transpose, DType out_dt) {
  const TensorType &x = ctx.type(0), &w = ctx.type(1);
  if (!x.ranked || !w.ranked) {
    ctx.out = {TensorType{out_dt, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(ConvShape s, conv_shape(ctx.op, x.dims, w.dims, transpose));
  ctx.out = {TensorType{out_dt, s.out, true}};
  return Status::ok();
}

Status same_float_dtypes(const InferCtx &ctx) {
  KILN_TRY(expect_float(ctx.op, "input", ctx.type(0).dtype));
  for (size_t i = 1; i < ctx.in.size(); ++i)
    if (ctx.present(i) && ctx.type(i).dtype != ctx.type(0).dtype)
      return ctx.error(fmt::format("operand {} has dtype {}, expected {}", i,
                                   dtype_name(ctx.type(i).dtype), dtype_name(ctx.type(0).dtype)));
  return Status::ok();
}

} // namespace

void register_nn_conv_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.conv",
      .min_operands = 2,
      .max_operands = 3,
      .infer =
          [](InferCtx &ctx) {
            KILN_TRY(same_float_dtypes(ctx));
            return infer_conv(ctx, false, ctx.type(0).dtype);
          },
      .eval = eval_conv,
  });
  r.add(OpDef{
      .name = "kiln.conv_transpose",
      .min_operands = 2,
      .max_operands = 3,
      .infer =
          [](InferCtx &ctx) {
            KILN_TRY(same_float_dtypes(ctx));
            return infer_conv(ctx, true, ctx.type(0).dtype);
          },
      .eval = eval_conv_transpose,
  });
  r.add(OpDef{
      .name = "kiln.conv_integer",
      .min_operands = 2,
      .max_operands = 4,
      .infer =
          [](InferCtx &ctx) {
            for (size_t i = 0; i < ctx.in.size(); ++i)
              if (ctx.present(i))
                KILN_TRY(expect_dtype_in(ctx.op, "operand", ctx.type(i).dtype, {DType::i8, DType::u8}));
            KILN_TRY(check_integer_zero_points(ctx));
            return infer_conv(ctx, false, DType::i32);
          },
      .eval = eval_conv_integer,
  });
}

} // namespace kiln
