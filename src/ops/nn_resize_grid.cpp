// Grid-based resampling: kiln.grid_sample and kiln.affine_grid.
//
// kiln.grid_sample(x [N,C,D1..Dr], grid [N,H1..Hr,r]) -> [N,C,H1..Hr]
//   mode: "linear" | "nearest" | "cubic"; padding_mode: "zeros" | "border" | "reflection";
//   align_corners (0/1). grid[..., 0] indexes the last spatial axis (x), grid[..., 1] the one
//   before it (y), and so on. Computed in double.
// kiln.affine_grid(theta [N,r,r+1], size i64 [N,C,D1..Dr] (r = 2 or 3)) -> [N,D1..Dr,r]
//   align_corners (0/1).
#include "ops/nn_extra_internal.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

// ---- grid_sample --------------------------------------------------------------------------

Status verify_grid_sample(const Op &op) {
  const std::string mode = op.attr_str("mode", "linear");
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    return Status::error(fmt::format("{}: unsupported mode '{}'", op.describe(), mode));
  const std::string pm = op.attr_str("padding_mode", "zeros");
  if (pm != "zeros" && pm != "border" && pm != "reflection")
    return Status::error(fmt::format("{}: unsupported padding_mode '{}'", op.describe(), pm));
  return Status::ok();
}

