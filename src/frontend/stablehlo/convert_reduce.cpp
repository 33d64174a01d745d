// Reductions with a region: reduce (one binary op -> kiln.reduce; the variadic (value, iota)
// form of argmax / argmin -> kiln.arg_reduce), reduce_window (cumulative sums -> kiln.cumulative,
// max / min / add windows -> kiln pooling), sort (-> kiln.topk plus gathers).
//
// Regions are analysed as patterns. Where a region is not a single op, it is classified by
// evaluating it on constant arguments (eval_block): for argmax / argmin the region may only use
// compare / select / logic ops on its arguments, so its result depends only on how the arguments
// order, and the table of orderings evaluated covers every case.
#include "frontend/stablehlo/convert.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>

namespace kiln::stablehlo_fe {

namespace {

// A reduction body mapped to kiln: the kiln.reduce kind and the elementwise op that combines a
// partial result with the init value.
struct Combiner {
  std::string kind; // sum prod max min
  const char *binop = nullptr;
};

Result<Combiner> combiner(OpCtx &c, const std::string &op, DType t) {
  const bool b = is_bool(t);
  if (op == "stablehlo.add" && !b) return Combiner{"sum", "kiln.add"};
  if (op == "stablehlo.multiply" && !b) return Combiner{"prod", "kiln.mul"};
  if (op == "stablehlo.maximum") return Combiner{"max", b ? "kiln.or" : "kiln.max"};
  if (op == "stablehlo.minimum") return Combiner{"min", b ? "kiln.and" : "kiln.min"};
  if ((op == "stablehlo.or" || op == "stablehlo.add") && b) return Combiner{"max", "kiln.or"};
  if ((op == "stablehlo.and" || op == "stablehlo.multiply") && b) return Combiner{"min", "kiln.and"};
  if (op.empty())
    return c.error("reduction body is not a single binary op of its arguments (and not a "
                   "recognised argmax / argmin)");
  return c.error(fmt::format("reduction with {} on {} is not supported", op, dtype_name(t)));
}

// Whether `init` is a constant equal to the identity of `kind`.
bool is_identity(const std::string &kind, Value *init) {
  const Tensor *t = Builder::constant_value(init);
  if (!t || t->numel() != 1) return false;
  const DType dt = t->dtype();
  if (is_float(dt)) {
    const double v = t->get_f64(0);
    if (kind == "sum") return v == 0;
    if (kind == "prod") return v == 1;
    if (kind == "max") return std::isinf(v) && v < 0;
    return std::isinf(v) && v > 0;
  }
  const int64_t v = t->get_i64(0);
  if (kind == "sum") return v == 0;
  if (kind == "prod") return v == 1;
  if (kind == "max") return v == (is_bool(dt) ? 0 : int_lowest(dt));
  return v == int_highest(dt);
}

// ---- reduce -------------------------------------------------------------------------------------

Result<Value *> reduce_one(OpCtx &c, Value *x, const std::vector<int64_t> &dims,
                           const std::string &kind) {
  if (dims.empty()) return x;
  return c.make("kiln.reduce", {x, c.i64s(dims)}, {{"kind", kind}, {"keepdims", int64_t(0)}});
}

// What an argmax / argmin body picks for (a value, a index) and (b value, b index).
enum class Pick { a, b };

Pick expected_pick(bool mx, double va, double vb, int64_t ia, int64_t ib) {
  const bool na = std::isnan(va), nb = std::isnan(vb);
  if (na != nb) return na ? Pick::a : Pick::b;
  if (va == vb) return ia < ib ? Pick::a : Pick::b;
  return (mx ? va > vb : va < vb) ? Pick::a : Pick::b;
}

bool only_logic_ops(const Block &blk) {
  for (const auto &op : blk.ops) {
    static const char *const ok[] = {"stablehlo.compare", "stablehlo.select", "stablehlo.and",
                                     "stablehlo.or",      "stablehlo.not",    "stablehlo.xor",
                                     "stablehlo.return"};
    if (std::none_of(std::begin(ok), std::end(ok), [&](const char *n) { return op.name == n; }))
      return false;
  }
  return true;
}

// Classifies a (value, index) reduction body: "max", "min" or "" (neither).
Result<std::string> classify_arg_body(OpCtx &c, const Block &blk, DType vt, DType it) {
  if (!only_logic_ops(blk) || blk.arg_names.size() != 4) return std::string();
  std::vector<double> vals = {1, 2};
  if (is_float(vt)) vals.push_back(std::numeric_limits<double>::quiet_NaN());
  const std::pair<int64_t, int64_t> idx[] = {{0, 1}, {1, 0}};
  for (bool mx : {true, false}) {
    bool all = true;
    for (double va : vals)
      for (double vb : vals)
        for (auto [ia, ib] : idx) {
          if (!all || (std::isnan(va) && std::isnan(vb))) continue;
          auto mk = [&](double v) {
            return is_float(vt) ? Tensor::scalar_f64(vt, v) : Tensor::scalar_i64(vt, static_cast<int64_t>(v));
          };
          // Body arguments: (acc value, acc index, element value, element index).
          std::vector<Tensor> args = {mk(va), Tensor::scalar_i64(it, ia), mk(vb), Tensor::scalar_i64(it, ib)};
          KILN_ASSIGN(auto r, eval_block(c, blk, args));
          if (!r || r->size() != 2) return std::string();
          const Pick p = expected_pick(mx, va, vb, ia, ib);
          const double want_v = p == Pick::a ? va : vb;
          const int64_t want_i = p == Pick::a ? ia : ib;
          const double got_v = (*r)[0].get_f64(0);
          const bool v_ok = std::isnan(want_v) ? std::isnan(got_v) : got_v == want_v;
          all = v_ok && (*r)[1].get_i64(0) == want_i;
        }
    if (all) return std::string(mx ? "max" : "min");
  }
  return std::string();
}

Outs convert_arg_reduce(OpCtx &c, const std::vector<int64_t> &dims) {
  Value *x = c.in[0], *ix = c.in[1], *x0 = c.in[2], *i0 = c.in[3];
  auto it = c.state.iota_dim.find(ix);
  if (dims.size() != 1 || it == c.state.iota_dim.end() || it->second != dims[0] ||
      !is_integer(ix->type.dtype))
    return c.error("variadic reduce is supported only as argmax / argmin (a value and an iota "
                   "index reduced along one dim)");
  KILN_ASSIGN(std::string kind, classify_arg_body(c, c.op.regions[0], x->type.dtype, ix->type.dtype));
  if (kind.empty())
    return c.error("variadic reduce body is not a recognised argmax / argmin");
  const Tensor *iv = Builder::constant_value(i0);
  if (!is_identity(kind, x0) || !iv || iv->get_i64(0) != 0)
    return c.error("argmax / argmin with a non-identity init value is not supported");
  AttrMap a{{"kind", kind}, {"axis", dims[0]}, {"keepdims", int64_t(0)}};
  KILN_ASSIGN(Value * idx, c.make("kiln.arg_reduce", {x}, a));
  KILN_ASSIGN(idx, c.cast(idx, ix->type.dtype));
  KILN_ASSIGN(Value * val, reduce_one(c, x, dims, kind));
  return std::vector<Value *>{val, idx};
}

Outs convert_reduce(OpCtx &c) {
  if (c.in.size() % 2 != 0 || c.op.regions.size() != 1) return c.error("malformed reduce");
  KILN_ASSIGN(std::vector<int64_t> dims, c.ints("dimensions"));
  std::sort(dims.begin(), dims.end());
  if (c.in.size() == 4) return convert_arg_reduce(c, dims);
  if (c.in.size() != 2) return c.error("variadic reduce with more than two inputs is not supported");
  Value *x = c.in[0], *init = c.in[1];
  KILN_ASSIGN(Combiner cb, combiner(c, single_binary_body(c.op.regions[0]), x->type.dtype));
  KILN_ASSIGN(Value * y, reduce_one(c, x, dims, cb.kind));
  if (!is_identity(cb.kind, init) || dims.empty()) {
    KILN_ASSIGN(y, c.make(cb.binop, {y, init}));
  }
  return std::vector<Value *>{y};
}

// ---- reduce_window ------------------------------------------------------------------------------

struct Window {
  std::vector<int64_t> size, stride, base_dil, win_dil, lo, hi;
};

Result<Window> window_attrs(OpCtx &c, size_t r) {
  Window w;
  KILN_ASSIGN(w.size, c.ints("window_dimensions"));
  KILN_ASSIGN(w.stride, c.ints_or("window_strides", std::vector<int64_t>(r, 1)));
  KILN_ASSIGN(w.base_dil, c.ints_or("base_dilations", std::vector<int64_t>(r, 1)));
  KILN_ASSIGN(w.win_dil, c.ints_or("window_dilations", std::vector<int64_t>(r, 1)));
  KILN_ASSIGN(auto pad, c.ints_or("padding", std::vector<int64_t>(2 * r, 0)));
  if (w.size.size() != r || w.stride.size() != r || w.base_dil.size() != r ||
      w.win_dil.size() != r || pad.size() != 2 * r)
    return c.error("window attributes must have one entry per dim");
  for (size_t i = 0; i < r; ++i) {
    if (w.size[i] < 1 || w.stride[i] < 1 || w.base_dil[i] < 1 || w.win_dil[i] < 1)
      return c.error("window sizes, strides and dilations must be >= 1");
    w.lo.push_back(pad[2 * i]);
    w.hi.push_back(pad[2 * i + 1]);
  }
  return w;
}

// A cumulative sum / product along one dim: window n, padding n-1 on one side, unit strides.
std::optional<std::pair<int64_t, bool>> cumulative_axis(const Window &w, const Shape &d) {
  std::optional<std::pair<int64_t, bool>> found;
  for (size_t i = 0; i < d.size(); ++i) {
    if (w.stride[i] != 1 || w.base_dil[i] != 1 || w.win_dil[i] != 1) return std::nullopt;
    if (w.size[i] == 1 && w.lo[i] == 0 && w.hi[i] == 0) continue;
    const int64_t n = d[i];
    if (found || w.size[i] != n || n < 2) return std::nullopt;
    if (w.lo[i] == n - 1 && w.hi[i] == 0) found = std::make_pair(int64_t(i), false);
    else if (w.lo[i] == 0 && w.hi[i] == n - 1) found = std::make_pair(int64_t(i), true);
    else return std::nullopt;
  }
  return found;
}

// Max / average pooling over the windowed dims of an already padded x: the other dims are moved
// in front and flattened into the channel dim of [1, C, spatial...].
Result<Value *> pool(OpCtx &c, Value *x, const Window &w, const std::string &kind) {
  const Shape d = x->type.dims;
  const int64_t r = x->type.rank();
  std::vector<int64_t> free, spatial;
  for (int64_t i = 0; i < r; ++i)
    (w.size[i] == 1 && w.stride[i] == 1 ? free : spatial).push_back(i);
  if (spatial.empty()) return x;
  std::vector<int64_t> perm(free);
  perm.insert(perm.end(), spatial.begin(), spatial.end());
  KILN_ASSIGN(x, c.transpose(x, perm));
  int64_t channels = 1;
  for (int64_t i : free) channels *= d[i];
  Shape s{1, channels};
  std::vector<int64_t> k, st, dil;
  for (int64_t i : spatial) {
    s.push_back(d[i]);
    k.push_back(w.size[i]);
    st.push_back(w.stride[i]);
    dil.push_back(w.win_dil[i]);
  }
  if (spatial.size() == 1) { // pool in 2-D (a unit second spatial dim)
    s.push_back(1);
    k.push_back(1);
    st.push_back(1);
    dil.push_back(1);
  }
  KILN_ASSIGN(x, c.reshape(x, s));
  AttrMap a{{"kernel_shape", k}, {"strides", st}, {"dilations", dil}};
  const char *op = kind == "max" ? "kiln.max_pool" : "kiln.avg_pool";
  if (kind != "max") a["count_include_pad"] = int64_t(1);
  KILN_ASSIGN(Value * y, c.make(op, {x}, a));
  if (kind == "sum") {
    int64_t n = 1;
    for (int64_t v : k) n *= v;
    KILN_ASSIGN(y, c.make("kiln.mul", {y, c.scalar(y->type.dtype, static_cast<double>(n))}));
  }
  Shape o;
  for (int64_t i : free) o.push_back(d[i]);
  for (size_t j = 0; j < spatial.size(); ++j) o.push_back(y->type.dims[2 + j]);
  KILN_ASSIGN(y, c.reshape(y, o));
  std::vector<int64_t> inv(r);
  for (int64_t i = 0; i < r; ++i) inv[perm[i]] = i;
  return c.transpose(y, inv);
}

Outs convert_reduce_window(OpCtx &c) {
  if (c.in.size() != 2 || c.op.regions.size() != 1)
    return c.error("only reduce_window with one input is supported");
  Value *x = c.in[0], *init = c.in[1];
  const DType t = x->type.dtype;
  const size_t r = static_cast<size_t>(x->type.rank());
  KILN_ASSIGN(Window w, window_attrs(c, r));
  KILN_ASSIGN(Combiner cb, combiner(c, single_binary_body(c.op.regions[0]), t));
  const bool identity = is_identity(cb.kind, init);
  if (auto cum = cumulative_axis(w, x->type.dims);
      cum && identity && (cb.kind == "sum" || cb.kind == "prod") && !is_bool(t)) {
    AttrMap a{{"kind", cb.kind}, {"reverse", int64_t(cum->second ? 1 : 0)}};
    return one(c.make("kiln.cumulative", {x, c.scalar_int(DType::i64, cum->first)}, a));
  }
  if (!is_float(t) && !(cb.kind == "max" && (t == DType::i8 || t == DType::u8)))
    return c.error(fmt::format("reduce_window ({}) on {} is not supported", cb.kind, dtype_name(t)));
  if (cb.kind == "prod") return c.error("reduce_window with multiply is not supported");
  // Padding and base dilation insert init values; then an unpadded window reduction.
  std::vector<int64_t> interior;
  for (int64_t v : w.base_dil) interior.push_back(v - 1);
  KILN_ASSIGN(Value * xp, c.pad_interior(x, w.lo, w.hi, interior, init));
  Value *y = nullptr;
  if (cb.kind == "min") {
    KILN_ASSIGN(Value * n, c.make("kiln.neg", {xp}));
    KILN_ASSIGN(Value * p, pool(c, n, w, "max"));
    KILN_ASSIGN(y, c.make("kiln.neg", {p}));
  } else {
    KILN_ASSIGN(y, pool(c, xp, w, cb.kind));
  }
  if (!identity) {
    KILN_ASSIGN(y, c.make(cb.binop, {y, init}));
  }
  return std::vector<Value *>{y};
}

// ---- sort ---------------------------------------------------------------------------------------

// Classifies a comparator: "asc" (a < b on input 0), "desc" (a > b), or "" (anything else,
// including comparators that look at the other inputs).
Result<std::string> classify_comparator(OpCtx &c, const Block &blk, DType t, size_t n_inputs) {
  if (blk.arg_names.size() != 2 * n_inputs || blk.arg_types.size() != blk.arg_names.size())
    return std::string();
  std::vector<double> vals = {-2, -1, 0, 1, 2};
  if (is_unsigned_int(t)) vals = {0, 1, 2, 3};
  if (is_bool(t)) vals = {0, 1};
  bool asc = true, desc = true;
  for (double a : vals)
    for (double b : vals)
      for (int other = 0; other < 2; ++other) {
        std::vector<Tensor> args;
        auto mk = [](DType dt, double v) {
          return is_float(dt) ? Tensor::scalar_f64(dt, v) : Tensor::scalar_i64(dt, static_cast<int64_t>(v));
        };
        args.push_back(mk(t, a));
        args.push_back(mk(t, b));
        for (size_t i = 1; i < n_inputs; ++i) {
          args.push_back(mk(blk.arg_types[2 * i].dtype, other));
          args.push_back(mk(blk.arg_types[2 * i + 1].dtype, 1 - other));
        }
        KILN_ASSIGN(auto res, eval_block(c, blk, args));
        if (!res || res->size() != 1) return std::string();
        const bool lt = (*res)[0].get_i64(0) != 0;
        asc = asc && lt == (a < b);
        desc = desc && lt == (a > b);
      }
  return std::string(asc ? "asc" : desc ? "desc" : "");
}

Outs convert_sort(OpCtx &c) {
  if (c.in.empty() || c.op.regions.size() != 1) return c.error("malformed sort");
  KILN_ASSIGN(int64_t dim, c.int_attr("dimension", int64_t(-1)));
  Value *x = c.in[0];
  const int64_t r = x->type.rank();
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) return c.error("sort dimension is out of range");
  KILN_ASSIGN(std::string order, classify_comparator(c, c.op.regions[0], x->type.dtype, c.in.size()));
  if (order.empty())
    return c.error("sort comparator is not a recognised ascending / descending comparison of the "
                   "first input");
  if (is_bool(x->type.dtype)) return c.error("sort of i1 is not supported");
  AttrMap a{{"axis", dim}, {"largest", int64_t(order == "desc" ? 1 : 0)}, {"sorted", int64_t(1)}};
  KILN_ASSIGN(auto tk, c.make_n("kiln.topk", {x, c.scalar_int(DType::i64, x->type.dims[dim])}, a, 2));
  std::vector<Value *> outs = {tk[0]};
  for (size_t i = 1; i < c.in.size(); ++i) {
    Value *v = c.in[i];
    auto it = c.state.iota_dim.find(v);
    if (it != c.state.iota_dim.end() && it->second == dim && is_integer(v->type.dtype)) {
      KILN_ASSIGN(Value * ci, c.cast(tk[1], v->type.dtype));
      outs.push_back(ci);
    } else {
      KILN_ASSIGN(Value * g, c.make("kiln.gather_elements", {v, tk[1]}, {{"axis", dim}}));
      outs.push_back(g);
    }
  }
  return outs;
}

// chlo.top_k(x, k): the k largest along the last dim, sorted, with i32 indices.
Outs convert_top_k(OpCtx &c) {
  Value *x = c.in.at(0);
  KILN_ASSIGN(int64_t k, c.int_attr("k"));
  if (x->type.rank() < 1) return c.error("top_k needs rank >= 1");
  AttrMap a{{"axis", int64_t(-1)}, {"largest", int64_t(1)}, {"sorted", int64_t(1)}};
  KILN_ASSIGN(auto tk, c.make_n("kiln.topk", {x, c.scalar_int(DType::i64, k)}, a, 2));
  KILN_ASSIGN(Value * idx, c.cast(tk[1], c.result_dtype(1)));
  return std::vector<Value *>{tk[0], idx};
}

} // namespace

void register_reduce(ConverterTable &t) {
  t.add("chlo.top_k", convert_top_k);
  t.add("stablehlo.reduce", convert_reduce);
  t.add("stablehlo.reduce_window", convert_reduce_window);
  t.add("stablehlo.sort", convert_sort);
}

} // namespace kiln::stablehlo_fe
