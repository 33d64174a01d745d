#include "frontend/onnx/tensor_proto.h"

#include "frontend/onnx/convert.h"
#include "frontend/onnx/importer.h"

#include "support/narrow.h"

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>

namespace kiln::onnx_fe {

namespace fs = std::filesystem;

std::optional<DType> dtype_from_onnx(int64_t code) {
  switch (code) {
  case 1: return DType::f32;
  case 2: return DType::u8;
  case 3: return DType::i8;
  case 4: return DType::u16;
  case 5: return DType::i16;
  case 6: return DType::i32;
  case 7: return DType::i64;
  case 9: return DType::boolean;
  case 10: return DType::f16;
  case 11: return DType::f64;
  case 12: return DType::u32;
  case 13: return DType::u64;
  case 16: return DType::bf16;
  // Codes past the onnx 1.12 schema kiln builds against, read by number (onnx.proto 1.18+).
  case 17: return DType::f8e4m3fn;
  case 18: return DType::f8e4m3fnuz;
  case 19: return DType::f8e5m2;
  case 20: return DType::f8e5m2fnuz;
  case 21: return DType::u4;
  case 22: return DType::i4;
  case 23: return DType::f4e2m1;
  case 24: return DType::f8e8m0;
  case 25: return DType::u2;
  case 26: return DType::i2;
  default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int64_t code) {
  static const char *names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16",
                                "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
                                "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
                                "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                "FLOAT8E5M2FNUZ", "UINT4", "INT4", "FLOAT4E2M1",
                                "FLOAT8E8M0", "UINT2", "INT2"};
  if (code >= 0 && code < static_cast<int64_t>(std::size(names))) return names[code];
  return fmt::format("dtype code {}", code);
}

namespace {

// A decimal byte count of external_data ("offset", "length"): digits only, no overflow.
Result<int64_t> parse_count(const std::string &s, const std::string &key) {
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9' || s.size() > 24)
      return Status::error(fmt::format("external data {} '{}' is not a byte count", key, s));
    if (v > (INT64_MAX - (c - '0')) / 10)
      return Status::error(fmt::format("external data {} {} is too large", key, s));
    v = v * 10 + (c - '0');
  }
  if (s.empty()) return Status::error(fmt::format("external data {} is empty", key));
  return v;
}

Result<std::string> read_external(const onnx::TensorProto &t, const std::string &base_dir,
                                  size_t need) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset") {
      KILN_ASSIGN(offset, parse_count(kv.value(), "offset"));
    } else if (kv.key() == "length") {
      KILN_ASSIGN(length, parse_count(kv.value(), "length"));
    }
  }
  if (base_dir.empty()) return Status::error("external data is not allowed here");
  if (location.empty()) return Status::error("external data without a location");
  fs::path base = fs::weakly_canonical(fs::path(base_dir));
  fs::path p = fs::weakly_canonical(base / location);
  auto rel = p.lexically_relative(base);
  if (fs::path(location).is_absolute() || rel.empty() || *rel.begin() == "..")
    return Status::error(fmt::format("external data '{}' lies outside the model's folder",
                                     location));
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) return Status::error(fmt::format("external data '{}' cannot be read", location));
  if (static_cast<uint64_t>(offset) > size)
    return Status::error(fmt::format("external data '{}': offset {} is past its end ({} bytes)",
                                     location, offset, size));
  if (length < 0) length = static_cast<int64_t>(size) - offset;
  if (static_cast<uint64_t>(length) > size - static_cast<uint64_t>(offset))
    return Status::error(fmt::format("external data '{}': range {}+{} is past its end ({} bytes)",
                                     location, offset, length, size));
  if (static_cast<size_t>(length) != need)
    return Status::error(fmt::format("external data '{}' has {} bytes, the tensor needs {}",
                                     location, length, need));
  std::ifstream f(p, std::ios::binary);
  std::string buf(static_cast<size_t>(length), '\0');
  f.seekg(offset);
  f.read(buf.data(), length);
  if (!f) return Status::error(fmt::format("external data '{}': read failed", location));
  return buf;
}

// i4 / u4 / f4e2m1 (two a byte) and i2 / u2 (four a byte), packed low bits first in raw_data,
// external data or int32_data (one packed byte a value there); kiln holds one a byte.
Result<Tensor> decode_packed(const onnx::TensorProto &t, const std::string &tname,
                             const std::string &base_dir, Tensor out) {
  const DType dt = out.dtype();
  const int64_t n = out.numel();
  const size_t need = packed_bytes(dt, n);
  std::string bytes;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    KILN_ASSIGN(bytes, read_external(t, base_dir, need));
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    if (static_cast<size_t>(t.int32_data_size()) != need)
      return Status::error(fmt::format("tensor '{}': {} {} values need {} packed int32_data "
                                       "entries, got {}", tname, n, dtype_name(dt), need,
                                       t.int32_data_size()));
    bytes.resize(need);
    for (size_t i = 0; i < need; ++i) {
      const int32_t v = t.int32_data(static_cast<int>(i));
      if (v < 0 || v > 0xFF)
        return Status::error(fmt::format("tensor '{}': int32_data[{}] = {} is not a packed "
                                         "byte", tname, i, v));
      bytes[i] = static_cast<char>(v);
    }
  }
  std::string why = unpack_narrow(dt, reinterpret_cast<const uint8_t *>(bytes.data()),
                                  bytes.size(), n, out.data_mut<uint8_t>());
  if (!why.empty())
    return Status::error(fmt::format("tensor '{}' of shape [{}]: {}", tname,
                                     shape_str(out.shape()), why));
  return out;
}

} // namespace

