// Convolution-like ops beyond kiln.conv (conv.cpp), one invocation per output element:
//   kiln.conv_transpose / kiln.col2im: gather formulation (each output position loops over the
//     kernel offsets and picks the input position that contributes to it, if any);
//   kiln.conv_integer / kiln.qlinear_conv: direct convolution on zero-point corrected integers
//     (i32 accumulation), qlinear_conv requantised like the reference;
//   kiln.deform_conv: sampled (multilinear) direct convolution.
#include "compiler/families/kernel_helpers.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

namespace kiln::compiler::helpers {

using namespace kir;

namespace {

// The geometry of a transposed conv as the window of its adjoint conv (in = y spatial dims,
// out = x spatial dims); mirrors the reference (src/ops/nn_conv.cpp).
Result<nn::Window> transpose_window(const Op &op, const Shape &kernel, const Shape &xs,
                                    const Shape &ys) {
  const size_t r = kernel.size();
  nn::Window w;
  w.kernel = kernel;
  KILN_ASSIGN(w.strides, nn::attr_list(op, "strides", r, 1, 1));
  KILN_ASSIGN(w.dilations, nn::attr_list(op, "dilations", r, 1, 1));
  KILN_ASSIGN(std::vector<int64_t> pads, nn::attr_list(op, "pads", 2 * r, 0, 0));
  KILN_ASSIGN(std::vector<int64_t> opad, nn::attr_list(op, "output_padding", r, 0, 0));
  std::vector<int64_t> oshape = op.attr_ints("output_shape");
  if (oshape.size() == r + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  const std::string ap = op.attr_str("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return unsupported(op, "auto_pad " + ap);
  if (!oshape.empty() && oshape.size() != r) return unsupported(op, "this output_shape");
  w.pad_begin.assign(pads.begin(), pads.begin() + static_cast<long>(r));
  w.pad_end.assign(pads.begin() + static_cast<long>(r), pads.end());
  w.out = xs;
  w.in = ys;
  for (size_t i = 0; i < r; ++i) {
    const int64_t ek = (w.kernel[i] - 1) * w.dilations[i] + 1;
    const int64_t full = w.strides[i] * (xs[i] - 1) + opad[i] + ek;
    if (!oshape.empty() || ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      const int64_t total = full - ys[i];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      w.pad_begin[i] = ap == "SAME_UPPER" ? half : total - half;
    } else if (ap == "VALID") {
      w.pad_begin[i] = 0;
    }
  }
  return w;
}

// Loops over the kernel offsets k of window `w` that map input positions onto output position
// `y` of the adjoint (y_d = x_d * stride - pad + k_d * dilation): inner(x, kflat) runs for the
// offsets whose x lies inside w.out.
Stmt gather_loops(GridKernel &g, const nn::Window &w, const std::vector<Expr> &y,
                  const std::function<Stmt(const std::vector<Expr> &, const Expr &)> &inner) {
  const int64_t r = w.rank();
  std::vector<Expr> ks(r), xs(r);
  std::vector<std::pair<Expr, Expr>> lets;
  Expr ok;
  for (int64_t d = 0; d < r; ++d) {
    ks[d] = w.kernel[d] == 1 ? i32(0) : var(g.fresh("kw"), ScalarType::i32);
    Expr t = var(g.fresh("t"), ScalarType::i32);
    lets.emplace_back(t, y[d] + w.pad_begin[d] - ks[d] * w.dilations[d]);
    const int64_t s = w.strides[d];
    ok = conj(ok, t >= 0);
    if (s != 1) ok = logical_and(ok, t % s == 0);
    xs[d] = s == 1 ? t : t / s;
    ok = logical_and(ok, xs[d] < w.out[d]);
  }
  Stmt body = if_then(ok, inner(xs, flatten(ks, w.kernel)));
  for (int64_t d = r - 1; d >= 0; --d) body = let(lets[d].first, lets[d].second, body);
  for (int64_t d = r - 1; d >= 0; --d)
    if (w.kernel[d] != 1) body = for_loop(ks[d], i32(0), i32(w.kernel[d]), body);
  return body;
}

Status lower_conv_transpose(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *wv = op.operands[1];
  const Shape &xd = xv->type.dims, &wd = wv->type.dims, &yd = op.results[0]->type.dims;
  if (xd.size() < 3 || wd.size() != xd.size()) return unsupported(op, "this kiln.conv_transpose shape");
  if (!is_float(xv->type.dtype)) return unsupported(op, "integer kiln.conv_transpose");
  const int64_t C = xd[1], G = op.attr_int("group", 1), M = yd[1];
  if (G < 1 || C % G != 0 || M % G != 0) return unsupported(op, "this kiln.conv_transpose group");
  const int64_t Cg = C / G, Mg = M / G;
  const Shape kshape(wd.begin() + 2, wd.end());
  KILN_ASSIGN(nn::Window w, transpose_window(op, kshape, Shape(xd.begin() + 2, xd.end()),
                                             Shape(yd.begin() + 2, yd.end())));
  const int64_t xin = w.out_size(), ks = w.kernel_size();
  GridKernel g(c, op, "conv_transpose");
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op));
  const BufferVar X = bufs.X, W = bufs.W, B = bufs.B, Y = bufs.Y;
  const ScalarType at = float_acc(X.elem);
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      const Expr n = cs[0], m = cs[1];
      Expr acc = var(g.fresh("acc"), at), ci = var(g.fresh("ci"), ScalarType::i32);
      Expr ch = (G == 1 ? i32(0) : (m / Mg) * Cg) + ci; // input channel
      Expr mm = G == 1 ? m : m % Mg;
      Stmt win = gather_loops(g, w, std::vector<Expr>(cs.begin() + 2, cs.end()),
                              [&](const std::vector<Expr> &x, const Expr &kf) {
                                Expr xval = cast(at, load(X, (n * C + ch) * xin + flatten(x, w.out)));
                                Expr wval = cast(at, load(W, (ch * Mg + mm) * ks + kf));
                                return assign(acc, acc + xval * wval);
                              });
      Expr init = B.index >= 0 ? cast(at, load(B, m)) : make_const(at, 0);
      return block({declare_var(acc, init), for_loop(ci, i32(0), i32(Cg), win),
                    store(Y, i, cast(Y.elem, acc))});
    });
  });
}

