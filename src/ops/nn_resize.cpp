// kiln.resize: N-d resampling (nearest / linear / cubic) with the ONNX coordinate transforms,
// antialiasing and tf_crop_and_resize. Also hosts register_nn_extra_ops, which registers the
// whole "nn extra" family (resampling, detection, quantisation).
//
// kiln.resize operands: x, roi (optional), scales (optional, f32), sizes (optional, i64).
// Exactly one of scales / sizes must be present and non-empty. Attributes:
//   mode: "nearest" | "linear" | "cubic"
//   coordinate_transformation_mode: "half_pixel" | "half_pixel_symmetric" |
//       "pytorch_half_pixel" | "align_corners" | "asymmetric" | "tf_crop_and_resize"
//   nearest_mode: "round_prefer_floor" | "round_prefer_ceil" | "floor" | "ceil" |
//       "simple" (floor when upsampling, ceil when downsampling: ONNX opset < 11)
//   cubic_coeff_a (f), exclude_outside (0/1), extrapolation_value (f), antialias (0/1),
//   axes (ints; empty = all axes; the order of scales / sizes / roi entries),
//   keep_aspect_ratio_policy: "stretch" | "not_larger" | "not_smaller".
// Interpolation is separable and computed in double.
#include "ops/nn_extra_internal.h"
#include "ops/nn_internal.h"
#include "ops/ops.h"

#include <algorithm>
#include <cmath>

namespace kiln {

void register_nn_extra_ops(OpRegistry &r) {
  register_nn_resize_ops(r);
  register_nn_grid_ops(r);
  register_nn_detect_ops(r);
  register_nn_quant_ops(r);
  register_nn_qlinear_ops(r);
}

namespace {

bool one_of(const std::string &s, std::initializer_list<const char *> ok) {
  for (const char *o : ok)
    if (s == o) return true;
  return false;
}

Status verify_resize(const Op &op) {
  const std::string mode = op.attr_str("mode", "nearest");
  if (!one_of(mode, {"nearest", "linear", "cubic"}))
    return Status::error(fmt::format("{}: unsupported mode '{}'", op.describe(), mode));
  const std::string ct = op.attr_str("coordinate_transformation_mode", "half_pixel");
  if (!one_of(ct, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                   "asymmetric", "tf_crop_and_resize"}))
    return Status::error(
        fmt::format("{}: unsupported coordinate_transformation_mode '{}'", op.describe(), ct));
  const std::string nm = op.attr_str("nearest_mode", "round_prefer_floor");
  if (!one_of(nm, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "simple"}))
    return Status::error(fmt::format("{}: unsupported nearest_mode '{}'", op.describe(), nm));
  const std::string kp = op.attr_str("keep_aspect_ratio_policy", "stretch");
  if (!one_of(kp, {"stretch", "not_larger", "not_smaller"}))
    return Status::error(
        fmt::format("{}: unsupported keep_aspect_ratio_policy '{}'", op.describe(), kp));
  if (op.attr_int("antialias", 0) != 0 && mode == "nearest")
    return Status::error(fmt::format("{}: antialias is not defined for mode 'nearest'",
                                     op.describe()));
  return Status::ok();
}

// The axes the scales / sizes / roi entries refer to, in their order (not sorted).
Result<std::vector<int64_t>> resize_axes(const Op &op, int64_t rank) {
  std::vector<int64_t> axes = op.attr_ints("axes");
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (auto &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
    if (seen[static_cast<size_t>(a)])
      return Status::error(fmt::format("{}: repeated axis {} in axes", op.describe(), a));
    seen[static_cast<size_t>(a)] = true;
  }
  return axes;
}

// A non-negative real result dim as int64; hostile scales (up to DBL_MAX) give values that
// do not fit, and converting those is undefined.
Result<int64_t> resized_dim(const Op &op, double v, size_t axis) {
  if (!(v < 9223372036854775808.0)) // 2^63
    return overflow_error(op, fmt::format("the resized dimension {} ({})", axis, v));
  return static_cast<int64_t>(v);
}

struct ResizePlan {
  Shape out;
  std::vector<double> scale;               // per axis (1 for untouched axes)
  std::vector<double> roi_lo, roi_hi;      // per axis (0 / 1 when no roi)
};

