// StableHLO text parser: tensor types and attributes (numbers, strings, arrays, dictionaries,
// array<...>, dense<...>, #stablehlo enums and structs, convolution dimension numbers).
#include "frontend/stablehlo/parser_impl.h"
#include "ir/graph.h"
#include "support/half.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstring>
#include <fmt/format.h>
#include <functional>

namespace kiln::stablehlo_fe {

namespace {

constexpr int kMaxRank = 64;

// Magnitude of an integer token (decimal or 0x hex); false when it does not fit 64 bits.
bool magnitude(std::string_view s, uint64_t &out) {
  out = 0;
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x') {
    if (s.size() > 18) return false;
    for (char c : s.substr(2)) out = out * 16 + static_cast<uint64_t>(hex_digit_value(c));
    return true;
  }
  for (char c : s) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (out > (UINT64_MAX - d) / 10) return false;
    out = out * 10 + d;
  }
  return true;
}

bool is_hex(std::string_view s) { return s.size() > 2 && s[0] == '0' && s[1] == 'x'; }

std::string dims_str(const std::vector<int64_t> &dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s.empty() ? "scalar" : s;
}

Attr int_attr(int64_t v) {
  Attr a;
  a.kind = Attr::Kind::Int;
  a.i = v;
  return a;
}

Attr int_array(const std::vector<int64_t> &v) {
  Attr a;
  a.kind = Attr::Kind::Array;
  for (int64_t x : v) a.list.push_back(int_attr(x));
  return a;
}

// A scalar of a dense literal.
struct Leaf {
  Token tok;
  bool neg = false;
};

} // namespace

bool element_type(std::string_view name, bool allow_index, DType &out) {
  static const struct {
    const char *name;
    DType dt;
  } types[] = {
      {"i1", DType::boolean}, {"i8", DType::i8},   {"i16", DType::i16},  {"i32", DType::i32},
      {"i64", DType::i64},    {"ui8", DType::u8},  {"ui16", DType::u16}, {"ui32", DType::u32},
      {"ui64", DType::u64},   {"f16", DType::f16}, {"bf16", DType::bf16}, {"f32", DType::f32},
      {"f64", DType::f64},
  };
  for (const auto &t : types)
    if (name == t.name) {
      out = t.dt;
      return true;
    }
  if (allow_index && name == "index") {
    out = DType::i64;
    return true;
  }
  return false;
}

// ---- types ----

Result<Type> Parser::type(bool allow_index) {
  Token t = cur_;
  if (at(Tok::bang_id)) return error(t, fmt::format("type '!{}' is not supported", t.text));
  if (at_id("tuple")) return error(t, "tuple types are not supported");
  if (at_id("complex") || at_id("vector") || at_id("memref") || at_id("none") ||
      at_id("index")) {
    return error(t, fmt::format("type '{}' is not supported", t.text));
  }
  DType scalar;
  if (at(Tok::bare_id) && element_type(t.text, true, scalar))
    return error(t, fmt::format("expected a tensor type, got '{}'", t.text));
  if (!at_id("tensor")) return expected("a tensor type");
  std::string body;
  int line = 0, col = 0;
  if (!lex_.angle_body(body, line, col)) return error_at(line, col, body);
  Type ty;
  size_t pos = 0;
  if (!body.empty() && body[0] == '*') return error_at(line, col, "unranked tensors are not supported");
  int64_t numel = 1;
  while (pos < body.size() && (is_digit_char(body[pos]) || body[pos] == '?')) {
    int dcol = col + static_cast<int>(pos);
    int64_t d = kDynamic;
    if (body[pos] == '?') {
      ++pos;
    } else {
      size_t start = pos;
      while (pos < body.size() && is_digit_char(body[pos])) ++pos;
      auto [end, ec] = std::from_chars(body.data() + start, body.data() + pos, d);
      if (ec != std::errc() || end != body.data() + pos)
        return error_at(line, dcol, fmt::format("dimension '{}' is too large",
                                                body.substr(start, pos - start)));
      if (__builtin_mul_overflow(numel, d, &numel))
        return error_at(line, dcol, "tensor type has too many elements");
    }
    if (pos >= body.size() || body[pos] != 'x')
      return error_at(line, col + static_cast<int>(pos), "expected 'x' after a dimension");
    ++pos;
    ty.dims.push_back(d);
    if (ty.dims.size() > kMaxRank)
      return error_at(line, dcol, fmt::format("tensor rank exceeds {}", kMaxRank));
  }
  std::string_view rest = std::string_view(body).substr(pos);
  if (rest.find(',') != std::string_view::npos)
    return error_at(line, col, fmt::format("tensor type encodings are not supported: 'tensor<{}>'",
                                           body));
  if (!element_type(rest, allow_index, ty.dtype))
    return error_at(line, col + static_cast<int>(pos),
                    fmt::format("unsupported element type '{}'", rest));
  bump();
  return ty;
}

