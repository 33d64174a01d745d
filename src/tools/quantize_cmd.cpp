// kiln quantize MODEL.onnx -o OUT.onnx: post-training quantisation into a QDQ ONNX model
// (frontend/onnx/quantize.h). Static mode calibrates: the reference executor runs the model on
// every sample of --calibrate DIR (DIR's own NAME.npy files, or those of each subfolder: one
// sample per folder, one file per model input) and records each quantised activation's range,
// min / max over all samples or the --percentile of its values (calibrate/quantize_calibration.h,
// shared with kiln.quantize in Python).
#include "calibrate/quantize_calibration.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace kiln::tools {

namespace {

struct QuantizeArgs {
  std::string model, output, mode = "static", calibrate, method = "minmax";
  std::string activations = "u8", weights;
  double percentile = 99.999;
  bool per_tensor = false;
  int64_t block_size = 0;
  std::vector<std::string> op_types, exclude;
};

Result<DType> qtype(const std::string &s) {
  if (std::optional<DType> t = calibrate::parse_quant_type(s)) return *t;
  return Status::error(fmt::format("'{}' is not a quantised type (u8, i8, i4)", s));
}

Status run_quantize(const QuantizeArgs &a) {
  onnx_fe::QuantizeOptions o;
  if (a.mode == "static") o.mode = onnx_fe::QuantMode::static_qdq;
  else if (a.mode == "dynamic") o.mode = onnx_fe::QuantMode::dynamic;
  else if (a.mode == "weight-only") o.mode = onnx_fe::QuantMode::weight_only;
  else return Status::error(fmt::format("--mode {}: static, dynamic or weight-only", a.mode));
  KILN_ASSIGN(o.activations, qtype(a.activations));
  KILN_ASSIGN(o.weights, qtype(a.weights.empty() ? std::string("i8") : a.weights));
  o.per_channel = !a.per_tensor;
  o.block_size = a.block_size;
  if (!a.op_types.empty()) o.op_types = {a.op_types.begin(), a.op_types.end()};
  o.exclude = {a.exclude.begin(), a.exclude.end()};
  if (a.method != "minmax" && a.method != "percentile")
    return Status::error(fmt::format("--method {}: minmax or percentile", a.method));
  if (!(a.percentile > 50 && a.percentile <= 100))
    return Status::error("--percentile must be in (50, 100]");
  calibrate::CalibrationOptions c{.dir = a.calibrate,
                                  .percentile = a.method == "percentile",
                                  .percent = a.percentile};
  KILN_ASSIGN(calibrate::QuantizeResult r, calibrate::quantize_model(a.model, a.output, o, c));
  if (r.calibrated)
    fmt::print("calibrated {} activations on {} sample{} ({})\n", r.calibrated, r.samples,
               r.samples == 1 ? "" : "s",
               c.percentile ? fmt::format("percentile {}", a.percentile) : std::string("min/max"));
  const onnx_fe::QuantizeSummary &s = r.summary;
  fmt::print("quantized {} nodes ({} mode): {} weights, {} -> {} bytes; {} activations\n", s.nodes,
             a.mode, s.weights, s.weight_bytes_before, s.weight_bytes_after, s.activations);
  if (s.opset_to != s.opset_from)
    fmt::print("opset upgraded from {} to {}\n", s.opset_from, s.opset_to);
  for (const auto &k : s.skipped) fmt::print("left in float: {}\n", k);
  fmt::print("wrote {}\n", a.output);
  return Status::ok();
}

} // namespace

void add_quantize_command(CLI::App &app) {
  auto a = std::make_shared<QuantizeArgs>();
  auto *cmd = app.add_subcommand("quantize", "Post-training quantisation of an ONNX model into a "
                                             "QDQ ONNX model (runs in kiln and ONNX Runtime)");
  cmd->add_option("model", a->model, "model (.onnx)")->required();
  cmd->add_option("-o,--output", a->output, "quantised model to write (.onnx)")->required();
  cmd->add_option("--mode", a->mode,
                  "static (default: calibrated activations and weights), dynamic (weights; "
                  "activations quantised per call) or weight-only");
  cmd->add_option("--calibrate", a->calibrate,
                  "folder of calibration inputs: INPUT.npy files, or one subfolder of them per "
                  "sample (static mode)");
  cmd->add_option("--method", a->method, "calibration: minmax (default) or percentile");
  cmd->add_option("--percentile", a->percentile,
                  "with --method percentile: the range kept, in percent (default 99.999)");
  cmd->add_option("--activations", a->activations,
                  "static activations: u8 (default, asymmetric) or i8 (symmetric)");
  cmd->add_option("--weights", a->weights,
                  "i8 (default, symmetric), u8 (asymmetric) or, weight-only, i4");
  cmd->add_flag("--per-tensor", a->per_tensor, "one weight scale per tensor (default: per channel)");
  cmd->add_option("--block-size", a->block_size,
                  "weight-only: one scale per block of this many along the reduction axis");
  cmd->add_option("--op-types", a->op_types, "ops to quantise (default Conv MatMul Gemm)");
  cmd->add_option("--exclude", a->exclude, "node names to leave in float");
  cmd->callback([a] {
    if (Status st = run_quantize(*a); !st) {
      fmt::print(stderr, "error: {}\n", st.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
