// Quantised linear algebra with an exact integer reference: kiln.qlinear_matmul and
// kiln.qlinear_conv. Accumulation is in int64 on zero-point-corrected values; the result is
// requantised as saturate(round_half_even(acc * m + y_zero_point)), m = a_scale * b_scale /
// y_scale, as the ONNX reference does: m in the scales' precision (requant_multiplier), the
// rest in double, the zero point added before rounding (a tie rounds to an even result).
//
// kiln.qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y (y_zp's dtype)
//   numpy matmul broadcasting; a_scale / a_zp per tensor or per row (M values), b_scale / b_zp
//   per tensor or per column (N values), y_scale / y_zp per tensor or per column.
// kiln.qlinear_conv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias? (i32)) -> y
//   attributes strides, dilations, pads (begin..., end...), group, auto_pad ("NOTSET" |
//   "VALID" | "SAME_UPPER" | "SAME_LOWER"); w_scale / w_zp per tensor or per output channel.
// Both take `requant`: "f64" (default, the ONNX reference above) or "f32", ONNX Runtime's
// integer kernels: saturate(round_half_even(f32(acc) * f32(m)) + y_zero_point), the product
// rounded to f32 and the zero point added after rounding. fuse-qdq sets "f32": a QDQ model's
// integer groups then agree with ONNX Runtime's bit for bit (the f64 product moved 1 in 10^5
// of mobilenet_v2's values by one step, and one-step differences grow through later layers).
#include "ops/nn_extra_internal.h"
#include "ops/quant_params.h"

#include "support/half.h"

#include <algorithm>

namespace kiln {

namespace {

const std::initializer_list<DType> kQTypes = {DType::i8, DType::u8};

// The value of a per-tensor / per-channel parameter for channel `i`.
Result<double> param_at(const Op &op, const Tensor &t, int64_t i, int64_t n, const char *what) {
  if (t.numel() == 1) return t.get_f64(0);
  if (t.numel() != n || i >= n)
    return Status::error(fmt::format("{}: {} must have 1 or {} values, got {}", op.describe(),
                                     what, n, t.numel()));
  return t.get_f64(i);
}

// The `requant` attribute: true for "f32" (ONNX Runtime's), false for "f64" (the reference's).
Result<bool> requant_f32(const Op &op) {
  const std::string r = op.attr_str("requant", "f64");
  if (r != "f64" && r != "f32")
    return Status::error(fmt::format("{}: requant must be \"f64\" or \"f32\", got \"{}\"",
                                     op.describe(), r));
  return r == "f32";
}

// Accumulator `acc` requantised with multiplier m and zero point zp, before saturation.
double requantize(bool f32, int64_t acc, double m, double zp) {
  if (!f32) return std::nearbyint(static_cast<double>(acc) * m + zp);
  const float r = static_cast<float>(acc) * static_cast<float>(m);
  return static_cast<double>(std::nearbyintf(r)) + zp;
}

// Operand names of the ops, for messages.
constexpr const char *kMatmulNames[] = {"a", "a_scale", "a_zero_point", "b", "b_scale",
                                        "b_zero_point", "y_scale", "y_zero_point"};
constexpr const char *kConvNames[] = {"x", "x_scale", "x_zero_point", "w", "w_scale",
                                      "w_zero_point", "y_scale", "y_zero_point", "bias"};

// Quantised input q, its scale q + 1 and its zero point zp.
Status check_qtypes(InferCtx &ctx, size_t q, size_t zp, const char *const *names) {
  KILN_TRY(expect_dtype_in(ctx.op, "quantized input", ctx.type(q).dtype, kQTypes));
  KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(zp).dtype, ctx.type(q).dtype,
                                         names[zp], names[q]));
  KILN_TRY(expect_float(ctx.op, "scale", ctx.type(q + 1).dtype));
  return Status::ok();
}

// Scale values (constant operands in shape functions, all in the reference).
Status check_scales(InferCtx &ctx, const char *const *names) {
  for (size_t i : {1, 4, 6}) KILN_TRY(quant::check_const_scale(ctx, i, names[i]));
  return Status::ok();
}
Status check_scales(EvalCtx &ctx, const char *const *names) {
  for (size_t i : {1, 4, 6}) KILN_TRY(quant::check_scale_values(ctx.op, ctx.input(i), names[i]));
  return Status::ok();
}

