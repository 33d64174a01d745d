// StableHLO text parser: the pretty (custom assembly) forms of the ops JAX prints, each turned
// into the generic form's attributes (the syntax follows StableHLO's StablehloOps.td assembly
// formats and the custom printers of its AssemblyFormat.cpp / StablehloOps.cpp).
#include "frontend/stablehlo/parser_impl.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace kiln::stablehlo_fe {

namespace {

// `op %a, %b attr-dict : T` or `: (T, T) -> T`.
const char *const kSameOps[] = {
    "abs", "cbrt", "ceil", "convert", "count_leading_zeros", "cosine", "exponential",
    "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one", "logistic",
    "not", "negate", "popcnt", "real", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "sign", "sine", "sqrt", "tan", "tanh", "add", "atan2", "complex", "divide", "maximum",
    "minimum", "multiply", "power", "remainder", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "subtract", "and", "or", "xor", "clamp", "uniform_quantize",
    "uniform_dequantize", "after_all", "tuple", "replica_id", "partition_id", "create_token",
};
// `op %a, %b attr-dict : (T, T) -> R`.
const char *const kFunctionalOps[] = {
    "bitcast_convert", "reshape", "dynamic_reshape", "dynamic_update_slice", "real_dynamic_slice",
    "dynamic_pad",
};
// chlo: `op %a attr-dict : T -> R`, `op %a, %b : T, U -> R` or `: (T, U) -> R`.
const char *const kChloOps[] = {
    "_asin_acos_kernel", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj",
    "cosh", "sinh", "tan", "digamma", "erf", "erf_inv", "erfc", "is_inf", "is_neg_inf",
    "is_pos_inf", "lgamma", "square", "next_after", "polygamma", "zeta", "mulhi",
    "broadcast_add", "broadcast_atan2", "broadcast_divide", "broadcast_maximum",
    "broadcast_minimum", "broadcast_multiply", "broadcast_next_after", "broadcast_polygamma",
    "broadcast_power", "broadcast_remainder", "broadcast_shift_left",
    "broadcast_shift_right_arithmetic", "broadcast_shift_right_logical", "broadcast_subtract",
    "broadcast_zeta", "broadcast_and", "broadcast_or", "broadcast_xor", "broadcast_complex",
    "broadcast_compare", "broadcast_select",
};

// Reduce's compact form names a commutative binary op of the same dialect.
const char *const kReduceInner[] = {"add", "multiply", "maximum", "minimum", "and", "or", "xor"};

template <size_t N> bool in(const char *const (&list)[N], std::string_view s) {
  for (const char *x : list)
    if (s == x) return true;
  return false;
}

enum class Kw { i64_list, int_, ident, boolean, exp_mant, string, precision, lhs_rhs, algorithm };

struct Keyword {
  const char *word;
  const char *attr;
  Kw kind;
  bool optional;
};

// `op operands, word = value, ... attr-dict : types`.
struct KeywordForm {
  const char *name;
  SigForm sig;
  std::vector<Keyword> keywords;
};

const std::vector<KeywordForm> &keyword_forms() {
  static const std::vector<KeywordForm> forms = {
      {"broadcast_in_dim", SigForm::functional, {{"dims", "broadcast_dimensions", Kw::i64_list}}},
      {"broadcast", SigForm::functional, {{"sizes", "broadcast_sizes", Kw::i64_list}}},
      {"dynamic_broadcast_in_dim",
       SigForm::functional,
       {{"dims", "broadcast_dimensions", Kw::i64_list}}},
      {"transpose", SigForm::functional, {{"dims", "permutation", Kw::i64_list}}},
      {"reverse", SigForm::same, {{"dims", "dimensions", Kw::i64_list}}},
      {"iota", SigForm::same, {{"dim", "iota_dimension", Kw::int_}}},
      {"dynamic_iota", SigForm::functional, {{"dim", "iota_dimension", Kw::int_}}},
      {"concatenate", SigForm::functional, {{"dim", "dimension", Kw::int_}}},
      {"get_dimension_size", SigForm::functional, {{"dim", "dimension", Kw::int_}}},
      {"set_dimension_size", SigForm::functional, {{"dim", "dimension", Kw::int_}}},
      {"dynamic_slice", SigForm::functional, {{"sizes", "slice_sizes", Kw::i64_list}}},
      {"pad",
       SigForm::functional,
       {{"low", "edge_padding_low", Kw::i64_list},
        {"high", "edge_padding_high", Kw::i64_list},
        {"interior", "interior_padding", Kw::i64_list}}},
      {"fft",
       SigForm::functional,
       {{"type", "fft_type", Kw::ident}, {"length", "fft_length", Kw::i64_list}}},
      {"rng", SigForm::functional, {{"distribution", "rng_distribution", Kw::ident}}},
      {"rng_bit_generator", SigForm::functional, {{"algorithm", "rng_algorithm", Kw::ident}}},
      {"reduce_precision", SigForm::same, {{"format", "", Kw::exp_mant}}},
      {"cholesky", SigForm::same, {{"lower", "lower", Kw::boolean, true}}},
      {"einsum", SigForm::functional, {{"config", "einsum_config", Kw::string}}},
      {"unary_einsum", SigForm::functional, {{"config", "einsum_config", Kw::string}}},
      {"dot", SigForm::functional, {{"precision", "precision_config", Kw::precision, true}}},
      {"dot_general",
       SigForm::functional,
       {{"batching_dims", "batching", Kw::lhs_rhs, true},
        {"contracting_dims", "contracting", Kw::lhs_rhs},
        {"precision", "precision_config", Kw::precision, true},
        {"algorithm", "algorithm", Kw::algorithm, true}}},
  };
  return forms;
}

Attr dense_array(std::vector<int64_t> v) {
  Attr a;
  a.kind = Attr::Kind::DenseArray;
  a.ints = std::move(v);
  return a;
}

Attr ident(std::string s) {
  Attr a;
  a.kind = Attr::Kind::Ident;
  a.s = std::move(s);
  return a;
}

Attr string_attr(std::string s) {
  Attr a;
  a.kind = Attr::Kind::String;
  a.s = std::move(s);
  return a;
}

Attr int_array_attr(const std::vector<int64_t> &v) {
  Attr a;
  a.kind = Attr::Kind::Array;
  for (int64_t x : v) {
    Attr i;
    i.kind = Attr::Kind::Int;
    i.i = x;
    a.list.push_back(i);
  }
  return a;
}

Type scalar_of(const Type &t) {
  Type s;
  s.dtype = t.dtype;
  return s;
}

} // namespace