Status infer_grid_sample(InferCtx &ctx) {
  const TensorType &x = ctx.type(0), &g = ctx.type(1);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  KILN_TRY(expect_float(ctx.op, "grid", g.dtype));
  if (!x.ranked || !g.ranked) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  if (x.rank() < 3 || g.rank() != x.rank())
    return ctx.error(fmt::format("input {} and grid {} ranks do not match", x.str(), g.str()));
  const int64_t r = x.rank() - 2;
  if (g.dims.back() >= 0 && g.dims.back() != r)
    return ctx.error(fmt::format("grid's last dim must be {}, got {}", r, g.dims.back()));
  Shape out = {x.dims[0], x.dims[1]};
  if (out[0] < 0) out[0] = g.dims[0];
  for (int64_t i = 1; i <= r; ++i) out.push_back(g.dims[static_cast<size_t>(i)]);
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

struct GridParams {
  std::string mode, pm;
  bool align = false;
  std::vector<int64_t> dims;            // spatial dims of x
  std::vector<double> lo, hi;           // reflection borders
};

double reflect(double x, double lo, double hi) {
  const double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / rng);
    const double r = dx - static_cast<double>(n) * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

// Index along spatial axis d after padding; -1 for a zero (outside with padding "zeros").
int64_t pixel_index(const GridParams &P, size_t d, int64_t i) {
  const int64_t n = P.dims[d];
  if (P.pm == "zeros") return i >= 0 && i < n ? i : -1;
  if (P.pm == "border") return std::clamp<int64_t>(i, 0, n - 1);
  int64_t k = static_cast<int64_t>(reflect(static_cast<double>(i), P.lo[d], P.hi[d]));
  return std::clamp<int64_t>(k, 0, n - 1);
}

void cubic_coeffs(double t, double *c) {
  const double A = -0.75;
  auto k = [&](double x) {
    x = std::fabs(x);
    if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
  };
  c[0] = k(t + 1);
  c[1] = k(t);
  c[2] = k(1 - t);
  c[3] = k(2 - t);
}

// Samples one point: coords x[d] (denormalised, axis order of x's spatial dims).
double sample_point(const GridParams &P, const double *plane, const std::vector<int64_t> &strides,
                    std::vector<double> &x) {
  const size_t r = P.dims.size();
  for (size_t d = 0; d < r; ++d) {
    if (std::isnan(x[d])) return x[d];
    x[d] = clamp_coord(x[d]);
    if (P.mode == "nearest") x[d] = std::nearbyint(x[d]);
    if (x[d] < P.lo[d] || x[d] > P.hi[d]) {
      if (P.pm == "border") x[d] = std::clamp(x[d], 0.0, static_cast<double>(P.dims[d] - 1));
      else if (P.pm == "reflection") x[d] = reflect(x[d], P.lo[d], P.hi[d]);
    }
  }
  const int ntap = P.mode == "nearest" ? 1 : P.mode == "linear" ? 2 : 4;
  std::vector<std::vector<int64_t>> idx(r);
  std::vector<std::vector<double>> w(r);
  for (size_t d = 0; d < r; ++d) {
    if (ntap == 1) {
      idx[d] = {pixel_index(P, d, static_cast<int64_t>(x[d]))};
      w[d] = {1.0};
      continue;
    }
    const double f = std::floor(x[d]);
    const double t = x[d] - f;
    const int64_t i0 = static_cast<int64_t>(f);
    if (ntap == 2) {
      idx[d] = {pixel_index(P, d, i0), pixel_index(P, d, i0 + 1)};
      w[d] = {1 - t, t};
    } else {
      double c[4];
      cubic_coeffs(t, c);
      for (int k = 0; k < 4; ++k) {
        idx[d].push_back(pixel_index(P, d, i0 - 1 + k));
        w[d].push_back(c[k]);
      }
    }
  }
  // Sum over the cartesian product of taps.
  double sum = 0;
  std::vector<int> k(r, 0);
  while (true) {
    double wt = 1;
    int64_t off = 0;
    bool zero = false;
    for (size_t d = 0; d < r; ++d) {
      const int64_t i = idx[d][static_cast<size_t>(k[d])];
      if (i < 0) zero = true;
      off += i * strides[d];
      wt *= w[d][static_cast<size_t>(k[d])];
    }
    if (!zero && wt != 0) sum += wt * plane[off];
    size_t d = r;
    while (d > 0) {
      --d;
      if (++k[d] < ntap) break;
      k[d] = 0;
      if (d == 0) return sum;
    }
  }
}

Status eval_grid_sample(EvalCtx &ctx) {
  const Tensor &X = ctx.input(0), &G = ctx.input(1);
  const int64_t rank = X.rank();
  if (rank < 3 || G.rank() != rank || G.shape().back() != rank - 2 || G.shape()[0] != X.shape()[0])
    return ctx.error(fmt::format("input [{}] and grid [{}] do not match", shape_str(X.shape()),
                                 shape_str(G.shape())));
  GridParams P;
  P.mode = ctx.op.attr_str("mode", "linear");
  P.pm = ctx.op.attr_str("padding_mode", "zeros");
  P.align = ctx.op.attr_int("align_corners", 0) != 0;
  const size_t r = static_cast<size_t>(rank - 2);
  P.dims.assign(X.shape().begin() + 2, X.shape().end());
  for (size_t d = 0; d < r; ++d) {
    const double n = static_cast<double>(P.dims[d]);
    P.lo.push_back(P.align ? 0.0 : -0.5);
    P.hi.push_back(P.align ? n - 1 : n - 0.5);
  }
  const int64_t N = X.shape()[0], C = X.shape()[1];
  Shape out_shape = {N, C};
  for (size_t d = 1; d <= r; ++d) out_shape.push_back(G.shape()[d]);
  KILN_ASSIGN(Tensor Y, Tensor::allocate(X.dtype(), out_shape));
  int64_t npts = 1;
  for (size_t d = 1; d <= r; ++d) npts *= G.shape()[d];
  int64_t plane = 1;
  for (int64_t v : P.dims) plane *= v;
  if (plane == 0 && Y.numel() > 0) return ctx.error("cannot sample from an empty input");
  const std::vector<double> xd = X.to_f64s();
  const std::vector<int64_t> strides = shape_strides(P.dims);
  std::vector<double> coord(r);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t p = 0; p < npts; ++p) {
      const int64_t gbase = (n * npts + p) * static_cast<int64_t>(r);
      std::vector<double> base(r);
      for (size_t d = 0; d < r; ++d) {
        // grid component j indexes spatial axis r-1-j
        const double g = G.get_f64(gbase + static_cast<int64_t>(r - 1 - d));
        const double len = static_cast<double>(P.dims[d]);
        base[d] = P.align ? (g + 1) / 2 * (len - 1) : ((g + 1) * len - 1) / 2;
      }
      for (int64_t c = 0; c < C; ++c) {
        coord = base;
        const double *pl = xd.data() + (n * C + c) * plane;
        Y.set_f64((n * C + c) * npts + p, sample_point(P, pl, strides, coord));
      }
    }
  }
  ctx.out = {Y};
  return Status::ok();
}

