// kiln.resize: one invocation per output element. The taps (input indices and weights) of
// every output coordinate of each resampled axis are computed on the host, in double, exactly
// as the reference (src/ops/nn_resize.cpp) does, and bound as constant tables; the kernel sums
// the product of the axes' weights over the cartesian product of their taps.
#include "compiler/families/kernel_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::compiler::helpers {

using namespace kir;

namespace {

// A GridKernel that can also bind host-computed constant tables.
class TableKernel {
public:
  TableKernel(LowerCtx &c, const Op &op, std::string name) : c_(c), op_(op) {
    k_.name = std::move(name);
  }
  Result<BufferVar> in(const Value *v) {
    KILN_ASSIGN(ScalarType t, scalar_type(op_, v->type.dtype));
    return add(c_.buffer_of(v), t, true);
  }
  Result<BufferVar> out(const Value *v) {
    KILN_ASSIGN(ScalarType t, scalar_type(op_, v->type.dtype));
    return add(c_.define(v), t, false);
  }
  Result<BufferVar> table(Tensor t) {
    KILN_ASSIGN(ScalarType st, scalar_type(op_, t.dtype()));
    return add(c_.new_constant(std::move(t)), st, true);
  }
  std::string fresh(const std::string &prefix) { return fmt::format("{}{}", prefix, next_++); }

  // As GridKernel::finish.
  Status finish(int64_t count, const std::function<Result<Stmt>(Expr)> &body) {
    return dispatch_flat(c_, op_, k_, bufs_, count, fresh("i"), body);
  }

private:
  BufferVar add(int id, ScalarType t, bool readonly) {
    bufs_.push_back(id);
    return k_.add_buffer(fmt::format("b{}", bufs_.size() - 1), t, readonly, !readonly);
  }
  LowerCtx &c_;
  const Op &op_;
  Kernel k_;
  std::vector<int> bufs_;
  int next_ = 0;
};

struct Params {
  std::string mode, ct, nm;
  double a = -0.75, extrapolation = 0;
  bool exclude = false, antialias = false;
};

double cubic(double x, double A) {
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0.0;
}

// Source coordinate of output coordinate x (NaN / outside: `outside`).
double source(const Params &P, double x, double scale, int64_t in, int64_t out, double lo,
              double hi, bool &outside) {
  const double iw = static_cast<double>(in), ow = scale * iw;
  outside = false;
  if (P.ct == "align_corners") return ow == 1 ? 0.0 : x * (iw - 1) / (ow - 1);
  if (P.ct == "asymmetric") return x / scale;
  if (P.ct == "pytorch_half_pixel") return ow == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (P.ct == "half_pixel_symmetric")
    return iw / 2 * (1 - static_cast<double>(out) / ow) + (x + 0.5) / scale - 0.5;
  if (P.ct == "tf_crop_and_resize") {
    double v = ow == 1 ? (hi - lo) * (iw - 1) / 2 : x * (hi - lo) * (iw - 1) / (ow - 1);
    v += lo * (iw - 1);
    outside = v < 0 || v > iw - 1;
    return v;
  }
  return (x + 0.5) / scale - 0.5;
}

int64_t nearest(const std::string &nm, double x, double scale) {
  const double f = std::floor(x);
  if (x == f) return static_cast<int64_t>(f);
  const double frac = x - f;
  if (nm == "round_prefer_floor") return static_cast<int64_t>(frac <= 0.5 ? f : f + 1);
  if (nm == "round_prefer_ceil") return static_cast<int64_t>(frac < 0.5 ? f : f + 1);
  if (nm == "floor") return static_cast<int64_t>(f);
  if (nm == "ceil") return static_cast<int64_t>(f + 1);
  return static_cast<int64_t>(scale < 1 ? std::ceil(x) : std::trunc(x)); // simple
}

std::vector<double> weights(const Params &P, double ratio, double scale) {
  if (P.mode == "linear" && !P.antialias) return {1 - ratio, ratio};
  std::vector<double> c;
  if (P.mode == "cubic" && !P.antialias) {
    for (int k = -1; k <= 2; ++k) c.push_back(cubic(ratio - k, P.a));
    return c;
  }
  const double s = std::min(scale, 1.0);
  const double reach = P.mode == "linear" ? 1 : 2;
  const int64_t start = static_cast<int64_t>(std::floor(-reach / s) + 1);
  for (int64_t i = start; i < 2 - start; ++i) {
    const double d = static_cast<double>(i) - ratio;
    c.push_back(P.mode == "linear" ? std::clamp(1 - std::fabs(d * s), 0.0, 1.0) : cubic(s * d, P.a));
  }
  double sum = 0;
  for (double v : c) sum += v;
  if (sum != 0)
    for (double &v : c) v /= sum;
  return c;
}

// Taps of output coordinate o: indices (empty = outside) and weights.
void taps(const Params &P, int64_t o, double scale, int64_t in, int64_t out, double lo, double hi,
          std::vector<int64_t> &idx, std::vector<double> &w) {
  bool outside = false;
  double x = source(P, static_cast<double>(o), scale, in, out, lo, hi, outside);
  idx.clear();
  w.clear();
  if (outside || std::isnan(x)) return;
  x = std::clamp(x, -1e9, 1e9);
  if (P.mode == "nearest") {
    idx = {std::clamp<int64_t>(nearest(P.nm, x, scale), 0, in - 1)};
    w = {1.0};
    return;
  }
  const double c = std::ceil(x);
  w = weights(P, x - (c - 1), scale);
  const int64_t n = static_cast<int64_t>(w.size()), base = static_cast<int64_t>(c) - n / 2;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = base + k;
    if (P.exclude && (i < 0 || i >= in)) w[static_cast<size_t>(k)] = 0;
    sum += w[static_cast<size_t>(k)];
    idx.push_back(std::clamp<int64_t>(i, 0, in - 1));
  }
  if (P.exclude && sum != 0)
    for (double &v : w) v /= sum;
}