Result<ResizePlan> plan_resize(const Op &op, const Shape &in, const Tensor *roi,
                               const Tensor *scales, const Tensor *sizes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  KILN_ASSIGN(std::vector<int64_t> axes, resize_axes(op, rank));
  const size_t na = axes.size();
  ResizePlan p;
  p.out = in;
  p.scale.assign(in.size(), 1.0);
  p.roi_lo.assign(in.size(), 0.0);
  p.roi_hi.assign(in.size(), 1.0);
  if (sizes && sizes->numel() == 0) sizes = nullptr;
  if (scales && scales->numel() == 0) scales = nullptr;
  if (!sizes && !scales)
    return Status::error(fmt::format("{}: one of scales and sizes must be given", op.describe()));
  if (sizes && scales)
    return Status::error(
        fmt::format("{}: only one of scales and sizes may be given", op.describe()));
  if (roi && roi->numel() > 0) {
    if (static_cast<size_t>(roi->numel()) != 2 * na)
      return Status::error(fmt::format("{}: roi has {} values, expected {}", op.describe(),
                                       roi->numel(), 2 * na));
    for (size_t i = 0; i < na; ++i) {
      p.roi_lo[static_cast<size_t>(axes[i])] = roi->get_f64(static_cast<int64_t>(i));
      p.roi_hi[static_cast<size_t>(axes[i])] = roi->get_f64(static_cast<int64_t>(i + na));
    }
  }
  const Tensor *given = sizes ? sizes : scales;
  if (given->rank() != 1 || static_cast<size_t>(given->numel()) != na)
    return Status::error(fmt::format("{}: {} must be 1-D with {} values, got shape [{}]",
                                     op.describe(), sizes ? "sizes" : "scales", na,
                                     shape_str(given->shape())));
  if (scales) {
    for (size_t i = 0; i < na; ++i) {
      const size_t a = static_cast<size_t>(axes[i]);
      double s = scales->get_f64(static_cast<int64_t>(i));
      if (!(s > 0) || !std::isfinite(s))
        return Status::error(fmt::format("{}: scale {} must be positive", op.describe(), s));
      p.scale[a] = s;
      KILN_ASSIGN(p.out[a], resized_dim(op, std::floor(s * static_cast<double>(in[a])), a));
    }
    return p;
  }
  for (size_t i = 0; i < na; ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    int64_t s = sizes->get_i64(static_cast<int64_t>(i));
    if (s < 0) return Status::error(fmt::format("{}: negative size {}", op.describe(), s));
    if (in[a] == 0)
      return Status::error(fmt::format("{}: cannot resize an empty axis", op.describe()));
    p.out[a] = s;
    p.scale[a] = static_cast<double>(s) / static_cast<double>(in[a]);
  }
  const std::string kp = op.attr_str("keep_aspect_ratio_policy", "stretch");
  if (kp != "stretch" && na > 0) {
    double sc = p.scale[static_cast<size_t>(axes[0])];
    for (int64_t a : axes) {
      double v = p.scale[static_cast<size_t>(a)];
      sc = kp == "not_larger" ? std::min(sc, v) : std::max(sc, v);
    }
    for (int64_t a : axes) {
      p.scale[static_cast<size_t>(a)] = sc;
      KILN_ASSIGN(p.out[static_cast<size_t>(a)],
                  resized_dim(op, sc * static_cast<double>(in[static_cast<size_t>(a)]) + 0.5,
                              static_cast<size_t>(a)));
    }
  }
  return p;
}

