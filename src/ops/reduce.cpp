// Reductions: kiln.reduce (sum, mean, max, min, prod, l1, l2, log_sum, log_sum_exp,
// sum_square over a set of axes) and kiln.arg_reduce (argmax / argmin along one axis).
// The rest of the family registers from reduce_scan.cpp, norm_ops.cpp and norm_misc.cpp.
#include "ops/ops.h"
#include "ops/reduce_util.h"

#include <cmath>
#include <limits>

namespace kiln {

namespace reduce_detail {

Result<int64_t> scalar_int_operand(const Op &op, const Tensor &t, const char *what) {
  if (!is_integer(t.dtype()))
    return Status::error(fmt::format("{}: {} must be an integer tensor, got {}", op.describe(),
                                     what, dtype_name(t.dtype())));
  if (t.numel() != 1 || t.rank() > 1)
    return Status::error(fmt::format("{}: {} must hold exactly one value, got shape [{}]",
                                     op.describe(), what, shape_str(t.shape())));
  return t.get_i64(0);
}

} // namespace reduce_detail

namespace {

using namespace reduce_detail;

const char *const kReduceKinds[] = {"sum", "mean",    "max",         "min",       "prod",
                                    "l1",  "l2",      "log_sum",     "log_sum_exp", "sum_square"};

bool valid_reduce_kind(const std::string &k) {
  for (const char *s : kReduceKinds)
    if (k == s) return true;
  return false;
}

// Kinds computed through double even for integer inputs (result truncated back).
bool real_valued_kind(const std::string &k) {
  return k == "mean" || k == "l2" || k == "log_sum" || k == "log_sum_exp";
}

Status verify_reduce(const Op &op) {
  std::string kind = op.attr_str("kind", "");
  if (!valid_reduce_kind(kind))
    return Status::error(fmt::format("{}: unknown reduction kind '{}'", op.describe(), kind));
  return Status::ok();
}

// The reduced axes, or nullopt for "no reduction" (empty axes with noop_with_empty_axes).
Result<std::optional<std::vector<int64_t>>> resolve_axes(const Op &op, const Tensor *axes,
                                                         int64_t rank) {
  std::vector<int64_t> list;
  if (axes) {
    if (!is_integer(axes->dtype()) || axes->rank() > 1)
      return Status::error(op.describe() + ": axes must be a 1-D integer tensor");
    list = axes->to_i64s();
  }
  if (list.empty()) {
    if (op.attr_int("noop_with_empty_axes", 0)) return std::optional<std::vector<int64_t>>();
    for (int64_t d = 0; d < rank; ++d) list.push_back(d);
    return std::optional<std::vector<int64_t>>(list);
  }
  KILN_ASSIGN(auto norm, norm_axes(op, list, rank));
  return std::optional<std::vector<int64_t>>(std::move(norm));
}

Status infer_reduce(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  const bool keep = ctx.op.attr_int("keepdims", 1) != 0;
  const std::string kind = ctx.op.attr_str("kind", "");
  if (is_bool(xt.dtype) && kind != "max" && kind != "min")
    return ctx.error(fmt::format("reduction '{}' is not defined for bool tensors", kind));
  if (!xt.ranked) {
    ctx.out = {TensorType{xt.dtype, {}, false}};
    return Status::ok();
  }
  if (ctx.present(1) && !is_integer(ctx.type(1).dtype)) return ctx.error("axes must be an integer tensor");
  const Tensor *axes = ctx.present(1) ? const_operand(ctx, 1) : nullptr;
  int64_t num_axes = -1; // unknown
  if (ctx.present(1) && !axes) {
    const TensorType &at = ctx.type(1);
    if (at.ranked && at.rank() == 1 && at.dims[0] >= 0) num_axes = at.dims[0];
  }
  if (!ctx.present(1) || axes || num_axes == 0) {
    KILN_ASSIGN(auto ax, resolve_axes(ctx.op, axes, xt.rank()));
    if (!ax) ctx.out = {xt};
    else ctx.out = {TensorType{xt.dtype, reduced_shape(xt.dims, *ax, keep), true}};
    return Status::ok();
  }
  if (keep) ctx.out = {TensorType{xt.dtype, dynamic_dims(xt.rank()), true}};
  else if (num_axes >= 0 && num_axes <= xt.rank())
    ctx.out = {TensorType{xt.dtype, dynamic_dims(xt.rank() - num_axes), true}};
  else ctx.out = {TensorType{xt.dtype, {}, false}};
  return Status::ok();
}

double reduce_real(const std::string &kind, const std::vector<double> &v, int64_t base,
                   const std::vector<int64_t> &inner) {
  const double n = static_cast<double>(inner.size());
  if (kind == "max" || kind == "min") {
    const bool mx = kind == "max";
    double acc = mx ? -INFINITY : INFINITY;
    for (int64_t o : inner) {
      double x = v[static_cast<size_t>(base + o)];
      if (std::isnan(x)) return x;
      acc = mx ? std::max(acc, x) : std::min(acc, x);
    }
    return acc;
  }
  if (kind == "prod") {
    double acc = 1;
    for (int64_t o : inner) acc *= v[static_cast<size_t>(base + o)];
    return acc;
  }
  if (kind == "log_sum_exp") {
    double m = -INFINITY;
    for (int64_t o : inner) m = std::max(m, v[static_cast<size_t>(base + o)]);
    if (std::isinf(m)) return m;
    double s = 0;
    for (int64_t o : inner) s += std::exp(v[static_cast<size_t>(base + o)] - m);
    return m + std::log(s);
  }
  double s = 0;
  for (int64_t o : inner) {
    double x = v[static_cast<size_t>(base + o)];
    if (kind == "l1") s += std::fabs(x);
    else if (kind == "l2" || kind == "sum_square") s += x * x;
    else s += x;
  }
  if (kind == "mean") return s / n;
  if (kind == "l2") return std::sqrt(s);
  if (kind == "log_sum") return std::log(s);
  return s;
}

int64_t reduce_int(const std::string &kind, DType dt, const std::vector<int64_t> &v, int64_t base,
                   const std::vector<int64_t> &inner) {
  if (kind == "max" || kind == "min") {
    const bool mx = kind == "max";
    int64_t acc = mx ? int_lowest(dt) : int_highest(dt);
    for (int64_t o : inner) {
      int64_t x = v[static_cast<size_t>(base + o)];
      if (mx ? int_less(dt, acc, x) : int_less(dt, x, acc)) acc = x;
    }
    return acc;
  }
  int64_t acc = kind == "prod" ? 1 : 0;
  for (int64_t o : inner) {
    int64_t x = v[static_cast<size_t>(base + o)];
    if (kind == "prod") acc = wrap_mul(acc, x);
    else if (kind == "l1") acc = wrap_add(acc, (is_signed_int(dt) && x < 0) ? wrap_mul(x, -1) : x);
    else if (kind == "sum_square") acc = wrap_add(acc, wrap_mul(x, x));
    else acc = wrap_add(acc, x);
  }
  return acc;
}

Status eval_reduce(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &x = ctx.input(0);
  const std::string kind = op.attr_str("kind", "");
  KILN_ASSIGN(auto ax, resolve_axes(op, ctx.present(1) ? &ctx.input(1) : nullptr, x.rank()));
  if (!ax) {
    ctx.out = {x};
    return Status::ok();
  }
  if (is_bool(x.dtype()) && kind != "max" && kind != "min")
    return ctx.error(fmt::format("reduction '{}' is not defined for bool tensors", kind));
  const bool keep = op.attr_int("keepdims", 1) != 0;
  KILN_ASSIGN(Tensor r, Tensor::allocate(x.dtype(), reduced_shape(x.shape(), *ax, keep)));
  AxisSplit s = split_axes(x.shape(), *ax);
  if (is_float(x.dtype()) || real_valued_kind(kind)) {
    std::vector<double> v = x.to_f64s();
    for (size_t o = 0; o < s.outer.size(); ++o)
      r.set_f64(static_cast<int64_t>(o), reduce_real(kind, v, s.outer[o], s.inner));
  } else {
    std::vector<int64_t> v = x.to_i64s();
    for (size_t o = 0; o < s.outer.size(); ++o)
      r.set_i64(static_cast<int64_t>(o), reduce_int(kind, x.dtype(), v, s.outer[o], s.inner));
  }
  ctx.out = {std::move(r)};
  return Status::ok();
}

// ---- kiln.arg_reduce ---------------------------------------------------------------------------

Status verify_arg(const Op &op) {
  std::string kind = op.attr_str("kind", "");
  if (kind != "max" && kind != "min")
    return Status::error(fmt::format("{}: kind must be 'max' or 'min', got '{}'", op.describe(), kind));
  return Status::ok();
}

Status infer_arg(InferCtx &ctx) {
  const TensorType &xt = ctx.type(0);
  if (!xt.ranked) {
    ctx.out = {TensorType{DType::i64, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), xt.rank()));
  ctx.out = {TensorType{DType::i64, reduced_shape(xt.dims, {axis}, ctx.op.attr_int("keepdims", 1) != 0), true}};
  return Status::ok();
}

// Whether candidate `c` replaces the current best `b` (ties resolved by `last`).
template <class T, class Less> bool better(const T &c, const T &b, bool mx, bool last, Less less) {
  if (mx ? less(b, c) : less(c, b)) return true;
  if (last && !less(b, c) && !less(c, b)) return true;
  return false;
}

Status eval_arg(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 0), x.rank()));
  if (x.shape()[static_cast<size_t>(axis)] == 0)
    return ctx.error("cannot take argmax / argmin along an empty axis");
  const bool mx = op.attr_str("kind", "") == "max";
  const bool last = op.attr_int("select_last_index", 0) != 0;
  KILN_ASSIGN(Tensor r, Tensor::allocate(DType::i64, reduced_shape(x.shape(), {axis}, op.attr_int("keepdims", 1) != 0)));
  AxisSplit s = split_axes(x.shape(), {axis});
  int64_t *out = r.data_mut<int64_t>();
  const bool fl = is_float(x.dtype());
  const DType dt = x.dtype();
  // NaN is treated as the largest value for argmax and the smallest for argmin (numpy picks it).
  auto fless = [mx](double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return mx ? (!std::isnan(a) && std::isnan(b)) : (std::isnan(a) && !std::isnan(b));
    return a < b;
  };
  auto iless = [dt](int64_t a, int64_t b) { return int_less(dt, a, b); };
  for (size_t o = 0; o < s.outer.size(); ++o) {
    int64_t best = 0;
    for (size_t k = 1; k < s.inner.size(); ++k) {
      int64_t c = s.outer[o] + s.inner[k], b = s.outer[o] + s.inner[static_cast<size_t>(best)];
      bool take = fl ? better(x.get_f64(c), x.get_f64(b), mx, last, fless)
                     : better(x.get_i64(c), x.get_i64(b), mx, last, iless);
      if (take) best = static_cast<int64_t>(k);
    }
    out[o] = best;
  }
  ctx.out = {std::move(r)};
  return Status::ok();
}

} // namespace

void register_reduce_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.reduce",
      .min_operands = 1,
      .max_operands = 2,
      .verify = verify_reduce,
      .infer = infer_reduce,
      .eval = eval_reduce,
  });
  r.add(OpDef{
      .name = "kiln.arg_reduce",
      .min_operands = 1,
      .max_operands = 1,
      .verify = verify_arg,
      .infer = infer_arg,
      .eval = eval_arg,
  });
  reduce_detail::register_scan_ops(r);
  reduce_detail::register_norm_ops(r);
  reduce_detail::register_norm_misc(r);
}

} // namespace kiln