// ---- numbers ----

Result<int64_t> Parser::integer() {
  Token t = cur_;
  bool neg = false;
  if (at(Tok::minus)) {
    neg = true;
    bump();
  }
  if (!at(Tok::integer)) return expected("an integer");
  uint64_t mag = 0;
  if (!magnitude(cur_.text, mag) || mag > (neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX)))
    return error(cur_, fmt::format("integer '{}{}' does not fit 64 bits", neg ? "-" : "", cur_.text));
  bump();
  return neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
}

Result<std::vector<int64_t>> Parser::int_list() {
  std::vector<int64_t> out;
  KILN_TRY(expect(Tok::lbracket, "'['"));
  while (!at(Tok::rbracket)) {
    KILN_ASSIGN(int64_t v, integer());
    out.push_back(v);
    if (at(Tok::comma)) {
      bump();
      if (at(Tok::rbracket)) return expected("an integer");
    } else if (!at(Tok::rbracket)) {
      return expected("',' or ']'");
    }
  }
  bump();
  return out;
}

Result<Attr> Parser::dense_i64(std::vector<int64_t> values, std::vector<int64_t> dims) {
  Attr a;
  a.kind = Attr::Kind::Dense;
  a.type.dims = dims;
  a.type.dtype = DType::i64;
  a.dense = Tensor(DType::i64, dims);
  KILN_ASSERT(static_cast<size_t>(a.dense.numel()) == values.size(), "dense_i64 size");
  if (!values.empty()) std::memcpy(a.dense.raw_mut(), values.data(), values.size() * 8);
  return a;
}

// ---- dense<...> ----

namespace {

// Encodes one literal into dtype `dt` at `dst`; returns the reason on failure.
std::string encode_leaf(const Leaf &l, DType dt, std::byte *dst) {
  const std::string &s = l.tok.text;
  if (dt == DType::boolean) {
    uint8_t v = 0;
    if (l.tok.kind == Tok::bare_id && (s == "true" || s == "false") && !l.neg) {
      v = s == "true";
    } else if (l.tok.kind == Tok::integer && !l.neg && (s == "0" || s == "1")) {
      v = s == "1";
    } else {
      return "expected true or false";
    }
    std::memcpy(dst, &v, 1);
    return "";
  }
  const size_t size = dtype_size(dt);
  if (is_integer(dt)) {
    if (l.tok.kind != Tok::integer) return "expected an integer";
    uint64_t mag = 0;
    const int bits = static_cast<int>(size * 8);
    if (!magnitude(s, mag)) return "integer does not fit 64 bits";
    uint64_t v = l.neg ? 0 - mag : mag;
    if (l.neg) {
      if (is_unsigned_int(dt)) return "negative value for an unsigned type";
      if (bits < 64 ? mag > (uint64_t(1) << (bits - 1)) : mag > (uint64_t(1) << 63))
        return "integer out of range of its type";
    } else if (bits < 64 && mag >> bits) {
      return "integer out of range of its type";
    }
    std::memcpy(dst, &v, size); // little-endian host
    return "";
  }
  // Floating point: hex integers are bit patterns, other numbers are values.
  if (l.tok.kind == Tok::integer && is_hex(s)) {
    if (l.neg) return "a hexadecimal float bit pattern cannot be negated";
    uint64_t bits = 0;
    if (!magnitude(s, bits) || (size < 8 && bits >> (size * 8)))
      return "hexadecimal bit pattern is wider than the element type";
    std::memcpy(dst, &bits, size);
    return "";
  }
  double v = 0;
  if (l.tok.kind == Tok::bare_id && (s == "inf" || s == "nan")) {
    v = s == "inf" ? HUGE_VAL : std::numeric_limits<double>::quiet_NaN();
  } else if (l.tok.kind == Tok::integer || l.tok.kind == Tok::floating) {
    if (dt == DType::f32) {
      float f = 0;
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), f);
      if (ec == std::errc::result_out_of_range && end == s.data() + s.size()) {
        // Underflow rounds to zero; overflow is an error.
        double d = 0;
        auto [dend, dec] = std::from_chars(s.data(), s.data() + s.size(), d);
        if (dec != std::errc() || std::fabs(d) > 1.0) return "out-of-range float";
        f = static_cast<float>(d);
      } else if (ec != std::errc() || end != s.data() + s.size()) {
        return "invalid or out-of-range float";
      }
      if (l.neg) f = -f;
      std::memcpy(dst, &f, 4);
      return "";
    }
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return "invalid or out-of-range float";
  } else {
    return "expected a number";
  }
  if (l.neg) v = -v;
  if (dt == DType::f64) {
    std::memcpy(dst, &v, 8);
  } else if (dt == DType::f32) {
    float f = static_cast<float>(v);
    std::memcpy(dst, &f, 4);
  } else {
    uint16_t h = dt == DType::f16 ? f32_to_f16(static_cast<float>(v))
                                  : f32_to_bf16(static_cast<float>(v));
    std::memcpy(dst, &h, 2);
  }
  return "";
}

} // namespace

