// kiln.conv: a contraction definition (implicit GEMM per image and group: M = output channels
// of the group, N = output positions, K = input channels of the group x kernel window) run by
// the scheduled strategy; the naive strategy is direct convolution, one output element per
// invocation with loops over the input channels of its group and the kernel window.
// A depthwise convolution (group == input channels == output channels) is a window definition
// (window.h) instead: its naive strategy is that same direct kernel.
#include "compiler/definitions/contraction.h"
#include "compiler/definitions/window.h"
#include "compiler/families/kernel_helpers.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

Result<Stmt> window_loops(GridKernel &g, const nn::Window &w, const std::vector<Expr> &out,
                          const WindowBody &inner) {
  const int64_t r = w.rank();
  std::vector<Expr> ks, xs;
  Expr inside;
  std::vector<std::pair<Expr, Expr>> lets; // x_d = o_d * s - p + k_d * dil
  for (int64_t d = 0; d < r; ++d) {
    ks.push_back(w.kernel[d] == 1 ? i32(0) : var(g.fresh("kw"), ScalarType::i32));
    Expr x = out[d] * w.strides[d] - w.pad_begin[d] + ks[d] * w.dilations[d];
    Expr xv = var(g.fresh("x"), ScalarType::i32);
    lets.emplace_back(xv, x);
    xs.push_back(xv);
    const int64_t hi = (w.out[d] - 1) * w.strides[d] - w.pad_begin[d] +
                       (w.kernel[d] - 1) * w.dilations[d];
    auto conj = [&](Expr c) { inside = inside.defined() ? logical_and(inside, c) : c; };
    if (w.pad_begin[d] > 0) conj(xv >= 0);
    if (hi >= w.in[d]) conj(xv < w.in[d]);
  }
  KILN_ASSIGN(Stmt s, inner(xs, ks, inside));
  for (int64_t d = r - 1; d >= 0; --d) s = let(lets[d].first, lets[d].second, s);
  for (int64_t d = r - 1; d >= 0; --d)
    if (w.kernel[d] != 1) s = for_loop(ks[d], i32(0), i32(w.kernel[d]), s);
  return s;
}

namespace {

// The contraction of a convolution: z = image * G + group, m = output channel within the
// group, n = flat output position, k = (input channel within the group, kernel offsets...).
// Ungrouped convolutions of several images fold the images into N instead (z = 0, n = image *
// positions + position): one [M, K] x [K, images * positions] product whose tiles stay full
// when the late layers have few positions per image.
bool folds_images(int64_t images, int64_t G) { return G == 1 && images > 1; }

ContractionDef conv_definition(const nn::Window &w, int64_t images, int64_t C, int64_t M,
                               int64_t G, BufferVar X, BufferVar W, ScalarType at) {
  const int64_t Cg = C / G, Mg = M / G, in_size = w.in_size(), ksize = w.kernel_size();
  const int64_t out_size = w.out_size();
  const bool fold = folds_images(images, G);
  ContractionDef d;
  d.batch = fold ? 1 : images * G;
  d.M = Mg;
  d.N = fold ? images * out_size : out_size;
  d.kdims.push_back(Cg);
  for (int64_t k : w.kernel) d.kdims.push_back(k);
  d.acc = at;
  d.a = W;
  d.b = X;
  const Shape kshape(w.kernel);
  d.a_at = [=](const Expr &z, const Expr &m, const std::vector<Expr> &k) {
    Expr oc = G == 1 ? m : (z % G) * Mg + m;
    std::vector<Expr> kw(k.begin() + 1, k.end());
    return OperandRef{(oc * Cg + k[0]) * ksize + flatten(kw, kshape), Expr()};
  };
  // A pointwise window (1x1 kernel, unit strides, no padding) reads the output position itself.
  bool pointwise = w.in == w.out;
  for (int64_t r = 0; r < w.rank(); ++r)
    pointwise = pointwise && w.kernel[r] == 1 && w.strides[r] == 1 && w.pad_begin[r] == 0;
  d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &n) {
    Expr img = fold ? n / out_size : G == 1 ? z : z / G;
    Expr ic = G == 1 ? k[0] : (z % G) * Cg + k[0];
    Expr pos = fold ? n % out_size : n;
    if (pointwise) return OperandRef{(img * C + ic) * in_size + pos, Expr()};
    std::vector<Expr> o = unflatten(pos, w.out), x;
    Expr inside;
    auto conj = [&](Expr e) { inside = inside.defined() ? logical_and(inside, e) : e; };
    for (int64_t r = 0; r < w.rank(); ++r) {
      Expr xr = o[r] * w.strides[r] - w.pad_begin[r] + k[r + 1] * w.dilations[r];
      const int64_t hi = (w.out[r] - 1) * w.strides[r] - w.pad_begin[r] +
                         (w.kernel[r] - 1) * w.dilations[r];
      if (w.pad_begin[r] > 0) conj(xr >= 0);
      if (hi >= w.in[r]) conj(xr < w.in[r]);
      x.push_back(xr);
    }
    return OperandRef{(img * C + ic) * in_size + flatten(x, w.in), inside};
  };
  return d;
}

