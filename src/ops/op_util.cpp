#include "ops/op_util.h"

#include <algorithm>

namespace kiln {

Result<int64_t> norm_axis(const Op &op, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return Status::error(
        fmt::format("{}: axis {} is out of range for rank {}", op.describe(), axis, rank));
  return a;
}

Result<std::vector<int64_t>> norm_axes(const Op &op, std::vector<int64_t> axes, int64_t rank) {
  for (auto &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return Status::error(fmt::format("{}: repeated axis", op.describe()));
  return axes;
}

std::optional<int64_t> checked_numel(const Shape &dims) {
  // A zero dim empties the tensor whatever the others are (their product may not fit).
  for (int64_t d : dims)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

Status overflow_error(const Op &op, std::string_view what) {
  return Status::error(fmt::format("{}: {} overflows int64", op.describe(), what));
}

Status infer_same_as(InferCtx &ctx, size_t i) {
  ctx.out = {ctx.type(i)};
  return Status::ok();
}

Result<Shape> broadcast_dims(const Op &op, const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db) out[i] = da;
    else if (db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (da < 0 || db < 0) out[i] = da < 0 ? db : da;
    else
      return Status::error(fmt::format("{}: shapes [{}] and [{}] do not broadcast",
                                       op.describe(), shape_str(a), shape_str(b)));
  }
  return out;
}

Status infer_broadcast(InferCtx &ctx, DType dt) {
  Shape out;
  bool ranked = true;
  for (size_t i = 0; i < ctx.in.size(); ++i) {
    if (!ctx.in[i]) continue;
    if (!ctx.in[i]->ranked) {
      ranked = false;
      continue;
    }
    KILN_ASSIGN(out, broadcast_dims(ctx.op, out, ctx.in[i]->dims));
  }
  ctx.out = {TensorType{dt, ranked ? out : Shape{}, ranked}};
  return Status::ok();
}

Status expect_dtype_in(const Op &op, const char *what, DType t, std::initializer_list<DType> ok) {
  for (DType d : ok)
    if (d == t) return Status::ok();
  return Status::error(
      fmt::format("{}: {} of dtype {} is not supported", op.describe(), what, dtype_name(t)));
}

Status expect_float(const Op &op, const char *what, DType t) {
  if (is_float(t)) return Status::ok();
  return Status::error(fmt::format("{}: {} must be a floating-point tensor, got {}",
                                   op.describe(), what, dtype_name(t)));
}

Tensor map_unary(const Tensor &x, DType out, double (*ff)(double), int64_t (*fi)(int64_t)) {
  Tensor r(out, x.shape());
  const int64_t n = x.numel();
  if (is_float(x.dtype()) || !fi) {
    if (x.dtype() == DType::f32 && out == DType::f32) {
      const float *p = x.data<float>();
      float *q = r.data_mut<float>();
      for (int64_t i = 0; i < n; ++i) q[i] = static_cast<float>(ff(p[i]));
    } else {
      for (int64_t i = 0; i < n; ++i) r.set_f64(i, ff(x.get_f64(i)));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) r.set_i64(i, fi(x.get_i64(i)));
  }
  return r;
}

} // namespace kiln