namespace {

// Decodes "0x..." into bytes; returns the reason on failure.
std::string decode_hex(const std::string &text, std::string &out) {
  if (text.size() < 2 || text[0] != '0' || text[1] != 'x')
    return "string constants are not supported (expected a \"0x...\" hex blob)";
  if (text.size() % 2) return "hex blob has an odd number of digits";
  out.resize((text.size() - 2) / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    int hi = hex_digit_value(text[2 + 2 * i]), lo = hex_digit_value(text[3 + 2 * i]);
    if (hi < 0 || lo < 0) return "invalid digit in hex blob";
    out[i] = static_cast<char>(hi * 16 + lo);
  }
  return "";
}

// Fills `t` from a hex blob: raw little-endian elements, or one element for a splat. i1 blobs
// have one byte per element (as JAX prints them), or bits packed LSB first (older MLIR).
std::string fill_from_blob(const std::string &blob, Tensor &t) {
  const int64_t n = static_cast<int64_t>(blob.size());
  const int64_t numel = t.numel();
  const int64_t esize = static_cast<int64_t>(dtype_size(t.dtype()));
  std::byte *dst = t.raw_mut();
  if (t.dtype() == DType::boolean && n == numel) {
    for (int64_t i = 0; i < numel; ++i) dst[i] = std::byte(blob[static_cast<size_t>(i)] != 0);
  } else if (t.dtype() == DType::boolean && n == 1) {
    std::memset(dst, blob[0] ? 1 : 0, static_cast<size_t>(numel));
  } else if (t.dtype() == DType::boolean && n == (numel + 7) / 8) {
    for (int64_t i = 0; i < numel; ++i)
      dst[i] = std::byte((static_cast<uint8_t>(blob[static_cast<size_t>(i / 8)]) >> (i % 8)) & 1);
  } else if (t.dtype() == DType::boolean) {
    return fmt::format("hex blob has {} bytes; tensor<{}xi1> needs {}", n, dims_str(t.shape()),
                       numel);
  } else if (n == numel * esize) {
    if (n) std::memcpy(dst, blob.data(), static_cast<size_t>(n));
  } else if (n == esize) {
    for (int64_t i = 0; i < numel; ++i) std::memcpy(dst + i * esize, blob.data(), esize);
  } else {
    return fmt::format("hex blob has {} bytes; its type needs {}", n, numel * esize);
  }
  return "";
}

} // namespace