// Per-axis scale and roi from the constant operands (mirrors plan_resize of the reference).
Status plan(const Op &op, const Shape &in, const Shape &out, std::vector<double> &scale,
            std::vector<double> &lo, std::vector<double> &hi) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = op.attr_ints("axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t &a : axes) {
    KILN_ASSIGN(a, norm_axis(op, a, rank));
  }
  const size_t na = axes.size();
  scale.assign(in.size(), 1.0);
  lo.assign(in.size(), 0.0);
  hi.assign(in.size(), 1.0);
  auto present = [&](size_t k) -> const Tensor * {
    if (op.operands.size() <= k || !op.operands[k]) return nullptr;
    if (shape_numel(op.operands[k]->type.dims) == 0) return nullptr;
    return const_operand(op, k);
  };
  auto given = [&](size_t k) {
    return op.operands.size() > k && op.operands[k] && shape_numel(op.operands[k]->type.dims) > 0;
  };
  for (size_t k = 1; k <= 3; ++k)
    if (given(k) && !present(k)) return unsupported(op, "kiln.resize with non-constant roi/scales/sizes");
  const Tensor *roi = present(1), *scales = present(2), *sizes = present(3);
  if (roi) {
    if (static_cast<size_t>(roi->numel()) != 2 * na) return unsupported(op, "this roi");
    for (size_t i = 0; i < na; ++i) {
      lo[static_cast<size_t>(axes[i])] = roi->get_f64(static_cast<int64_t>(i));
      hi[static_cast<size_t>(axes[i])] = roi->get_f64(static_cast<int64_t>(i + na));
    }
  }
  if (scales && !sizes && static_cast<size_t>(scales->numel()) == na) {
    for (size_t i = 0; i < na; ++i) scale[static_cast<size_t>(axes[i])] = scales->get_f64(static_cast<int64_t>(i));
    return Status::ok();
  }
  if (!sizes || scales || static_cast<size_t>(sizes->numel()) != na)
    return unsupported(op, "this kiln.resize scales/sizes combination");
  for (int64_t a : axes) {
    if (in[static_cast<size_t>(a)] == 0) return unsupported(op, "resizing an empty axis");
  }
  for (size_t i = 0; i < na; ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    scale[a] = static_cast<double>(sizes->get_i64(static_cast<int64_t>(i))) / static_cast<double>(in[a]);
  }
  const std::string kp = op.attr_str("keep_aspect_ratio_policy", "stretch");
  if (kp != "stretch" && na > 0) {
    double sc = scale[static_cast<size_t>(axes[0])];
    for (int64_t a : axes)
      sc = kp == "not_larger" ? std::min(sc, scale[static_cast<size_t>(a)])
                              : std::max(sc, scale[static_cast<size_t>(a)]);
    for (int64_t a : axes) scale[static_cast<size_t>(a)] = sc;
  }
  (void)out;
  return Status::ok();
}

struct AxisTable {
  int64_t axis = 0, ntap = 0, offset = 0; // taps of coordinate o at offset + o * ntap
};