// The requantisation multiplier s1 * s2 / s3 as the ONNX reference computes it: in the
// scales' precision, rounded after the product and after the quotient (numpy on f32 scalars);
// the accumulator is then multiplied by it in double.
double requant_multiplier(DType t, double s1, double s2, double s3) {
  if (t == DType::f64) return s1 * s2 / s3;
  auto round = [t](float v) {
    if (t == DType::f16) return f16_to_f32(f32_to_f16(v));
    if (t == DType::bf16) return bf16_to_f32(f32_to_bf16(v));
    return v;
  };
  const float p = round(static_cast<float>(s1) * static_cast<float>(s2));
  return static_cast<double>(round(p / static_cast<float>(s3)));
}

// ---- qlinear_matmul -----------------------------------------------------------------------

Result<Shape> matmul_shape(const Op &op, Shape a, Shape b) {
  if (a.empty() || b.empty())
    return Status::error(fmt::format("{}: matmul operands must have rank >= 1", op.describe()));
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const int64_t ka = a.back(), kb = b[b.size() - 2];
  if (ka >= 0 && kb >= 0 && ka != kb)
    return Status::error(fmt::format("{}: inner dims {} and {} differ", op.describe(), ka, kb));
  KILN_ASSIGN(Shape batch, broadcast_dims(op, Shape(a.begin(), a.end() - 2),
                                          Shape(b.begin(), b.end() - 2)));
  if (!a1) batch.push_back(a[a.size() - 2]);
  if (!b1) batch.push_back(b.back());
  return batch;
}

Status infer_qlinear_matmul(InferCtx &ctx) {
  KILN_TRY(requant_f32(ctx.op).status());
  KILN_TRY(check_qtypes(ctx, 0, 2, kMatmulNames));
  KILN_TRY(check_qtypes(ctx, 3, 5, kMatmulNames));
  KILN_TRY(expect_dtype_in(ctx.op, "y_zero_point", ctx.type(7).dtype, kQTypes));
  KILN_TRY(expect_float(ctx.op, "y_scale", ctx.type(6).dtype));
  KILN_TRY(check_scales(ctx, kMatmulNames));
  const TensorType &a = ctx.type(0), &b = ctx.type(3);
  if (!a.ranked || !b.ranked) {
    ctx.out = {TensorType{ctx.type(7).dtype, {}, false}};
    return Status::ok();
  }
  // a's parameters per tensor or per row, b's and y's per tensor or per column.
  const int64_t M = a.rank() >= 2 ? a.dims[a.dims.size() - 2] : 1;
  const int64_t N = b.rank() >= 2 ? b.dims.back() : 1;
  for (size_t i : {1, 2})
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(i), M, kMatmulNames[i], "row of a"));
  for (size_t i : {4, 5, 6, 7})
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(i), N, kMatmulNames[i], "column of b"));
  KILN_ASSIGN(Shape out, matmul_shape(ctx.op, a.dims, b.dims));
  ctx.out = {TensorType{ctx.type(7).dtype, out, true}};
  return Status::ok();
}