Status Parser::dense_walk(DenseShape &w, const DenseEncode *encode) {
  std::vector<int64_t> counts; // items so far in each open list
  int64_t index = 0;
  for (;;) {
    // One item: a '[' opening a list, or a scalar.
    if (at(Tok::lbracket)) {
      counts.push_back(0);
      if (static_cast<int>(counts.size()) + depth_ > opt_.max_depth)
        return error(cur_, fmt::format("nesting deeper than {} levels", opt_.max_depth));
      bump();
      if (!at(Tok::rbracket)) continue;
    } else {
      bool neg = false;
      if (at(Tok::minus)) {
        neg = true;
        bump();
      }
      if (!at(Tok::integer) && !at(Tok::floating) && !at_id("true") && !at_id("false") &&
          !at_id("inf") && !at_id("nan")) {
        if (at(Tok::lparen)) return error(cur_, "complex constants are not supported");
        return expected("a number, true or false");
      }
      Token tok = cur_;
      bump();
      if (encode) {
        KILN_TRY((*encode)(tok, neg, index));
      } else {
        int d = static_cast<int>(counts.size());
        if (w.leaf_depth < 0) w.leaf_depth = d;
        if (w.leaf_depth != d) return error(tok, "dense literal mixes scalars and lists");
      }
      ++index;
      if (counts.empty()) break;
      ++counts.back();
    }
    // After an item: ',' starts the next one, ']' closes lists.
    bool done = false;
    for (;;) {
      if (at(Tok::comma)) {
        bump();
        break;
      }
      if (!at(Tok::rbracket)) return expected("',' or ']'");
      Token rb = cur_;
      bump();
      size_t level = counts.size() - 1;
      if (w.shape.size() <= level) w.shape.resize(level + 1, -1);
      if (w.shape[level] < 0) {
        w.shape[level] = counts.back();
      } else if (w.shape[level] != counts.back()) {
        return error(rb, "dense literal has lists of different lengths");
      }
      counts.pop_back();
      if (counts.empty()) {
        done = true;
        break;
      }
      ++counts.back();
    }
    if (done) break;
  }
  w.leaves = index;
  return Status::ok();
}

// dense<literal> : type. The literal is walked once to check its syntax and shape; once the
// type is known a second walk over the same text encodes each scalar in place, so no copy of
// the literal is kept.
Result<Attr> Parser::dense_attr() {
  Token start = cur_;
  bump();
  KILN_TRY(expect(Tok::less, "'<' after 'dense'"));
  DenseShape w;
  const bool is_list = at(Tok::lbracket);
  std::string blob;
  bool has_blob = false;
  const Token lit_tok = cur_;
  const Lexer::State lit_state = lex_.save();
  if (at(Tok::string)) {
    std::string why = decode_hex(cur_.text, blob);
    if (!why.empty()) return error(cur_, why);
    has_blob = true;
    bump();
  } else if (!at(Tok::greater)) {
    KILN_TRY(dense_walk(w, nullptr));
  }
  KILN_TRY(expect(Tok::greater, "'>' closing the dense literal"));
  KILN_TRY(expect(Tok::colon, "':' and the constant's type"));
  Token type_tok = cur_;
  KILN_ASSIGN(Type ty, type(true));
  int64_t numel = 1;
  for (int64_t d : ty.dims) {
    if (d < 0) return error(type_tok, "a constant's type must have static dimensions");
    numel *= d; // checked by type()
  }
  const int64_t esize = static_cast<int64_t>(dtype_size(ty.dtype));
  if (numel > opt_.max_constant_bytes / esize)
    return error(start, fmt::format("constant of type tensor<{}> exceeds the limit of {} bytes",
                                    dims_str(ty.dims), opt_.max_constant_bytes));
  auto alloc = Tensor::allocate(ty.dtype, ty.dims, opt_.max_constant_bytes);
  if (!alloc) return error(start, alloc.status().message());
  Attr a;
  a.kind = Attr::Kind::Dense;
  a.type = ty;
  a.dense = std::move(alloc).value();
  if (has_blob) {
    std::string why = fill_from_blob(blob, a.dense);
    if (!why.empty()) return error(lit_tok, why);
    return a;
  }
  if (w.leaves == 0) {
    if (numel != 0) return error(start, fmt::format("dense literal has no elements but its type "
                                                    "is tensor<{}>",
                                                    dims_str(ty.dims)));
    return a;
  }
  if (is_list) {
    std::vector<int64_t> lit_shape = w.shape;
    lit_shape.resize(static_cast<size_t>(w.leaf_depth));
    if (lit_shape != ty.dims)
      return error(start, fmt::format("dense literal has shape {} but its type is tensor<{}>",
                                      dims_str(lit_shape), dims_str(ty.dims)));
  }
  if (numel == 0) return a; // a splat of an empty tensor: nothing to encode
  // Second walk: encode the scalars, then continue after the type.
  const Lexer::State end_state = lex_.save();
  const Token end_tok = cur_;
  lex_.restore(lit_state);
  cur_ = lit_tok;
  std::byte *dst = a.dense.raw_mut();
  const DenseEncode encode = [&](const Token &tok, bool neg, int64_t i) -> Status {
    std::string why = encode_leaf(Leaf{tok, neg}, ty.dtype, dst + i * esize);
    return why.empty() ? Status::ok() : error(tok, why);
  };
  DenseShape again;
  KILN_TRY(dense_walk(again, &encode));
  lex_.restore(end_state);
  cur_ = end_tok;
  if (!is_list) // a splat
    for (int64_t i = 1; i < numel; ++i) std::memcpy(dst + i * esize, dst, esize);
  return a;
}