// col2im(x [N, C * prod(block), L], image_shape, block_shape) -> [N, C, image...].
Status lower_col2im(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims, &yd = op.results[0]->type.dims;
  const Tensor *blk = const_operand(op, 2);
  if (!blk) return unsupported(op, "kiln.col2im with a non-constant block_shape");
  if (!is_float(xv->type.dtype)) return unsupported(op, "integer kiln.col2im");
  const Shape img(yd.begin() + 2, yd.end());
  KILN_ASSIGN(nn::Window w, nn::make_window(op, blk->to_i64s(), img, false));
  const int64_t ks = w.kernel_size(), L = w.out_size();
  if (xd.size() != 3 || xd[1] != yd[1] * ks || xd[2] != L)
    return unsupported(op, "this kiln.col2im shape");
  // In the adjoint view the image is the "output" and the block grid the "input".
  nn::Window a = w;
  GridKernel g(c, op, "col2im");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = float_acc(X.elem);
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr acc = var(g.fresh("acc"), at);
      Expr row0 = (cs[0] * yd[1] + cs[1]) * ks;
      Stmt win = gather_loops(g, a, std::vector<Expr>(cs.begin() + 2, cs.end()),
                              [&](const std::vector<Expr> &x, const Expr &kf) {
                                Expr v = cast(at, load(X, (row0 + kf) * L + flatten(x, a.out)));
                                return assign(acc, acc + v);
                              });
      return block({declare_var(acc, make_const(at, 0)), win, store(Y, i, cast(Y.elem, acc))});
    });
  });
}

// ---- integer convolutions ----------------------------------------------------------------------

// Zero point `v` (nullptr: 0): per tensor or one value per output channel m (`channels`).
Result<Expr> zero_point(const Op &op, GridKernel &g, const Value *v, int64_t channels,
                        const Expr &m) {
  if (!v) return i32(0);
  const int64_t n = shape_numel(v->type.dims);
  if (n != 1 && !(v->type.dims.size() == 1 && n == channels))
    return unsupported(op, "this zero point shape");
  KILN_ASSIGN(BufferVar z, g.in(v));
  return cast(ScalarType::i32, load(z, n == 1 ? i32(0) : m));
}

