// Sampling ops: kiln.grid_sample, kiln.affine_grid and kiln.roi_align (one invocation per
// output element), and the kernel-building helpers of kernel_helpers.h shared with
// conv_transpose.cpp, quantize.cpp and resize.cpp.
#include "compiler/families/kernel_helpers.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::compiler {

using namespace kir;

namespace helpers {

Expr def(GridKernel &g, std::vector<Stmt> &s, const std::string &prefix, const Expr &value) {
  Expr v = var(g.fresh(prefix), value.type());
  s.push_back(declare_var(v, value));
  return v;
}

Expr conj(const Expr &a, const Expr &b) { return a.defined() ? logical_and(a, b) : b; }

Expr clamp(const Expr &x, const Expr &lo, const Expr &hi) { return min(max(x, lo), hi); }

ScalarType float_acc(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }

Expr round_saturate(const Expr &v, ScalarType to) {
  int64_t lo = 0, hi = 0;
  switch (to) {
  case ScalarType::i8: lo = -128, hi = 127; break;
  case ScalarType::u8: hi = 255; break;
  case ScalarType::i16: lo = -32768, hi = 32767; break;
  case ScalarType::u16: hi = 65535; break;
  case ScalarType::i32: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); break;
  case ScalarType::u32: hi = std::numeric_limits<uint32_t>::max(); break;
  default: KILN_ASSERT(false, "round_saturate: not a 8/16/32-bit integer type");
  }
  const ScalarType ft = v.type();
  Expr r = call(Intrinsic::round_even, {v});
  // Casts to narrow types go through i32 (no 8/16-bit conversion instructions needed).
  const ScalarType via = bits(to) < 32 ? ScalarType::i32 : to;
  Expr conv = cast(to, cast(via, r));
  Expr sat = select(r <= make_const(ft, static_cast<double>(lo)), imm(to, lo),
                    select(r >= make_const(ft, static_cast<double>(hi)), imm(to, hi), conv));
  return select(call(Intrinsic::isnan, {v}), imm(to, 0), sat);
}

Result<ConvBuffers> bind_conv_buffers(GridKernel &g, const Op &op, bool weights) {
  ConvBuffers b;
  KILN_ASSIGN(b.X, g.in(op.operands[0]));
  b.W = BufferVar{-1, b.X.elem};
  if (weights) {
    KILN_ASSIGN(b.W, g.in(op.operands[1]));
  }
  b.B = BufferVar{-1, b.X.elem};
  if (op.operands.size() > 2) {
    KILN_ASSIGN(b.B, g.in(op.operands[2]));
  }
  KILN_ASSIGN(b.Y, g.out(op.results[0]));
  return b;
}

} // namespace helpers

