// OpCtx: attribute access, error reporting and the small graph-building helpers converters share.
#include "frontend/stablehlo/convert.h"

#include <fmt/format.h>
#include <numeric>

namespace kiln::stablehlo_fe {

Status OpCtx::error(const std::string &msg) const {
  return Status::error(state.format(op.loc, msg));
}

Result<Value *> OpCtx::make(std::string_view name, std::vector<Value *> operands, AttrMap attrs) {
  auto r = b.create1(name, std::move(operands), std::move(attrs));
  if (!r) return error(fmt::format("{} ({})", r.status().message(), op.name));
  return r;
}

Result<std::vector<Value *>> OpCtx::make_n(std::string_view name, std::vector<Value *> operands,
                                           AttrMap attrs, int num_results) {
  auto r = b.create(name, std::move(operands), std::move(attrs), num_results);
  if (!r) return error(fmt::format("{} ({})", r.status().message(), op.name));
  return r;
}

namespace {

Result<std::vector<int64_t>> attr_to_ints(const Attr &a, std::string_view n, const OpCtx &c) {
  switch (a.kind) {
  case Attr::Kind::DenseArray: return a.ints;
  case Attr::Kind::Array: {
    std::vector<int64_t> v;
    for (const Attr &e : a.list) {
      if (e.kind != Attr::Kind::Int && e.kind != Attr::Kind::Bool)
        return c.error(fmt::format("attribute '{}' must be a list of integers", n));
      v.push_back(e.i);
    }
    return v;
  }
  case Attr::Kind::Dense:
    if (!is_float(a.dense.dtype())) return a.dense.to_i64s(); // also Nx2 padding, flattened
    break;
  case Attr::Kind::Int: return std::vector<int64_t>{a.i};
  default: break;
  }
  return c.error(fmt::format("attribute '{}' must be a list of integers", n));
}

} // namespace

Result<std::vector<int64_t>> OpCtx::ints(std::string_view n) const {
  const Attr *a = attr(n);
  if (!a) return error(fmt::format("missing attribute '{}'", n));
  return attr_to_ints(*a, n, *this);
}

Result<std::vector<int64_t>> OpCtx::ints_or(std::string_view n, std::vector<int64_t> dflt) const {
  const Attr *a = attr(n);
  if (!a) return dflt;
  return attr_to_ints(*a, n, *this);
}

Result<int64_t> OpCtx::int_attr(std::string_view n, std::optional<int64_t> dflt) const {
  const Attr *a = attr(n);
  if (!a) {
    if (dflt) return *dflt;
    return error(fmt::format("missing attribute '{}'", n));
  }
  if (a->kind == Attr::Kind::Int || a->kind == Attr::Kind::Bool) return a->i;
  if (a->kind == Attr::Kind::Dense && a->dense.numel() == 1 && !is_float(a->dense.dtype()))
    return a->dense.get_i64(0);
  return error(fmt::format("attribute '{}' must be an integer", n));
}

std::string OpCtx::ident(std::string_view n, std::string dflt) const {
  const Attr *a = attr(n);
  if (!a || (a->kind != Attr::Kind::Ident && a->kind != Attr::Kind::String)) return dflt;
  return a->s;
}

Result<std::vector<int64_t>> OpCtx::field_ints(const Attr &d, std::string_view n) const {
  const Attr *a = d.get(n);
  if (!a) return std::vector<int64_t>{};
  return attr_to_ints(*a, n, *this);
}

Result<int64_t> OpCtx::field_int(const Attr &d, std::string_view n,
                                 std::optional<int64_t> dflt) const {
  const Attr *a = d.get(n);
  if (!a && dflt) return *dflt;
  if (!a || a->kind != Attr::Kind::Int) return error(fmt::format("missing integer field '{}'", n));
  return a->i;
}

Result<Value *> OpCtx::reshape(Value *x, const Shape &dims) {
  if (x->type.dims == dims) return x;
  return make("kiln.reshape", {x, i64s(dims)}, {{"allowzero", int64_t(1)}});
}

Result<Value *> OpCtx::transpose(Value *x, const std::vector<int64_t> &perm) {
  std::vector<int64_t> id(perm.size());
  std::iota(id.begin(), id.end(), 0);
  if (perm == id) return x;
  return make("kiln.transpose", {x}, {{"perm", perm}});
}

Result<Value *> OpCtx::cast(Value *x, DType to) {
  if (x->type.dtype == to) return x;
  if (to == DType::boolean && !is_bool(x->type.dtype)) {
    KILN_ASSIGN(Value * eq, make("kiln.equal", {x, scalar_int(x->type.dtype, 0)}));
    return make("kiln.not", {eq});
  }
  return make("kiln.cast", {x}, {{"to", to}});
}

Result<Value *> OpCtx::expand(Value *x, const Shape &dims) {
  if (x->type.dims == dims) return x;
  return make("kiln.expand", {x, i64s(dims)});
}

Result<Value *> OpCtx::slice(Value *x, const std::vector<int64_t> &starts,
                             const std::vector<int64_t> &limits,
                             const std::vector<int64_t> &strides) {
  const Shape &d = x->type.dims;
  bool full = true;
  for (size_t i = 0; i < d.size(); ++i)
    full = full && starts[i] == 0 && limits[i] == d[i] && strides[i] == 1;
  if (full) return x;
  std::vector<int64_t> axes(d.size());
  std::iota(axes.begin(), axes.end(), 0);
  return make("kiln.slice", {x, i64s(starts), i64s(limits), i64s(axes), i64s(strides)});
}

Result<Value *> OpCtx::pad(Value *x, const std::vector<int64_t> &low,
                           const std::vector<int64_t> &high, Value *value) {
  bool zero = true;
  for (size_t i = 0; i < low.size(); ++i) zero = zero && low[i] == 0 && high[i] == 0;
  if (zero) return x;
  std::vector<int64_t> pads(low);
  pads.insert(pads.end(), high.begin(), high.end());
  bool negative_only = true;
  for (int64_t p : pads) negative_only = negative_only && p <= 0;
  if (negative_only) { // a pure crop: a slice
    const Shape &d = x->type.dims;
    std::vector<int64_t> st, lim, step(d.size(), 1);
    for (size_t i = 0; i < d.size(); ++i) {
      st.push_back(-low[i]);
      lim.push_back(d[i] + high[i]);
    }
    return slice(x, st, lim, step);
  }
  return make("kiln.pad", {x, i64s(pads), value}, {{"mode", std::string("constant")}});
}

Result<Value *> OpCtx::pad_interior(Value *x, const std::vector<int64_t> &low,
                                    const std::vector<int64_t> &high,
                                    const std::vector<int64_t> &interior, Value *value) {
  const int64_t r = x->type.rank();
  for (int64_t d = 0; d < r; ++d) {
    const int64_t k = interior[d], n = x->type.dims[d];
    if (k < 0) return error("interior padding must be non-negative");
    if (k == 0 || n <= 1) continue;
    // [.., n, ..] -> [.., n, 1, ..] -> pad the new dim by k at the end -> [.., n * (1 + k), ..]
    // -> drop the last k: n + (n - 1) * k elements with k pad values between neighbours.
    Shape s = x->type.dims;
    s.insert(s.begin() + d + 1, 1);
    KILN_ASSIGN(x, reshape(x, s));
    std::vector<int64_t> lo(r + 1, 0), hi(r + 1, 0);
    hi[d + 1] = k;
    KILN_ASSIGN(x, pad(x, lo, hi, value));
    Shape m = x->type.dims;
    m[d] = n * (1 + k);
    m.erase(m.begin() + d + 1);
    KILN_ASSIGN(x, reshape(x, m));
    std::vector<int64_t> st(r, 0), lim = m, step(r, 1);
    lim[d] = n + (n - 1) * k;
    KILN_ASSIGN(x, slice(x, st, lim, step));
  }
  return pad(x, low, high, value);
}

Result<Value *> OpCtx::iota(const Shape &dims, int64_t dim, DType dt) {
  const int64_t n = dims.at(dim);
  Value *start = is_float(dt) ? scalar(dt, 0) : scalar_int(dt, 0);
  Value *limit = is_float(dt) ? scalar(dt, static_cast<double>(n)) : scalar_int(dt, n);
  Value *delta = is_float(dt) ? scalar(dt, 1) : scalar_int(dt, 1);
  KILN_ASSIGN(Value * r, make("kiln.range", {start, limit, delta}));
  Shape s(dims.size(), 1);
  s[dim] = n;
  KILN_ASSIGN(r, reshape(r, s));
  return expand(r, dims);
}

Result<Value *> OpCtx::clamp(Value *x, Value *lo, Value *hi) {
  KILN_ASSIGN(Value * m, make("kiln.max", {x, lo}));
  return make("kiln.min", {m, hi});
}

Result<Value *> OpCtx::stack_last(const std::vector<Value *> &parts) {
  std::vector<Value *> cols;
  for (Value *p : parts) {
    Shape s = p->type.dims;
    s.push_back(1);
    KILN_ASSIGN(Value * c, reshape(p, s));
    cols.push_back(c);
  }
  if (cols.size() == 1) return cols[0];
  return make("kiln.concat", cols, {{"axis", int64_t(parts[0]->type.rank())}});
}

} // namespace kiln::stablehlo_fe
