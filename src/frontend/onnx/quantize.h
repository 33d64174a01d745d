// kiln quantize: post-training quantisation of an ONNX model into a standard QDQ ONNX model
// (QuantizeLinear / DequantizeLinear pairs around float ops, the format ONNX Runtime's quantiser
// writes and runtimes turn into integer kernels). The calibration (running the model on sample
// inputs) is the caller's: this file decides what needs a range and rewrites the protobuf.
//
// Modes:
//   static       weights quantised (int8 symmetric or uint8 asymmetric, per output channel or
//                per tensor), bias as int32 with scale x_scale * w_scale, and every input and
//                output activation of a quantised node given a QuantizeLinear / DequantizeLinear
//                pair with a calibrated per-tensor range (uint8 asymmetric or int8 symmetric). A
//                node's output that feeds only a Relu is quantised after the Relu.
//   dynamic      weights as above; each activation input of a quantised node goes through
//                DynamicQuantizeLinear (uint8, range measured per call) and DequantizeLinear.
//   weight-only  weights only (int8 or int4, symmetric), per output channel or in blocks of
//                block_size along the reduction axis (DequantizeLinear's block_size).
// Quantised nodes: Conv, MatMul and Gemm of the default domain in the main graph whose weight
// (input 1) is a float32 initializer; MatMul of two activations in static mode (both inputs
// quantised). Needs ai.onnx opset >= 13 (per-axis DequantizeLinear); int4 or blocked weights
// need opset 21, to which the model is upgraded where the steps from its opset are known
// (ReduceX axes become an input at 18, RoiAlign's default mode at 16, GridSample's mode names
// at 20); ops whose meaning changed otherwise refuse the upgrade by name.
#pragma once

#include "ir/tensor.h"
#include "support/status.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::onnx_fe {

enum class QuantMode { static_qdq, dynamic, weight_only };

struct QuantizeOptions {
  QuantMode mode = QuantMode::static_qdq;
  DType activations = DType::u8; // static: u8 (asymmetric) or i8 (symmetric, zero point 0)
  DType weights = DType::i8;     // i8 (symmetric) or u8 (asymmetric); weight-only: i8 or i4
  bool per_channel = true;       // one weight scale per output channel, else one per tensor
  int64_t block_size = 0;        // weight-only: blocks along the reduction axis (0: none)
  std::set<std::string> op_types{"Conv", "MatMul", "Gemm"};
  std::set<std::string> exclude; // node names (or first outputs) left in float
};

// A calibrated range of an activation.
struct ActRange {
  double lo = 0, hi = 0;
};

struct QuantizeSummary {
  int nodes = 0;       // nodes quantised
  int weights = 0;     // float weights replaced by integer ones
  int activations = 0; // activations given a Q/DQ pair (static) or DynamicQuantizeLinear
  int64_t opset_from = 0, opset_to = 0;
  int64_t weight_bytes_before = 0, weight_bytes_after = 0; // the replaced weights' storage
  std::vector<std::string> skipped; // "node (Op): reason" for a candidate left in float
};

// The activations (tensor names, in graph order) whose ranges static quantisation of the model
// needs; empty in the other modes.
Result<std::vector<std::string>> quantize_activation_names(const std::string &model_path,
                                                           const QuantizeOptions &o);

// Writes the quantised model to `out_path` (through a temporary file renamed into place, so an
// error leaves any existing file as it was). `ranges` holds every name
// quantize_activation_names returned (static mode).
Result<QuantizeSummary> quantize_file(const std::string &model_path, const std::string &out_path,
                                      const QuantizeOptions &o,
                                      const std::map<std::string, ActRange> &ranges);

} // namespace kiln::onnx_fe