namespace {

using helpers::clamp;
using helpers::conj;
using helpers::def;

// ---- grid_sample -------------------------------------------------------------------------------

struct GridGeom {
  std::string mode, pm;
  bool align = false;
  Shape dims; // spatial dims of x
};

Expr fk(ScalarType t, double v) { return make_const(t, v); }

// Reflects x into [lo, hi] (the reference's reflect(); x is bounded).
Expr reflect(const Expr &x, double lo, double hi) {
  const ScalarType t = x.type();
  const double rng = hi - lo;
  if (rng <= 0) return fk(t, lo);
  // dx = distance beyond the border; an even number of folds lands near that border.
  auto fold = [&](const Expr &dx, const Expr &near_side, const Expr &far_side, bool below) {
    Expr n = call(Intrinsic::trunc, {dx / fk(t, rng)});
    Expr r = dx - n * fk(t, rng);
    Expr even = n % fk(t, 2) == fk(t, 0);
    return select(even, near_side + (below ? r : -r), far_side + (below ? -r : r));
  };
  Expr under = fold(fk(t, lo) - x, fk(t, lo), fk(t, hi), true);
  Expr over = fold(x - fk(t, hi), fk(t, hi), fk(t, lo), false);
  return select(x < fk(t, lo), under, select(x > fk(t, hi), over, x));
}

// Keys cubic convolution kernel (A = -0.75) at |x|.
Expr cubic_weight(const Expr &x0, double A) {
  const ScalarType t = x0.type();
  Expr x = call(Intrinsic::abs, {x0});
  Expr near = ((fk(t, A + 2) * x - fk(t, A + 3)) * x * x) + fk(t, 1);
  Expr far = ((fk(t, A) * x - fk(t, 5 * A)) * x + fk(t, 8 * A)) * x - fk(t, 4 * A);
  return select(x <= fk(t, 1), near, select(x < fk(t, 2), far, fk(t, 0)));
}

Status lower_grid_sample(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *gv = op.operands[1];
  const Shape &xd = xv->type.dims, &gd = gv->type.dims, &yd = op.results[0]->type.dims;
  GridGeom P{op.attr_str("mode", "linear"), op.attr_str("padding_mode", "zeros"),
             op.attr_int("align_corners", 0) != 0, {}};
  if (!is_float(xv->type.dtype) || !is_float(gv->type.dtype))
    return unsupported(op, "kiln.grid_sample on integers");
  if (P.mode != "linear" && P.mode != "nearest" && P.mode != "cubic")
    return unsupported(op, "kiln.grid_sample mode " + P.mode);
  if (P.pm != "zeros" && P.pm != "border" && P.pm != "reflection")
    return unsupported(op, "kiln.grid_sample padding_mode " + P.pm);
  const int64_t r = static_cast<int64_t>(xd.size()) - 2;
  if (r < 1 || gd.size() != xd.size() || gd.back() != r || gd[0] != xd[0])
    return unsupported(op, "this kiln.grid_sample shape");
  P.dims.assign(xd.begin() + 2, xd.end());
  const int64_t plane = shape_numel(P.dims), C = xd[1];
  const int64_t npts = shape_numel(Shape(gd.begin() + 1, gd.end() - 1));
  if (plane == 0 && shape_numel(yd) > 0)
    return Status::error(op.describe() + ": cannot sample from an empty input");
  const auto st = shape_strides(P.dims);
  GridKernel g(c, op, "grid_sample_" + P.mode);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar G, g.in(gv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at =
      X.elem == ScalarType::f64 || G.elem == ScalarType::f64 ? ScalarType::f64 : ScalarType::f32;
  const int ntap = P.mode == "nearest" ? 1 : P.mode == "linear" ? 2 : 4;
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    std::vector<Stmt> s;
    Expr p = def(g, s, "p", i % npts);
    Expr nc = def(g, s, "nc", i / npts);
    Expr gbase = def(g, s, "gb", ((nc / C) * npts + p) * r);
    Expr isnan_any;
    std::vector<Expr> i0(r), frac(r);
    for (int64_t d = 0; d < r; ++d) {
      const double len = static_cast<double>(P.dims[d]);
      const double lo = P.align ? 0.0 : -0.5, hi = P.align ? len - 1 : len - 0.5;
      Expr gc = cast(at, load(G, gbase + (r - 1 - d)));
      Expr x0 = P.align ? (gc + fk(at, 1)) / fk(at, 2) * fk(at, len - 1)
                        : ((gc + fk(at, 1)) * fk(at, len) - fk(at, 1)) / fk(at, 2);
      Expr x = def(g, s, "x", x0);
      isnan_any = isnan_any.defined() ? logical_or(isnan_any, call(Intrinsic::isnan, {x}))
                                      : call(Intrinsic::isnan, {x});
      // NaN coordinates give a NaN result below; sample at 0 meanwhile (no wild index).
      s.push_back(assign(x, select(call(Intrinsic::isnan, {x}), fk(at, 0),
                                   clamp(x, fk(at, -1e12), fk(at, 1e12)))));
      if (P.mode == "nearest") s.push_back(assign(x, call(Intrinsic::round_even, {x})));
      if (P.pm == "border")
        s.push_back(assign(x, select(logical_or(x < fk(at, lo), x > fk(at, hi)),
                                     clamp(x, fk(at, 0), fk(at, len - 1)), x)));
      else if (P.pm == "reflection")
        s.push_back(assign(x, reflect(x, lo, hi)));
      // Far outside (padding "zeros") every tap is outside: bound x so the i32 cast is defined.
      s.push_back(assign(x, clamp(x, fk(at, -3), fk(at, len + 2))));
      Expr f = ntap == 1 ? x : call(Intrinsic::floor, {x});
      i0[d] = def(g, s, "tap", cast(ScalarType::i32, f));
      if (ntap > 1) frac[d] = def(g, s, "t", x - f);
    }
    Expr acc = def(g, s, "acc", fk(at, 0));
    // Nested loops over the taps of each axis.
    std::vector<Expr> ks(r);
    Expr inside, wt, off = i32(0);
    std::vector<Stmt> lets;
    for (int64_t d = 0; d < r; ++d) {
      const int64_t n = P.dims[d];
      ks[d] = ntap == 1 ? i32(0) : var(g.fresh("k"), ScalarType::i32);
      Expr idx = i0[d] + ks[d] - (ntap == 4 ? 1 : 0);
      Expr w;
      if (ntap == 2) w = select(ks[d] == 0, fk(at, 1) - frac[d], frac[d]);
      if (ntap == 4) w = cubic_weight(frac[d] + fk(at, 1) - cast(at, ks[d]), -0.75);
      if (P.pm == "zeros") {
        inside = conj(inside, logical_and(idx >= 0, idx < n));
      } else if (P.pm == "border") {
        idx = clamp(idx, i32(0), i32(n - 1));
      } else {
        const double lo = P.align ? 0.0 : -0.5, hi = P.align ? n - 1.0 : n - 0.5;
        idx = clamp(cast(ScalarType::i32, reflect(cast(at, idx), lo, hi)), i32(0), i32(n - 1));
      }
      off = off + idx * st[d];
      if (w.defined()) wt = wt.defined() ? wt * w : w;
    }
    Expr v = cast(at, load(X, nc * plane + off));
    Stmt body = assign(acc, acc + (wt.defined() ? wt * v : v));
    if (inside.defined()) body = if_then(inside, body);
    for (int64_t d = r - 1; d >= 0; --d)
      if (ntap > 1) body = for_loop(ks[d], i32(0), i32(ntap), body);
    s.push_back(body);
    Expr res = select(isnan_any, fk(at, std::nan("")), acc);
    s.push_back(store(Y, i, cast(Y.elem, res)));
    return block(s);
  });
}