Status lower_resize(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  Params P{op.attr_str("mode", "nearest"),
           op.attr_str("coordinate_transformation_mode", "half_pixel"),
           op.attr_str("nearest_mode", "round_prefer_floor"),
           op.attr_float("cubic_coeff_a", -0.75),
           op.attr_float("extrapolation_value", 0.0),
           op.attr_int("exclude_outside", 0) != 0,
           op.attr_int("antialias", 0) != 0};
  const DType dt = xv->type.dtype;
  if (!is_float(dt) && dt != DType::i8 && dt != DType::u8 && dt != DType::i16 &&
      dt != DType::u16 && dt != DType::i32)
    return unsupported(op, fmt::format("kiln.resize on {}", dtype_name(dt)));
  std::vector<double> scale, lo, hi;
  KILN_TRY(plan(op, xd, yd, scale, lo, hi));
  if (shape_numel(yd) > 0 && shape_numel(xd) == 0)
    return Status::error(op.describe() + ": cannot resize an empty tensor to a non-empty one");
  // Host taps of every resampled axis.
  std::vector<AxisTable> axes;
  std::vector<int32_t> idx_tab;
  std::vector<double> w_tab;
  std::vector<int64_t> ti;
  std::vector<double> tw;
  for (size_t a = 0; a < xd.size(); ++a) {
    if (scale[a] == 1.0 && yd[a] == xd[a] && P.ct != "tf_crop_and_resize") continue;
    AxisTable t{static_cast<int64_t>(a), 0, static_cast<int64_t>(idx_tab.size())};
    for (int64_t o = 0; o < yd[a]; ++o) {
      taps(P, o, scale[a], xd[a], yd[a], lo[a], hi[a], ti, tw);
      if (t.ntap == 0) t.ntap = std::max<int64_t>(1, static_cast<int64_t>(tw.size()));
      if (!ti.empty() && static_cast<int64_t>(ti.size()) != t.ntap)
        return Status::error(op.describe() + ": internal error: varying tap counts");
      for (int64_t k = 0; k < t.ntap; ++k) {
        const bool out = ti.empty(); // outside: index -1 in every tap
        idx_tab.push_back(out ? -1 : static_cast<int32_t>(ti[static_cast<size_t>(k)]));
        w_tab.push_back(out ? 0.0 : tw[static_cast<size_t>(k)]);
      }
    }
    axes.push_back(t);
  }
  TableKernel g(c, op, "resize_" + P.mode);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = dt == DType::f64 ? ScalarType::f64 : ScalarType::f32;
  BufferVar I{-1, ScalarType::i32}, W{-1, at};
  if (!axes.empty()) {
    Tensor it(DType::i32, {static_cast<int64_t>(idx_tab.size())});
    std::copy(idx_tab.begin(), idx_tab.end(), it.data_mut<int32_t>());
    Tensor wt(at == ScalarType::f64 ? DType::f64 : DType::f32, {static_cast<int64_t>(w_tab.size())});
    for (size_t k = 0; k < w_tab.size(); ++k) {
      if (at == ScalarType::f64) wt.data_mut<double>()[k] = w_tab[k];
      else wt.data_mut<float>()[k] = static_cast<float>(w_tab[k]);
    }
    KILN_ASSIGN(I, g.table(std::move(it)));
    KILN_ASSIGN(W, g.table(std::move(wt)));
  }
  const auto xst = shape_strides(xd);
  const ScalarType ye = Y.elem;
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    std::vector<Expr> cs = unflatten(i, yd);
    std::vector<std::pair<Expr, Expr>> lets;
    for (Expr &e : cs) {
      if (e.as<IntImm>()) continue;
      Expr v = var(g.fresh("c"), ScalarType::i32);
      lets.emplace_back(v, e);
      e = v;
    }
    Expr acc = var(g.fresh("acc"), at);
    // Input offset of the unresampled axes.
    Expr off = i32(0);
    std::vector<bool> resampled(xd.size(), false);
    for (const AxisTable &t : axes) resampled[static_cast<size_t>(t.axis)] = true;
    for (size_t a = 0; a < xd.size(); ++a)
      if (!resampled[a] && xd[a] != 1) off = off + cs[a] * xst[a];
    Expr outside, wt;
    std::vector<Expr> ks;
    for (const AxisTable &t : axes) {
      Expr row = cs[static_cast<size_t>(t.axis)] * t.ntap + t.offset;
      outside = outside.defined() ? logical_or(outside, load(I, row) < 0) : load(I, row) < 0;
      Expr k = t.ntap == 1 ? i32(0) : var(g.fresh("k"), ScalarType::i32);
      ks.push_back(k);
      Expr tap = max(load(I, row + k), i32(0)); // -1 only when outside (not reached)
      off = off + tap * xst[static_cast<size_t>(t.axis)];
      Expr w = load(W, row + k);
      wt = wt.defined() ? wt * w : w;
    }
    Expr v = cast(at, load(X, off));
    Stmt body = assign(acc, acc + (wt.defined() ? wt * v : v));
    for (size_t j = axes.size(); j-- > 0;)
      if (axes[j].ntap != 1) body = for_loop(ks[j], i32(0), i32(axes[j].ntap), body);
    Expr res = acc;
    if (outside.defined()) res = select(outside, make_const(at, P.extrapolation), acc);
    Expr yv = is_float(ye) ? cast(ye, res) : round_saturate(res, ye);
    Stmt s = block({declare_var(acc, make_const(at, 0)), body, store(Y, i, yv)});
    for (size_t j = lets.size(); j-- > 0;) s = let(lets[j].first, lets[j].second, s);
    return s;
  });
}

} // namespace

} // namespace kiln::compiler::helpers

namespace kiln::compiler {

void add_resize_lowerings(LoweringTable &t) { t["kiln.resize"] = helpers::lower_resize; }

} // namespace kiln::compiler
