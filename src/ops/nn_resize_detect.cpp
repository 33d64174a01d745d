// Detection ops: kiln.roi_align and kiln.nms.
//
// kiln.roi_align(x [N,C,H,W], rois [R,4] (x1,y1,x2,y2), batch_indices i64 [R]) -> [R,C,oh,ow]
//   mode: "avg" | "max"; output_height, output_width, sampling_ratio (0 = adaptive),
//   spatial_scale (f), half_pixel (0/1: shift the roi by -0.5 pixel).
// kiln.nms(boxes [B,n,4], scores [B,C,n], max_output_boxes_per_class i64 (optional),
//   iou_threshold (optional), score_threshold (optional)) -> i64 [K,3] (batch, class, box)
//   center_point_box (0: corners y1,x1,y2,x2; 1: centre x,y,w,h). Not foldable-sized:
//   the result count depends on the data.
#include "ops/nn_extra_internal.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// ---- roi_align ----------------------------------------------------------------------------

Status verify_roi_align(const Op &op) {
  const std::string mode = op.attr_str("mode", "avg");
  if (mode != "avg" && mode != "max")
    return Status::error(fmt::format("{}: unsupported mode '{}'", op.describe(), mode));
  if (op.attr_int("output_height", 1) < 1 || op.attr_int("output_width", 1) < 1)
    return Status::error(fmt::format("{}: output size must be positive", op.describe()));
  if (op.attr_int("sampling_ratio", 0) < 0)
    return Status::error(fmt::format("{}: sampling_ratio must be >= 0", op.describe()));
  return Status::ok();
}

Status infer_roi_align(InferCtx &ctx) {
  const TensorType &x = ctx.type(0), &rois = ctx.type(1);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  KILN_TRY(expect_dtype_in(ctx.op, "batch_indices", ctx.type(2).dtype, {DType::i64, DType::i32}));
  if (x.ranked && x.rank() != 4) return ctx.error("input must be 4-D");
  if (rois.ranked && (rois.rank() != 2 || (rois.dims[1] >= 0 && rois.dims[1] != 4)))
    return ctx.error("rois must have shape [num_rois, 4]");
  Shape out = {rois.ranked ? rois.dims[0] : kDynamic, x.ranked ? x.dims[1] : kDynamic,
               ctx.op.attr_int("output_height", 1), ctx.op.attr_int("output_width", 1)};
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// Bilinear sample position (y, x) clamped as in the common RoiAlign implementations.
Sample bilinear_sample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh = 0, xh = 0;
  if (yl >= H - 1) {
    yh = yl = H - 1;
    y = static_cast<double>(yl);
  } else {
    yh = yl + 1;
  }
  if (xl >= W - 1) {
    xh = xl = W - 1;
    x = static_cast<double>(xl);
  } else {
    xh = xl + 1;
  }
  const double ly = y - static_cast<double>(yl), lx = x - static_cast<double>(xl);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = yl * W + xl;
  s.pos[1] = yl * W + xh;
  s.pos[2] = yh * W + xl;
  s.pos[3] = yh * W + xh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}