Status eval_qlinear_matmul(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &A = ctx.input(0), &B = ctx.input(3);
  KILN_ASSIGN(Shape out_shape, matmul_shape(op, A.shape(), B.shape()));
  Shape as = A.shape(), bs = B.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  KILN_ASSIGN(Shape batch, broadcast_shapes(abatch, bbatch));
  KILN_TRY(check_scales(ctx, kMatmulNames));
  KILN_ASSIGN(const bool f32r, requant_f32(op));
  const DType yt = ctx.input(7).dtype(), st = ctx.input(1).dtype();
  KILN_ASSIGN(Tensor Y, Tensor::allocate(yt, out_shape));
  std::vector<double> ra(static_cast<size_t>(M)), rb(static_cast<size_t>(N));
  std::vector<int64_t> za(static_cast<size_t>(M)), zb(static_cast<size_t>(N));
  std::vector<double> ys(static_cast<size_t>(N));
  std::vector<int64_t> yz(static_cast<size_t>(N));
  for (int64_t m = 0; m < M; ++m) {
    KILN_ASSIGN(ra[static_cast<size_t>(m)], param_at(op, ctx.input(1), m, M, "a_scale"));
    KILN_ASSIGN(double z, param_at(op, ctx.input(2), m, M, "a_zero_point"));
    za[static_cast<size_t>(m)] = static_cast<int64_t>(z);
  }
  for (int64_t n = 0; n < N; ++n) {
    KILN_ASSIGN(rb[static_cast<size_t>(n)], param_at(op, ctx.input(4), n, N, "b_scale"));
    KILN_ASSIGN(double z, param_at(op, ctx.input(5), n, N, "b_zero_point"));
    zb[static_cast<size_t>(n)] = static_cast<int64_t>(z);
    KILN_ASSIGN(ys[static_cast<size_t>(n)], param_at(op, ctx.input(6), n, N, "y_scale"));
    KILN_ASSIGN(double yzv, param_at(op, ctx.input(7), n, N, "y_zero_point"));
    yz[static_cast<size_t>(n)] = static_cast<int64_t>(yzv);
  }
  // Zero-point corrected operands.
  std::vector<int64_t> av(static_cast<size_t>(A.numel())), bv(static_cast<size_t>(B.numel()));
  for (int64_t i = 0; i < A.numel(); ++i)
    av[static_cast<size_t>(i)] = A.get_i64(i) - za[static_cast<size_t>((i / K) % M)];
  for (int64_t i = 0; i < B.numel(); ++i)
    bv[static_cast<size_t>(i)] = B.get_i64(i) - zb[static_cast<size_t>(i % N)];
  const int64_t nb = shape_numel(batch);
  std::vector<int64_t> aoff(static_cast<size_t>(nb)), boff(static_cast<size_t>(nb));
  BroadcastIndexer bi(batch, {abatch, bbatch});
  bi.for_each([&](int64_t i, const int64_t *off) {
    aoff[static_cast<size_t>(i)] = off[0];
    boff[static_cast<size_t>(i)] = off[1];
  });
  for (int64_t t = 0; t < nb; ++t) {
    const int64_t a0 = aoff[static_cast<size_t>(t)] * M * K, b0 = boff[static_cast<size_t>(t)] * K * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int64_t acc = 0;
        const int64_t *pa = av.data() + a0 + m * K, *pb = bv.data() + b0 + n;
        for (int64_t k = 0; k < K; ++k) acc += pa[k] * pb[k * N];
        const double mul = requant_multiplier(st, ra[static_cast<size_t>(m)],
                                              rb[static_cast<size_t>(n)],
                                              ys[static_cast<size_t>(n)]);
        Y.set_i64((t * M + m) * N + n,
                  round_saturate(requantize(f32r, acc, mul,
                                            static_cast<double>(yz[static_cast<size_t>(n)])),
                                 yt));
      }
  }
  ctx.out = {Y};
  return Status::ok();
}

// ---- qlinear_conv -------------------------------------------------------------------------

struct ConvGeom {
  int64_t N = 0, C = 0, M = 0, G = 1;
  Shape in, k, out, stride, dil, pad_lo;
};

