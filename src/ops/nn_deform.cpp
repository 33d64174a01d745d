// kiln.deform_conv (N-d deformable convolution with offsets, optional mask and bias; computed
// in double) and kiln.col2im (folds columns back into an image, summing overlaps).
#include "ops/nn_internal.h"
#include "ops/nn_kernels.h"
#include "ops/op_util.h"

#include <cmath>
#include <optional>

namespace kiln {

using nn::Window;

namespace {

// ---- col2im ----------------------------------------------------------------------------------

// Reads a 1-D int64 shape operand of `n` values (n < 0: any length).
Result<std::vector<int64_t>> shape_operand(const Op &op, const Tensor &t, const char *what) {
  if (t.rank() != 1) return Status::error(fmt::format("{}: {} must be 1-D", op.describe(), what));
  std::vector<int64_t> v = t.to_i64s();
  for (int64_t d : v)
    if (d < 1) return Status::error(fmt::format("{}: {} values must be >= 1", op.describe(), what));
  return v;
}

struct Col2ImShape {
  Window w;
  int64_t N = 0, C = 0;
};

Result<Col2ImShape> col2im_shape(const Op &op, const Shape &xd, const Tensor &image,
                                 const Tensor &block) {
  KILN_ASSIGN(auto img, shape_operand(op, image, "image_shape"));
  KILN_ASSIGN(auto blk, shape_operand(op, block, "block_shape"));
  if (img.size() != blk.size() || img.empty())
    return Status::error(op.describe() + ": image_shape and block_shape must have the same length");
  if (xd.size() != 3) return Status::error(op.describe() + ": input must be [N, C * prod(block), L]");
  Col2ImShape s;
  KILN_ASSIGN(s.w, nn::make_window(op, blk, img, false));
  const std::optional<int64_t> ks_ok = checked_numel(s.w.kernel),
                               blocks = checked_numel(s.w.out);
  if (!ks_ok || !blocks)
    return overflow_error(op, fmt::format("the block size [{}] or block count [{}]",
                                          shape_str(s.w.kernel), shape_str(s.w.out)));
  const int64_t ks = *ks_ok;
  s.N = xd[0];
  if (xd[1] >= 0) {
    if (xd[1] % ks != 0)
      return Status::error(fmt::format("{}: input dim 1 ({}) is not a multiple of the block size {}",
                                       op.describe(), xd[1], ks));
    s.C = xd[1] / ks;
  } else {
    s.C = kDynamic;
  }
  if (xd[2] >= 0 && xd[2] != *blocks)
    return Status::error(fmt::format("{}: input has {} blocks but the geometry gives {}",
                                     op.describe(), xd[2], *blocks));
  return s;
}

Status eval_col2im(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(Col2ImShape s, col2im_shape(ctx.op, x.shape(), ctx.input(1), ctx.input(2)));
  Shape out{s.N, s.C};
  out.insert(out.end(), s.w.in.begin(), s.w.in.end());
  KILN_TRY(nn::check_result_size(ctx.op, out));
  std::vector<double> y(static_cast<size_t>(shape_numel(out)), 0.0);
  nn::View<double> vx(x);
  const int64_t per_in = x.numel() / std::max<int64_t>(1, s.N), per_out = s.C * s.w.in_size();
  for (int64_t n = 0; n < s.N; ++n)
    nn::col2im_add<double>(vx.data() + n * per_in, s.C, s.w, y.data() + n * per_out);
  ctx.out = {nn::store<double>(y, x.dtype(), out)};
  return Status::ok();
}

Status infer_col2im(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  for (size_t i = 1; i < 3; ++i)
    KILN_TRY(expect_dtype_in(ctx.op, "shape operand", ctx.type(i).dtype, {DType::i64}));
  const Tensor *img = const_operand(ctx, 1), *blk = const_operand(ctx, 2);
  if (!x.ranked || !img || !blk) {
    const TensorType &it = ctx.type(1);
    if (it.ranked && it.rank() == 1 && it.dims[0] >= 0) {
      // The declared length is the spatial rank: bounded before it sizes a shape.
      if (it.dims[0] > kMaxListRank)
        return ctx.error(fmt::format("image_shape has {} values, more than the rank limit {}",
                                     it.dims[0], kMaxListRank));
      ctx.out = {TensorType{x.dtype, dynamic_dims(2 + it.dims[0]), true}};
      if (img && x.ranked && x.rank() >= 1) ctx.out[0].dims[0] = x.dims[0];
    } else {
      ctx.out = {TensorType{x.dtype, {}, false}};
    }
    return Status::ok();
  }
  KILN_ASSIGN(Col2ImShape s, col2im_shape(ctx.op, x.dims, *img, *blk));
  Shape out{s.N, s.C};
  out.insert(out.end(), s.w.in.begin(), s.w.in.end());
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

// ---- deform_conv -------------------------------------------------------------------------------

struct DeformShape {
  Window w;
  int64_t N = 0, C = 0, M = 0, G = 1, OG = 1;
  Shape out;
};

Result<DeformShape> deform_shape(const Op &op, const Shape &xd, const Shape &wd) {
  if (xd.size() < 3 || wd.size() != xd.size())
    return Status::error(fmt::format("{}: input [{}] and weights [{}] must have the same rank >= 3",
                                     op.describe(), shape_str(xd), shape_str(wd)));
  DeformShape s;
  s.N = xd[0];
  s.C = xd[1];
  s.M = wd[0];
  s.G = op.attr_int("group", 1);
  s.OG = op.attr_int("offset_group", 1);
  if (s.G < 1 || s.OG < 1) return Status::error(op.describe() + ": group values must be >= 1");
  const std::optional<int64_t> wcg = checked_mul(wd[1], s.G);
  if (wd[1] >= 0 && !wcg)
    return overflow_error(op, fmt::format("weight channels {} x group {}", wd[1], s.G));
  if (s.C >= 0 && wd[1] >= 0 && s.C != *wcg)
    return Status::error(op.describe() + ": input channels do not match the weights and group");
  if ((s.M >= 0 && s.M % s.G) || (s.C >= 0 && s.C % s.OG))
    return Status::error(op.describe() + ": channels are not divisible by the groups");
  std::vector<int64_t> k = op.attr_ints("kernel_shape", Shape(wd.begin() + 2, wd.end()));
  for (int64_t d : k)
    if (d < 0) {
      s.out = dynamic_dims(static_cast<int64_t>(xd.size()));
      s.out[0] = s.N;
      s.out[1] = s.M;
      return s;
    }
  KILN_ASSIGN(s.w, nn::make_window(op, k, Shape(xd.begin() + 2, xd.end()), false));
  s.out = {s.N, s.M};
  s.out.insert(s.out.end(), s.w.out.begin(), s.w.out.end());
  return s;
}

// Multilinear sample of plane `x` (spatial dims `in`) at real coordinates `pos`; 0 outside.
double sample(const double *x, const Shape &in, const std::vector<int64_t> &stride,
              const std::vector<double> &pos) {
  const size_t r = in.size();
  for (size_t d = 0; d < r; ++d)
    if (!(pos[d] > -1.0 && pos[d] < static_cast<double>(in[d]))) return 0.0;
  double acc = 0.0;
  for (size_t corner = 0; corner < (size_t(1) << r); ++corner) {
    double wgt = 1.0;
    int64_t off = 0;
    bool ok = true;
    for (size_t d = 0; d < r && ok; ++d) {
      const double f = std::floor(pos[d]);
      const int64_t i = static_cast<int64_t>(f) + ((corner >> d) & 1);
      const double frac = pos[d] - f;
      wgt *= ((corner >> d) & 1) ? frac : 1.0 - frac;
      ok = i >= 0 && i < in[d];
      off += i * stride[d];
    }
    if (ok && wgt != 0.0) acc += wgt * x[off];
  }
  return acc;
}

// Columns [C * ks][P] of image n: sampled at offset positions, times the mask.
void deform_cols(const DeformShape &s, const double *X, const double *O, const double *Mk,
                 std::vector<double> &col) {
  const Window &w = s.w;
  const int64_t r = w.rank(), ks = w.kernel_size(), P = w.out_size(), cpg = s.C / s.OG;
  const auto istride = shape_strides(w.in);
  std::vector<int64_t> kk(r), o(r);
  std::vector<double> pos(r);
  for (int64_t c = 0; c < s.C; ++c) {
    const int64_t og = c / cpg;
    for (int64_t kidx = 0; kidx < ks; ++kidx) {
      for (int64_t d = r - 1, t = kidx; d >= 0; --d) {
        kk[d] = t % w.kernel[d];
        t /= w.kernel[d];
      }
      for (int64_t p = 0; p < P; ++p) {
        for (int64_t d = r - 1, t = p; d >= 0; --d) {
          o[d] = t % w.out[d];
          t /= w.out[d];
        }
        for (int64_t d = 0; d < r; ++d) {
          const double off = O[((og * ks + kidx) * r + d) * P + p];
          pos[d] = static_cast<double>(o[d] * w.strides[d] - w.pad_begin[d] + kk[d] * w.dilations[d]) + off;
        }
        const double m = Mk ? Mk[(og * ks + kidx) * P + p] : 1.0;
        col[(c * ks + kidx) * P + p] = m * sample(X + c * w.in_size(), w.in, istride, pos);
      }
    }
  }
}

Status eval_deform_conv(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &wt = ctx.input(1), &off = ctx.input(2);
  KILN_ASSIGN(DeformShape s, deform_shape(ctx.op, x.shape(), wt.shape()));
  KILN_TRY(nn::check_result_size(ctx.op, s.out));
  const int64_t r = s.w.rank(), ks = s.w.kernel_size(), P = s.w.out_size();
  Shape want_off{s.N, s.OG * ks * r};
  want_off.insert(want_off.end(), s.w.out.begin(), s.w.out.end());
  if (off.shape() != want_off)
    return ctx.error(fmt::format("offset has shape [{}], expected [{}]", shape_str(off.shape()),
                                 shape_str(want_off)));
  const Tensor *b = ctx.present(3) ? &ctx.input(3) : nullptr;
  const Tensor *mask = ctx.present(4) ? &ctx.input(4) : nullptr;
  if (b && b->numel() != s.M) return ctx.error("bias must have one value per output channel");
  Shape want_mask{s.N, s.OG * ks};
  want_mask.insert(want_mask.end(), s.w.out.begin(), s.w.out.end());
  if (mask && mask->shape() != want_mask)
    return ctx.error(fmt::format("mask has shape [{}], expected [{}]", shape_str(mask->shape()),
                                 shape_str(want_mask)));
  nn::View<double> vx(x), vw(wt), vo(off);
  std::vector<double> mk = mask ? mask->to_f64s() : std::vector<double>();
  std::vector<double> y(static_cast<size_t>(shape_numel(s.out)), 0.0);
  std::vector<double> col(static_cast<size_t>(s.C * ks * P));
  const int64_t Cg = s.C / s.G, Mg = s.M / s.G, Kc = Cg * ks;
  for (int64_t n = 0; n < s.N; ++n) {
    deform_cols(s, vx.data() + n * s.C * s.w.in_size(), vo.data() + n * s.OG * ks * r * P,
                mask ? mk.data() + n * s.OG * ks * P : nullptr, col);
    for (int64_t g = 0; g < s.G; ++g)
      nn::gemm<double>(Mg, P, Kc, vw.data() + g * Mg * Kc, Kc, col.data() + g * Kc * P, P,
                       y.data() + (n * s.M + g * Mg) * P, P, false);
    if (b)
      for (int64_t m = 0; m < s.M; ++m)
        for (int64_t p = 0; p < P; ++p) y[(n * s.M + m) * P + p] += b->get_f64(m);
  }
  ctx.out = {nn::store<double>(y, x.dtype(), s.out)};
  return Status::ok();
}

Status infer_deform_conv(InferCtx &ctx) {
  const TensorType &x = ctx.type(0), &w = ctx.type(1);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  for (size_t i = 1; i < ctx.in.size(); ++i)
    if (ctx.present(i) && ctx.type(i).dtype != x.dtype)
      return ctx.error("all operands must have the input's dtype");
  if (!x.ranked || !w.ranked) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(DeformShape s, deform_shape(ctx.op, x.dims, w.dims));
  ctx.out = {TensorType{x.dtype, s.out, true}};
  return Status::ok();
}

} // namespace

void register_nn_deform_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.col2im",
      .min_operands = 3,
      .max_operands = 3,
      .infer = infer_col2im,
      .eval = eval_col2im,
  });
  r.add(OpDef{
      .name = "kiln.deform_conv",
      .min_operands = 3,
      .max_operands = 5,
      .infer = infer_deform_conv,
      .eval = eval_deform_conv,
  });
}

} // namespace kiln