Result<Tensor> decode_tensor(const onnx::TensorProto &t, const std::string &base_dir,
                             int64_t max_bytes) {
  auto dt = dtype_from_onnx(t.data_type());
  const std::string tname = t.name().empty() ? std::string("<unnamed>") : t.name();
  if (!dt)
    return Status::error(fmt::format("tensor '{}': dtype {} is not supported", tname,
                                     onnx_dtype_name(t.data_type())));
  Shape shape(t.dims().begin(), t.dims().end());
  auto alloc = Tensor::allocate(*dt, shape, max_bytes);
  if (!alloc) return alloc.status().with_context(fmt::format("tensor '{}'", tname));
  Tensor out = std::move(alloc).value();
  const int64_t n = out.numel();
  const size_t need = out.nbytes();
  auto count_error = [&](size_t got) {
    return Status::error(fmt::format("tensor '{}' of shape [{}] has {} values, {} expected", tname,
                                     shape_str(shape), got, n));
  };
  if (dtype_bits(*dt) < 8) return decode_packed(t, tname, base_dir, std::move(out));
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    KILN_ASSIGN(std::string buf, read_external(t, base_dir, need));
    if (need) std::memcpy(out.raw_mut(), buf.data(), need);
    return out;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != need)
      return Status::error(fmt::format("tensor '{}': raw_data has {} bytes, {} expected", tname,
                                       t.raw_data().size(), need));
    if (need) std::memcpy(out.raw_mut(), t.raw_data().data(), need);
    return out;
  }
  switch (*dt) {
  case DType::f32:
    if (t.float_data_size() != n) return count_error(t.float_data_size());
    if (n) std::memcpy(out.raw_mut(), t.float_data().data(), need);
    break;
  case DType::f64:
    if (t.double_data_size() != n) return count_error(t.double_data_size());
    if (n) std::memcpy(out.raw_mut(), t.double_data().data(), need);
    break;
  case DType::i64:
    if (t.int64_data_size() != n) return count_error(t.int64_data_size());
    if (n) std::memcpy(out.raw_mut(), t.int64_data().data(), need);
    break;
  case DType::u32:
  case DType::u64:
    if (t.uint64_data_size() != n) return count_error(t.uint64_data_size());
    for (int64_t i = 0; i < n; ++i) out.set_i64(i, static_cast<int64_t>(t.uint64_data(i)));
    break;
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f8e8m0:
    // Bit patterns, one a value in int32_data.
    if (t.int32_data_size() != n) return count_error(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      if (t.int32_data(i) < 0 || t.int32_data(i) > 0xFF)
        return Status::error(fmt::format("tensor '{}': int32_data[{}] = {} is not an 8-bit {} "
                                         "pattern", tname, i, t.int32_data(i), dtype_name(*dt)));
      out.data_mut<uint8_t>()[i] = static_cast<uint8_t>(t.int32_data(i));
    }
    break;
  case DType::f16:
  case DType::bf16:
    // Stored as raw 16-bit patterns in int32_data.
    if (t.int32_data_size() != n) return count_error(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.data_mut<uint16_t>()[i] = static_cast<uint16_t>(t.int32_data(i));
    break;
  case DType::i8:
  case DType::u8:
  case DType::i16:
  case DType::u16:
    // One value an entry, which must fit the type (a uint8 zero point of 300 would wrap).
    if (t.int32_data_size() != n) return count_error(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = t.int32_data(static_cast<int>(i));
      if (v < int_lowest(*dt) || v > int_highest(*dt))
        return Status::error(fmt::format("tensor '{}': int32_data[{}] = {} is out of range for "
                                         "{} [{}, {}]",
                                         tname, i, v, dtype_name(*dt), int_lowest(*dt),
                                         int_highest(*dt)));
      out.set_i64(i, v);
    }
    break;
  default:
    if (t.int32_data_size() != n) return count_error(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i) out.set_i64(i, t.int32_data(i));
    break;
  }
  return out;
}

Result<Tensor> read_tensor_pb(const std::string &path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) // a FIFO would block, /dev/zero never end
    return Status::error(fmt::format("{}: cannot open (not a regular file)", path));
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error(fmt::format("{}: cannot open", path));
  const auto size = fs::file_size(path, ec);
  if (!ec && size > static_cast<uint64_t>(limits().max_tensor_bytes) + (uint64_t(1) << 20))
    return Status::error(fmt::format("{}: {} bytes is larger than the {}-byte tensor limit "
                                     "(KILN_MAX_TENSOR_BYTES)",
                                     path, size, limits().max_tensor_bytes));
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&f)) return Status::error(fmt::format("{}: not a TensorProto", path));
  auto r = decode_tensor(t, fs::path(path).parent_path().string(), limits().max_tensor_bytes);
  if (!r) return r.status().with_context(path);
  return r;
}

} // namespace kiln::onnx_fe