// ---- array<...> ----

Result<Attr> Parser::dense_array_attr() {
  bump();
  KILN_TRY(expect(Tok::less, "'<' after 'array'"));
  Token et = cur_;
  DType dt;
  if (!at(Tok::bare_id) || !element_type(cur_.text, false, dt))
    return expected("an element type");
  if (is_float(dt)) return error(et, fmt::format("array<{}: ...> attributes are not supported", et.text));
  bump();
  Attr a;
  a.kind = Attr::Kind::DenseArray;
  if (at(Tok::colon)) {
    bump();
    for (;;) {
      Leaf l;
      if (at(Tok::minus)) {
        l.neg = true;
        bump();
      }
      if (!at(Tok::integer) && !at_id("true") && !at_id("false"))
        return expected(dt == DType::boolean ? "true or false" : "an integer");
      l.tok = cur_;
      bump();
      std::byte buf[8] = {};
      std::string why = encode_leaf(l, dt, buf);
      if (!why.empty()) return error(l.tok, why);
      Tensor one(dt, {});
      std::memcpy(one.raw_mut(), buf, dtype_size(dt));
      a.ints.push_back(one.get_i64(0));
      if (!at(Tok::comma)) break;
      bump();
    }
  }
  KILN_TRY(expect(Tok::greater, "'>' closing the array"));
  return a;
}

// ---- #dialect attributes ----

Result<Attr> Parser::struct_params(const std::string &name) {
  // at '<'
  KILN_TRY(expect(Tok::less, "'<'"));
  Attr a;
  a.kind = Attr::Kind::Dialect;
  a.s = name;
  const bool drop_empty = name == "stablehlo.dot" || name == "stablehlo.gather" ||
                          name == "stablehlo.scatter";
  while (!at(Tok::greater)) {
    if (!at(Tok::bare_id)) return expected("a field name");
    Token key = cur_;
    bump();
    KILN_TRY(expect(Tok::equal, "'='"));
    KILN_ASSIGN(Attr v, attr());
    if (a.get(key.text)) return error(key, fmt::format("duplicate field '{}'", key.text));
    if (!(drop_empty && v.kind == Attr::Kind::Array && v.list.empty()))
      a.dict.emplace_back(key.text, std::move(v));
    if (at(Tok::comma)) {
      bump();
    } else if (!at(Tok::greater)) {
      return expected("',' or '>'");
    }
  }
  bump();
  return a;
}

