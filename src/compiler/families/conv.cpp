// kiln.conv: a contraction definition (implicit GEMM per image and group: M = output channels
// of the group, N = output positions, K = input channels of the group x kernel window) run by
// the scheduled strategy; the naive strategy is direct convolution, one output element per
// invocation with loops over the input channels of its group and the kernel window.
// A depthwise convolution (group == input channels == output channels) is a window definition
// (window.h) instead: its naive strategy is that same direct kernel.
#include "compiler/definitions/contraction.h"
#include "compiler/definitions/window.h"
#include "compiler/families/conv_winograd.h"
#include "compiler/families/kernel_helpers.h"

#include "ops/nn_kernels.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

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

// The coordinates (image, channel, spatial...) of an output element, for GridKernel::store.
std::vector<Expr> out_coords(const Expr &img, const Expr &ch, const std::vector<Expr> &spatial) {
  std::vector<Expr> c{img, ch};
  c.insert(c.end(), spatial.begin(), spatial.end());
  return c;
}

// The contraction of a convolution: z = image * G + group, m = output channel within the
// group, n = flat output position, k = (input channel within the group, kernel offsets...).
// Ungrouped convolutions of several images fold the images into N instead (z = 0, n = image *
// positions + position): one [M, K] x [K, images * positions] product whose tiles stay full
// when the late layers have few positions per image.
bool folds_images(int64_t images, int64_t G) { return G == 1 && images > 1; }

