// TFLite convolutions, pooling, fully connected and resizing. These run on NCHW values (kiln's
// conv/pool layout); weights are permuted from TFLite's OHWI at import (folded constants).
#include "frontend/tflite/convert.h"
#include "kiln/tflite/tflite_generated.h"

#include <fmt/format.h>

namespace kiln::tflite_fe {

namespace fb = ::kiln::tflite_fb;

namespace {

struct Window {
  int64_t k[2], s[2], d[2];
};

// Explicit pads {top, left, bottom, right} for TFLite's SAME / VALID padding.
Result<std::vector<int64_t>> pads_for(OpCtx &c, fb::Padding padding, const Shape &nchw, const Window &w) {
  std::vector<int64_t> p(4, 0);
  for (int i = 0; i < 2; ++i) {
    constexpr int64_t kMax = int64_t(1) << 24; // keeps the arithmetic below far from overflow
    if (w.k[i] <= 0 || w.s[i] <= 0 || w.d[i] <= 0 || w.k[i] > kMax || w.s[i] > kMax || w.d[i] > kMax)
      return c.error(fmt::format("window size {}, stride {} and dilation {} must be in [1, 2^24]",
                                 w.k[i], w.s[i], w.d[i]));
    if (padding != fb::Padding::SAME) continue;
    const int64_t in = nchw[2 + i], eff = (w.k[i] - 1) * w.d[i] + 1;
    const int64_t out = (in + w.s[i] - 1) / w.s[i];
    const int64_t total = std::max<int64_t>((out - 1) * w.s[i] + eff - in, 0);
    p[i] = total / 2;
    p[i + 2] = total - total / 2;
  }
  return p;
}

template <class T> Result<const T *> options(OpCtx &c, const T *o, const char *what) {
  if (!o) return c.error(fmt::format("{} are missing", what));
  return o;
}

AttrMap window_attrs(const Window &w, std::vector<int64_t> pads) {
  return {{"kernel_shape", std::vector<int64_t>{w.k[0], w.k[1]}},
          {"strides", std::vector<int64_t>{w.s[0], w.s[1]}},
          {"dilations", std::vector<int64_t>{w.d[0], w.d[1]}},
          {"pads", std::move(pads)}};
}

// TFLite's hybrid kernels (float activations, int8 weights without a DEQUANTIZE) quantise the
// activations on the fly; computing them in float would give other answers, so they are refused.
Status check_not_hybrid(OpCtx &c, size_t input, size_t weights) {
  if (c.has_input(weights) && c.tensor(weights).quantized && c.has_input(input) &&
      !c.tensor(input).quantized)
    return c.error("hybrid quantisation (float input, quantised weights) is not supported");
  return Status::ok();
}

Status check_rank(OpCtx &c, Value *v, size_t i, int64_t rank) {
  if (!v->type.ranked || v->type.rank() != rank)
    return c.error(fmt::format("input {} must have rank {}, got {}", i, rank, v->type.str()));
  return Status::ok();
}

Status conv_2d(OpCtx &c, bool depthwise) {
  KILN_TRY(c.need_inputs(2));
  if (depthwise ? !c.op->builtin_options_as_DepthwiseConv2DOptions() : !c.op->builtin_options_as_Conv2DOptions())
    return c.error(depthwise ? "DepthwiseConv2DOptions are missing" : "Conv2DOptions are missing");
  KILN_TRY(check_not_hybrid(c, 0, 1));
  KILN_ASSIGN(Value * x, c.in_nchw(0));
  KILN_ASSIGN(Value * w, c.in(1));
  KILN_TRY(check_rank(c, w, 1, 4));
  Window win{};
  fb::Padding padding;
  Act act;
  int64_t group = 1;
  const Shape &xs = x->type.dims, &ws = w->type.dims;
  if (depthwise) {
    KILN_ASSIGN(auto *o, options(c, c.op->builtin_options_as_DepthwiseConv2DOptions(),
                                 "DepthwiseConv2DOptions"));
    win = {{ws[1], ws[2]}, {o->stride_h(), o->stride_w()}, {o->dilation_h_factor(), o->dilation_w_factor()}};
    padding = o->padding();
    act = act_from(static_cast<int>(o->fused_activation_function()));
    // Weights [1, KH, KW, C * multiplier] -> [C * multiplier, 1, KH, KW], one group per channel.
    if (ws[0] != 1) return c.error(fmt::format("depthwise weights must be [1, KH, KW, C*M], got [{}]", shape_str(ws)));
    group = xs[1];
    if (group <= 0 || ws[3] % group != 0)
      return c.error(fmt::format("{} output channels are not a multiple of {} input channels", ws[3], group));
    KILN_ASSIGN(w, transpose(*c.b, w, {3, 0, 1, 2}));
  } else {
    KILN_ASSIGN(auto *o, options(c, c.op->builtin_options_as_Conv2DOptions(), "Conv2DOptions"));
    win = {{ws[1], ws[2]}, {o->stride_h(), o->stride_w()}, {o->dilation_h_factor(), o->dilation_w_factor()}};
    padding = o->padding();
    act = act_from(static_cast<int>(o->fused_activation_function()));
    if (ws[3] <= 0 || xs[1] % ws[3] != 0)
      return c.error(fmt::format("{} input channels are not a multiple of the filter's {}", xs[1], ws[3]));
    group = xs[1] / ws[3];
    KILN_ASSIGN(w, to_nchw(*c.b, w)); // OHWI -> OIHW
  }
  KILN_ASSIGN(auto pads, pads_for(c, padding, xs, win));
  AttrMap a = window_attrs(win, std::move(pads));
  a["group"] = group;
  std::vector<Value *> operands{x, w};
  if (c.has_input(2)) {
    KILN_ASSIGN(Value * bias, c.in(2));
    operands.push_back(bias);
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.conv", operands, std::move(a)));
  return c.set_out(0, y, true, act);
}

Status pool_2d(OpCtx &c, const char *kind) {
  KILN_TRY(c.need_inputs(1));
  KILN_ASSIGN(auto *o, options(c, c.op->builtin_options_as_Pool2DOptions(), "Pool2DOptions"));
  KILN_ASSIGN(Value * x, c.in_nchw(0));
  Window win{{o->filter_height(), o->filter_width()}, {o->stride_h(), o->stride_w()}, {1, 1}};
  KILN_ASSIGN(auto pads, pads_for(c, o->padding(), x->type.dims, win));
  AttrMap a{{"kernel_shape", std::vector<int64_t>{win.k[0], win.k[1]}},
            {"strides", std::vector<int64_t>{win.s[0], win.s[1]}},
            {"pads", std::move(pads)}};
  // TFLite averages over the window's in-bounds elements only.
  if (std::string_view(kind) == "kiln.avg_pool") a["count_include_pad"] = int64_t(0);
  KILN_ASSIGN(Value * y, c.op1(kind, {x}, std::move(a)));
  return c.set_out(0, y, true, act_from(static_cast<int>(o->fused_activation_function())));
}

Status fully_connected(OpCtx &c) {
  KILN_TRY(c.need_inputs(2));
  const auto *o = c.op->builtin_options_as_FullyConnectedOptions();
  if (o && o->weights_format() != 0) return c.error("shuffled weights formats are not supported");
  KILN_TRY(check_not_hybrid(c, 0, 1));
  KILN_ASSIGN(Value * x, c.in(0));
  KILN_ASSIGN(Value * w, c.in(1));
  KILN_TRY(check_rank(c, w, 1, 2));
  const int64_t k = w->type.dims[1], n = w->type.dims[0];
  const int64_t numel = shape_numel(x->type.dims);
  if (k <= 0 || numel % k != 0)
    return c.error(fmt::format("input [{}] cannot be flattened to rows of {}", shape_str(x->type.dims), k));
  KILN_ASSIGN(Value * x2, c.op1("kiln.reshape", {x, c.b->i64s({numel / k, k})}));
  KILN_ASSIGN(Value * wt, transpose(*c.b, w, {1, 0}));
  KILN_ASSIGN(Value * y, c.op1("kiln.matmul", {x2, wt}));
  if (c.has_input(2)) {
    KILN_ASSIGN(Value * bias, c.in(2));
    KILN_ASSIGN(y, c.op1("kiln.add", {y, bias}));
  }
  if (o && o->keep_num_dims()) {
    Shape s = x->type.dims;
    s.back() = n;
    KILN_ASSIGN(y, c.op1("kiln.reshape", {y, c.b->i64s(s)}));
  }
  return c.set_out(0, y, false, o ? act_from(static_cast<int>(o->fused_activation_function())) : Act::none);
}

Status transpose_conv(OpCtx &c) {
  KILN_TRY(c.need_inputs(3));
  KILN_ASSIGN(auto *o, options(c, c.op->builtin_options_as_TransposeConvOptions(), "TransposeConvOptions"));
  KILN_TRY(check_not_hybrid(c, 2, 1));
  KILN_ASSIGN(auto out_shape, c.const_ints(0));
  KILN_ASSIGN(Value * w, c.in(1)); // [O, KH, KW, I]
  KILN_ASSIGN(Value * x, c.in_nchw(2));
  KILN_TRY(check_rank(c, w, 1, 4));
  if (out_shape.size() != 4) return c.error("output_shape must have 4 elements");
  const Shape &ws = w->type.dims;
  Window win{{ws[1], ws[2]}, {o->stride_h(), o->stride_w()}, {1, 1}};
  std::vector<int64_t> pads(4, 0), extra(2, 0);
  for (int i = 0; i < 2; ++i) {
    if (win.s[i] <= 0 || win.s[i] > (1 << 24)) return c.error("strides must be in [1, 2^24]");
    const int64_t in = x->type.dims[2 + i], out = out_shape[1 + i];
    const int64_t full = (in - 1) * win.s[i] + win.k[i];
    int64_t total = 0;
    if (o->padding() == fb::Padding::SAME) total = std::max<int64_t>(full - out, 0);
    else total = 0;
    pads[i] = total / 2;
    pads[i + 2] = total - total / 2;
    extra[i] = out - (full - total);
    if (extra[i] < 0 || extra[i] >= win.s[i])
      return c.error(fmt::format("output_shape [{}] does not fit the input and window",
                                 fmt::join(out_shape, ",")));
  }
  KILN_ASSIGN(Value * wt, transpose(*c.b, w, {3, 0, 1, 2})); // [I, O, KH, KW]
  AttrMap a{{"kernel_shape", std::vector<int64_t>{win.k[0], win.k[1]}},
            {"strides", std::vector<int64_t>{win.s[0], win.s[1]}},
            {"pads", pads},
            {"output_padding", extra}};
  std::vector<Value *> operands{x, wt};
  if (c.has_input(3)) {
    KILN_ASSIGN(Value * bias, c.in(3));
    operands.push_back(bias);
  }
  KILN_ASSIGN(Value * y, c.op1("kiln.conv_transpose", operands, std::move(a)));
  return c.set_out(0, y, true, act_from(static_cast<int>(o->fused_activation_function())));
}

Status resize(OpCtx &c, bool bilinear) {
  KILN_TRY(c.need_inputs(2));
  KILN_ASSIGN(Value * x, c.in_nchw(0));
  KILN_ASSIGN(auto size, c.const_ints(1));
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0 || size[0] > (1 << 24) || size[1] > (1 << 24))
    return c.error("size must be two integers in [1, 2^24]");
  bool align = false, half = false;
  if (bilinear) {
    if (const auto *o = c.op->builtin_options_as_ResizeBilinearOptions())
      align = o->align_corners(), half = o->half_pixel_centers();
  } else if (const auto *o = c.op->builtin_options_as_ResizeNearestNeighborOptions()) {
    align = o->align_corners(), half = o->half_pixel_centers();
  }
  if (align && half) return c.error("align_corners and half_pixel_centers are both set");
  AttrMap a;
  if (bilinear) {
    a["mode"] = std::string("linear");
    a["coordinate_transformation_mode"] =
        std::string(align ? "align_corners" : half ? "half_pixel" : "asymmetric");
  } else {
    // TFLite: floor(y * scale) plain, floor((y + 0.5) * scale) with half-pixel centers (that is
    // half_pixel coordinates rounded half up), round(y * scale) with aligned corners.
    a["mode"] = std::string("nearest");
    a["coordinate_transformation_mode"] =
        std::string(align ? "align_corners" : half ? "half_pixel" : "asymmetric");
    a["nearest_mode"] = std::string(align || half ? "round_prefer_ceil" : "floor");
  }
  const Shape &xs = x->type.dims;
  Value *sizes = c.b->i64s({xs[0], xs[1], size[0], size[1]});
  KILN_ASSIGN(Value * y, c.op1("kiln.resize", {x, nullptr, nullptr, sizes}, std::move(a)));
  return c.set_out(0, y, true);
}

// TFLite's DEPTH_TO_SPACE takes channel (i * block + j) * C_out + c to (h * block + i,
// w * block + j, c): ONNX's DCR order.
Status depth_to_space(OpCtx &c) {
  KILN_TRY(c.need_inputs(1));
  const auto *o = c.op->builtin_options_as_DepthToSpaceOptions();
  if (!o || o->block_size() <= 0) return c.error("block_size must be positive");
  KILN_ASSIGN(Value * x, c.in_nchw(0));
  KILN_ASSIGN(Value * y, c.op1("kiln.depth_to_space", {x},
                               {{"blocksize", int64_t(o->block_size())}, {"mode", std::string("DCR")}}));
  return c.set_out(0, y, true);
}

} // namespace

ConvertFn find_converter_nn(int code) {
  switch (code) {
  case op::CONV_2D: return [](OpCtx &c) { return conv_2d(c, false); };
  case op::DEPTHWISE_CONV_2D: return [](OpCtx &c) { return conv_2d(c, true); };
  case op::AVERAGE_POOL_2D: return [](OpCtx &c) { return pool_2d(c, "kiln.avg_pool"); };
  case op::MAX_POOL_2D: return [](OpCtx &c) { return pool_2d(c, "kiln.max_pool"); };
  case op::FULLY_CONNECTED: return fully_connected;
  case op::DEPTH_TO_SPACE: return depth_to_space;
  case op::TRANSPOSE_CONV: return transpose_conv;
  case op::RESIZE_BILINEAR: return [](OpCtx &c) { return resize(c, true); };
  case op::RESIZE_NEAREST_NEIGHBOR: return [](OpCtx &c) { return resize(c, false); };
  default: return nullptr;
  }
}

} // namespace kiln::tflite_fe