Status eval_roi_align(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &X = ctx.input(0), &rois = ctx.input(1), &bi = ctx.input(2);
  if (X.rank() != 4 || rois.rank() != 2 || rois.shape()[1] != 4 || bi.rank() != 1 ||
      bi.shape()[0] != rois.shape()[0])
    return ctx.error(fmt::format("bad shapes: input [{}], rois [{}], batch_indices [{}]",
                                 shape_str(X.shape()), shape_str(rois.shape()),
                                 shape_str(bi.shape())));
  const int64_t N = X.shape()[0], C = X.shape()[1], H = X.shape()[2], W = X.shape()[3];
  const int64_t R = rois.shape()[0];
  const int64_t oh = op.attr_int("output_height", 1), ow = op.attr_int("output_width", 1);
  const int64_t sr = op.attr_int("sampling_ratio", 0);
  const double ss = op.attr_float("spatial_scale", 1.0);
  const bool half = op.attr_int("half_pixel", 1) != 0, is_max = op.attr_str("mode", "avg") == "max";
  KILN_ASSIGN(Tensor Y, Tensor::allocate(X.dtype(), {R, C, oh, ow}));
  const std::vector<double> xd = X.to_f64s();
  const double off = half ? 0.5 : 0.0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t b = bi.get_i64(r);
    if (b < 0 || b >= N) return ctx.error(fmt::format("batch index {} is out of range [0, {})", b, N));
    const double x1 = rois.get_f64(r * 4) * ss - off, y1 = rois.get_f64(r * 4 + 1) * ss - off;
    double rw = rois.get_f64(r * 4 + 2) * ss - off - x1, rh = rois.get_f64(r * 4 + 3) * ss - off - y1;
    if (!half) {
      rw = std::max(rw, 1.0);
      rh = std::max(rh, 1.0);
    }
    const double bh = rh / static_cast<double>(oh), bw = rw / static_cast<double>(ow);
    if (!std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(bh) || !std::isfinite(bw))
      return ctx.error(fmt::format("roi {} is not finite", r));
    // Adaptive sampling: ceil(bin size) points per bin (at least 1; bounded for sanity).
    auto grid = [&](double bin) {
      return sr > 0 ? sr : static_cast<int64_t>(std::ceil(std::clamp(bin, 0.0, 1e6)));
    };
    const int64_t gh = grid(bh), gw = grid(bw);
    if (gh * gw > (int64_t(1) << 24))
      return ctx.error(fmt::format("roi {} needs too many samples per bin", r));
    const double count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
    for (int64_t ph = 0; ph < oh; ++ph)
      for (int64_t pw = 0; pw < ow; ++pw) {
        std::vector<Sample> samples;
        for (int64_t iy = 0; iy < gh; ++iy)
          for (int64_t ix = 0; ix < gw; ++ix) {
            const double y = y1 + static_cast<double>(ph) * bh +
                             (static_cast<double>(iy) + 0.5) * bh / static_cast<double>(gh);
            const double x = x1 + static_cast<double>(pw) * bw +
                             (static_cast<double>(ix) + 0.5) * bw / static_cast<double>(gw);
            samples.push_back(bilinear_sample(y, x, H, W));
          }
        for (int64_t c = 0; c < C; ++c) {
          const double *pl = xd.data() + (b * C + c) * H * W;
          double acc = 0;
          bool first = true;
          for (const Sample &s : samples) {
            if (is_max) {
              double v = s.w[0] * pl[s.pos[0]];
              for (int k = 1; k < 4; ++k) v = std::max(v, s.w[k] * pl[s.pos[k]]);
              acc = first ? v : std::max(acc, v);
              first = false;
            } else {
              for (int k = 0; k < 4; ++k) acc += s.w[k] * pl[s.pos[k]];
            }
          }
          Y.set_f64(((r * C + c) * oh + ph) * ow + pw, is_max ? acc : acc / count);
        }
      }
  }
  ctx.out = {Y};
  return Status::ok();
}

// ---- nms ----------------------------------------------------------------------------------

Status infer_nms(InferCtx &ctx) {
  KILN_TRY(expect_float(ctx.op, "boxes", ctx.type(0).dtype));
  KILN_TRY(expect_float(ctx.op, "scores", ctx.type(1).dtype));
  ctx.out = {TensorType{DType::i64, {kDynamic, 3}, true}};
  return Status::ok();
}

struct Box {
  double y1, x1, y2, x2;
};

Box read_box(const Tensor &t, int64_t i, bool center) {
  const double a = t.get_f64(i * 4), b = t.get_f64(i * 4 + 1), c = t.get_f64(i * 4 + 2),
               d = t.get_f64(i * 4 + 3);
  if (center) return {b - d / 2, a - c / 2, b + d / 2, a + c / 2};
  return {std::min(a, c), std::min(b, d), std::max(a, c), std::max(b, d)};
}

