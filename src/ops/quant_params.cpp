// Shared checks of quantisation parameters; the rules are listed in quant_params.h.
#include "ops/quant_params.h"

#include "ops/op_util.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::quant {

Status check_scale_values(const Op &op, const Tensor &scale, std::string_view what) {
  if (!scale.valid() || !is_float(scale.dtype())) return Status::ok();
  for (int64_t i = 0; i < scale.numel(); ++i) {
    const double s = scale.get_f64(i);
    if (std::isfinite(s) && s != 0) continue;
    const std::string at = scale.numel() == 1 ? "" : fmt::format("[{}]", i);
    return Status::error(fmt::format("{}: {}{} is {}; a quantisation scale must be finite and "
                                     "nonzero",
                                     op.describe(), what, at,
                                     std::isnan(s) ? "NaN" : std::isinf(s) ? (s > 0 ? "inf" : "-inf")
                                                                           : "0"));
  }
  return Status::ok();
}

Status check_const_scale(const InferCtx &ctx, size_t i, std::string_view what) {
  const Tensor *t = const_operand(ctx, i);
  return t ? check_scale_values(ctx.op, *t, what) : Status::ok();
}

Status check_zero_point_dtype(const Op &op, DType zp, DType q, std::string_view what,
                              std::string_view of) {
  if (zp == q) return Status::ok();
  return Status::error(fmt::format("{}: {} has dtype {} but {} has dtype {}; a zero point must "
                                   "have the dtype of the tensor it quantises",
                                   op.describe(), what, dtype_name(zp), of, dtype_name(q)));
}

namespace {

std::string dims_str(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "," : "") + (s[i] < 0 ? std::string("?") : std::to_string(s[i]));
  return r;
}

} // namespace

Status check_layout(const Op &op, const TensorType &x, const TensorType &scale) {
  const int64_t block = op.attr_int("block_size", 0);
  if (block < 0)
    return Status::error(fmt::format("{}: block_size must be >= 0, got {}", op.describe(), block));
  if (!x.ranked || !scale.ranked) return Status::ok();
  const Shape &xs = x.dims, &ss = scale.dims;
  const bool scale_static = scale.is_static();
  const int64_t sn = scale_static ? shape_numel(ss) : -1;
  if (block == 0 && ss.size() <= 1 && sn == 1) return Status::ok(); // per tensor
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (rank == 0)
    return Status::error(fmt::format("{}: a scalar input needs a scalar scale, got [{}]",
                                     op.describe(), dims_str(ss)));
  const int64_t ax = op.attr_int("axis", 1);
  if (ax < -rank || ax >= rank)
    return Status::error(fmt::format("{}: axis {} is out of range for an input of rank {} "
                                     "(a per-axis or blocked scale needs an axis in [{}, {}])",
                                     op.describe(), ax, rank, -rank, rank - 1));
  const size_t a = static_cast<size_t>(ax < 0 ? ax + rank : ax);
  if (block == 0) {
    if (ss.size() != 1 || (ss[0] >= 0 && xs[a] >= 0 && ss[0] != xs[a]))
      return Status::error(fmt::format("{}: a per-axis scale must have shape [{}] (dim {} of the "
                                       "input [{}]), got [{}]",
                                       op.describe(), xs[a] < 0 ? std::string("?")
                                                                : std::to_string(xs[a]),
                                       a, dims_str(xs), dims_str(ss)));
    return Status::ok();
  }
  bool ok = ss.size() == xs.size();
  for (size_t d = 0; ok && d < xs.size(); ++d) {
    if (ss[d] < 0 || xs[d] < 0) continue;
    ok = d == a ? ss[d] == xs[d] / block + (xs[d] % block != 0 ? 1 : 0) : ss[d] == xs[d];
  }
  if (!ok)
    return Status::error(fmt::format("{}: a blocked scale for input [{}] with block_size {} on "
                                     "axis {} must have the input's rank, ceil(dim / block_size) "
                                     "entries along the axis and the input's dims elsewhere; "
                                     "got [{}]",
                                     op.describe(), dims_str(xs), block, a, dims_str(ss)));
  return Status::ok();
}

Status check_per_channel(const Op &op, const TensorType &p, int64_t n, std::string_view what,
                         std::string_view per) {
  if (!p.ranked || !p.is_static()) return Status::ok();
  const int64_t k = shape_numel(p.dims);
  int64_t non_unit = 0;
  for (int64_t d : p.dims) non_unit += d != 1 ? 1 : 0;
  if (k == 1 || (n >= 0 && k == n && non_unit <= 1) || (n < 0 && non_unit <= 1)) return Status::ok();
  if (n == 1)
    return Status::error(fmt::format("{}: {} must be a single value (per tensor), got shape [{}]",
                                     op.describe(), what, dims_str(p.dims)));
  return Status::error(fmt::format("{}: {} must have one value or one per {}{}, got shape [{}]",
                                   op.describe(), what, per,
                                   n >= 0 ? fmt::format(" ({})", n) : std::string(),
                                   dims_str(p.dims)));
}

} // namespace kiln::quant
