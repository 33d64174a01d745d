// TensorProto decoding (private to the ONNX frontend).
#pragma once

#include "ir/tensor.h"

#include <onnx/onnx_pb.h>
#include <string>

namespace kiln::onnx_fe {

// Decodes a TensorProto. External data is read from `base_dir` (must stay inside it); an empty
// base_dir forbids external data.
Result<Tensor> decode_tensor(const onnx::TensorProto &t, const std::string &base_dir,
                             int64_t max_bytes);

} // namespace kiln::onnx_fe
