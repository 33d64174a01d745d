// NumPy .npy read/write (format versions 1-3, little-endian, C order).
#pragma once

#include "support/dtype.h"
#include "support/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

struct NpyArray {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

Result<NpyArray> read_npy(const std::string &path);
Status write_npy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
                 const void *data, size_t nbytes);

} // namespace kiln