struct IntConv {
  const Value *x, *w, *xzp, *wzp;
};

// Accumulates sum (x - xzp) * (w - wzp) over the window of output element (n, m, o...) in i32,
// starting at `init`; returns the statements and the accumulator.
Result<std::pair<std::vector<Stmt>, Expr>> int_conv(GridKernel &g, const Op &op, const IntConv &ic,
                                                    const nn::Window &w,
                                                    const std::vector<Expr> &cs, Expr init) {
  const Shape &xd = ic.x->type.dims, &wd = ic.w->type.dims;
  const int64_t C = xd[1], M = wd[0], G = op.attr_int("group", 1);
  const int64_t Cg = C / G, Mg = M / G, in_size = w.in_size(), ksize = w.kernel_size();
  KILN_ASSIGN(BufferVar X, g.in(ic.x));
  KILN_ASSIGN(BufferVar W, g.in(ic.w));
  const Expr n = cs[0], m = cs[1];
  KILN_ASSIGN(Expr xz, zero_point(op, g, ic.xzp, 1, i32(0)));
  KILN_ASSIGN(Expr wz, zero_point(op, g, ic.wzp, M, m));
  Expr acc = var(g.fresh("acc"), ScalarType::i32), ci = var(g.fresh("ci"), ScalarType::i32);
  Expr xplane = (n * C + (G == 1 ? i32(0) : (m / Mg) * Cg) + ci) * in_size;
  Expr wplane = (m * Cg + ci) * ksize;
  const Shape kshape(wd.begin() + 2, wd.end());
  KILN_ASSIGN(Stmt win, window_loops(g, w, std::vector<Expr>(cs.begin() + 2, cs.end()),
                                     [&](const std::vector<Expr> &x, const std::vector<Expr> &k,
                                         const Expr &inside) -> Result<Stmt> {
                                       Expr xval = cast(ScalarType::i32, load(X, xplane + flatten(x, w.in))) - xz;
                                       Expr wval = cast(ScalarType::i32, load(W, wplane + flatten(k, kshape))) - wz;
                                       Stmt upd = assign(acc, acc + xval * wval);
                                       return inside.defined() ? if_then(inside, upd) : upd;
                                     }));
  std::vector<Stmt> s{declare_var(acc, init), for_loop(ci, i32(0), i32(Cg), win)};
  return std::make_pair(s, acc);
}

Result<nn::Window> int_conv_window(const Op &op, const Shape &xd, const Shape &wd, const Shape &yd) {
  if (xd.size() < 3 || wd.size() != xd.size()) return unsupported(op, "this convolution shape");
  const int64_t G = op.attr_int("group", 1);
  if (G < 1 || xd[1] % G != 0 || wd[0] % G != 0 || wd[1] * G != xd[1])
    return unsupported(op, "this convolution group");
  KILN_ASSIGN(nn::Window w, nn::make_window(op, Shape(wd.begin() + 2, wd.end()),
                                            Shape(xd.begin() + 2, xd.end()), false));
  if (Shape(yd.begin() + 2, yd.end()) != w.out) return unsupported(op, "this convolution geometry");
  return w;
}

Status lower_conv_integer(LowerCtx &c, const Op &op) {
  auto opnd = [&](size_t k) { return op.operands.size() > k ? op.operands[k] : nullptr; };
  IntConv ic{op.operands[0], op.operands[1], opnd(2), opnd(3)};
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(nn::Window w, int_conv_window(op, ic.x->type.dims, ic.w->type.dims, yd));
  GridKernel g(c, op, "conv_integer");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      KILN_ASSIGN(auto sa, int_conv(g, op, ic, w, cs, i32(0)));
      sa.first.push_back(store(Y, i, cast(Y.elem, sa.second)));
      return block(sa.first);
    });
  });
}