namespace {

// The value after `word =` of a keyword form; dot_general's dimension pairs go into `dot`.
Status keyword_value(Parser &p, Operation &o, const Keyword &kw, Attr &dot) {
  switch (kw.kind) {
  case Kw::i64_list: {
    KILN_ASSIGN(std::vector<int64_t> v, p.int_list());
    o.attrs.emplace_back(kw.attr, dense_array(std::move(v)));
    return Status::ok();
  }
  case Kw::int_: {
    Attr a;
    a.kind = Attr::Kind::Int;
    KILN_ASSIGN(a.i, p.integer());
    o.attrs.emplace_back(kw.attr, std::move(a));
    return Status::ok();
  }
  case Kw::ident:
    if (!p.at(Tok::bare_id)) return p.expected("a keyword");
    o.attrs.emplace_back(kw.attr, ident(p.cur_.text));
    p.bump();
    return Status::ok();
  case Kw::boolean: {
    if (!p.at_id("true") && !p.at_id("false")) return p.expected("true or false");
    Attr a;
    a.kind = Attr::Kind::Bool;
    a.i = p.cur_.text == "true";
    o.attrs.emplace_back(kw.attr, std::move(a));
    p.bump();
    return Status::ok();
  }
  case Kw::exp_mant: {
    // e5m10 -> exponent_bits 5, mantissa_bits 10
    const std::string &w = p.cur_.text;
    size_t m = w.find('m');
    auto digits = [](std::string_view s) {
      return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == s.npos;
    };
    if (!p.at(Tok::bare_id) || w.size() < 4 || w[0] != 'e' || m == std::string::npos ||
        !digits(std::string_view(w).substr(1, m - 1)) ||
        !digits(std::string_view(w).substr(m + 1)))
      return p.expected("a format 'e<N>m<M>'");
    Attr e, mm;
    e.kind = mm.kind = Attr::Kind::Int;
    e.i = std::stoll(w.substr(1, m - 1));
    mm.i = std::stoll(w.substr(m + 1));
    o.attrs.emplace_back("exponent_bits", e);
    o.attrs.emplace_back("mantissa_bits", mm);
    p.bump();
    return Status::ok();
  }
  case Kw::string:
    if (!p.at(Tok::string)) return p.expected("a string");
    o.attrs.emplace_back(kw.attr, string_attr(p.cur_.text));
    p.bump();
    return Status::ok();
  case Kw::precision: {
    KILN_TRY(p.expect(Tok::lbracket, "'['"));
    Attr a;
    a.kind = Attr::Kind::Array;
    while (!p.at(Tok::rbracket)) {
      if (!p.at(Tok::bare_id)) return p.expected("a precision (DEFAULT, HIGH, HIGHEST)");
      a.list.push_back(ident(p.cur_.text));
      p.bump();
      if (p.at(Tok::comma)) {
        p.bump();
      } else if (!p.at(Tok::rbracket)) {
        return p.expected("',' or ']'");
      }
    }
    p.bump();
    o.attrs.emplace_back(kw.attr, std::move(a));
    return Status::ok();
  }
  case Kw::lhs_rhs: {
    KILN_ASSIGN(std::vector<int64_t> lhs, p.int_list());
    KILN_TRY(p.expect_id("x"));
    KILN_ASSIGN(std::vector<int64_t> rhs, p.int_list());
    std::string what = kw.attr;
    if (!lhs.empty()) dot.dict.emplace_back("lhs_" + what + "_dimensions", int_array_attr(lhs));
    if (!rhs.empty()) dot.dict.emplace_back("rhs_" + what + "_dimensions", int_array_attr(rhs));
    return Status::ok();
  }
  case Kw::algorithm: {
    if (!p.at(Tok::less)) return p.expected("'<'");
    KILN_ASSIGN(Attr a, p.struct_params("stablehlo.dot_algorithm"));
    o.attrs.emplace_back(kw.attr, std::move(a));
    return Status::ok();
  }
  }
  return Status::ok();
}

} // namespace