//
// `tap_major` (one group, weights repacked to [M][kernel offsets][C] by the caller): k runs
// over (kernel offsets..., channel) instead, so a k step of whole channels sits at one kernel
// offset and only the channel varies within it.
ContractionDef conv_definition(const nn::Window &w, int64_t images, int64_t C, int64_t M,
                               int64_t G, BufferVar X, BufferVar W, ScalarType at,
                               bool tap_major = false) {
  const int64_t Cg = C / G, Mg = M / G, in_size = w.in_size(), ksize = w.kernel_size();
  const int64_t out_size = w.out_size();
  const bool fold = folds_images(images, G);
  ContractionDef d;
  d.batch = fold ? 1 : images * G;
  d.M = Mg;
  d.N = fold ? images * out_size : out_size;
  if (!tap_major) d.kdims.push_back(Cg);
  for (int64_t k : w.kernel) d.kdims.push_back(k);
  if (tap_major) d.kdims.push_back(Cg);
  d.acc = at;
  d.a = W;
  d.b = X;
  const Shape kshape(w.kernel);
  // The channel and the kernel offsets of reduction coordinates k.
  const auto channel = [tap_major](const std::vector<Expr> &k) { return tap_major ? k.back() : k[0]; };
  const auto offsets = [tap_major](const std::vector<Expr> &k) {
    return tap_major ? std::vector<Expr>(k.begin(), k.end() - 1) : std::vector<Expr>(k.begin() + 1, k.end());
  };
  d.a_at = [=](const Expr &z, const Expr &m, const std::vector<Expr> &k) {
    Expr oc = G == 1 ? m : (z % G) * Mg + m;
    if (tap_major) return OperandRef{(oc * ksize + flatten(offsets(k), kshape)) * Cg + channel(k), Expr()};
    return OperandRef{(oc * Cg + channel(k)) * ksize + flatten(offsets(k), kshape), Expr()};
  };
  // A pointwise window (1x1 kernel, unit strides, no padding) reads the output position itself.
  bool pointwise = w.in == w.out;
  for (int64_t r = 0; r < w.rank(); ++r)
    pointwise = pointwise && w.kernel[r] == 1 && w.strides[r] == 1 && w.pad_begin[r] == 0;
  d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &n) {
    Expr img = fold ? n / out_size : G == 1 ? z : z / G;
    Expr ic = G == 1 ? channel(k) : (z % G) * Cg + channel(k);
    Expr pos = fold ? n % out_size : n;
    if (pointwise) return OperandRef{(img * C + ic) * in_size + pos, Expr()};
    const std::vector<Expr> kw = offsets(k);
    std::vector<Expr> o = unflatten(pos, w.out), x;
    Expr inside;
    auto conj = [&](Expr e) { inside = inside.defined() ? logical_and(inside, e) : e; };
    for (int64_t r = 0; r < w.rank(); ++r) {
      Expr xr = o[r] * w.strides[r] - w.pad_begin[r] + kw[r] * w.dilations[r];
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

// Shifted rows: a convolution of one group for the matrix strategy (the cpu target) as one GEMM
// whose B is read straight from memory. The input is copied once into a zero-padded scratch
// split into phase planes: padded position p = a * stride + phase per spatial dim, so plane
// (image, channel, phase) holds A = ceil(padded / stride) positions per dim (stride 1: one
// phase, the padded input itself), its stride rounded up to 4 elements. k runs over (kernel offsets..., channel) and n over "wide"
// positions: n = flat index over (out[0], A[1], ..., A[r-1]). Tap k_r * dil_r = q_r * stride_r
// + phase_r reads plane(c, phase) + n + sum_r q_r * astride_r: for one kernel offset a tk-deep
// slice of channels is a row-major matrix (stride: the planes of one channel), multiplied
// straight from the scratch; columns whose coordinates reach past the output (r >= 1) are
// computed and dropped. The weights are repacked at compile time to [M][kernel offsets][C].
// The taps of a row are read as contiguous runs instead of gathered element by element with
// divisions and bounds checks.
struct ShiftedRows {
  Shape phases;                 // stride per spatial dim (phases per dim)
  Shape extent;                 // A: positions per phase plane and dim
  Shape wide;                   // (out[0], A[1], ..., A[r-1])
  std::vector<int64_t> astride; // row-major strides of `extent`
  int64_t plane = 0, slack = 0; // plane stride (elements) and elements read past the last
};

ShiftedRows shifted_rows(const nn::Window &w) {
  ShiftedRows s;
  for (int64_t r = 0; r < w.rank(); ++r) {
    const int64_t padded = (w.out[r] - 1) * w.strides[r] + (w.kernel[r] - 1) * w.dilations[r] + 1;
    s.phases.push_back(w.strides[r]);
    s.extent.push_back((padded + w.strides[r] - 1) / w.strides[r]);
  }
  s.wide = s.extent;
  s.wide[0] = w.out[0];
  s.astride = shape_strides(s.extent);
  s.plane = (shape_numel(s.extent) + 3) / 4 * 4;
  int64_t reach = shape_numel(s.wide) - 1; // the furthest element a tap reads, from a plane
  for (int64_t r = 0; r < w.rank(); ++r)
    reach += (w.kernel[r] - 1) * w.dilations[r] / w.strides[r] * s.astride[r];
  s.slack = std::max<int64_t>(0, reach + 1 - s.plane);
  return s;
}

// Whether `op` (not depthwise) can take the shifted-rows form, and its weights (Cg: the
// channels of a group).
const Tensor *shifted_rows_weights(const Op &op, const nn::Window &w, int64_t Cg) {
  bool strided = false;
  for (int64_t r = 0; r < w.rank(); ++r) strided = strided || w.strides[r] != 1;
  // Channels not a multiple of 4 (a first layer's 3) stay staged: padded with zero channels,
  // the 4-deep k steps and the phase copy cost more than the staged im2col (measured on
  // squeezenet1_1's first convolution: 1.5 -> 2.2 ms).
  if ((w.kernel_size() == 1 && !strided) || Cg % 4 != 0) return nullptr;
  if (op.operands[0]->type.dtype != DType::f32 || op.results[0]->type.dtype != DType::f32)
    return nullptr;
  const Tensor *wt = const_operand(op, 1);
  return wt && wt->dtype() == DType::f32 ? wt : nullptr;
}

// The phase-plane copy of the shifted-rows form: one work item per row of a plane (all its
// coordinates but the last), three runs along the row: zeros before the input starts, the input
// row (strided for a phase plane), zeros after it. The last row of a plane also zeroes up to
// the next plane (the plane stride's rounding), and the last plane's the slack read past it.
Status emit_pad_rows(LowerCtx &c, const Op &op, const nn::Window &w, const ShiftedRows &s,
                     int64_t C, int64_t planes, int pad_id) {
  const int64_t r = w.rank(), S = shape_numel(s.phases), pn = shape_numel(s.extent);
  const int64_t L = s.extent[r - 1], R = pn / L, in_last = w.in[r - 1];
  const int64_t st = w.strides[r - 1], pb = w.pad_begin[r - 1], in_size = w.in_size();
  const Shape row_dims(s.extent.begin(), s.extent.end() - 1);
  GridKernel gp(c, op, "conv_pad_rows");
  KILN_ASSIGN(const BufferVar X, gp.in(op.operands[0]));
  const BufferVar P = gp.scratch(pad_id, ScalarType::f32, true);
  const Expr zero = make_const(ScalarType::f32, 0);
  return gp.finish(planes * R, [&](Expr it) -> Result<Stmt> {
    return let_all(gp, "p", {it / R, it % R}, [&](std::vector<Expr> pr) -> Result<Stmt> {
      const Expr plane = pr[0], row = pr[1];
      std::vector<Expr> parts = row_dims.empty() ? std::vector<Expr>{} : unflatten(row, row_dims);
      parts.push_back(plane % S);
      parts.push_back((plane / S) % C);
      parts.push_back(plane / (S * C));
      return let_all(gp, "x", parts, [&](std::vector<Expr> v) -> Result<Stmt> {
        const std::vector<Expr> ph = unflatten(v[r - 1], s.phases);
        const Expr ch = v[r], img = v[r + 1];
        // Input coordinates of the row (all but the last dim) and whether it lies inside.
        Expr inside;
        std::vector<Expr> xs;
        for (int64_t d = 0; d + 1 < r; ++d) {
          Expr x = v[d] * w.strides[d] + ph[d] - w.pad_begin[d];
          Expr ok = logical_and(x >= 0, x < w.in[d]);
          inside = inside.defined() ? logical_and(inside, ok) : ok;
          xs.push_back(x);
        }
        xs.push_back(i32(0));
        // The run [lo, hi) of row positions v with x = v * st + ph - pb inside [0, in_last).
        const Expr phl = ph[r - 1];
        Expr lo = max(i32(0), (i32(pb + st - 1) - phl) / st);
        Expr hi = min(i32(L), (i32(in_last + pb - 1 + st) - phl) / st);
        lo = min(lo, hi);
        if (inside.defined()) lo = select(inside, lo, i32(0)), hi = select(inside, hi, i32(0));
        Expr tail = i32(s.plane - pn);
        if (s.slack > 0) tail = tail + select(plane == planes - 1, i32(s.slack), i32(0));
        const Expr extent = i32(L) + select(row == R - 1, tail, i32(0));
        const Expr start = plane * s.plane + row * L;
        const Expr base = (img * C + ch) * in_size + flatten(xs, Shape(w.in)) + phl - pb;
        return let_all(gp, "r", {start, lo, hi, base}, [&](std::vector<Expr> b) -> Result<Stmt> {
          const Expr q = var(gp.fresh("q"), ScalarType::i32);
          const Expr u = var(gp.fresh("q"), ScalarType::i32);
          const Expr t = var(gp.fresh("q"), ScalarType::i32);
          return block({for_loop(q, b[0], b[1], store(P, q, zero)),
                        for_loop(u, b[1], b[2] - b[1], store(P, b[0] + u, load(X, b[3] + u * st))),
                        for_loop(t, b[0] + b[2], extent - b[2], store(P, t, zero))});
        });
      });
    });
  });
}

// The shifted-rows kernels (phase-plane copy, then the contraction) when the table runs this
// convolution with the matrix strategy; false (nothing emitted) otherwise.
Result<bool> lower_conv_shifted(LowerCtx &c, const Op &op, const nn::Window &w) {
  const Shape &xd = op.operands[0]->type.dims;
  const int64_t images = xd[0], C = xd[1], M = op.operands[1]->type.dims[0];
  // Groups: batch entry z = image * G + group; the group's channels and rows of the weights.
  const int64_t G = op.attr_int("group", 1), Cg = C / G, Mg = M / G;
  const Tensor *wt = shifted_rows_weights(op, w, Cg);
  if (!wt) return false;
  const ShiftedRows s = shifted_rows(w);
  const int64_t S = shape_numel(s.phases);
  const int64_t ksize = w.kernel_size(), out_size = w.out_size();
  const int64_t planes = images * C * S;
  const uint64_t padded_count = static_cast<uint64_t>(planes * s.plane + s.slack);
  if (padded_count > static_cast<uint64_t>(INT32_MAX)) return false; // i32 indices
  ContractionDef d;
  d.batch = images * G;
  d.M = Mg;
  d.N = shape_numel(s.wide);
  d.kdims = Shape(w.kernel);
  d.kdims.push_back(Cg);
  ContractionSchedule sched = schedule_contraction(c, d);
  if (sched.strategy != Strategy::matrix || sched.split_k != 1) return false;
  // tk: a multiple of 4 dividing the channels, so no k step straddles two kernel offsets.
  int tk = std::min<int>(sched.tile.tk, static_cast<int>(Cg)) / 4 * 4;
  while (Cg % tk != 0) tk -= 4;
  sched.tile.tk = tk;
  c.count_strategy(sched.strategy);
  c.count_shifted_rows();

  // Weights [M][Cg][taps] -> [M][taps][Cg] (= [G][Mg][taps][Cg]), then into panels of the
  // tile's rows (k = (taps, Cg)), one set per group.
  Tensor packed(DType::f32, Shape{M, ksize * Cg});
  const float *src = wt->data<float>();
  float *dst = packed.data_mut<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t ci = 0; ci < Cg; ++ci)
      for (int64_t t = 0; t < ksize; ++t)
        dst[(m * ksize + t) * Cg + ci] = src[(m * Cg + ci) * ksize + t];

  const int pad_id = c.new_scratch(padded_count * 4);
  KILN_TRY(emit_pad_rows(c, op, w, s, C, planes, pad_id));

  GridKernel g(c, op, "conv_rows");
  d.acc = ScalarType::f32;
  bind_a_panels(g, d, packed.data<float>(), sched.tile.tm, tk, G);
  d.b = g.scratch(pad_id, ScalarType::f32, false);
  BufferVar B{-1, ScalarType::f32};
  if (op.operands.size() > 2) {
    KILN_ASSIGN(B, g.in(op.operands[2]));
  }
  KILN_ASSIGN(const BufferVar Y, g.out(op.results[0]));
  d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &n) {
    // Tap k_r * dil_r = q_r * stride_r + phase_r.
    std::vector<Expr> ph;
    Expr shift = i32(0);
    for (int64_t r = 0; r < w.rank(); ++r) {
      const Expr t = k[r] * w.dilations[r];
      ph.push_back(w.strides[r] == 1 ? i32(0) : t % w.strides[r]);
      shift = shift + (w.strides[r] == 1 ? t : t / w.strides[r]) * s.astride[r];
    }
    // (z * Cg + channel): image * C + group * Cg + channel.
    const Expr plane = (z * Cg + k.back()) * S + flatten(ph, s.phases);
    return OperandRef{plane * s.plane + shift + n, Expr()};
  };
  d.store = [&](const Expr &z, const Expr &m, const Expr &n, const Expr &acc) -> Result<Stmt> {
    const std::vector<Expr> o = unflatten(n, s.wide);
    Expr valid;
    for (int64_t r = 1; r < w.rank(); ++r)
      if (s.wide[r] != w.out[r]) valid = valid.defined() ? logical_and(valid, o[r] < w.out[r])
                                                         : o[r] < w.out[r];
    const Expr oc = G == 1 ? m : (z % G) * Mg + m;
    Expr v = B.index >= 0 ? acc + load(B, oc) : acc;
    KILN_ASSIGN(Stmt st, g.store(Y, (z * Mg + m) * out_size + flatten(o, Shape(w.out)), v,
                                 out_coords(G == 1 ? z : z / G, oc, o)));
    return valid.defined() ? if_then(valid, st) : st;
  };
  d.store_n_outer = false;
  // Stores by runs of each wide row's valid columns: output (outer coordinates of `row`,
  // col), valid where every outer coordinate is (a 3-D window's middle dims may be wider).
  const int64_t rank = w.rank();
  d.n_row = s.wide[rank - 1];
  d.n_row_valid = w.out[rank - 1];
  const Shape outer_wide(s.wide.begin(), s.wide.end() - 1), outer_out(w.out.begin(), w.out.end() - 1);
  d.store_run = [&, outer_wide, outer_out](const Expr &z, const Expr &m, const Expr &row,
                                           const Expr &col, const Expr &acc) -> Result<Stmt> {
    const std::vector<Expr> o = unflatten(row, outer_wide);
    Expr valid;
    for (size_t r = 1; r < o.size(); ++r)
      if (outer_wide[r] != outer_out[r])
        valid = valid.defined() ? logical_and(valid, o[r] < outer_out[r]) : o[r] < outer_out[r];
    const Expr ch = G == 1 ? m : (z % G) * Mg + m;
    Expr v = B.index >= 0 ? acc + load(B, ch) : acc;
    const Expr at = flatten(o, outer_out) * w.out[rank - 1] + col;
    std::vector<Expr> oc = o;
    oc.push_back(col);
    KILN_ASSIGN(Stmt st, g.store(Y, (z * Mg + m) * out_size + at, v,
                                 out_coords(G == 1 ? z : z / G, ch, oc)));
    return valid.defined() ? if_then(valid, st) : st;
  };
  KILN_TRY(emit_contraction(g, d, sched));
  return true;
}