// ---- affine_grid --------------------------------------------------------------------------

Status infer_affine_grid(InferCtx &ctx) {
  const TensorType &th = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "theta", th.dtype));
  const Tensor *size = const_operand(ctx, 1);
  if (size) {
    if (size->rank() != 1 || (size->numel() != 4 && size->numel() != 5))
      return ctx.error("size must be a 1-D tensor of 4 or 5 values");
    std::vector<int64_t> s = size->to_i64s();
    for (int64_t d : s)
      if (d < 0) return ctx.error(fmt::format("size has a negative value {}", d));
    Shape out = {s[0]};
    out.insert(out.end(), s.begin() + 2, s.end());
    out.push_back(static_cast<int64_t>(s.size()) - 2);
    ctx.out = {TensorType{th.dtype, out, true}};
    return Status::ok();
  }
  const TensorType &st = ctx.type(1);
  if (!st.ranked || st.rank() != 1 || st.dims[0] < 0) {
    ctx.out = {TensorType{th.dtype, {}, false}};
    return Status::ok();
  }
  if (st.dims[0] != 4 && st.dims[0] != 5)
    return ctx.error("size must be a 1-D tensor of 4 or 5 values");
  const int64_t r = st.dims[0] - 2;
  Shape out = dynamic_dims(r + 2);
  out.back() = r;
  ctx.out = {TensorType{th.dtype, out, true}};
  return Status::ok();
}

Status eval_affine_grid(EvalCtx &ctx) {
  const Tensor &th = ctx.input(0);
  const std::vector<int64_t> s = ctx.input(1).to_i64s();
  if (s.size() != 4 && s.size() != 5) return ctx.error("size must have 4 or 5 values");
  const int64_t r = static_cast<int64_t>(s.size()) - 2;
  const int64_t N = s[0];
  if (th.rank() != 3 || th.shape()[0] != N || th.shape()[1] != r || th.shape()[2] != r + 1)
    return ctx.error(fmt::format("theta [{}] does not match size (expected [{}x{}x{}])",
                                 shape_str(th.shape()), N, r, r + 1));
  for (int64_t v : s)
    if (v < 0) return ctx.error("size has a negative value");
  const bool align = ctx.op.attr_int("align_corners", 0) != 0;
  Shape out_shape = {N};
  out_shape.insert(out_shape.end(), s.begin() + 2, s.end());
  out_shape.push_back(r);
  KILN_ASSIGN(Tensor Y, Tensor::allocate(th.dtype(), out_shape));
  const Shape sp(s.begin() + 2, s.end());
  const int64_t npts = shape_numel(sp);
  const std::vector<int64_t> strides = shape_strides(sp);
  auto lin = [&](int64_t i, int64_t len) {
    if (align) return len == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(len - 1);
    return (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(len) - 1.0;
  };
  std::vector<double> base(static_cast<size_t>(r + 1));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t p = 0; p < npts; ++p) {
      // base = (x over the last axis, y, [z], 1)
      for (int64_t d = 0; d < r; ++d) {
        const size_t axis = static_cast<size_t>(r - 1 - d);
        const int64_t i = (p / strides[axis]) % sp[axis];
        base[static_cast<size_t>(d)] = lin(i, sp[axis]);
      }
      base[static_cast<size_t>(r)] = 1.0;
      for (int64_t j = 0; j < r; ++j) {
        double acc = 0;
        for (int64_t k = 0; k <= r; ++k)
          acc += th.get_f64((n * r + j) * (r + 1) + k) * base[static_cast<size_t>(k)];
        Y.set_f64((n * npts + p) * r + j, acc);
      }
    }
  }
  ctx.out = {Y};
  return Status::ok();
}

} // namespace

void register_nn_grid_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.grid_sample",
      .min_operands = 2,
      .max_operands = 2,
      .min_results = 1,
      .max_results = 1,
      .verify = verify_grid_sample,
      .infer = infer_grid_sample,
      .eval = eval_grid_sample,
  });
  r.add(OpDef{
      .name = "kiln.affine_grid",
      .min_operands = 2,
      .max_operands = 2,
      .min_results = 1,
      .max_results = 1,
      .verify = nullptr,
      .infer = infer_affine_grid,
      .eval = eval_affine_grid,
  });
}

} // namespace kiln
