#include "frontend/nnef/tensor_file.h"

#include "support/half.h"
#include "support/limits.h"

#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <vector>

namespace kiln::nnef_fe {

namespace {

uint32_t u32_at(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
float f32_at(const uint8_t *p) {
  uint32_t u = u32_at(p);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

constexpr size_t kHeader = 128;
constexpr uint32_t kFloat = 0x00, kInteger = 0x01, kLinear = 0x10, kLogarithmic = 0x11;

} // namespace

Result<Tensor> parse_tensor_file(const uint8_t *data, size_t size, const Shape &want,
                                 const std::string &name) {
  auto err = [&](const std::string &msg) { return Status::error(fmt::format("{}: {}", name, msg)); };
  if (size < kHeader) return err(fmt::format("{} bytes is shorter than the 128-byte tensor header", size));
  if (data[0] != 0x4E || data[1] != 0xEF) return err("not an NNEF tensor file (bad magic)");
  if (data[2] != 1 || data[3] != 0)
    return err(fmt::format("tensor file version {}.{} is not supported (expects 1.0)", data[2], data[3]));
  const uint32_t length = u32_at(data + 4), rank = u32_at(data + 8);
  if (rank > 8) return err(fmt::format("rank {} exceeds 8", rank));
  Shape shape;
  int64_t numel = 1;
  for (uint32_t i = 0; i < rank; ++i) {
    const uint32_t e = u32_at(data + 12 + 4 * i);
    if (e && numel > limits().max_tensor_bytes / e) return err("extents are too large");
    numel *= e;
    shape.push_back(e);
  }
  const uint32_t bits = u32_at(data + 44), code = u32_at(data + 48);
  if (bits == 0 || bits > 64) return err(fmt::format("{} bits per item is not supported", bits));
  if (size - kHeader != length)
    return err(fmt::format("header says {} data bytes, the file has {}", length, size - kHeader));
  const uint64_t need = (static_cast<uint64_t>(numel) * bits + 7) / 8;
  if (length != need)
    return err(fmt::format("{} data bytes do not hold [{}] at {} bits per item ({} needed)", length,
                           shape_str(shape), bits, need));
  if (shape != want)
    return err(fmt::format("shape [{}] differs from the declared [{}]", shape_str(shape), shape_str(want)));
  const uint8_t *p = data + kHeader;
  DType dt;
  switch (code) {
  case kFloat:
    if (bits == 16) dt = DType::f16;
    else if (bits == 32) dt = DType::f32;
    else if (bits == 64) dt = DType::f64;
    else return err(fmt::format("float items of {} bits are not supported", bits));
    break;
  case kInteger: {
    const bool sign = f32_at(data + 52) != 0.0f || u32_at(data + 52) != 0;
    if (bits == 8) dt = sign ? DType::i8 : DType::u8;
    else if (bits == 16) dt = sign ? DType::i16 : DType::u16;
    else if (bits == 32) dt = sign ? DType::i32 : DType::u32;
    else if (bits == 64) dt = sign ? DType::i64 : DType::u64;
    else return err(fmt::format("integer items of {} bits are not supported", bits));
    break;
  }
  case kLinear: {
    if (bits != 8 && bits != 16) return err(fmt::format("quantised items of {} bits are not supported", bits));
    const double lo = f32_at(data + 52), hi = f32_at(data + 56);
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi >= lo))
      return err(fmt::format("quantisation range [{}, {}] is invalid", lo, hi));
    const double step = (hi - lo) / double((uint64_t(1) << bits) - 1);
    KILN_ASSIGN(Tensor t, Tensor::allocate(DType::f32, shape, limits().max_tensor_bytes));
    float *out = t.data_mut<float>();
    for (int64_t i = 0; i < numel; ++i) {
      const uint32_t q = bits == 8 ? p[i] : uint32_t(p[2 * i]) | uint32_t(p[2 * i + 1]) << 8;
      out[i] = static_cast<float>(lo + q * step);
    }
    return t;
  }
  case kLogarithmic: return err("logarithmic quantisation is not supported");
  default: return err(fmt::format("item type code {:#x} is not supported", code));
  }
  KILN_ASSIGN(Tensor t, Tensor::allocate(dt, shape, limits().max_tensor_bytes));
  if (t.nbytes() != length) return err("internal size mismatch");
  if (length) std::memcpy(t.raw_mut(), p, length);
  return t;
}

Result<Tensor> read_tensor_file(const std::string &path, const Shape &want) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return Status::error(fmt::format("cannot open tensor file {}", path));
  const std::streamoff size = f.tellg();
  if (size < 0) return Status::error(fmt::format("cannot read {}", path));
  if (size > limits().max_tensor_bytes + 128)
    return Status::error(fmt::format("{}: {} bytes exceed KILN_MAX_TENSOR_BYTES", path, size));
  std::vector<uint8_t> buf(static_cast<size_t>(size));
  f.seekg(0);
  if (size && !f.read(reinterpret_cast<char *>(buf.data()), size))
    return Status::error(fmt::format("cannot read {}", path));
  return parse_tensor_file(buf.data(), buf.size(), want, path);
}

} // namespace kiln::nnef_fe