Result<ConvGeom> conv_geom(const Op &op, const Shape &xs, const Shape &ws) {
  if (xs.size() < 3 || ws.size() != xs.size())
    return Status::error(fmt::format("{}: input [{}] and weight [{}] ranks do not fit a conv",
                                     op.describe(), shape_str(xs), shape_str(ws)));
  const size_t r = xs.size() - 2;
  ConvGeom g;
  g.N = xs[0];
  g.C = xs[1];
  g.M = ws[0];
  g.G = op.attr_int("group", 1);
  g.in.assign(xs.begin() + 2, xs.end());
  g.k.assign(ws.begin() + 2, ws.end());
  g.stride = op.attr_ints("strides", Shape(r, 1));
  g.dil = op.attr_ints("dilations", Shape(r, 1));
  Shape pads = op.attr_ints("pads", Shape(2 * r, 0));
  if (g.stride.size() != r || g.dil.size() != r || pads.size() != 2 * r)
    return Status::error(fmt::format("{}: strides/dilations/pads do not match rank", op.describe()));
  const std::optional<int64_t> wcg = g.G < 1 ? std::nullopt : checked_mul(ws[1], g.G);
  if (g.G < 1 || g.C % g.G != 0 || g.M % g.G != 0 || !wcg || *wcg != g.C)
    return Status::error(fmt::format("{}: group {} does not fit {} input and {} output channels "
                                     "(weight [{}])",
                                     op.describe(), g.G, g.C, g.M, shape_str(ws)));
  const std::string ap = op.attr_str("auto_pad", "NOTSET");
  for (size_t d = 0; d < r; ++d) {
    if (g.stride[d] < 1 || g.dil[d] < 1)
      return Status::error(fmt::format("{}: strides and dilations must be positive", op.describe()));
    if (g.k[d] < 1) return Status::error(op.describe() + ": kernel dims must be >= 1");
    // Dims and attributes of a hostile model reach INT64_MAX: every step is checked.
    std::optional<int64_t> ek = checked_mul(g.dil[d], g.k[d] - 1);
    if (ek) ek = checked_add(*ek, 1);
    if (!ek)
      return overflow_error(op, fmt::format("the dilated kernel of spatial dim {}", d));
    int64_t lo = pads[d], hi = pads[d + r];
    if (ap == "VALID") {
      lo = hi = 0;
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t o = g.in[d] / g.stride[d] + (g.in[d] % g.stride[d] != 0 ? 1 : 0);
      // (o - 1) * stride lies in [-stride, in).
      const int64_t total = std::max<int64_t>(0, ((o - 1) * g.stride[d] - g.in[d]) + *ek);
      lo = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      hi = total - lo;
    } else if (ap != "NOTSET") {
      return Status::error(fmt::format("{}: unsupported auto_pad '{}'", op.describe(), ap));
    }
    if (lo < 0 || hi < 0) return Status::error(op.describe() + ": pads must be non-negative");
    std::optional<int64_t> len = checked_add(g.in[d], lo);
    if (len) len = checked_add(*len, hi);
    if (!len)
      return overflow_error(op, fmt::format("the padded input of spatial dim {} ({} + pads {} "
                                            "+ {})",
                                            d, g.in[d], lo, hi));
    if (*len - *ek < 0)
      return Status::error(fmt::format("{}: kernel larger than padded input", op.describe()));
    const int64_t o = (*len - *ek) / g.stride[d] + 1;
    g.pad_lo.push_back(lo);
    g.out.push_back(o);
  }
  return g;
}

Status infer_qlinear_conv(InferCtx &ctx) {
  KILN_TRY(requant_f32(ctx.op).status());
  KILN_TRY(check_qtypes(ctx, 0, 2, kConvNames));
  KILN_TRY(check_qtypes(ctx, 3, 5, kConvNames));
  KILN_TRY(expect_dtype_in(ctx.op, "y_zero_point", ctx.type(7).dtype, kQTypes));
  KILN_TRY(expect_float(ctx.op, "y_scale", ctx.type(6).dtype));
  if (ctx.present(8)) KILN_TRY(expect_dtype_in(ctx.op, "bias", ctx.type(8).dtype, {DType::i32}));
  KILN_TRY(check_scales(ctx, kConvNames));
  const TensorType &x = ctx.type(0), &w = ctx.type(3);
  // x's and y's parameters per tensor, w's per tensor or per output channel.
  for (size_t i : {1, 2, 6, 7})
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(i), 1, kConvNames[i], "tensor"));
  const int64_t M = w.ranked && w.rank() >= 1 ? w.dims[0] : -1;
  for (size_t i : {4, 5})
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(i), M, kConvNames[i], "output channel"));
  const DType yt = ctx.type(7).dtype;
  if (!x.ranked || !w.ranked) {
    ctx.out = {TensorType{yt, {}, false}};
    return Status::ok();
  }
  if (x.is_static() && w.is_static()) {
    KILN_ASSIGN(ConvGeom g, conv_geom(ctx.op, x.dims, w.dims));
    Shape out = {g.N, g.M};
    out.insert(out.end(), g.out.begin(), g.out.end());
    ctx.out = {TensorType{yt, out, true}};
    return Status::ok();
  }
  Shape out = dynamic_dims(x.rank());
  out[0] = x.dims[0];
  out[1] = w.dims[0];
  ctx.out = {TensorType{yt, out, true}};
  return Status::ok();
}