Result<Attr> Parser::conv_dims() {
  Attr a;
  a.kind = Attr::Kind::Dialect;
  a.s = "stablehlo.conv";
  // One bracketed list: `letters` are its two non-spatial dimension letters.
  auto list = [&](const char *letters, const char *name0, const char *name1,
                  const char *spatial_name) -> Status {
    Token open = cur_;
    KILN_TRY(expect(Tok::lbracket, "'['"));
    int64_t pos[2] = {-1, -1};
    std::vector<int64_t> where; // spatial dim k -> position
    int64_t index = 0;
    for (;;) {
      Token t = cur_;
      if (at(Tok::integer)) {
        KILN_ASSIGN(int64_t k, integer());
        if (k >= kMaxRank) return error(t, fmt::format("spatial dimension {} is too large", k));
        if (static_cast<size_t>(k) >= where.size()) where.resize(static_cast<size_t>(k) + 1, -1);
        if (where[static_cast<size_t>(k)] >= 0)
          return error(t, fmt::format("duplicate spatial dimension {}", k));
        where[static_cast<size_t>(k)] = index;
      } else if (at(Tok::bare_id) && cur_.text.size() == 1 &&
                 (cur_.text[0] == letters[0] || cur_.text[0] == letters[1])) {
        int which = cur_.text[0] == letters[0] ? 0 : 1;
        if (pos[which] >= 0) return error(t, fmt::format("duplicate dimension '{}'", cur_.text));
        pos[which] = index;
        bump();
      } else {
        return expected(fmt::format("a spatial dimension number, '{}' or '{}'", letters[0],
                                    letters[1]));
      }
      if (++index > kMaxRank) return error(t, "too many dimensions");
      if (!at(Tok::comma)) break;
      bump();
    }
    KILN_TRY(expect(Tok::rbracket, "']'"));
    if (pos[0] < 0 || pos[1] < 0)
      return error(open, fmt::format("dimensions '{}' and '{}' must both appear", letters[0],
                                     letters[1]));
    for (size_t k = 0; k < where.size(); ++k)
      if (where[k] < 0) return error(open, fmt::format("spatial dimension {} is missing", k));
    a.dict.emplace_back(name0, int_attr(pos[0]));
    a.dict.emplace_back(name1, int_attr(pos[1]));
    a.dict.emplace_back(spatial_name, int_array(where));
    return Status::ok();
  };
  KILN_TRY(list("bf", "input_batch_dimension", "input_feature_dimension",
                "input_spatial_dimensions"));
  KILN_TRY(expect_id("x"));
  KILN_TRY(list("io", "kernel_input_feature_dimension", "kernel_output_feature_dimension",
                "kernel_spatial_dimensions"));
  KILN_TRY(expect(Tok::arrow, "'->'"));
  KILN_TRY(list("bf", "output_batch_dimension", "output_feature_dimension",
                "output_spatial_dimensions"));
  return a;
}

Result<Attr> Parser::hash_attr() {
  Token t = cur_;
  const std::string name = cur_.text;
  if (lex_.peek_char() != '<') {
    if (name.find('.') == std::string::npos)
      return error(t, fmt::format("attribute aliases ('#{}') are not supported", name));
    Attr a;
    a.kind = Attr::Kind::Dialect;
    a.s = name;
    bump();
    return a;
  }
  if (name == "stablehlo.conv") {
    bump();
    KILN_TRY(expect(Tok::less, "'<'"));
    Attr a;
    if (at_id("raw")) {
      // `#stablehlo.conv<raw input_batch_dimension = 0, ...>`: the fields as written.
      cur_.kind = Tok::less; // reuse the struct parser from here
      KILN_ASSIGN(a, struct_params(name));
      return a;
    }
    KILN_ASSIGN(a, conv_dims());
    KILN_TRY(expect(Tok::greater, "'>'"));
    return a;
  }
  if (name == "stablehlo.dot" || name == "stablehlo.gather" || name == "stablehlo.scatter" ||
      name == "stablehlo.dot_algorithm" || name == "stablehlo.result_accuracy" ||
      name == "stablehlo.output_operand_alias") {
    bump();
    return struct_params(name);
  }
  std::string body;
  int line = 0, col = 0;
  if (!lex_.angle_body(body, line, col)) return error_at(line, col, body);
  bump();
  Attr a;
  if (name.find('.') == std::string::npos) {
    // #stablehlo<precision DEFAULT>, #stablehlo<comparison_direction GT>: the value.
    size_t sp = body.find(' ');
    std::string value = sp == std::string::npos ? "" : body.substr(sp + 1);
    while (!value.empty() && value[0] == ' ') value.erase(0, 1);
    bool word = !value.empty();
    for (char c : value)
      word = word && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!word) return error(t, fmt::format("unsupported attribute '#{}<{}>'", name, body));
    a.kind = Attr::Kind::Ident;
    a.s = value;
    return a;
  }
  // Another dialect's attribute: kept as its raw text.
  a.kind = Attr::Kind::Dialect;
  a.s = name;
  Attr raw;
  raw.kind = Attr::Kind::String;
  raw.s = body;
  a.dict.emplace_back("raw", std::move(raw));
  return a;
}

// ---- attributes ----