Status Parser::pretty_keywords(Operation &o, const Token &name, int form_index) {
  const KeywordForm &form = keyword_forms()[static_cast<size_t>(form_index)];
  std::vector<bool> seen(form.keywords.size(), false);
  Attr dot;
  dot.kind = Attr::Kind::Dialect;
  dot.s = "stablehlo.dot";
  for (;;) {
    if (at(Tok::value_id)) {
      KILN_ASSIGN(std::string v, use(cur_));
      o.operands.push_back(std::move(v));
    } else if (at(Tok::bare_id)) {
      size_t k = 0;
      while (k < form.keywords.size() && cur_.text != form.keywords[k].word) ++k;
      if (k == form.keywords.size()) break;
      const Keyword &kw = form.keywords[k];
      Token kt = cur_;
      if (seen[k]) return error(kt, fmt::format("duplicate '{}'", kw.word));
      seen[k] = true;
      bump();
      KILN_TRY(expect(Tok::equal, "'='"));
      KILN_TRY(keyword_value(*this, o, kw, dot));
    } else {
      break;
    }
    if (!at(Tok::comma)) break;
    bump();
  }
  for (size_t k = 0; k < form.keywords.size(); ++k)
    if (!seen[k] && !form.keywords[k].optional)
      return error(name, fmt::format("op '{}' needs '{} = ...'", o.name, form.keywords[k].word));
  if (std::string_view(form.name) == "dot_general") {
    // The generic form orders the fields lhs/rhs batching, then lhs/rhs contracting.
    std::stable_sort(dot.dict.begin(), dot.dict.end(), [](const NamedAttr &a, const NamedAttr &b) {
      return (a.first.find("batching") != std::string::npos) >
             (b.first.find("batching") != std::string::npos);
    });
    o.attrs.insert(o.attrs.begin(), NamedAttr("dot_dimension_numbers", std::move(dot)));
  }
  return attrs_and_signature(o, form.sig);
}

