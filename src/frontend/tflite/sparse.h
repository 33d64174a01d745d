// Sparse TFLite constants -> dense bytes (see sparse.cpp).
#pragma once

#include "ir/tensor.h"

#include <vector>

namespace kiln::tflite_fb {
struct SparsityParameters;
}

namespace kiln::tflite_fe {

Result<std::vector<uint8_t>> densify(const tflite_fb::SparsityParameters &sp, const Shape &shape,
                                     size_t esize, const uint8_t *values, size_t nbytes);

} // namespace kiln::tflite_fe
