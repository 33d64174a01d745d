#include "support/npy.h"

#include "support/limits.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace kiln {

namespace {

std::optional<DType> dtype_from_descr(const std::string &d) {
  if (d.size() < 3) return std::nullopt;
  char endian = d[0];
  std::string code = d.substr(1);
  if (endian == '>' && code != "u1" && code != "i1" && code != "b1") return std::nullopt;
  if (code == "f4") return DType::f32;
  if (code == "f2") return DType::f16;
  if (code == "f8") return DType::f64;
  if (code == "i1") return DType::i8;
  if (code == "u1") return DType::u8;
  if (code == "i2") return DType::i16;
  if (code == "u2") return DType::u16;
  if (code == "i4") return DType::i32;
  if (code == "u4") return DType::u32;
  if (code == "i8") return DType::i64;
  if (code == "u8") return DType::u64;
  if (code == "b1") return DType::boolean;
  return std::nullopt;
}

const char *descr_of(DType t) {
  switch (t) {
  case DType::f32: return "<f4";
  case DType::f16: return "<f2";
  case DType::bf16: return "<u2"; // numpy has no bfloat16: raw bits
  case DType::f64: return "<f8";
  case DType::i8: return "|i1";
  case DType::u8: return "|u1";
  case DType::i16: return "<i2";
  case DType::u16: return "<u2";
  case DType::i32: return "<i4";
  case DType::u32: return "<u4";
  case DType::i64: return "<i8";
  case DType::u64: return "<u8";
  case DType::boolean: return "|b1";
  // numpy has no narrow types: one byte an element, as kiln holds them (the float8 / float4 /
  // e8m0 bit patterns as uint8, i4 / i2 values as int8, u4 / u2 values as uint8).
  case DType::i4:
  case DType::i2: return "|i1";
  case DType::u4:
  case DType::u2:
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: return "|u1";
  }
  return "?";
}

// Value of `key` in the header dict (the text up to the next top-level ',' or '}').
std::string dict_value(const std::string &h, const std::string &key) {
  size_t p = h.find("'" + key + "'");
  if (p == std::string::npos) return {};
  p = h.find(':', p);
  if (p == std::string::npos) return {};
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  if (p < h.size() && h[p] == '(') {
    size_t e = h.find(')', p);
    return e == std::string::npos ? std::string() : h.substr(p, e - p + 1);
  }
  size_t e = p;
  while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  std::string v = h.substr(p, e - p);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

} // namespace

Result<NpyArray> read_npy(const std::string &path) {
  // Only regular files: a FIFO would block the open, /dev/zero would be read without end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status::error(fmt::format("{}: cannot open (not a regular file)", path));
  // A file much larger than any tensor it may hold is refused before it is read.
  const auto fsize = std::filesystem::file_size(path, ec);
  if (!ec && fsize > static_cast<uint64_t>(limits().max_tensor_bytes) + (uint64_t(1) << 20))
    return Status::error(fmt::format("{}: {} bytes is larger than the {}-byte tensor limit "
                                     "(KILN_MAX_TENSOR_BYTES)",
                                     path, fsize, limits().max_tensor_bytes));
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error(fmt::format("{}: cannot open", path));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  if (s.size() < 10 || std::memcmp(s.data(), "\x93NUMPY", 6) != 0)
    return Status::error(fmt::format("{}: not a .npy file", path));
  int major = static_cast<uint8_t>(s[6]);
  size_t hlen, hstart;
  if (major == 1) {
    hlen = static_cast<uint8_t>(s[8]) | (static_cast<uint8_t>(s[9]) << 8);
    hstart = 10;
  } else if (major == 2 || major == 3) {
    if (s.size() < 12) return Status::error(fmt::format("{}: truncated header", path));
    hlen = 0;
    for (int i = 0; i < 4; ++i) hlen |= static_cast<size_t>(static_cast<uint8_t>(s[8 + i])) << (8 * i);
    hstart = 12;
  } else {
    return Status::error(fmt::format("{}: unsupported .npy version {}", path, major));
  }
  if (hstart + hlen > s.size()) return Status::error(fmt::format("{}: truncated header", path));
  std::string h = s.substr(hstart, hlen);
  std::string descr = dict_value(h, "descr");
  if (descr.size() < 2) return Status::error(fmt::format("{}: header has no descr", path));
  descr = descr.substr(1, descr.size() - 2);
  auto dt = dtype_from_descr(descr);
  if (!dt) return Status::error(fmt::format("{}: unsupported dtype '{}'", path, descr));
  if (dict_value(h, "fortran_order") != "False")
    return Status::error(fmt::format("{}: Fortran-order arrays are not supported", path));
  std::string shp = dict_value(h, "shape");
  if (shp.size() < 2 || shp.front() != '(' || shp.back() != ')')
    return Status::error(fmt::format("{}: header has no shape tuple", path));
  NpyArray a;
  a.dtype = *dt;
  // Element count and bytes are checked against the tensor limit as the dims are read, so
  // neither can overflow.
  const int64_t max_bytes = limits().max_tensor_bytes;
  const int64_t max_elems = max_bytes / static_cast<int64_t>(dtype_size(*dt));
  int64_t n = 1;
  for (size_t i = 1; i + 1 < shp.size();) {
    while (i + 1 < shp.size() && (shp[i] == ' ' || shp[i] == ',')) ++i;
    if (i + 1 >= shp.size()) break;
    size_t e = i;
    int64_t d = 0;
    bool too_large = false;
    for (; e + 1 < shp.size() && std::isdigit(static_cast<unsigned char>(shp[e])); ++e) {
      const int digit = shp[e] - '0';
      if (d > (max_elems - digit) / 10) too_large = true;
      else d = d * 10 + digit;
    }
    if (e == i) return Status::error(fmt::format("{}: bad shape '{}'", path, shp));
    if (too_large || (d && n > max_elems / d))
      return Status::error(fmt::format("{}: shape {} of {} is larger than the {}-byte tensor "
                                       "limit (KILN_MAX_TENSOR_BYTES)",
                                       path, shp, dtype_name(*dt), max_bytes));
    a.shape.push_back(d);
    n *= d;
    i = e;
  }
  size_t need = static_cast<size_t>(n) * dtype_size(*dt);
  if (s.size() - hstart - hlen < need)
    return Status::error(fmt::format("{}: data is truncated ({} bytes, {} expected)", path,
                                     s.size() - hstart - hlen, need));
  a.bytes.assign(s.begin() + static_cast<long>(hstart + hlen),
                 s.begin() + static_cast<long>(hstart + hlen + need));
  return a;
}

Status write_npy(const std::string &path, DType dtype, const std::vector<int64_t> &shape,
                 const void *data, size_t nbytes) {
  std::string shp = "(";
  for (size_t i = 0; i < shape.size(); ++i) shp += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  shp += ")";
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                              descr_of(dtype), shp);
  size_t total = 10 + h.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  h += std::string(pad, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  if (!f) return Status::error(fmt::format("{}: cannot write", path));
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t hl = static_cast<uint16_t>(h.size());
  char hb[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  f.write(hb, 2);
  f.write(h.data(), static_cast<std::streamsize>(h.size()));
  f.write(static_cast<const char *>(data), static_cast<std::streamsize>(nbytes));
  if (!f) return Status::error(fmt::format("{}: write failed", path));
  return Status::ok();
}

} // namespace kiln