Status Parser::pretty_conv(Operation &o) {
  KILN_TRY(expect(Tok::lparen, "'('"));
  KILN_TRY(operand_list(o));
  KILN_TRY(expect(Tok::rparen, "')'"));
  KILN_TRY(expect_id("dim_numbers"));
  KILN_TRY(expect(Tok::equal, "'='"));
  KILN_ASSIGN(Attr dims, conv_dims());
  o.attrs.emplace_back("dimension_numbers", std::move(dims));
  KILN_TRY(expect(Tok::comma, "','"));
  KILN_TRY(expect_id("window"));
  KILN_TRY(expect(Tok::equal, "'='"));
  KILN_TRY(expect(Tok::lbrace, "'{'"));
  static const char *const fields[] = {"stride", "pad", "lhs_dilate", "rhs_dilate", "reverse"};
  static const char *const names[] = {"window_strides", "padding", "lhs_dilation", "rhs_dilation",
                                      "window_reversal"};
  bool seen[5] = {};
  while (at(Tok::bare_id)) {
    Token t = cur_;
    int k = 0;
    while (k < 5 && t.text != fields[k]) ++k;
    if (k == 5) return error(t, fmt::format("unexpected window field '{}'", t.text));
    if (seen[k]) return error(t, fmt::format("duplicate window field '{}'", t.text));
    seen[k] = true;
    bump();
    KILN_TRY(expect(Tok::equal, "'='"));
    if (k == 1) {
      // pad = [[lo, hi], ...] -> Nx2 i64
      std::vector<int64_t> values;
      KILN_TRY(expect(Tok::lbracket, "'['"));
      while (!at(Tok::rbracket)) {
        Token p = cur_;
        KILN_ASSIGN(std::vector<int64_t> pair, int_list());
        if (pair.size() != 2) return error(p, "each padding entry needs two numbers [low, high]");
        values.insert(values.end(), pair.begin(), pair.end());
        if (at(Tok::comma)) {
          bump();
        } else if (!at(Tok::rbracket)) {
          return expected("',' or ']'");
        }
      }
      bump();
      int64_t n = static_cast<int64_t>(values.size() / 2);
      KILN_ASSIGN(Attr pad, dense_i64(std::move(values), {n, 2}));
      o.attrs.emplace_back(names[k], std::move(pad));
    } else if (k == 4) {
      KILN_TRY(expect(Tok::lbracket, "'['"));
      std::vector<int64_t> v;
      while (!at(Tok::rbracket)) {
        if (at_id("true") || at_id("false")) {
          v.push_back(cur_.text == "true");
          bump();
        } else if (at(Tok::integer) && (cur_.text == "0" || cur_.text == "1")) {
          v.push_back(cur_.text == "1");
          bump();
        } else {
          return expected("true or false");
        }
        if (at(Tok::comma)) {
          bump();
        } else if (!at(Tok::rbracket)) {
          return expected("',' or ']'");
        }
      }
      bump();
      o.attrs.emplace_back(names[k], dense_array(std::move(v)));
    } else {
      KILN_ASSIGN(std::vector<int64_t> v, int_list());
      o.attrs.emplace_back(names[k], dense_array(std::move(v)));
    }
    if (!at(Tok::comma)) break;
    bump();
  }
  KILN_TRY(expect(Tok::rbrace, "'}' closing the window"));
  return attrs_and_signature(o, SigForm::functional);
}

