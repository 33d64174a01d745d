// Helpers shared by the misc family's ONNX converters.
#pragma once

#include "frontend/onnx/convert.h"

namespace kiln::onnx_fe::misc {

void register_rnn(ConverterTable &t);    // convert_misc_rnn.cpp
void register_signal(ConverterTable &t); // convert_misc_signal.cpp

// Returns the first `n` results, or only those the node uses (others stay valid values too).
inline std::vector<Value *> used_outputs(const NodeCtx &c, const std::vector<Value *> &rs) {
  std::vector<Value *> out(rs.begin(), rs.begin() + std::min(rs.size(), c.num_outputs));
  return out;
}

} // namespace kiln::onnx_fe::misc
