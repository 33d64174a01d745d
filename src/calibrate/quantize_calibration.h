// Post-training quantisation driven from the reference executor: the calibration of activation
// ranges on sample inputs and the whole `kiln quantize` (also kiln.quantize in Python). The
// rewrite of the model is frontend/onnx/quantize.h's; static mode calibrates: the reference
// executor runs the model on every sample of a folder (the folder's own NAME.npy files, or
// those of each subfolder: one sample per folder, one file per model input) and records each
// quantised activation's range, min / max over all samples or a percentile of its values.
#pragma once

#include "frontend/onnx/quantize.h"
#include "support/status.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::calibrate {

struct CalibrationOptions {
  std::string dir;            // the calibration folder; empty: none given
  bool percentile = false;    // the range kept is a percentile of the values, else min / max
  double percent = 99.999;    // with percentile: the range kept, in percent
  // How the caller names the folder in messages ("--calibrate DIR" when empty), and what to say
  // when static mode has none.
  std::string label;
  std::string missing = "--calibrate DIR (or --mode dynamic / weight-only)";
};

struct Calibration {
  std::map<std::string, onnx_fe::ActRange> ranges; // per activation name
  size_t samples = 0;
};

// The ranges of the activations `names` (quantize_activation_names) of `model` over the samples
// of o.dir.
Result<Calibration> calibrate_activations(const std::string &model,
                                          const std::vector<std::string> &names,
                                          const CalibrationOptions &o);

struct QuantizeResult {
  onnx_fe::QuantizeSummary summary;
  size_t calibrated = 0; // activations calibrated (static mode)
  size_t samples = 0;    // calibration samples run
};

// `kiln quantize`: the activations static mode needs calibrated (calibrate_activations), then
// the quantised model written to `out` (onnx_fe::quantize_file).
Result<QuantizeResult> quantize_model(const std::string &model, const std::string &out,
                                      const onnx_fe::QuantizeOptions &q,
                                      const CalibrationOptions &c);

// A quantised type's name: u8 / uint8, i8 / int8, i4 / int4.
std::optional<DType> parse_quant_type(std::string_view s);

} // namespace kiln::calibrate