// ---- affine_grid -------------------------------------------------------------------------------

Status lower_affine_grid(LowerCtx &c, const Op &op) {
  const Value *tv = op.operands[0];
  const Shape &yd = op.results[0]->type.dims;
  if (!is_float(tv->type.dtype)) return unsupported(op, "kiln.affine_grid on integers");
  const int64_t r = static_cast<int64_t>(yd.size()) - 2;
  const Shape &td = tv->type.dims;
  if (r < 1 || yd.back() != r || td.size() != 3 || td[0] != yd[0] || td[1] != r || td[2] != r + 1)
    return unsupported(op, "this kiln.affine_grid shape");
  const Shape sp(yd.begin() + 1, yd.end() - 1);
  const int64_t npts = shape_numel(sp);
  const auto st = shape_strides(sp);
  const bool align = op.attr_int("align_corners", 0) != 0;
  GridKernel g(c, op, "affine_grid");
  KILN_ASSIGN(BufferVar T, g.in(tv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = helpers::float_acc(T.elem);
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    std::vector<Stmt> s;
    Expr j = def(g, s, "j", i % r);
    Expr p = def(g, s, "p", (i / r) % npts);
    Expr row = def(g, s, "row", ((i / r) / npts * r + j) * (r + 1));
    Expr acc = def(g, s, "acc", cast(at, load(T, row + r)));
    for (int64_t d = 0; d < r; ++d) {
      const size_t axis = static_cast<size_t>(r - 1 - d);
      const int64_t len = sp[axis];
      Expr idx = cast(at, (p / st[axis]) % len);
      Expr b = align ? (len == 1 ? fk(at, -1)
                                 : fk(at, -1) + fk(at, 2) * idx / fk(at, static_cast<double>(len - 1)))
                     : (fk(at, 2) * idx + fk(at, 1)) / fk(at, static_cast<double>(len)) - fk(at, 1);
      s.push_back(assign(acc, acc + cast(at, load(T, row + d)) * b));
    }
    s.push_back(store(Y, i, cast(Y.elem, acc)));
    return block(s);
  });
}