Status infer_resize(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (!x.ranked) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  const Tensor *roi = ctx.present(1) ? const_operand(ctx, 1) : nullptr;
  const Tensor *scales = ctx.present(2) ? const_operand(ctx, 2) : nullptr;
  const Tensor *sizes = ctx.present(3) ? const_operand(ctx, 3) : nullptr;
  bool known = x.is_static() && (!ctx.present(1) || roi);
  // A present operand is only usable when its value is known (or it is statically empty).
  for (size_t i = 2; i <= 3; ++i)
    if (ctx.present(i) && !const_operand(ctx, i) &&
        !(ctx.type(i).ranked && ctx.type(i).dims.size() == 1 && ctx.type(i).dims[0] == 0))
      known = false;
  if (known) {
    KILN_ASSIGN(ResizePlan p, plan_resize(ctx.op, x.dims, roi, scales, sizes));
    ctx.out = {TensorType{x.dtype, p.out, true}};
    return Status::ok();
  }
  KILN_ASSIGN(std::vector<int64_t> axes, resize_axes(ctx.op, x.rank()));
  Shape out = x.dims;
  for (int64_t a : axes) out[static_cast<size_t>(a)] = kDynamic;
  // Constant sizes give the result dims without the input dims (unless the aspect ratio is
  // kept, which depends on them).
  if (sizes && sizes->numel() == static_cast<int64_t>(axes.size()) &&
      ctx.op.attr_str("keep_aspect_ratio_policy", "stretch") == "stretch" &&
      (!scales || scales->numel() == 0))
    for (size_t i = 0; i < axes.size(); ++i)
      out[static_cast<size_t>(axes[i])] =
          std::max<int64_t>(sizes->get_i64(static_cast<int64_t>(i)), kDynamic);
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

// Taps of one output coordinate along one axis: input indices (unclamped) and weights.
struct Taps {
  std::vector<int64_t> idx;
  std::vector<double> w;
  bool outside = false; // tf_crop_and_resize: the extrapolation value
};

struct AxisParams {
  std::string mode, ct, nearest_mode;
  double a = -0.75;
  bool exclude_outside = false, antialias = false;
};

double source_coord(const AxisParams &P, double x, double scale, int64_t in, int64_t out_int,
                    double lo, double hi, bool &outside) {
  const double in_w = static_cast<double>(in);
  const double out_w = scale * in_w;
  outside = false;
  if (P.ct == "align_corners") return out_w == 1 ? 0.0 : x * (in_w - 1) / (out_w - 1);
  if (P.ct == "asymmetric") return x / scale;
  if (P.ct == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (P.ct == "half_pixel_symmetric") {
    double adjustment = static_cast<double>(out_int) / out_w;
    double offset = in_w / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  if (P.ct == "tf_crop_and_resize") {
    double xo = out_w == 1 ? (hi - lo) * (in_w - 1) / 2 : x * (hi - lo) * (in_w - 1) / (out_w - 1);
    xo += lo * (in_w - 1);
    outside = xo < 0 || xo > in_w - 1;
    return xo;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

// A real coordinate as an integer, saturated far outside any axis: hostile roi values put
// coordinates beyond int64 (or at NaN), and converting those is undefined. Callers clamp.
int64_t index_of(double v) {
  constexpr double kFar = 4611686018427387904.0; // 2^62
  if (std::isnan(v)) return -1;
  return static_cast<int64_t>(std::clamp(v, -kFar, kFar));
}

int64_t nearest_index(const std::string &nm, double x, double scale) {
  const double f = std::floor(x);
  if (x == f) return index_of(f);
  const double frac = x - f;
  if (nm == "round_prefer_floor") return index_of(frac <= 0.5 ? f : f + 1);
  if (nm == "round_prefer_ceil") return index_of(frac < 0.5 ? f : f + 1);
  if (nm == "floor") return index_of(f);
  if (nm == "ceil") return index_of(f + 1);
  // simple: truncation when upsampling, ceil when downsampling.
  return index_of(scale < 1 ? std::ceil(x) : std::trunc(x));
}

double cubic_kernel(double x, double A) {
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0.0;
}

// Weights for the taps floor-ish(x) - n/2 + 1 + k; ratio in (0, 1].
std::vector<double> tap_weights(const AxisParams &P, double ratio, double scale) {
  std::vector<double> c;
  if (P.mode == "linear" && !P.antialias) return {1 - ratio, ratio};
  if (P.mode == "cubic" && !P.antialias) {
    for (int k = -1; k <= 2; ++k) c.push_back(cubic_kernel(ratio - k, P.a));
    return c;
  }
  const double s = std::min(scale, 1.0);
  double sum = 0;
  if (P.mode == "linear") {
    const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    for (int64_t i = start; i < 2 - start; ++i)
      c.push_back(std::clamp(1 - std::fabs((static_cast<double>(i) - ratio) * s), 0.0, 1.0));
  } else {
    const int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
    for (int64_t i = start; i < 2 - start; ++i)
      c.push_back(cubic_kernel(s * (static_cast<double>(i) - ratio), P.a));
  }
  for (double v : c) sum += v;
  if (sum != 0)
    for (double &v : c) v /= sum;
  return c;
}

Taps axis_taps(const AxisParams &P, int64_t o, double scale, int64_t in, int64_t out, double lo,
               double hi) {
  Taps t;
  double x = source_coord(P, static_cast<double>(o), scale, in, out, lo, hi, t.outside);
  if (std::isnan(x)) t.outside = true; // e.g. a NaN roi
  if (t.outside) return t;
  // Far outside the input every tap is clamped to the edge anyway.
  x = std::clamp(x, -1e9, 1e9);
  if (P.mode == "nearest") {
    t.idx = {std::clamp<int64_t>(nearest_index(P.nearest_mode, x, scale), 0, in - 1)};
    t.w = {1.0};
    return t;
  }
  const double c = std::ceil(x);
  const double ratio = x - (c - 1); // in (0, 1]
  t.w = tap_weights(P, ratio, scale);
  const int64_t n = static_cast<int64_t>(t.w.size());
  const int64_t base = index_of(c) - n / 2;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t i = base + k;
    if (P.exclude_outside && (i < 0 || i >= in)) t.w[static_cast<size_t>(k)] = 0;
    sum += t.w[static_cast<size_t>(k)];
    t.idx.push_back(std::clamp<int64_t>(i, 0, in - 1));
  }
  if (P.exclude_outside && sum != 0)
    for (double &v : t.w) v /= sum;
  return t;
}

// Resamples axis `ax` of `data` (shape `shape`, updated) to `out` elements.
std::vector<double> resize_axis(const AxisParams &P, std::vector<double> data, Shape &shape,
                                size_t ax, int64_t out, double scale, double lo, double hi,
                                double extrapolation) {
  const int64_t in = shape[ax];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= shape[d];
  for (size_t d = ax + 1; d < shape.size(); ++d) inner *= shape[d];
  std::vector<Taps> taps;
  taps.reserve(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) taps.push_back(axis_taps(P, o, scale, in, out, lo, hi));
  std::vector<double> res(static_cast<size_t>(outer * out * inner), 0.0);
  for (int64_t b = 0; b < outer; ++b) {
    const double *src = data.data() + b * in * inner;
    double *dst = res.data() + b * out * inner;
    for (int64_t o = 0; o < out; ++o) {
      const Taps &t = taps[static_cast<size_t>(o)];
      double *d = dst + o * inner;
      if (t.outside) {
        std::fill(d, d + inner, extrapolation);
        continue;
      }
      for (size_t k = 0; k < t.idx.size(); ++k) {
        const double w = t.w[k];
        if (w == 0) continue;
        const double *s = src + t.idx[k] * inner;
        for (int64_t j = 0; j < inner; ++j) d[j] += w * s[j];
      }
    }
  }
  shape[ax] = out;
  return res;
}

Status eval_resize(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(ResizePlan p, plan_resize(op, x.shape(), ctx.present(1) ? &ctx.input(1) : nullptr,
                                        ctx.present(2) ? &ctx.input(2) : nullptr,
                                        ctx.present(3) ? &ctx.input(3) : nullptr));
  AxisParams P;
  P.mode = op.attr_str("mode", "nearest");
  P.ct = op.attr_str("coordinate_transformation_mode", "half_pixel");
  P.nearest_mode = op.attr_str("nearest_mode", "round_prefer_floor");
  P.a = op.attr_float("cubic_coeff_a", -0.75);
  P.exclude_outside = op.attr_int("exclude_outside", 0) != 0;
  P.antialias = op.attr_int("antialias", 0) != 0;
  const double extrapolation = op.attr_float("extrapolation_value", 0.0);
  KILN_ASSIGN(Tensor out, Tensor::allocate(x.dtype(), p.out));
  if (out.numel() == 0) {
    ctx.out = {out};
    return Status::ok();
  }
  if (x.numel() == 0) return ctx.error("cannot resize an empty tensor to a non-empty one");
  std::vector<double> data = x.to_f64s();
  Shape shape = x.shape();
  for (size_t a = 0; a < shape.size(); ++a) {
    const bool identity = p.scale[a] == 1.0 && p.out[a] == shape[a] && P.ct != "tf_crop_and_resize";
    if (identity) continue;
    data = resize_axis(P, std::move(data), shape, a, p.out[a], p.scale[a], p.roi_lo[a],
                       p.roi_hi[a], extrapolation);
  }
  for (int64_t i = 0; i < out.numel(); ++i) store_rounded(out, i, data[static_cast<size_t>(i)]);
  ctx.out = {out};
  return Status::ok();
}

} // namespace

void register_nn_resize_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.resize",
      .min_operands = 1,
      .max_operands = 4,
      .min_results = 1,
      .max_results = 1,
      .verify = verify_resize,
      .infer = infer_resize,
      .eval = eval_resize,
  });
}

} // namespace kiln
