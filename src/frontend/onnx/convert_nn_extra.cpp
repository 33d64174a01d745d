// ONNX converters for resampling and detection: Resize, Upsample, GridSample, AffineGrid,
// RoiAlign, NonMaxSuppression. Quantisation converters are in convert_nn_extra_quant.cpp.
#include "frontend/onnx/convert_nn_extra_internal.h"

#include <fmt/format.h>

namespace kiln::onnx_fe {

namespace {

bool is_in(const std::string &s, std::initializer_list<const char *> ok) {
  for (const char *o : ok)
    if (s == o) return true;
  return false;
}

// Upsample (opset 7: scales attribute; 9: scales input) and Resize opset 10: asymmetric
// coordinates, nearest rounds down when upsampling (and up when downsampling).
Outs convert_legacy_resize(NodeCtx &c, Value *scales) {
  std::string mode = c.attr_str("mode", "nearest");
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear")
    return c.error(fmt::format("unsupported mode '{}'", mode));
  AttrMap a{{"mode", mode},
            {"coordinate_transformation_mode", std::string("asymmetric")},
            {"nearest_mode", std::string("simple")}};
  return one(c.op("kiln.resize", {c.input(0), nullptr, scales, nullptr}, a));
}

Outs convert_upsample(NodeCtx &c) {
  if (c.opset >= 9) return convert_legacy_resize(c, c.input(1));
  std::vector<double> s = c.attr_floats("scales");
  if (s.empty()) return c.error("attribute 'scales' is missing");
  std::vector<float> f(s.begin(), s.end());
  Value *sv = c.builder().constant(Tensor::from_f32s(f, {static_cast<int64_t>(f.size())}));
  return convert_legacy_resize(c, sv);
}

Outs convert_resize(NodeCtx &c) {
  if (c.opset < 11) return convert_legacy_resize(c, c.input(1));
  const std::string mode = c.attr_str("mode", "nearest");
  const std::string ct = c.attr_str("coordinate_transformation_mode", "half_pixel");
  const std::string nm = c.attr_str("nearest_mode", "round_prefer_floor");
  const std::string kp = c.attr_str("keep_aspect_ratio_policy", "stretch");
  if (!is_in(mode, {"nearest", "linear", "cubic"}))
    return c.error(fmt::format("unsupported mode '{}'", mode));
  if (!is_in(ct, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                  "asymmetric", "tf_crop_and_resize"}))
    return c.error(fmt::format("unsupported coordinate_transformation_mode '{}'", ct));
  if (!is_in(nm, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return c.error(fmt::format("unsupported nearest_mode '{}'", nm));
  if (!is_in(kp, {"stretch", "not_larger", "not_smaller"}))
    return c.error(fmt::format("unsupported keep_aspect_ratio_policy '{}'", kp));
  const int64_t antialias = c.attr_int("antialias", 0);
  if (antialias != 0 && mode == "nearest")
    return c.error("antialias is not supported with mode 'nearest'");
  AttrMap a{{"mode", mode},
            {"coordinate_transformation_mode", ct},
            {"nearest_mode", nm},
            {"cubic_coeff_a", c.attr_float("cubic_coeff_a", -0.75)},
            {"exclude_outside", c.attr_int("exclude_outside", 0)},
            {"extrapolation_value", c.attr_float("extrapolation_value", 0.0)},
            {"antialias", antialias},
            {"keep_aspect_ratio_policy", kp}};
  if (c.has_attr("axes")) a["axes"] = c.attr_ints("axes");
  // roi only matters for tf_crop_and_resize.
  Value *roi = ct == "tf_crop_and_resize" ? c.input(1) : nullptr;
  if (ct == "tf_crop_and_resize" && !roi) return c.error("tf_crop_and_resize needs a roi input");
  return one(c.op("kiln.resize", {c.input(0), roi, c.input(2), c.input(3)}, a));
}

Outs convert_grid_sample(NodeCtx &c) {
  std::string mode = c.attr_str("mode", c.opset >= 20 ? "linear" : "bilinear");
  if (mode == "bilinear") mode = "linear";
  else if (mode == "bicubic") mode = "cubic";
  if (!is_in(mode, {"linear", "nearest", "cubic"}))
    return c.error(fmt::format("unsupported mode '{}'", mode));
  const std::string pm = c.attr_str("padding_mode", "zeros");
  if (!is_in(pm, {"zeros", "border", "reflection"}))
    return c.error(fmt::format("unsupported padding_mode '{}'", pm));
  AttrMap a{{"mode", mode}, {"padding_mode", pm}, {"align_corners", c.attr_int("align_corners", 0)}};
  return one(c.op("kiln.grid_sample", {c.input(0), c.input(1)}, a));
}

Outs convert_roi_align(NodeCtx &c) {
  const std::string mode = c.attr_str("mode", "avg");
  if (mode != "avg" && mode != "max") return c.error(fmt::format("unsupported mode '{}'", mode));
  const std::string ct =
      c.attr_str("coordinate_transformation_mode", c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    return c.error(fmt::format("unsupported coordinate_transformation_mode '{}'", ct));
  AttrMap a{{"mode", mode},
            {"output_height", c.attr_int("output_height", 1)},
            {"output_width", c.attr_int("output_width", 1)},
            {"sampling_ratio", c.attr_int("sampling_ratio", 0)},
            {"spatial_scale", c.attr_float("spatial_scale", 1.0)},
            {"half_pixel", int64_t(ct == "half_pixel" ? 1 : 0)}};
  return one(c.op("kiln.roi_align", {c.input(0), c.input(1), c.input(2)}, a));
}

Outs convert_nms(NodeCtx &c) {
  const int64_t cpb = c.attr_int("center_point_box", 0);
  if (cpb != 0 && cpb != 1) return c.error("center_point_box must be 0 or 1");
  std::vector<Value *> ops{c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)};
  return one(c.op("kiln.nms", ops, {{"center_point_box", cpb}}));
}

} // namespace

void register_onnx_nn_extra(ConverterTable &t) {
  t.add("", "Resize", convert_resize);
  t.add("", "Upsample", convert_upsample);
  t.add("", "GridSample", convert_grid_sample);
  t.add("", "AffineGrid", [](NodeCtx &c) {
    return one(c.op("kiln.affine_grid", {c.input(0), c.input(1)},
                    {{"align_corners", c.attr_int("align_corners", 0)}}));
  });
  t.add("", "RoiAlign", convert_roi_align);
  t.add("", "NonMaxSuppression", convert_nms);
  register_onnx_nn_extra_quant(t);
}

} // namespace kiln::onnx_fe