// A per-tensor float parameter, or one value per channel (index `m`), as type `at`.
Result<Expr> scale_param(const Op &op, GridKernel &g, const Value *v, int64_t channels,
                         const Expr &m, ScalarType at) {
  const int64_t n = shape_numel(v->type.dims);
  if (n != 1 && n != channels) return unsupported(op, "this scale / zero point shape");
  KILN_ASSIGN(BufferVar b, g.in(v));
  return cast(at, load(b, n == 1 ? i32(0) : m));
}

Status lower_qlinear_conv(LowerCtx &c, const Op &op) {
  const auto &o = op.operands;
  IntConv ic{o[0], o[3], o[2], o[5]};
  const Value *bias = o.size() > 8 ? o[8] : nullptr;
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(nn::Window w, int_conv_window(op, ic.x->type.dims, ic.w->type.dims, yd));
  const int64_t M = yd[1];
  const bool f32r = op.attr_str("requant", "f64") == "f32";
  const ScalarType at = requant_type(c, f32r);
  GridKernel g(c, op, "qlinear_conv");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      Expr init = i32(0);
      if (bias) {
        if (shape_numel(bias->type.dims) != M) return unsupported(op, "this bias shape");
        KILN_ASSIGN(BufferVar b, g.in(bias));
        init = cast(ScalarType::i32, load(b, cs[1]));
      }
      KILN_ASSIGN(auto sa, int_conv(g, op, ic, w, cs, init));
      const ScalarType st = scale_type(o[1]->type.dtype);
      const ScalarType mt = st == ScalarType::f64 ? ScalarType::f64 : ScalarType::f32;
      KILN_ASSIGN(Expr xs, scale_param(op, g, o[1], 1, i32(0), mt));
      KILN_ASSIGN(Expr ws, scale_param(op, g, o[4], M, cs[1], mt));
      KILN_ASSIGN(Expr ys, scale_param(op, g, o[6], 1, i32(0), mt));
      KILN_ASSIGN(Expr yz, scale_param(op, g, o[7], 1, i32(0), at));
      Expr real = cast(at, sa.second) * cast(at, requant_multiplier(c, st, xs, ws, ys));
      sa.first.push_back(store(Y, i, round_saturate(requantize(real, yz, f32r), Y.elem)));
      return block(sa.first);
    });
  });
}

// ---- deform_conv -------------------------------------------------------------------------------