Status Parser::pretty_reduce(Operation &o) {
  // (%in init: %init), ... : inputs first, then init values.
  std::vector<std::string> inits;
  for (;;) {
    KILN_TRY(expect(Tok::lparen, "'('"));
    KILN_ASSIGN(std::string in, use(cur_));
    KILN_TRY(expect_id("init"));
    KILN_TRY(expect(Tok::colon, "':'"));
    KILN_ASSIGN(std::string init, use(cur_));
    KILN_TRY(expect(Tok::rparen, "')'"));
    o.operands.push_back(std::move(in));
    inits.push_back(std::move(init));
    if (!at(Tok::comma)) break;
    bump();
  }
  const size_t n = inits.size();
  for (auto &i : inits) o.operands.push_back(std::move(i));
  std::string inner;
  Token inner_tok = cur_;
  if (at_id("applies")) {
    bump();
    inner_tok = cur_;
    if (!at(Tok::bare_id) && !at(Tok::string)) return expected("an op name");
    inner = cur_.text;
    std::string_view dialect = "stablehlo.";
    if (inner.rfind(dialect, 0) != 0 || !in(kReduceInner, std::string_view(inner).substr(dialect.size())))
      return error(inner_tok, fmt::format("reduce applies '{}': expected a commutative binary "
                                          "stablehlo op (add, multiply, maximum, minimum, and, or, xor)",
                                          inner));
    bump();
  }
  KILN_TRY(expect_id("across"));
  KILN_TRY(expect_id("dimensions"));
  KILN_TRY(expect(Tok::equal, "'='"));
  KILN_ASSIGN(std::vector<int64_t> dims, int_list());
  o.attrs.emplace_back("dimensions", dense_array(std::move(dims)));
  if (at(Tok::lbrace)) KILN_TRY(attr_dict_into(o.attrs));
  KILN_TRY(expect(Tok::colon, "':'"));
  Signature sig;
  KILN_TRY(signature(sig));
  KILN_TRY(apply_signature(o, sig, SigForm::functional));
  o.regions.emplace_back();
  Block &body = o.regions.back();
  if (!inner.empty()) {
    // The region the compact form stands for: per input pair
    //   ^bb0(%lhs_i, %rhs_i): %r_i = OP %lhs_i, %rhs_i; stablehlo.return %r_0, ...
    // Synthesised names contain '~', which no parsed name can.
    const int id = synth_++;
    body.loc = {inner_tok.line, inner_tok.col};
    std::vector<std::string> lhs(n), rhs(n);
    Operation ret;
    ret.name = "stablehlo.return";
    ret.loc = body.loc;
    for (size_t i = 0; i < n; ++i) {
      lhs[i] = fmt::format("~reduce{}.lhs{}", id, i);
      rhs[i] = fmt::format("~reduce{}.rhs{}", id, i);
    }
    for (size_t i = 0; i < n; ++i) {
      body.arg_names.push_back(lhs[i]);
      body.arg_types.push_back(scalar_of(o.operand_types[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      body.arg_names.push_back(rhs[i]);
      body.arg_types.push_back(scalar_of(o.operand_types[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      Operation r;
      r.name = inner;
      r.loc = body.loc;
      r.operands = {lhs[i], rhs[i]};
      Type t = scalar_of(o.operand_types[i]);
      r.operand_types = {t, t};
      r.result_types = {t};
      r.results = {fmt::format("~reduce{}.res{}", id, i)};
      ret.operands.push_back(r.results[0]);
      ret.operand_types.push_back(t);
      body.ops.push_back(std::move(r));
    }
    body.ops.push_back(std::move(ret));
    return Status::ok();
  }
  // reducer(%a: T, %c: T) (%b: T, %d: T) { ... }: pair i is (arg i, arg i + n).
  KILN_TRY(expect_id("reducer"));
  std::vector<std::string> firsts, seconds;
  std::vector<Type> first_types, second_types;
  while (at(Tok::lparen)) {
    bump();
    for (int k = 0; k < 2; ++k) {
      if (!at(Tok::value_id) || cur_.text.find('#') != std::string::npos)
        return expected("a block argument '%name'");
      (k ? seconds : firsts).push_back(cur_.text);
      bump();
      KILN_TRY(expect(Tok::colon, "':'"));
      KILN_ASSIGN(Type t, type());
      (k ? second_types : first_types).push_back(std::move(t));
      if (k == 0) KILN_TRY(expect(Tok::comma, "','"));
    }
    KILN_TRY(expect(Tok::rparen, "')'"));
  }
  if (firsts.size() != n)
    return error(cur_, fmt::format("reduce has {} input(s) but its reducer lists {} pair(s)", n,
                                   firsts.size()));
  firsts.insert(firsts.end(), seconds.begin(), seconds.end());
  first_types.insert(first_types.end(), second_types.begin(), second_types.end());
  return region(body, &firsts, &first_types);
}

Status Parser::pretty_while(Operation &o) {
  KILN_TRY(expect(Tok::lparen, "'('"));
  std::vector<std::string> iter_names;
  while (!at(Tok::rparen)) {
    if (!at(Tok::value_id) || cur_.text.find('#') != std::string::npos)
      return expected("an iteration argument '%name'");
    iter_names.push_back(cur_.text);
    bump();
    KILN_TRY(expect(Tok::equal, "'='"));
    KILN_ASSIGN(std::string v, use(cur_));
    o.operands.push_back(std::move(v));
    if (at(Tok::comma)) {
      bump();
    } else if (!at(Tok::rparen)) {
      return expected("',' or ')'");
    }
  }
  bump();
  if (!o.operands.empty()) {
    KILN_TRY(expect(Tok::colon, "':'"));
    Signature sig;
    KILN_TRY(signature(sig));
    KILN_TRY(apply_signature(o, sig, SigForm::pairwise));
  }
  if (at_id("attributes")) {
    bump();
    KILN_TRY(attr_dict_into(o.attrs));
  }
  o.regions.resize(2);
  KILN_TRY(expect_id("cond"));
  KILN_TRY(region(o.regions[0], &iter_names, &o.operand_types));
  KILN_TRY(expect_id("do"));
  return region(o.regions[1], &iter_names, &o.operand_types);
}

// ---- ops with their own syntax ----

namespace {

// `op %a, %b attr-dict : types`
Status pretty_simple(Parser &p, Operation &o, SigForm form) {
  KILN_TRY(p.operand_list(o));
  return p.attrs_and_signature(o, form);
}

// `return %a, %b attr-dict : T, U` (types only when there are operands)
Status pretty_return(Parser &p, Operation &o) {
  KILN_TRY(p.operand_list(o));
  if (p.at(Tok::lbrace)) KILN_TRY(p.attr_dict_into(o.attrs));
  if (o.operands.empty()) return Status::ok();
  KILN_TRY(p.expect(Tok::colon, "':'"));
  Signature sig;
  KILN_TRY(p.signature(sig));
  if (sig.arrow || sig.parens || sig.ins.size() != o.operands.size())
    return p.error(sig.at, fmt::format("'{}' has {} operand(s); expected as many types", o.name,
                                       o.operands.size()));
  o.operand_types = sig.ins;
  return Status::ok();
}

// `call @f(%a) attr-dict : (T) -> R`, `stablehlo.custom_call @target(%a) ...`
Status pretty_call(Parser &p, Operation &o) {
  if (!p.at(Tok::symbol)) return p.expected("a symbol '@name'");
  o.attrs.emplace_back(o.name == "func.call" ? "callee" : "call_target_name",
                       string_attr(p.cur_.text));
  p.bump();
  KILN_TRY(p.expect(Tok::lparen, "'('"));
  KILN_TRY(p.operand_list(o));
  KILN_TRY(p.expect(Tok::rparen, "')'"));
  return p.attrs_and_signature(o, SigForm::functional);
}

// `stablehlo.constant attr-dict dense<...> : T`
Status pretty_constant(Parser &p, Operation &o) {
  if (p.at(Tok::lbrace)) KILN_TRY(p.attr_dict_into(o.attrs));
  if (!p.at_id("dense")) {
    if (p.at_id("dense_resource"))
      return p.error(p.cur_, "dense_resource constants are not supported (print the module with "
                             "its constants inline)");
    return p.expected("a dense<...> constant");
  }
  KILN_ASSIGN(Attr value, p.attr());
  o.result_types = {value.type};
  o.attrs.insert(o.attrs.begin(), NamedAttr("value", std::move(value)));
  return Status::ok();
}

// `stablehlo.compare GT, %a, %b, FLOAT attr-dict : (T, T) -> R`
Status pretty_compare(Parser &p, Operation &o) {
  if (!p.at(Tok::bare_id)) return p.expected("a comparison direction (EQ, NE, GE, GT, LE, LT)");
  o.attrs.emplace_back("comparison_direction", ident(p.cur_.text));
  p.bump();
  for (int i = 0; i < 2; ++i) {
    KILN_TRY(p.expect(Tok::comma, "','"));
    KILN_ASSIGN(std::string v, p.use(p.cur_));
    o.operands.push_back(std::move(v));
  }
  if (p.at(Tok::comma)) {
    p.bump();
    if (!p.at(Tok::bare_id)) return p.expected("a comparison type (FLOAT, SIGNED, ...)");
    o.attrs.emplace_back("compare_type", ident(p.cur_.text));
    p.bump();
  }
  return p.attrs_and_signature(o, SigForm::functional);
}

// `stablehlo.slice %a [0:2, 1:4:2] attr-dict : (T) -> R`
Status pretty_slice(Parser &p, Operation &o) {
  KILN_ASSIGN(std::string v, p.use(p.cur_));
  o.operands.push_back(std::move(v));
  KILN_TRY(p.expect(Tok::lbracket, "'['"));
  std::vector<int64_t> start, limit, stride;
  while (!p.at(Tok::rbracket)) {
    KILN_ASSIGN(int64_t first, p.integer());
    KILN_TRY(p.expect(Tok::colon, "':'"));
    KILN_ASSIGN(int64_t last, p.integer());
    int64_t step = 1;
    if (p.at(Tok::colon)) {
      p.bump();
      KILN_ASSIGN(step, p.integer());
    }
    start.push_back(first);
    limit.push_back(last);
    stride.push_back(step);
    if (p.at(Tok::comma)) {
      p.bump();
    } else if (!p.at(Tok::rbracket)) {
      return p.expected("',' or ']'");
    }
  }
  p.bump();
  o.attrs.emplace_back("start_indices", dense_array(std::move(start)));
  o.attrs.emplace_back("limit_indices", dense_array(std::move(limit)));
  o.attrs.emplace_back("strides", dense_array(std::move(stride)));
  return p.attrs_and_signature(o, SigForm::functional);
}

// `stablehlo.composite "name" %a, %b attr-dict : (T, U) -> R`
Status pretty_composite(Parser &p, Operation &o) {
  if (!p.at(Tok::string)) return p.expected("the composite's name as a string");
  o.attrs.emplace_back("name", string_attr(p.cur_.text));
  p.bump();
  KILN_TRY(p.operand_list(o));
  if (p.at(Tok::lparen)) return p.error(p.cur_, "composite regions are not supported");
  return p.attrs_and_signature(o, SigForm::functional);
}

// `chlo.top_k(%a, k = 3, is_stable = true) attr-dict : T -> (R, I)`
Status pretty_top_k(Parser &p, Operation &o) {
  KILN_TRY(p.expect(Tok::lparen, "'('"));
  KILN_ASSIGN(std::string v, p.use(p.cur_));
  o.operands.push_back(std::move(v));
  KILN_TRY(p.expect(Tok::comma, "','"));
  KILN_TRY(p.expect_id("k"));
  KILN_TRY(p.expect(Tok::equal, "'='"));
  Attr k;
  k.kind = Attr::Kind::Int;
  KILN_ASSIGN(k.i, p.integer());
  o.attrs.emplace_back("k", k);
  if (p.at(Tok::comma)) {
    p.bump();
    KILN_TRY(p.expect_id("is_stable"));
    KILN_TRY(p.expect(Tok::equal, "'='"));
    if (!p.at_id("true") && !p.at_id("false")) return p.expected("true or false");
    Attr b;
    b.kind = Attr::Kind::Bool;
    b.i = p.cur_.text == "true";
    o.attrs.emplace_back("is_stable", b);
    p.bump();
  }
  KILN_TRY(p.expect(Tok::rparen, "')'"));
  return p.attrs_and_signature(o, SigForm::arrow);
}

// `stablehlo.optimization_barrier attr-dict %a, %b : T, U` or `... attr-dict ()`
Status pretty_barrier(Parser &p, Operation &o) {
  if (p.at(Tok::lbrace)) KILN_TRY(p.attr_dict_into(o.attrs));
  if (p.at(Tok::lparen)) {
    p.bump();
    return p.expect(Tok::rparen, "')'");
  }
  KILN_TRY(p.operand_list(o));
  KILN_TRY(p.expect(Tok::colon, "':'"));
  Signature sig;
  KILN_TRY(p.signature(sig));
  return p.apply_signature(o, sig, SigForm::pairwise);
}

struct Special {
  const char *name;
  Status (*parse)(Parser &, Operation &);
};

const Special kSpecials[] = {
    {"func.return", pretty_return},
    {"stablehlo.return", pretty_return},
    {"func.call", pretty_call},
    {"stablehlo.custom_call", pretty_call},
    {"stablehlo.constant", pretty_constant},
    {"chlo.constant", pretty_constant},
    {"stablehlo.compare", pretty_compare},
    {"stablehlo.slice", pretty_slice},
    {"stablehlo.composite", pretty_composite},
    {"chlo.top_k", pretty_top_k},
    {"stablehlo.optimization_barrier", pretty_barrier},
    {"stablehlo.convolution", [](Parser &p, Operation &o) { return p.pretty_conv(o); }},
    {"stablehlo.reduce", [](Parser &p, Operation &o) { return p.pretty_reduce(o); }},
    {"stablehlo.while", [](Parser &p, Operation &o) { return p.pretty_while(o); }},
};

} // namespace

Status Parser::attrs_and_signature(Operation &o, SigForm form) {
  if (at(Tok::lbrace)) KILN_TRY(attr_dict_into(o.attrs));
  KILN_TRY(expect(Tok::colon, "':'"));
  Signature sig;
  KILN_TRY(signature(sig));
  return apply_signature(o, sig, form);
}

Status Parser::pretty_op(Operation &o, const Token &name) {
  std::string n = name.text;
  if (n == "return") n = "func.return"; // func's default-dialect spellings
  if (n == "call") n = "func.call";
  o.name = n;
  bump();
  for (const Special &sp : kSpecials)
    if (n == sp.name) return sp.parse(*this, o);
  const std::string_view shlo = "stablehlo.";
  const bool is_shlo = n.rfind(shlo, 0) == 0;
  const std::string_view base = is_shlo ? std::string_view(n).substr(shlo.size()) : "";
  if (is_shlo && in(kSameOps, base)) return pretty_simple(*this, o, SigForm::same);
  if (is_shlo && in(kFunctionalOps, base)) return pretty_simple(*this, o, SigForm::functional);
  if (n == "stablehlo.select") return pretty_simple(*this, o, SigForm::select);
  if (n.rfind("chlo.", 0) == 0 && in(kChloOps, std::string_view(n).substr(5)))
    return pretty_simple(*this, o, SigForm::arrow);
  if (is_shlo) {
    const auto &forms = keyword_forms();
    for (size_t i = 0; i < forms.size(); ++i)
      if (base == forms[i].name) return pretty_keywords(o, name, static_cast<int>(i));
  }
  return error(name, fmt::format("cannot parse op '{}': no pretty form is known for it (print "
                                 "the module in generic form)",
                                 name.text));
}

} // namespace kiln::stablehlo_fe
