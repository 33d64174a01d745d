// Pooling: kiln.max_pool (optional indices), kiln.avg_pool, kiln.lp_pool, kiln.global_pool and
// kiln.max_unpool. Windows are N-d with strides, dilations, pads, auto_pad and ceil_mode.
#include "ops/nn_internal.h"
#include "ops/nn_kernels.h"
#include "ops/op_util.h"

#include <cmath>
#include <limits>

namespace kiln {

using nn::Window;

namespace {

enum class Mode { max, avg, lp };

Mode mode_of(const Op &op) {
  if (op.name() == "kiln.max_pool") return Mode::max;
  if (op.name() == "kiln.avg_pool") return Mode::avg;
  return Mode::lp;
}

// A window plus per-kernel-element offsets.
struct Plan {
  Window w;
  int64_t planes = 0; // N * C
  std::vector<std::vector<int64_t>> kpos; // per kernel element, per dim: k * dilation
  std::vector<int64_t> koff;              // flat offset relative to the window start
  std::vector<int64_t> istride;           // row-major strides of the spatial input
};

Result<Window> pool_window(const Op &op, const Shape &xd) {
  if (xd.size() < 3)
    return Status::error(fmt::format("{}: input must have rank >= 3, got [{}]", op.describe(),
                                     shape_str(xd)));
  std::vector<int64_t> k = op.attr_ints("kernel_shape");
  if (k.size() != xd.size() - 2)
    return Status::error(fmt::format("{}: kernel_shape must have {} values", op.describe(),
                                     xd.size() - 2));
  return nn::make_window(op, k, Shape(xd.begin() + 2, xd.end()), true);
}

Result<Plan> make_plan(const Op &op, const Shape &xd) {
  Plan pl;
  KILN_ASSIGN(pl.w, pool_window(op, xd));
  const int64_t r = pl.w.rank(), ks = pl.w.kernel_size();
  pl.planes = xd[0] * xd[1];
  pl.istride = shape_strides(pl.w.in);
  pl.kpos.assign(ks, std::vector<int64_t>(r));
  pl.koff.assign(ks, 0);
  for (int64_t kidx = 0; kidx < ks; ++kidx)
    for (int64_t d = r - 1, t = kidx; d >= 0; --d) {
      pl.kpos[kidx][d] = (t % pl.w.kernel[d]) * pl.w.dilations[d];
      pl.koff[kidx] += pl.kpos[kidx][d] * pl.istride[d];
      t /= pl.w.kernel[d];
    }
  return pl;
}

struct PoolCfg {
  Mode mode = Mode::max;
  bool count_pad = false;
  double p = 2;
  bool col_major = false; // storage_order 1 for indices
};

template <class T>
void pool_run(const T *X, const Plan &pl, const PoolCfg &cfg, T *Y, int64_t *I) {
  const Window &w = pl.w;
  const int64_t r = w.rank(), ks = w.kernel_size(), in = w.in_size(), P = w.out_size();
  std::vector<int64_t> o(r, 0), start(r);
  for (int64_t p = 0; p < P; ++p) {
    bool full = true;
    int64_t base = 0;
    for (int64_t d = 0; d < r; ++d) {
      start[d] = o[d] * w.strides[d] - w.pad_begin[d];
      base += start[d] * pl.istride[d];
      full = full && start[d] >= 0 && start[d] + pl.kpos[ks - 1][d] < w.in[d];
    }
    // Which kernel elements are inside the input / inside the padded input.
    auto inside = [&](int64_t kidx, bool padded) {
      for (int64_t d = 0; d < r; ++d) {
        const int64_t x = start[d] + pl.kpos[kidx][d];
        const int64_t lo = padded ? -w.pad_begin[d] : 0, hi = w.in[d] + (padded ? w.pad_end[d] : 0);
        if (x < lo || x >= hi) return false;
      }
      return true;
    };
    for (int64_t pln = 0; pln < pl.planes; ++pln) {
      const T *xp = X + pln * in;
      T best = -std::numeric_limits<T>::infinity();
      int64_t bk = -1, cnt = 0;
      double sum = 0;
      for (int64_t kidx = 0; kidx < ks; ++kidx) {
        if (!full && !inside(kidx, false)) {
          if (cfg.count_pad && inside(kidx, true)) ++cnt;
          continue;
        }
        const T v = xp[base + pl.koff[kidx]];
        ++cnt;
        if (cfg.mode == Mode::max) {
          if (bk < 0 || v > best) best = v, bk = kidx;
        } else if (cfg.mode == Mode::avg) {
          sum += v;
        } else {
          sum += std::pow(std::fabs(static_cast<double>(v)), cfg.p);
        }
      }
      T &y = Y[pln * P + p];
      if (cfg.mode == Mode::max) y = best;
      else if (cfg.mode == Mode::avg) y = static_cast<T>(cnt ? sum / static_cast<double>(cnt) : 0.0);
      else y = static_cast<T>(std::pow(sum, 1.0 / cfg.p));
      if (I && cfg.mode == Mode::max) {
        int64_t idx = 0;
        if (bk >= 0) {
          for (int64_t d = cfg.col_major ? r - 1 : 0; cfg.col_major ? d >= 0 : d < r;
               d += cfg.col_major ? -1 : 1)
            idx = idx * w.in[d] + start[d] + pl.kpos[bk][d];
        }
        I[pln * P + p] = pln * in + idx;
      }
    }
    for (int64_t d = r - 1; d >= 0; --d) {
      if (++o[d] < w.out[d]) break;
      o[d] = 0;
    }
  }
}

template <class T> std::vector<Tensor> pool_typed(const Tensor &x, const Plan &pl, const PoolCfg &cfg, bool want_idx) {
  nn::View<T> vx(x);
  Shape out{x.shape()[0], x.shape()[1]};
  out.insert(out.end(), pl.w.out.begin(), pl.w.out.end());
  std::vector<T> y(static_cast<size_t>(shape_numel(out)));
  Tensor idx(DType::i64, want_idx ? out : Shape{0});
  pool_run<T>(vx.data(), pl, cfg, y.data(), want_idx ? idx.data_mut<int64_t>() : nullptr);
  std::vector<Tensor> res{nn::store<T>(y, x.dtype(), out)};
  if (want_idx) res.push_back(idx);
  return res;
}

Status eval_pool(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  KILN_ASSIGN(Window w, pool_window(ctx.op, x.shape()));
  Shape out{x.shape()[0], x.shape()[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  KILN_TRY(nn::check_result_size(ctx.op, out));
  if (shape_numel(out) == 0) {
    // An empty result may come with huge spatial dims or kernels (an empty batch): no plan
    // sized by them, no loop over their windows.
    ctx.out = {Tensor(x.dtype(), out)};
    if (ctx.op.results.size() > 1) ctx.out.push_back(Tensor(DType::i64, out));
    return Status::ok();
  }
  KILN_ASSIGN(Plan pl, make_plan(ctx.op, x.shape()));
  PoolCfg cfg;
  cfg.mode = mode_of(ctx.op);
  cfg.count_pad = ctx.op.attr_int("count_include_pad", 0) != 0;
  cfg.p = static_cast<double>(ctx.op.attr_int("p", 2));
  cfg.col_major = ctx.op.attr_int("storage_order", 0) != 0;
  const bool want_idx = ctx.op.results.size() > 1;
  if (x.dtype() == DType::f32) ctx.out = pool_typed<float>(x, pl, cfg, want_idx);
  else ctx.out = pool_typed<double>(x, pl, cfg, want_idx);
  return Status::ok();
}

Status infer_pool(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  const Mode m = mode_of(ctx.op);
  if (m == Mode::max)
    KILN_TRY(expect_dtype_in(ctx.op, "input", x.dtype,
                             {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8}));
  else KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  if (m == Mode::lp && ctx.op.attr_int("p", 2) < 1) return ctx.error("p must be >= 1");
  if (!x.ranked) {
    ctx.out.assign(ctx.op.results.size(), TensorType{x.dtype, {}, false});
    if (ctx.out.size() > 1) ctx.out[1].dtype = DType::i64;
    return Status::ok();
  }
  KILN_ASSIGN(Window w, pool_window(ctx.op, x.dims));
  Shape out{x.dims[0], x.dims[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  ctx.out = {TensorType{x.dtype, out, true}};
  if (ctx.op.results.size() > 1) {
    if (m != Mode::max) return ctx.error("only max pooling has an indices result");
    ctx.out.push_back(TensorType{DType::i64, out, true});
  }
  return Status::ok();
}

// ---- global pooling ------------------------------------------------------------------------

Status eval_global_pool(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0);
  if (x.rank() < 2) return ctx.error("input must have rank >= 2");
  const std::string mode = ctx.op.attr_str("mode", "avg");
  const double p = static_cast<double>(ctx.op.attr_int("p", 2));
  const int64_t planes = x.shape()[0] * x.shape()[1];
  const int64_t S = planes ? x.numel() / planes : 0;
  Shape out(x.shape().begin(), x.shape().begin() + 2);
  out.resize(x.shape().size(), 1);
  Tensor y(x.dtype(), out);
  nn::View<double> vx(x);
  for (int64_t i = 0; i < planes; ++i) {
    const double *xp = vx.data() + i * S;
    double acc = mode == "max" ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t j = 0; j < S; ++j) {
      if (mode == "max") acc = std::max(acc, xp[j]);
      else if (mode == "avg") acc += xp[j];
      else acc += std::pow(std::fabs(xp[j]), p);
    }
    if (mode == "avg") acc = S ? acc / static_cast<double>(S) : 0.0;
    else if (mode == "lp") acc = std::pow(acc, 1.0 / p);
    y.set_f64(i, acc);
  }
  ctx.out = {y};
  return Status::ok();
}

Status infer_global_pool(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  const std::string mode = ctx.op.attr_str("mode", "avg");
  if (mode != "avg" && mode != "max" && mode != "lp")
    return ctx.error(fmt::format("mode '{}' is not supported", mode));
  if (mode == "lp" && ctx.op.attr_int("p", 2) < 1) return ctx.error("p must be >= 1");
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  if (!x.ranked) {
    ctx.out = {x};
    return Status::ok();
  }
  if (x.rank() < 2) return ctx.error("input must have rank >= 2");
  Shape out(x.dims.begin(), x.dims.begin() + 2);
  out.resize(x.dims.size(), 1);
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

// ---- max_unpool ------------------------------------------------------------------------------

// Default output shape: (in - 1) * stride - pads + kernel per spatial dim.
Result<Shape> unpool_shape(const Op &op, const Shape &xd, const Tensor *oshape, bool has_oshape) {
  if (xd.size() < 3) return Status::error(op.describe() + ": input must have rank >= 3");
  const size_t r = xd.size() - 2;
  if (has_oshape) {
    if (!oshape) return dynamic_dims(static_cast<int64_t>(xd.size()));
    Shape s = oshape->to_i64s();
    if (s.size() != xd.size())
      return Status::error(fmt::format("{}: output_shape has {} values, expected {}",
                                       op.describe(), s.size(), xd.size()));
    for (int64_t d : s)
      if (d < 0) return Status::error(op.describe() + ": negative output_shape");
    return s;
  }
  std::vector<int64_t> k = op.attr_ints("kernel_shape");
  if (k.size() != r)
    return Status::error(fmt::format("{}: kernel_shape must have {} values", op.describe(), r));
  KILN_ASSIGN(auto st, nn::attr_list(op, "strides", r, 1, 1));
  KILN_ASSIGN(auto pads, nn::attr_list(op, "pads", 2 * r, 0, 0));
  Shape out{xd[0], xd[1]};
  for (size_t i = 0; i < r; ++i) {
    if (xd[i + 2] < 0) {
      out.push_back(kDynamic);
      continue;
    }
    // (x - 1) * stride - pads + kernel, checked: hostile attributes reach INT64_MAX.
    std::optional<int64_t> d = checked_mul(xd[i + 2] - 1, st[i]);
    if (d) d = checked_sub(*d, pads[i]);
    if (d) d = checked_sub(*d, pads[i + r]);
    if (d) d = checked_add(*d, k[i]);
    if (!d)
      return overflow_error(op, fmt::format("the output size of spatial dim {} (input {}, stride "
                                            "{}, pads {}, {}, kernel {})",
                                            i, xd[i + 2], st[i], pads[i], pads[i + r], k[i]));
    if (*d < 0)
      return Status::error(fmt::format("{}: negative output dim {}", op.describe(), *d));
    out.push_back(*d);
  }
  return out;
}

// Index j of the default unpooled shape `from` re-encoded in `to` (same coordinates); -1 when
// the coordinates fall outside `to`.
int64_t remap_index(int64_t j, const Shape &from, const Shape &to) {
  int64_t out = 0, mul = 1;
  for (int64_t d = static_cast<int64_t>(from.size()) - 1; d >= 0; --d) {
    const int64_t c = j % from[d];
    j /= from[d];
    if (c >= to[d]) return -1;
    out += c * mul;
    mul *= to[d];
  }
  return out;
}

Status eval_max_unpool(EvalCtx &ctx) {
  const Tensor &x = ctx.input(0), &idx = ctx.input(1);
  if (idx.shape() != x.shape()) return ctx.error("indices must have the input's shape");
  KILN_ASSIGN(Shape dflt, unpool_shape(ctx.op, x.shape(), nullptr, false));
  Shape out = dflt;
  if (ctx.present(2)) {
    KILN_ASSIGN(out, unpool_shape(ctx.op, x.shape(), &ctx.input(2), true));
  }
  KILN_ASSIGN(Tensor y, Tensor::allocate(x.dtype(), out));
  const int64_t n = shape_numel(dflt);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t j = idx.get_i64(i);
    if (j < 0 || j >= n)
      return ctx.error(fmt::format("index {} is out of range for an output of {} elements", j, n));
    if (out != dflt) j = remap_index(j, dflt, out);
    if (j < 0) return ctx.error("an index lies outside the requested output_shape");
    y.set_f64(j, x.get_f64(i));
  }
  ctx.out = {y};
  return Status::ok();
}

Status infer_max_unpool(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  KILN_TRY(expect_dtype_in(ctx.op, "indices", ctx.type(1).dtype, {DType::i64}));
  if (!x.ranked) {
    ctx.out = {x};
    return Status::ok();
  }
  KILN_ASSIGN(Shape out, unpool_shape(ctx.op, x.dims, const_operand(ctx, 2), ctx.present(2)));
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

} // namespace

void register_nn_pool_ops(OpRegistry &r) {
  for (const char *name : {"kiln.max_pool", "kiln.avg_pool", "kiln.lp_pool"})
    r.add(OpDef{
        .name = name,
        .min_operands = 1,
        .max_operands = 1,
        .min_results = 1,
        .max_results = std::string_view(name) == "kiln.max_pool" ? 2 : 1,
        .infer = infer_pool,
        .eval = eval_pool,
    });
  r.add(OpDef{
      .name = "kiln.global_pool",
      .min_operands = 1,
      .max_operands = 1,
      .infer = infer_global_pool,
      .eval = eval_global_pool,
  });
  r.add(OpDef{
      .name = "kiln.max_unpool",
      .min_operands = 2,
      .max_operands = 3,
      .infer = infer_max_unpool,
      .eval = eval_max_unpool,
  });
}

} // namespace kiln