// acc[n, m, o...] for all outputs, int64, zero-point corrected, bias included.
Result<std::vector<int64_t>> conv_accumulate(EvalCtx &ctx, const ConvGeom &g) {
  const Tensor &X = ctx.input(0), &W = ctx.input(3);
  const size_t r = g.in.size();
  KILN_ASSIGN(double xzpd, param_at(ctx.op, ctx.input(2), 0, 1, "x_zero_point"));
  const int64_t xzp = static_cast<int64_t>(xzpd);
  std::vector<int64_t> xv(static_cast<size_t>(X.numel())), wv(static_cast<size_t>(W.numel()));
  for (int64_t i = 0; i < X.numel(); ++i) xv[static_cast<size_t>(i)] = X.get_i64(i) - xzp;
  const int64_t wper = W.numel() / std::max<int64_t>(g.M, 1);
  for (int64_t i = 0; i < W.numel(); ++i) {
    KILN_ASSIGN(double z, param_at(ctx.op, ctx.input(5), i / wper, g.M, "w_zero_point"));
    wv[static_cast<size_t>(i)] = W.get_i64(i) - static_cast<int64_t>(z);
  }
  if (ctx.present(8) && ctx.input(8).numel() != g.M)
    return Status::error(fmt::format("{}: bias must have {} values", ctx.op.describe(), g.M));
  const int64_t cg = g.C / g.G, mg = g.M / g.G, npos = shape_numel(g.out), ksz = shape_numel(g.k);
  const int64_t plane = shape_numel(g.in);
  const std::vector<int64_t> ostr = shape_strides(g.out), kstr = shape_strides(g.k),
                             istr = shape_strides(g.in);
  std::vector<int64_t> acc(static_cast<size_t>(g.N * g.M * npos), 0);
  std::vector<int64_t> o(r), kk(r);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) {
      const int64_t grp = m / mg;
      const int64_t bias = ctx.present(8) ? ctx.input(8).get_i64(m) : 0;
      for (int64_t p = 0; p < npos; ++p) {
        for (size_t d = 0; d < r; ++d) o[d] = (p / ostr[d]) % g.out[d];
        int64_t s = bias;
        for (int64_t kp = 0; kp < ksz; ++kp) {
          int64_t off = 0;
          bool inside = true;
          for (size_t d = 0; d < r && inside; ++d) {
            const int64_t i = o[d] * g.stride[d] + ((kp / kstr[d]) % g.k[d]) * g.dil[d] - g.pad_lo[d];
            inside = i >= 0 && i < g.in[d];
            off += i * istr[d];
          }
          if (!inside) continue;
          for (int64_t c = 0; c < cg; ++c)
            s += xv[static_cast<size_t>((n * g.C + grp * cg + c) * plane + off)] *
                 wv[static_cast<size_t>((m * cg + c) * ksz + kp)];
        }
        acc[static_cast<size_t>((n * g.M + m) * npos + p)] = s;
      }
    }
  return acc;
}

Status eval_qlinear_conv(EvalCtx &ctx) {
  const Op &op = ctx.op;
  KILN_ASSIGN(ConvGeom g, conv_geom(op, ctx.input(0).shape(), ctx.input(3).shape()));
  KILN_TRY(check_scales(ctx, kConvNames));
  KILN_ASSIGN(double xs, param_at(op, ctx.input(1), 0, 1, "x_scale"));
  KILN_ASSIGN(double ys, param_at(op, ctx.input(6), 0, 1, "y_scale"));
  KILN_ASSIGN(double yzd, param_at(op, ctx.input(7), 0, 1, "y_zero_point"));
  const DType yt = ctx.input(7).dtype();
  Shape out = {g.N, g.M};
  out.insert(out.end(), g.out.begin(), g.out.end());
  KILN_ASSIGN(Tensor Y, Tensor::allocate(yt, out));
  KILN_ASSIGN(const bool f32r, requant_f32(op));
  KILN_ASSIGN(std::vector<int64_t> acc, conv_accumulate(ctx, g));
  const int64_t npos = shape_numel(g.out);
  for (int64_t i = 0; i < Y.numel(); ++i) {
    const int64_t m = (i / std::max<int64_t>(npos, 1)) % g.M;
    KILN_ASSIGN(double ws, param_at(op, ctx.input(4), m, g.M, "w_scale"));
    const double mul = requant_multiplier(ctx.input(1).dtype(), xs, ws, ys);
    Y.set_i64(i, round_saturate(requantize(f32r, acc[static_cast<size_t>(i)], mul, yzd), yt));
  }
  ctx.out = {Y};
  return Status::ok();
}

} // namespace

void register_nn_qlinear_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.qlinear_matmul",
      .min_operands = 8,
      .max_operands = 8,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_qlinear_matmul,
      .eval = eval_qlinear_matmul,
  });
  r.add(OpDef{
      .name = "kiln.qlinear_conv",
      .min_operands = 8,
      .max_operands = 9,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_qlinear_conv,
      .eval = eval_qlinear_conv,
  });
}

} // namespace kiln