// Explicit im2col: a convolution of one group whose channels are too few for shifted rows (a
// first layer's 3) on the matrix strategy. One kernel copies the input once into a scratch
// [image][k = (channel, kernel offsets...)][output position], row by row as runs (zeros where
// the window reaches into the padding), then the contraction multiplies the weights [M][K]
// (their own layout) by it, both straight from their buffers. Replaces staging the same
// slice element by element, with k and n decomposed and bounds tested, once per tile.
Result<bool> lower_conv_im2col(LowerCtx &c, const Op &op, const nn::Window &w) {
  const Shape &xd = op.operands[0]->type.dims;
  const int64_t images = xd[0], C = xd[1], M = op.operands[1]->type.dims[0];
  const int64_t r = w.rank(), ksize = w.kernel_size(), K = C * ksize;
  const int64_t out_size = w.out_size(), in_size = w.in_size();
  const int64_t out_last = w.out[r - 1], rows = out_size / out_last;
  bool pointwise = true;
  for (int64_t d = 0; d < r; ++d)
    pointwise = pointwise && w.kernel[d] == 1 && w.strides[d] == 1 && w.pad_begin[d] == 0;
  if (op.attr_int("group", 1) != 1 || pointwise || C % 4 == 0) return false;
  if (op.operands[0]->type.dtype != DType::f32 || op.operands[1]->type.dtype != DType::f32 ||
      op.results[0]->type.dtype != DType::f32)
    return false;
  const uint64_t count = static_cast<uint64_t>(images * K * out_size);
  if (count > (uint64_t(64) << 20) / 4) return false; // at most 64 MiB of scratch
  ContractionDef d;
  d.batch = images;
  d.M = M;
  d.N = out_size;
  d.kdims = Shape{K};
  ContractionSchedule sched = schedule_contraction(c, d);
  if (sched.strategy != Strategy::matrix || sched.split_k != 1) return false;
  // k steps of equal depth (about the table's), so most are whole and multiply in place.
  const int64_t steps = (K + sched.tile.tk - 1) / sched.tile.tk;
  sched.tile.tk = static_cast<int>((K + steps - 1) / steps);
  c.count_strategy(sched.strategy);
  c.count_im2col();

  const int cols_id = c.new_scratch(count * 4);
  {
    GridKernel gi(c, op, "conv_im2col");
    KILN_ASSIGN(const BufferVar X, gi.in(op.operands[0]));
    const BufferVar P = gi.scratch(cols_id, ScalarType::f32, true);
    const Shape row_dims(w.out.begin(), w.out.end() - 1), kshape(w.kernel);
    const int64_t st = w.strides[r - 1], pb = w.pad_begin[r - 1], dl = w.dilations[r - 1];
    const int64_t in_last = w.in[r - 1];
    const Expr zero = make_const(ScalarType::f32, 0);
    KILN_TRY(gi.finish(images * K * rows, [&](Expr it) -> Result<Stmt> {
      // it -> (image, channel, kernel offsets..., output row coordinates...).
      std::vector<Expr> parts{it / (K * rows), (it / (ksize * rows)) % C};
      for (const Expr &e : unflatten((it / rows) % ksize, kshape)) parts.push_back(e);
      if (!row_dims.empty())
        for (const Expr &e : unflatten(it % rows, row_dims)) parts.push_back(e);
      return let_all(gi, "x", parts, [&](std::vector<Expr> v) -> Result<Stmt> {
        const Expr img = v[0], ch = v[1];
        Expr inside;
        std::vector<Expr> xs;
        for (int64_t q = 0; q + 1 < r; ++q) {
          Expr x = v[2 + r + q] * w.strides[q] - w.pad_begin[q] + v[2 + q] * w.dilations[q];
          Expr ok = logical_and(x >= 0, x < w.in[q]);
          inside = inside.defined() ? logical_and(inside, ok) : ok;
          xs.push_back(x);
        }
        xs.push_back(i32(0));
        // Positions u of the row with x = u * st - pb + kl * dl inside [0, in_last).
        const Expr off = v[2 + r - 1] * dl;
        Expr lo = max(i32(0), (i32(pb + st - 1) - off) / st);
        Expr hi = min(i32(out_last), max(i32(0), (i32(in_last - 1 + pb + st) - off) / st));
        lo = min(lo, hi);
        if (inside.defined()) lo = select(inside, lo, i32(0)), hi = select(inside, hi, i32(0));
        const Expr start = it * out_last;
        const Expr base = (img * C + ch) * in_size + flatten(xs, Shape(w.in)) + off - pb;
        return let_all(gi, "r", {start, lo, hi, base}, [&](std::vector<Expr> b) -> Result<Stmt> {
          const Expr q = var(gi.fresh("q"), ScalarType::i32);
          return block({for_loop(q, i32(0), b[1], store(P, b[0] + q, zero)),
                        for_loop(q, b[1], b[2] - b[1], store(P, b[0] + q, load(X, b[3] + q * st))),
                        for_loop(q, b[2], i32(out_last) - b[2], store(P, b[0] + q, zero))});
        });
      });
    }));
  }

  GridKernel g(c, op, "conv_cols");
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op, false));
  const BufferVar B = bufs.B, Y = bufs.Y;
  d.acc = ScalarType::f32;
  d.b = g.scratch(cols_id, ScalarType::f32, false);
  if (const Tensor *wt = const_operand(op, 1)) {
    // Constant weights: packed in panels of the tile's rows.
    bind_a_panels(g, d, wt->data<float>(), sched.tile.tm, sched.tile.tk);
  } else {
    KILN_ASSIGN(d.a, g.in(op.operands[1]));
    d.a_at = [=](const Expr &, const Expr &m, const std::vector<Expr> &k) {
      return OperandRef{m * K + k[0], Expr()};
    };
  }
  d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &n) {
    return OperandRef{(z * K + k[0]) * out_size + n, Expr()};
  };
  d.store = [&](const Expr &z, const Expr &m, const Expr &n, const Expr &acc) -> Result<Stmt> {
    Expr v = B.index >= 0 ? acc + load(B, m) : acc;
    return g.store(Y, (z * M + m) * out_size + n, v, out_coords(z, m, unflatten(n, Shape(w.out))));
  };
  KILN_TRY(emit_contraction(g, d, sched));
  return true;
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
  d.store = [&g, Y, out_size, C, w](const Expr &p, const Expr &pos, const Expr &v) {
    return g.store(Y, p * out_size + pos, cast(Y.elem, v),
                   out_coords(p / C, p % C, unflatten(pos, Shape(w.out))));
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
  if (!depthwise) {
    KILN_ASSIGN(const bool wino, lower_conv_winograd(c, op, w));
    if (wino) return Status::ok();
    KILN_ASSIGN(const bool shifted, lower_conv_shifted(c, op, w));
    if (shifted) return Status::ok();
    KILN_ASSIGN(const bool cols, lower_conv_im2col(c, op, w));
    if (cols) return Status::ok();
  }
  const int64_t in_size = w.in_size(), ksize = w.kernel_size();
  GridKernel g(c, op, "conv");
  // The weights are bound below: as they are, or (matrix strategy) as panels instead.
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op, false));
  const BufferVar X = bufs.X, B = bufs.B, Y = bufs.Y;
  const ScalarType at = X.elem == ScalarType::f16 ? ScalarType::f32 : X.elem;
  ContractionDef def = conv_definition(w, xd[0], C, M, G, X, BufferVar{-1, X.elem}, at);
  def.a_value = wv;
  def.b_value = xv;
  // A depthwise convolution is counted as a window (above), its naive kernel is the one below.
  const ContractionSchedule sched =
      depthwise ? ContractionSchedule{} : schedule_contraction(c, def);
  if (!depthwise) c.count_strategy(sched.strategy);
  const Tensor *wt = const_operand(op, 1);
  // Constant weights of one group with a window on the coop strategy, whole k steps of
  // channels: tap-major k (see conv_definition), the weights repacked to [M][offsets][C] at
  // compile time. Staging then decomposes each step's k once instead of every element's.
  const bool tap_major = sched.strategy == Strategy::coop && sched.split_k == 1 && G == 1 && wt &&
                         wt->dtype() == DType::f16 && ksize > 1 && C % sched.tile.tk == 0;
  // Constant weights of one group on the matrix strategy: packed in panels of the tile.
  const bool panels = sched.strategy == Strategy::matrix && sched.split_k == 1 && G == 1 && wt &&
                      wt->dtype() == DType::f32 && at == ScalarType::f32;
  BufferVar W{-1, X.elem};
  if (tap_major) {
    const size_t es = dtype_size(wt->dtype());
    Tensor packed(wt->dtype(), Shape{M, ksize * C});
    for (int64_t m = 0; m < M; ++m)
      for (int64_t ci = 0; ci < C; ++ci)
        for (int64_t t = 0; t < ksize; ++t)
          std::memcpy(packed.raw_mut() + static_cast<size_t>((m * ksize + t) * C + ci) * es,
                      wt->raw() + static_cast<size_t>((m * C + ci) * ksize + t) * es, es);
    def = conv_definition(w, xd[0], C, M, G, X, BufferVar{-1, X.elem}, at, true);
    def.a_value = wv;
    def.b_value = xv;
    def.a = g.scratch(c.new_constant(std::move(packed)), X.elem, false);
    c.count_tap_major();
  } else if (panels) {
    bind_a_panels(g, def, wt->data<float>(), sched.tile.tm, sched.tile.tk);
  } else {
    KILN_ASSIGN(W, g.in(wv));
    def.a = W;
  }
  if (sched.strategy != Strategy::naive) {
    const int64_t out_size = w.out_size();
    const bool fold = folds_images(xd[0], G);
    def.store = [&](const Expr &z, const Expr &m, const Expr &n, const Expr &acc) {
      Expr oc = G == 1 ? m : (z % G) * Mg + m;
      Expr img = fold ? n / out_size : G == 1 ? z : z / G;
      Expr pos = fold ? n % out_size : n;
      Expr v = B.index >= 0 ? acc + cast(at, load(B, oc)) : acc;
      return g.store(Y, (img * M + oc) * out_size + pos, cast(Y.elem, v),
                     out_coords(img, oc, unflatten(pos, Shape(w.out))));
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