Result<Attr> Parser::attr() {
  DepthGuard guard(*this);
  KILN_TRY(check_depth(cur_));
  Token t = cur_;
  Attr a;
  switch (cur_.kind) {
  case Tok::minus:
  case Tok::integer:
  case Tok::floating: {
    bool neg = at(Tok::minus);
    if (neg) bump();
    Token num = cur_;
    if (!at(Tok::integer) && !at(Tok::floating)) return expected("a number");
    bump();
    // An optional `: type` suffix.
    DType dt = num.kind == Tok::floating ? DType::f64 : DType::i64;
    bool typed = false;
    if (at(Tok::colon)) {
      Token next = peek_token();
      if (next.kind == Tok::bare_id && element_type(next.text, true, dt)) {
        bump();
        bump();
        typed = true;
      }
    }
    if (num.kind == Tok::integer && !(typed && is_float(dt))) {
      uint64_t mag = 0;
      if (!magnitude(num.text, mag) ||
          mag > (neg ? uint64_t(INT64_MAX) + 1 : uint64_t(UINT64_MAX)))
        return error(num, fmt::format("integer '{}' does not fit 64 bits", num.text));
      a.kind = dt == DType::boolean ? Attr::Kind::Bool : Attr::Kind::Int;
      a.i = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
      return a;
    }
    Leaf l{num, neg};
    std::byte buf[8] = {};
    DType fdt = is_float(dt) ? dt : DType::f64;
    std::string why = encode_leaf(l, fdt, buf);
    if (!why.empty()) return error(num, why);
    Tensor one(fdt, {});
    std::memcpy(one.raw_mut(), buf, dtype_size(fdt));
    a.kind = Attr::Kind::Float;
    a.f = one.get_f64(0);
    return a;
  }
  case Tok::string:
    a.kind = Attr::Kind::String;
    a.s = cur_.text;
    bump();
    return a;
  case Tok::symbol:
    a.kind = Attr::Kind::String;
    a.s = cur_.text;
    bump();
    if (at(Tok::colon) && lex_.peek_char() == ':')
      return error(cur_, "nested symbol references are not supported");
    return a;
  case Tok::lbracket:
    a.kind = Attr::Kind::Array;
    bump();
    while (!at(Tok::rbracket)) {
      KILN_ASSIGN(Attr item, attr());
      a.list.push_back(std::move(item));
      if (at(Tok::comma)) {
        bump();
      } else if (!at(Tok::rbracket)) {
        return expected("',' or ']'");
      }
    }
    bump();
    return a;
  case Tok::lbrace:
    a.kind = Attr::Kind::Dict;
    KILN_TRY(attr_dict_into(a.dict));
    return a;
  case Tok::hash_id: return hash_attr();
  case Tok::lparen: {
    // A function type (func.func's function_type): Array {Array inputs, Array results} of
    // TypeAttr.
    Signature sig;
    KILN_TRY(signature(sig));
    if (!sig.parens || !sig.arrow) return error(t, "expected a function type '(...) -> ...'");
    a.kind = Attr::Kind::Array;
    a.list.resize(2);
    for (int k = 0; k < 2; ++k) {
      a.list[k].kind = Attr::Kind::Array;
      for (const Type &ty : k == 0 ? sig.ins : sig.outs) {
        Attr ta;
        ta.kind = Attr::Kind::TypeAttr;
        ta.type = ty;
        a.list[k].list.push_back(std::move(ta));
      }
    }
    return a;
  }
  case Tok::bang_id: return error(t, fmt::format("type '!{}' is not supported", t.text));
  case Tok::bare_id: break;
  default: return expected("an attribute value");
  }
  const std::string &w = cur_.text;
  DType dt;
  if (w == "true" || w == "false") {
    a.kind = Attr::Kind::Bool;
    a.i = w == "true";
    bump();
  } else if (w == "unit") {
    bump();
  } else if (w == "dense") {
    return dense_attr();
  } else if (w == "array") {
    return dense_array_attr();
  } else if (w == "dense_resource") {
    return error(t, "dense_resource constants are not supported (print the module with its "
                    "constants inline)");
  } else if (w == "sparse" || w == "opaque" || w == "affine_map" || w == "affine_set" ||
             w == "strided" || w == "distinct") {
    return error(t, fmt::format("'{}' attributes are not supported", w));
  } else if (w == "tensor" || w == "tuple" || w == "complex") {
    a.kind = Attr::Kind::TypeAttr;
    KILN_ASSIGN(a.type, type(true));
  } else if (element_type(w, true, dt)) {
    a.kind = Attr::Kind::TypeAttr;
    a.type.dtype = dt;
    bump();
  } else {
    a.kind = Attr::Kind::Ident;
    a.s = w;
    bump();
  }
  return a;
}

} // namespace kiln::stablehlo_fe