Status lower_deform_conv(LowerCtx &c, const Op &op) {
  const auto &o = op.operands;
  const Value *xv = o[0], *wv = o[1], *ov = o[2];
  const Value *bv = o.size() > 3 ? o[3] : nullptr, *mv = o.size() > 4 ? o[4] : nullptr;
  const Shape &xd = xv->type.dims, &wd = wv->type.dims, &yd = op.results[0]->type.dims;
  if (!is_float(xv->type.dtype)) return unsupported(op, "integer kiln.deform_conv");
  if (xd.size() < 3 || wd.size() != xd.size()) return unsupported(op, "this kiln.deform_conv shape");
  const int64_t C = xd[1], M = wd[0], G = op.attr_int("group", 1), OG = op.attr_int("offset_group", 1);
  if (G < 1 || OG < 1 || C != wd[1] * G || M % G != 0 || C % OG != 0)
    return unsupported(op, "this kiln.deform_conv grouping");
  const Shape kshape = op.attr_ints("kernel_shape", Shape(wd.begin() + 2, wd.end()));
  KILN_ASSIGN(nn::Window w, nn::make_window(op, kshape, Shape(xd.begin() + 2, xd.end()), false));
  const int64_t r = w.rank(), ks = w.kernel_size(), P = w.out_size(), in_size = w.in_size();
  const int64_t Cg = C / G, Mg = M / G, cpg = C / OG;
  Shape want_off{xd[0], OG * ks * r};
  want_off.insert(want_off.end(), w.out.begin(), w.out.end());
  if (ov->type.dims != want_off || Shape(yd.begin() + 2, yd.end()) != w.out ||
      (mv && shape_numel(mv->type.dims) != xd[0] * OG * ks * P) ||
      (bv && shape_numel(bv->type.dims) != M))
    return unsupported(op, "this kiln.deform_conv operand shape");
  GridKernel g(c, op, "deform_conv");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar W, g.in(wv));
  KILN_ASSIGN(BufferVar O, g.in(ov));
  BufferVar B{-1, X.elem}, Mk{-1, X.elem};
  if (bv) {
    KILN_ASSIGN(B, g.in(bv));
  }
  if (mv) {
    KILN_ASSIGN(Mk, g.in(mv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = float_acc(X.elem);
  const auto ist = shape_strides(w.in);
  return g.finish(shape_numel(yd), [&](Expr i) -> Result<Stmt> {
    std::vector<Stmt> s;
    Expr p = def(g, s, "p", i % P);
    Expr m = def(g, s, "m", (i / P) % M);
    Expr n = def(g, s, "n", i / (P * M));
    std::vector<Expr> oc = unflatten(p, w.out);
    Expr acc = def(g, s, "acc", B.index >= 0 ? cast(at, load(B, m)) : make_const(at, 0));
    Expr ci = var(g.fresh("ci"), ScalarType::i32), kf = var(g.fresh("kf"), ScalarType::i32);
    std::vector<Stmt> in; // body for one (ci, kf)
    Expr ch = def(g, in, "ch", (G == 1 ? i32(0) : (m / Mg) * Cg) + ci);
    Expr grp = def(g, in, "og", ch / cpg); // offset group
    std::vector<Expr> kc = unflatten(kf, w.kernel), pos(r), fl(r), fr(r);
    Expr valid;
    for (int64_t d = 0; d < r; ++d) {
      Expr off = cast(at, load(O, ((n * OG + grp) * ks * r + kf * r + d) * P + p));
      Expr base = cast(at, oc[d] * w.strides[d] - w.pad_begin[d] + kc[d] * w.dilations[d]);
      pos[d] = def(g, in, "pos", base + off);
      valid = conj(valid, logical_and(pos[d] > make_const(at, -1),
                                      pos[d] < make_const(at, static_cast<double>(w.in[d]))));
      // Bounded before the i32 cast (positions outside are skipped anyway).
      fl[d] = def(g, in, "fl", call(Intrinsic::floor, {clamp(pos[d], make_const(at, -2),
                                                              make_const(at, static_cast<double>(w.in[d] + 1)))}));
      fr[d] = def(g, in, "fr", pos[d] - fl[d]);
    }
    Expr sample = make_const(at, 0);
    for (int64_t corner = 0; corner < (int64_t(1) << r); ++corner) {
      Expr wt, ok, offs = i32(0);
      for (int64_t d = 0; d < r; ++d) {
        const bool hi = (corner >> d) & 1;
        Expr idx = cast(ScalarType::i32, fl[d]) + (hi ? 1 : 0);
        Expr wd1 = hi ? fr[d] : make_const(at, 1) - fr[d];
        wt = wt.defined() ? wt * wd1 : wd1;
        ok = conj(ok, logical_and(idx >= 0, idx < w.in[d]));
        offs = offs + clamp(idx, i32(0), i32(w.in[d] - 1)) * ist[d];
      }
      Expr v = cast(at, load(X, (n * C + ch) * in_size + offs));
      sample = sample + select(ok, wt * v, make_const(at, 0));
    }
    Expr mask = Mk.index >= 0 ? cast(at, load(Mk, ((n * OG + grp) * ks + kf) * P + p))
                              : make_const(at, 1);
    Expr wval = cast(at, load(W, (m * Cg + ci) * ks + kf));
    in.push_back(if_then(valid, assign(acc, acc + wval * mask * sample)));
    s.push_back(for_loop(ci, i32(0), i32(Cg), for_loop(kf, i32(0), i32(ks), block(in))));
    s.push_back(store(Y, i, cast(Y.elem, acc)));
    return block(s);
  });
}

} // namespace

} // namespace kiln::compiler::helpers

namespace kiln::compiler {

void add_conv_transpose_lowerings(LoweringTable &t) {
  t["kiln.conv_transpose"] = helpers::lower_conv_transpose;
  t["kiln.col2im"] = helpers::lower_col2im;
  t["kiln.conv_integer"] = helpers::lower_conv_integer;
  t["kiln.qlinear_conv"] = helpers::lower_qlinear_conv;
  t["kiln.deform_conv"] = helpers::lower_deform_conv;
}

} // namespace kiln::compiler
