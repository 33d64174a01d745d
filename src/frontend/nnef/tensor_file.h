// NNEF tensor files (.dat): a 128-byte little-endian header (magic 4E EF, version 1.0, data
// length, rank, 8 extents, bits per item, item type code, 8 code parameters, padding), then
// the packed data.
#pragma once

#include "ir/tensor.h"

#include <string>

namespace kiln::nnef_fe {

// Reads `path`; float (16/32/64 bits), integer (8-64 bits, signed per parameter 0) and linear
// quantised (unsigned, parameters min and max: dequantised to f32) items. Every size is
// checked against the header and the file; `want` (the declared shape) must match.
Result<Tensor> read_tensor_file(const std::string &path, const Shape &want);
Result<Tensor> parse_tensor_file(const uint8_t *data, size_t size, const Shape &want,
                                 const std::string &name);

} // namespace kiln::nnef_fe
