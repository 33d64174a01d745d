// Scalar literals of the textual IR: formatting that reads back exactly and the matching
// decoding into tensor element bytes.
#include "ir/text_internal.h"

#include "support/half.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>

namespace kiln::text {

namespace {

bool ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool ident_char(char c) {
  return ident_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '$';
}

// Makes a formatted finite number look like a float ("1" -> "1.0").
std::string float_look(std::string s) {
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

// [-]inf / [-]nan; false when `text` is neither.
template <class F> bool special_float(std::string_view text, F &out) {
  bool neg = !text.empty() && text[0] == '-';
  std::string_view body = neg ? text.substr(1) : text;
  if (body == "inf") out = std::numeric_limits<F>::infinity();
  else if (body == "nan") out = std::numeric_limits<F>::quiet_NaN();
  else return false;
  if (neg) out = -out;
  return true;
}

template <class F> std::string parse_float(std::string_view text, F &out) {
  if (special_float(text, out)) return {};
  const char *b = text.data(), *e = text.data() + text.size();
  if (b == e || !(*b == '-' || (*b >= '0' && *b <= '9')))
    return fmt::format("'{}' is not a number", text);
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return fmt::format("'{}' is out of range", text);
  if (ec != std::errc() || p != e) return fmt::format("'{}' is not a number", text);
  return {};
}

bool is_int_text(std::string_view t) {
  size_t i = !t.empty() && t[0] == '-' ? 1 : 0;
  if (i >= t.size()) return false;
  for (; i < t.size(); ++i)
    if (t[i] < '0' || t[i] > '9') return false;
  return true;
}

std::string encode_int(DType dt, std::string_view text, std::byte *dst) {
  if (!is_int_text(text))
    return fmt::format("'{}' is not an integer (element type {})", text, dtype_name(dt));
  const char *b = text.data(), *e = b + text.size();
  if (dt == DType::u64) {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(b, e, u);
    if (ec != std::errc() || p != e) return fmt::format("'{}' is out of range for u64", text);
    std::memcpy(dst, &u, 8);
    return {};
  }
  int64_t v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e)
    return fmt::format("'{}' is out of range for {}", text, dtype_name(dt));
  int64_t lo = 0, hi = 0;
  switch (dt) {
  case DType::i8: lo = INT8_MIN, hi = INT8_MAX; break;
  case DType::u8: lo = 0, hi = UINT8_MAX; break;
  case DType::i16: lo = INT16_MIN, hi = INT16_MAX; break;
  case DType::u16: lo = 0, hi = UINT16_MAX; break;
  case DType::i32: lo = INT32_MIN, hi = INT32_MAX; break;
  case DType::u32: lo = 0, hi = UINT32_MAX; break;
  case DType::i4:
  case DType::u4:
  case DType::i2:
  case DType::u2: lo = int_lowest(dt), hi = int_highest(dt); break;
  default: lo = INT64_MIN, hi = INT64_MAX; break;
  }
  if (v < lo || v > hi) return fmt::format("'{}' is out of range for {}", text, dtype_name(dt));
  Tensor tmp = Tensor::scalar_i64(dt, v);
  std::memcpy(dst, tmp.raw(), dtype_size(dt));
  return {};
}

} // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || !ident_start(s[0])) return false;
  for (char c : s)
    if (!ident_char(c)) return false;
  return true;
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\{:02X}", u);
    else out += c;
  }
  return out + "\"";
}

std::string format_double(double v) { return float_look(fmt::format("{}", v)); }

std::string format_element(const Tensor &t, int64_t i) {
  switch (t.dtype()) {
  case DType::f32: return float_look(fmt::format("{}", t.data<float>()[i]));
  case DType::f16: return float_look(fmt::format("{}", f16_to_f32(t.data<uint16_t>()[i])));
  case DType::bf16: return float_look(fmt::format("{}", bf16_to_f32(t.data<uint16_t>()[i])));
  case DType::f64: return format_double(t.data<double>()[i]);
  case DType::u64: return fmt::format("{}", t.data<uint64_t>()[i]);
  case DType::boolean: return t.get_i64(i) ? "true" : "false";
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: return format_double(t.get_f64(i)); // exact: every value fits a double
  default: return fmt::format("{}", t.get_i64(i));
  }
}

bool parse_double(std::string_view text, double &out) { return parse_float(text, out).empty(); }

std::string encode_element(DType dt, std::string_view text, std::byte *dst) {
  if (dt == DType::boolean) {
    if (text != "true" && text != "false")
      return fmt::format("expected true or false for an i1 element, got '{}'", text);
    *dst = std::byte{text == "true" ? uint8_t(1) : uint8_t(0)};
    return {};
  }
  if (is_narrow_float(dt)) { // rounds to nearest even, saturating, as kiln.cast does
    double d = 0;
    std::string why = parse_float(text, d);
    if (!why.empty()) return why;
    Tensor tmp(dt, {});
    tmp.set_f64(0, d);
    std::memcpy(dst, tmp.raw(), 1);
    return {};
  }
  if (!is_float(dt)) return encode_int(dt, text, dst);
  if (dt == DType::f64) {
    double d = 0;
    std::string why = parse_float(text, d);
    if (why.empty()) std::memcpy(dst, &d, 8);
    return why;
  }
  float f = 0;
  std::string why = parse_float(text, f);
  if (!why.empty()) return why;
  if (dt == DType::f32) {
    std::memcpy(dst, &f, 4);
    return {};
  }
  uint16_t h = dt == DType::f16 ? f32_to_f16(f) : f32_to_bf16(f);
  std::memcpy(dst, &h, 2);
  return {};
}

} // namespace kiln::text