// A depthwise convolution as a window definition run by a non-naive strategy: output plane
// p = image * C + channel reads input plane p, a weighted sum from the bias.
Status depthwise_window(LowerCtx &c, const Op &op, const nn::Window &w,
                        const WindowSchedule &ws) {
  const Value *xv = op.operands[0];
  const Shape &xd = xv->type.dims;
  const int64_t C = xd[1], out_size = w.out_size();
  const int64_t ksize = w.kernel_size();
  GridKernel g(c, op, "conv_depthwise");
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op));
  const BufferVar X = bufs.X, W = bufs.W, B = bufs.B, Y = bufs.Y;
  const ScalarType at = X.elem == ScalarType::f16 ? ScalarType::f32 : X.elem;
  WindowDef d = plane_window(w, xd[0] * C, X, at);
  d.weight = [W, at, C, ksize](const Expr &p, int64_t tap) {
    return cast(at, load(W, (p % C) * ksize + tap));
  };
  d.init = [B, at, C](const Expr &p) {
    return B.index >= 0 ? cast(at, load(B, p % C)) : make_const(at, 0);
  };
  d.store = [&g, Y, out_size](const Expr &p, const Expr &pos, const Expr &v) {
    return g.store(Y, p * out_size + pos, cast(Y.elem, v));
  };
  return emit_window(g, d, ws);
}

Status lower_conv(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *wv = op.operands[1];
  const Shape &xd = xv->type.dims, &wd = wv->type.dims;
  const Shape &yd = op.results[0]->type.dims;
  if (xd.size() < 3 || wd.size() != xd.size()) return unsupported(op, "this kiln.conv shape");
  if (!is_float(xv->type.dtype)) return unsupported(op, "integer kiln.conv");
  const int64_t C = xd[1], M = wd[0], G = op.attr_int("group", 1);
  const int64_t Cg = C / G, Mg = M / G;
  KILN_ASSIGN(nn::Window w, nn::make_window(op, Shape(wd.begin() + 2, wd.end()),
                                            Shape(xd.begin() + 2, xd.end()), false));
  const bool depthwise = G > 1 && C == G && M == G;
  if (depthwise) {
    const WindowSchedule ws = schedule_window(c, window_shape(w, xd[0] * M, true));
    if (ws.strategy != WindowStrategy::naive) return depthwise_window(c, op, w, ws);
  }
  const int64_t in_size = w.in_size(), ksize = w.kernel_size();
  GridKernel g(c, op, "conv");
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op));
  const BufferVar X = bufs.X, W = bufs.W, B = bufs.B, Y = bufs.Y;
  const ScalarType at = X.elem == ScalarType::f16 ? ScalarType::f32 : X.elem;
  ContractionDef def = conv_definition(w, xd[0], C, M, G, X, W, at);
  def.a_value = wv;
  def.b_value = xv;
  // A depthwise convolution is counted as a window (above), its naive kernel is the one below.
  const ContractionSchedule sched =
      depthwise ? ContractionSchedule{} : schedule_contraction(c, def);
  if (!depthwise) c.count_strategy(sched.strategy);
  if (sched.strategy != Strategy::naive) {
    const int64_t out_size = w.out_size();
    const bool fold = folds_images(xd[0], G);
    def.store = [&](const Expr &z, const Expr &m, const Expr &n, const Expr &acc) {
      Expr oc = G == 1 ? m : (z % G) * Mg + m;
      Expr img = fold ? n / out_size : G == 1 ? z : z / G;
      Expr pos = fold ? n % out_size : n;
      Expr v = B.index >= 0 ? acc + cast(at, load(B, oc)) : acc;
      return g.store(Y, (img * M + oc) * out_size + pos, cast(Y.elem, v));
    };
    return emit_contraction(g, def, sched);
  }
  const Shape kshape(wd.begin() + 2, wd.end());
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, yd), [&](std::vector<Expr> cs) -> Result<Stmt> {
      const Expr n = cs[0], m = cs[1];
      const std::vector<Expr> o(cs.begin() + 2, cs.end());
      Expr acc = var(g.fresh("acc"), at);
      Expr ci = var(g.fresh("ci"), ScalarType::i32);
      // Input plane of channel (m / Mg) * Cg + ci of image n; weight block of (m, ci).
      Expr xplane = (n * C + (G == 1 ? i32(0) : (m / Mg) * Cg) + ci) * in_size;
      Expr wplane = (m * Cg + ci) * ksize;
      KILN_ASSIGN(Stmt win, window_loops(g, w, o, [&](const std::vector<Expr> &x,
                                                     const std::vector<Expr> &k,
                                                     const Expr &inside) -> Result<Stmt> {
        Expr xval = cast(at, load(X, xplane + flatten(x, w.in)));
        Expr wval = cast(at, load(W, wplane + flatten(k, kshape)));
        Stmt upd = assign(acc, acc + xval * wval);
        return inside.defined() ? if_then(inside, upd) : upd;
      }));
      Expr init = B.index >= 0 ? cast(at, load(B, m)) : make_const(at, 0);
      KILN_ASSIGN(Stmt st, g.store(Y, i, cast(Y.elem, acc)));
      return block({declare_var(acc, init), for_loop(ci, i32(0), i32(Cg), win), st});
    });
  });
}

} // namespace

void add_conv_lowerings(LoweringTable &t) { t["kiln.conv"] = lower_conv; }

} // namespace kiln::compiler