// ---- roi_align ---------------------------------------------------------------------------------

// One invocation per output element (roi, channel, bin); the sampling grid of a bin depends on
// the roi, so its loops have data-dependent extents. Out-of-range batch indices (an error in
// the reference) are clamped, and adaptive grids are capped at 1024 x 1024 samples per bin
// (the reference refuses more than 2^24).
Status lower_roi_align(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *rv = op.operands[1], *bv = op.operands[2];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  const std::string mode = op.attr_str("mode", "avg");
  if (mode != "avg" && mode != "max") return unsupported(op, "kiln.roi_align mode " + mode);
  if (!is_float(xv->type.dtype) || !is_float(rv->type.dtype))
    return unsupported(op, "kiln.roi_align on integers");
  if (xd.size() != 4 || rv->type.dims.size() != 2 || rv->type.dims[1] != 4 || yd.size() != 4)
    return unsupported(op, "this kiln.roi_align shape");
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], oh = yd[2], ow = yd[3];
  const int64_t sr = op.attr_int("sampling_ratio", 0);
  const double ss = op.attr_float("spatial_scale", 1.0);
  const bool half = op.attr_int("half_pixel", 1) != 0, is_max = mode == "max";
  GridKernel g(c, op, "roi_align_" + mode);
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar R, g.in(rv));
  KILN_ASSIGN(BufferVar B, g.in(bv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at =
      X.elem == ScalarType::f64 || R.elem == ScalarType::f64 ? ScalarType::f64 : ScalarType::f32;
  const ScalarType i = ScalarType::i32;
  return g.finish(shape_numel(yd), [&](Expr e) -> Result<Stmt> {
    std::vector<Stmt> s;
    Expr pw = def(g, s, "pw", e % ow), ph = def(g, s, "ph", (e / ow) % oh);
    Expr ch = def(g, s, "ch", (e / (ow * oh)) % C), r = def(g, s, "r", e / (ow * oh * C));
    Expr b = def(g, s, "b", clamp(cast(i, load(B, r)), i32(0), i32(N - 1)));
    auto roi = [&](int k) { return cast(at, load(R, r * 4 + k)) * fk(at, ss) - fk(at, half ? 0.5 : 0); };
    Expr x1 = def(g, s, "rx", roi(0)), y1 = def(g, s, "ry", roi(1));
    Expr rw = roi(2) - x1, rh = roi(3) - y1;
    if (!half) {
      rw = max(rw, fk(at, 1));
      rh = max(rh, fk(at, 1));
    }
    Expr bh = def(g, s, "bh", rh / fk(at, static_cast<double>(oh)));
    Expr bw = def(g, s, "bw", rw / fk(at, static_cast<double>(ow)));
    auto grid = [&](const Expr &bin) {
      if (sr > 0) return i32(sr);
      return clamp(cast(i, call(Intrinsic::ceil, {clamp(bin, fk(at, 0), fk(at, 1024))})), i32(0),
                   i32(1024));
    };
    Expr gh = def(g, s, "gh", grid(bh)), gw = def(g, s, "gw", grid(bw));
    Expr acc = def(g, s, "acc", fk(at, 0));
    Expr first = def(g, s, "first", imm_bool(true));
    Expr plane = def(g, s, "plane", (b * C + ch) * (H * W));
    Expr iy = var(g.fresh("iy"), i), ix = var(g.fresh("ix"), i);
    std::vector<Stmt> in;
    Expr y = def(g, in, "y", y1 + cast(at, ph) * bh + (cast(at, iy) + fk(at, 0.5)) * bh / cast(at, gh));
    Expr x = def(g, in, "x", x1 + cast(at, pw) * bw + (cast(at, ix) + fk(at, 0.5)) * bw / cast(at, gw));
    Expr skip = logical_or(logical_or(y < fk(at, -1), y > fk(at, static_cast<double>(H))),
                           logical_or(x < fk(at, -1), x > fk(at, static_cast<double>(W))));
    // Bilinear corners (all weights 0 when skipped, as the reference).
    std::vector<Stmt> smp;
    Expr yc = def(g, smp, "yc", clamp(y, fk(at, 0), fk(at, static_cast<double>(H))));
    Expr xc = def(g, smp, "xc", clamp(x, fk(at, 0), fk(at, static_cast<double>(W))));
    Expr yl0 = cast(i, yc), xl0 = cast(i, xc);
    Expr ytop = yl0 >= H - 1, xtop = xl0 >= W - 1;
    Expr yl = def(g, smp, "yl", select(ytop, i32(H - 1), yl0));
    Expr xl = def(g, smp, "xl", select(xtop, i32(W - 1), xl0));
    Expr yh = select(ytop, i32(H - 1), yl + 1), xh = select(xtop, i32(W - 1), xl + 1);
    Expr ly = def(g, smp, "ly", select(ytop, fk(at, 0), yc - cast(at, yl)));
    Expr lx = def(g, smp, "lx", select(xtop, fk(at, 0), xc - cast(at, xl)));
    Expr hy = fk(at, 1) - ly, hx = fk(at, 1) - lx;
    auto px = [&](const Expr &yy, const Expr &xx) { return cast(at, load(X, plane + yy * W + xx)); };
    std::vector<Expr> terms = {hy * hx * px(yl, xl), hy * lx * px(yl, xh), ly * hx * px(yh, xl),
                               ly * lx * px(yh, xh)};
    Expr zero = fk(at, 0);
    if (is_max) {
      Expr v = terms[0];
      for (int k = 1; k < 4; ++k) v = max(v, terms[k]);
      Expr val = def(g, smp, "v", v);
      Expr upd = select(first, val, max(acc, val));
      smp.push_back(assign(acc, upd));
      smp.push_back(assign(first, imm_bool(false)));
      // A skipped sample has value 0 (every weight is 0).
      in.push_back(if_then(skip,
                           block({assign(acc, select(first, zero, max(acc, zero))),
                                  assign(first, imm_bool(false))}),
                           block(smp)));
    } else {
      smp.push_back(assign(acc, acc + terms[0] + terms[1] + terms[2] + terms[3]));
      in.push_back(if_then(logical_not(skip), block(smp)));
    }
    s.push_back(for_loop(iy, i32(0), gh, for_loop(ix, i32(0), gw, block(in))));
    Expr res = acc;
    if (!is_max) res = acc / cast(at, max(gh * gw, i32(1)));
    s.push_back(store(Y, e, cast(Y.elem, res)));
    return block(s);
  });
}

} // namespace

void add_sampling_lowerings(LoweringTable &t) {
  t["kiln.grid_sample"] = lower_grid_sample;
  t["kiln.affine_grid"] = lower_affine_grid;
  t["kiln.roi_align"] = lower_roi_align;
}

} // namespace kiln::compiler