// True when the boxes overlap by more than `thr` (intersection over union).
bool suppresses(const Box &p, const Box &q, double thr) {
  const double ih = std::min(p.y2, q.y2) - std::max(p.y1, q.y1);
  const double iw = std::min(p.x2, q.x2) - std::max(p.x1, q.x1);
  if (ih <= 0 || iw <= 0) return false;
  const double ap = (p.y2 - p.y1) * (p.x2 - p.x1), aq = (q.y2 - q.y1) * (q.x2 - q.x1);
  if (ap <= 0 || aq <= 0) return false;
  const double inter = ih * iw;
  return inter / (ap + aq - inter) > thr;
}

Status eval_nms(EvalCtx &ctx) {
  const Tensor &boxes = ctx.input(0), &scores = ctx.input(1);
  if (boxes.rank() != 3 || boxes.shape()[2] != 4 || scores.rank() != 3 ||
      scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1])
    return ctx.error(fmt::format("bad shapes: boxes [{}], scores [{}]", shape_str(boxes.shape()),
                                 shape_str(scores.shape())));
  const int64_t B = boxes.shape()[0], n = boxes.shape()[1], C = scores.shape()[1];
  int64_t max_out = 0;
  if (ctx.present(2)) {
    if (ctx.input(2).numel() != 1) return ctx.error("max_output_boxes_per_class must be a scalar");
    max_out = ctx.input(2).get_i64(0);
  }
  double iou_thr = 0, score_thr = 0;
  const bool has_score = ctx.present(4);
  if (ctx.present(3)) {
    if (ctx.input(3).numel() != 1) return ctx.error("iou_threshold must be a scalar");
    iou_thr = ctx.input(3).get_f64(0);
  }
  if (has_score) {
    if (ctx.input(4).numel() != 1) return ctx.error("score_threshold must be a scalar");
    score_thr = ctx.input(4).get_f64(0);
  }
  const bool center = ctx.op.attr_int("center_point_box", 0) != 0;
  std::vector<int64_t> sel;
  for (int64_t b = 0; b < B && max_out > 0; ++b) {
    std::vector<Box> bx;
    for (int64_t i = 0; i < n; ++i) bx.push_back(read_box(boxes, b * n + i, center));
    for (int64_t c = 0; c < C; ++c) {
      std::vector<int64_t> cand;
      std::vector<double> sc(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        sc[static_cast<size_t>(i)] = scores.get_f64((b * C + c) * n + i);
        if (!has_score || sc[static_cast<size_t>(i)] > score_thr) cand.push_back(i);
      }
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t p, int64_t q) {
        return sc[static_cast<size_t>(p)] > sc[static_cast<size_t>(q)];
      });
      std::vector<int64_t> kept;
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool drop = false;
        for (int64_t k : kept)
          if (suppresses(bx[static_cast<size_t>(k)], bx[static_cast<size_t>(i)], iou_thr)) {
            drop = true;
            break;
          }
        if (drop) continue;
        kept.push_back(i);
        sel.insert(sel.end(), {b, c, i});
      }
    }
  }
  Tensor Y(DType::i64, {static_cast<int64_t>(sel.size() / 3), 3});
  for (size_t i = 0; i < sel.size(); ++i) Y.set_i64(static_cast<int64_t>(i), sel[i]);
  ctx.out = {Y};
  return Status::ok();
}

} // namespace

void register_nn_detect_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.roi_align",
      .min_operands = 3,
      .max_operands = 3,
      .min_results = 1,
      .max_results = 1,
      .verify = verify_roi_align,
      .infer = infer_roi_align,
      .eval = eval_roi_align,
  });
  r.add(OpDef{
      .name = "kiln.nms",
      .min_operands = 2,
      .max_operands = 5,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_nms,
      .eval = eval_nms,
  });
}

} // namespace kiln
