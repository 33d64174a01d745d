// The window_rows strategy: each invocation computes R consecutive outputs along the innermost
// spatial axis of one output row (plane p, outer output coordinates o, outputs ow0 .. ow0 + R -
// 1, ow0 = block * R). The whole window is unrolled: for each kernel row (the kernel offsets of
// the outer axes), the input columns the R outputs need are loaded once into registers (for a
// stride-1 3-wide kernel, R + 2 columns instead of 3R loads) and combined into R accumulators
// in the naive kernel's order (kernel rows, then columns), so sums round as the naive kernel's
// do. A weighted window holds its channel's weights in registers for the whole invocation.
// Bounds checks are hoisted (`hoist`): a block whose window lies inside the input on every axis
// runs an unguarded copy of the body; only blocks touching the padding test rows and columns
// (and count an average's divisor from per-axis counts). Without `hoist` every block runs the
// guarded body: on a SIMD-lane device (llvmpipe) a group of invocations that mixes interior and
// edge blocks would run both copies.
#include "compiler/definitions/window.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace kiln::compiler {

using namespace kir;

WindowShape WindowDef::shape() const { return window_shape(w, planes, static_cast<bool>(weight)); }

WindowDef plane_window(const nn::Window &w, int64_t planes, BufferVar X, ScalarType acc) {
  WindowDef d;
  d.w = w;
  d.planes = planes;
  d.acc = acc;
  const int64_t in_size = w.in_size();
  d.in_plane = [in_size](const Expr &p) { return p * in_size; };
  d.read = [X, acc](const Expr &i) { return cast(acc, load(X, i)); };
  return d;
}

WindowShape window_shape(const nn::Window &w, int64_t planes, bool weighted) {
  WindowShape s;
  s.planes = planes;
  const int64_t r = w.rank();
  s.out_w = r > 0 ? w.out[r - 1] : 0;
  s.outer = 1;
  for (int64_t d = 0; d + 1 < r; ++d) s.outer *= w.out[d];
  s.taps = w.kernel_size();
  s.weighted = weighted;
  return s;
}

WindowSchedule schedule_window(LowerCtx &c, const WindowShape &s) {
  WindowSchedule out =
      pick_window(c.target(), c.options().schedule, s, &c.options().window_override);
  if (out.strategy != WindowStrategy::naive) {
    const int64_t blocks = (s.out_w + out.rows - 1) / out.rows;
    if (s.planes * s.outer * blocks > (int64_t(1) << 31) - 1)
      out = {WindowStrategy::naive, 0, true, "more invocations than the 32-bit index range", false};
  }
  c.count_window_strategy(out.strategy);
  return out;
}

namespace {

Expr conj(const Expr &a, const Expr &b) { return a.defined() ? logical_and(a, b) : b; }

// The invocation's view of its block.
struct Block {
  const WindowDef *d = nullptr;
  int64_t R = 1, rank = 1, nblk = 1;
  Expr p, ow0, xb, base;       // plane, first output column, its first input column, plane offset
  std::vector<Expr> o;         // outer output coordinates
  std::vector<int64_t> cols;   // distinct column offsets from xb the block reads
  std::vector<Expr> acc, wts;  // accumulators, weights (weighted windows)
};

int64_t last(const nn::Window &w) { return w.rank() - 1; }

// Whether input column xb + c can fall below 0 / at or past the row's end for some block.
bool col_low(const Block &b, int64_t c) { return c - b.d->w.pad_begin[last(b.d->w)] < 0; }
bool col_high(const Block &b, int64_t c) {
  const nn::Window &w = b.d->w;
  const int64_t l = last(w);
  return (b.nblk - 1) * b.R * w.strides[l] - w.pad_begin[l] + c >= w.in[l];
}

// The combination of accumulator `acc` with input value `x` (weight `wt` when weighted).
Expr combined(const WindowDef &d, const Expr &acc, const Expr &x, const Expr &wt) {
  if (d.combine == WindowDef::Combine::max) return select(x > acc, x, acc);
  if (wt.defined()) return acc + x * wt;
  return acc + (d.term ? d.term(x) : x);
}

// The statements of one block: every kernel row, loads then combines; `guarded` tests rows and
// columns against the input (blocks touching the padding).
Result<Stmt> rows_body(GridKernel &g, const Block &b, bool guarded) {
  const WindowDef &d = *b.d;
  const nn::Window &w = d.w;
  const int64_t r = b.rank, l = r - 1, kw = w.kernel[l];
  const Shape outer_k(w.kernel.begin(), w.kernel.end() - 1);
  const Shape outer_in(w.in.begin(), w.in.end() - 1);
  const int64_t nouter = shape_numel(outer_k);
  std::vector<Stmt> out;
  for (int64_t t = 0; t < nouter; ++t) {
    // Kernel offsets of the outer axes (row-major in outer_k) and the input row they read.
    std::vector<Expr> y;
    Expr row_ok;
    for (int64_t dd = r - 2, rest = t; dd >= 0; --dd) {
      const int64_t k = rest % w.kernel[dd];
      rest /= w.kernel[dd];
      Expr yd = b.o[dd] * w.strides[dd] - w.pad_begin[dd] + k * w.dilations[dd];
      const int64_t hi = (w.out[dd] - 1) * w.strides[dd] - w.pad_begin[dd] + k * w.dilations[dd];
      if (guarded && k * w.dilations[dd] - w.pad_begin[dd] < 0) row_ok = conj(row_ok, yd >= 0);
      if (guarded && hi >= w.in[dd]) row_ok = conj(row_ok, yd < w.in[dd]);
      y.insert(y.begin(), yd);
    }
    Expr rowoff = var(g.fresh("row"), ScalarType::i32);
    std::vector<Stmt> st;
    std::vector<Expr> v(b.cols.size()), ok(b.cols.size());
    for (size_t j = 0; j < b.cols.size(); ++j) {
      const int64_t c = b.cols[j];
      v[j] = var(g.fresh("v"), d.acc);
      Expr x = b.xb + c;
      if (!guarded) {
        st.push_back(declare_var(v[j], d.read(rowoff + x)));
        continue;
      }
      if (col_low(b, c)) ok[j] = conj(ok[j], x >= 0);
      if (col_high(b, c)) ok[j] = conj(ok[j], x < w.in[l]);
      if (!ok[j].defined()) {
        st.push_back(declare_var(v[j], d.read(rowoff + x)));
        continue;
      }
      st.push_back(declare_var(v[j], make_const(d.acc, 0)));
      st.push_back(if_then(ok[j], assign(v[j], d.read(rowoff + x))));
    }
    for (int64_t rr = 0; rr < b.R; ++rr)
      for (int64_t k = 0; k < kw; ++k) {
        const int64_t c = rr * w.strides[l] + k * w.dilations[l];
        const size_t j = static_cast<size_t>(
            std::lower_bound(b.cols.begin(), b.cols.end(), c) - b.cols.begin());
        const Expr &acc = b.acc[static_cast<size_t>(rr)];
        Expr wt = b.wts.empty() ? Expr() : b.wts[static_cast<size_t>(t * kw + k)];
        Expr upd = combined(d, acc, v[j], wt);
        if (ok[j].defined()) upd = select(ok[j], upd, acc);
        st.push_back(assign(acc, upd));
      }
    Stmt row = block(std::move(st));
    if (row_ok.defined()) row = if_then(row_ok, row);
    Expr roff = r > 1 ? b.base + flatten(y, outer_in) * w.in[l] : b.base;
    out.push_back(let(rowoff, roff, row));
  }
  return block(std::move(out));
}

// The count of kernel offsets k along axis `dd` whose input coordinate at(k) is counted.
Expr axis_count(const WindowDef &d, int64_t dd, const std::function<Expr(int64_t)> &at) {
  const nn::Window &w = d.w;
  Expr n;
  for (int64_t k = 0; k < w.kernel[dd]; ++k) {
    Expr x = at(k);
    Expr in = d.count == WindowDef::Count::padded
                  ? logical_and(x >= -w.pad_begin[dd], x < w.in[dd] + w.pad_end[dd])
                  : logical_and(x >= 0, x < w.in[dd]);
    Expr one = select(in, i32(1), i32(0));
    n = n.defined() ? n + one : one;
  }
  return n;
}

// The divisor of output rr of the block (guarded blocks): the product of the per-axis counts.
Expr block_count(const Block &b, int64_t rr) {
  const WindowDef &d = *b.d;
  const nn::Window &w = d.w;
  const int64_t l = b.rank - 1;
  Expr n = axis_count(d, l, [&](int64_t k) {
    return b.xb + (rr * w.strides[l] + k * w.dilations[l]);
  });
  for (int64_t dd = 0; dd < l; ++dd)
    n = n * axis_count(d, dd, [&](int64_t k) {
          return b.o[static_cast<size_t>(dd)] * w.strides[dd] - w.pad_begin[dd] +
                 k * w.dilations[dd];
        });
  return n;
}

// Whether the block's whole window lies inside the input (undefined: always).
Expr interior(const Block &b) {
  const nn::Window &w = b.d->w;
  const int64_t l = b.rank - 1;
  Expr in;
  for (int64_t dd = 0; dd < l; ++dd) {
    Expr y0 = b.o[static_cast<size_t>(dd)] * w.strides[dd] - w.pad_begin[dd];
    const int64_t span = (w.kernel[dd] - 1) * w.dilations[dd];
    if (w.pad_begin[dd] > 0) in = conj(in, y0 >= 0);
    if ((w.out[dd] - 1) * w.strides[dd] - w.pad_begin[dd] + span >= w.in[dd])
      in = conj(in, y0 + span < w.in[dd]);
  }
  if (col_low(b, b.cols.front())) in = conj(in, b.xb >= 0);
  if (col_high(b, b.cols.back())) in = conj(in, b.xb + b.cols.back() < w.in[l]);
  return in;
}

// The statements of the invocation owning block `cs` (plane, outer output coordinates, block
// index): weights, accumulators, the kernel rows, the finish and the stores.
Result<Stmt> block_stmt(GridKernel &g, Block &b, const WindowSchedule &s,
                        const std::vector<Expr> &cs) {
  const WindowDef &d = *b.d;
  const nn::Window &w = d.w;
  const int64_t l = b.rank - 1, ow = w.out[l];
  b.p = cs[0];
  b.o.assign(cs.begin() + 1, cs.end() - 1);
  b.ow0 = var(g.fresh("ow0"), ScalarType::i32);
  b.xb = var(g.fresh("xb"), ScalarType::i32);
  b.base = var(g.fresh("base"), ScalarType::i32);
  std::vector<Stmt> body;
  if (d.weight)
    for (int64_t t = 0; t < w.kernel_size(); ++t) {
      b.wts.push_back(var(g.fresh("w"), d.acc));
      body.push_back(declare_var(b.wts.back(), d.weight(b.p, t)));
    }
  std::vector<Expr> cnt;
  for (int64_t rr = 0; rr < b.R; ++rr) {
    b.acc.push_back(var(g.fresh("acc"), d.acc));
    // The initial value (a bias load) once; the other accumulators copy it.
    body.push_back(declare_var(b.acc.back(), rr == 0 ? d.init(b.p) : b.acc.front()));
    if (d.count == WindowDef::Count::none) continue;
    cnt.push_back(var(g.fresh("cnt"), ScalarType::i32));
    body.push_back(declare_var(cnt.back(), i32(w.kernel_size())));
  }
  // A window that never leaves the input needs no guards; otherwise the guarded body
  // (and the average's counts), alone or behind the interior test.
  Expr in = interior(b);
  if (!in.defined()) {
    KILN_ASSIGN(Stmt fast, rows_body(g, b, false));
    body.push_back(fast);
  } else {
    KILN_ASSIGN(Stmt edge, rows_body(g, b, true));
    std::vector<Stmt> e{edge};
    for (size_t rr = 0; rr < cnt.size(); ++rr)
      e.push_back(assign(cnt[rr], block_count(b, static_cast<int64_t>(rr))));
    if (s.hoist) {
      KILN_ASSIGN(Stmt fast, rows_body(g, b, false));
      body.push_back(if_then(in, fast, block(std::move(e))));
    } else {
      body.insert(body.end(), e.begin(), e.end());
    }
  }
  for (int64_t rr = 0; rr < b.R; ++rr) {
    const size_t k = static_cast<size_t>(rr);
    Expr v = d.finish ? d.finish(b.acc[k], cnt.empty() ? Expr() : cnt[k]) : b.acc[k];
    std::vector<Expr> at = b.o;
    at.push_back(b.ow0 + rr);
    KILN_ASSIGN(Stmt st, d.store(b.p, flatten(at, Shape(w.out)), v));
    if ((rr + 1) + (b.nblk - 1) * b.R > ow) st = if_then(b.ow0 + rr < ow, st);
    body.push_back(st);
  }
  Stmt st = block(std::move(body));
  st = let(b.base, d.in_plane(b.p), st);
  st = let(b.xb, b.ow0 * w.strides[l] - w.pad_begin[l], st);
  return let(b.ow0, cs.back() * b.R, st);
}

} // namespace

namespace {

// Whole rows (the cpu target: one invocation per workgroup): one workgroup per band of RB
// output rows of a plane. It copies the input rows the band reads into a local array, padded
// with the combiner's identity (0 for a weighted sum, the lowest value for max) on every side,
// so no tap is ever out of range; then every output is the taps' combination over that array,
// in the naive kernel's order (kernel rows, then columns, from the same initial value).
//   - Stride 1 on both axes: the band is computed flat, as wide rows of the padded width PW:
//     output i of the band reads array element i + kh * PW + kw for tap (kh, kw), one loop of
//     RB * PW outputs the C compiler vectorises (the PW - OW wide outputs per row are dropped).
//     A 7- or 14-wide plane is then one or two long loops, not 9 loops of a few vectors per
//     row as before (mobilenet_v2's 14x14 and 7x7 depthwise layers 4-5x faster).
//   - Other strides: each padded row is stored as s interleaved classes (columns c, c + s,
//     c + 2s, ... for c < s), so each tap of a row of outputs reads unit-stride.
// Padding is added, not skipped: the only difference from the naive kernel is a weight of inf
// or NaN at a tap that falls in the padding (NaN here, as in ONNX Runtime's zero-padded
// kernels). 2-D windows without a count, finish or term (depthwise convolutions, max pools).
// False when it does not apply (nothing emitted).
Result<bool> whole_rows(GridKernel &g, const WindowDef &d) {
  const nn::Window &w = d.w;
  LowerCtx &c = g.ctx();
  if (c.target().subgroup_size != 1 || w.rank() != 2 || d.count != WindowDef::Count::none ||
      d.finish || d.term || !d.in_plane || !d.read || !d.init || !d.store)
    return false;
  if (d.weight && !is_float(d.acc)) return false;
  const int64_t OH = w.out[0], OW = w.out[1], IH = w.in[0], IW = w.in[1];
  const int64_t KH = w.kernel[0], KW = w.kernel[1], sh = w.strides[0], sw = w.strides[1];
  const int64_t dh = w.dilations[0], dw = w.dilations[1];
  const int64_t pt = w.pad_begin[0], pl = w.pad_begin[1];
  if (OH < 1 || OW < 1 || OH > 65535 || d.planes > 65535) return false;
  const bool flat = sh == 1 && sw == 1;
  // Padded columns 0 .. PW - 1 (input column x at pl + x); every tap of every output inside.
  const int64_t PW = std::max(pl + IW, (OW - 1) * sw + (KW - 1) * dw + 1);
  const int64_t Q = (PW + sw - 1) / sw; // a class's length
  const int64_t rowlen = sw * Q;        // one stored row: the classes one after another
  // Flat: wide output i reads up to (KW - 1) * dw past the band's last row.
  const int64_t tail = flat ? (KW - 1) * dw : 0;
  const int64_t elem = storage_bytes(d.acc), budget = 32768 / elem;
  auto in_rows = [&](int64_t rb) { return (rb - 1) * sh + (KH - 1) * dh + 1; };
  auto floats = [&](int64_t rb) { return in_rows(rb) * rowlen + tail + (flat ? rb * PW : 0); };
  if (floats(1) > budget) return false;
  int64_t RB = 1;
  while (RB < OH && floats(RB + 1) <= budget) ++RB;
  const int64_t bands = (OH + RB - 1) / RB;
  RB = (OH + bands - 1) / bands; // equal bands
  const int64_t LR = in_rows(RB);
  const SharedVar loc = g.kernel().add_shared("rows", d.acc, static_cast<uint32_t>(LR * rowlen + tail));
  SharedVar out{};
  if (flat) out = g.kernel().add_shared("out", d.acc, static_cast<uint32_t>(RB * PW));

  const Expr band = var("band", ScalarType::i32), p = var("p", ScalarType::i32);
  const Expr oh0 = var("oh0", ScalarType::i32), rb = var("rb", ScalarType::i32);
  const Expr r = var("r", ScalarType::i32), u = var("u", ScalarType::i32),
             ih = var("ih", ScalarType::i32), src = var("src", ScalarType::i32);
  const Expr init = var("init", d.acc);
  const Expr pad = d.combine == WindowDef::Combine::max ? init : make_const(d.acc, 0);
  std::vector<Stmt> body{declare_var(init, d.init(p))};
  std::vector<Expr> wts;
  if (d.weight)
    for (int64_t t = 0; t < KH * KW; ++t) {
      wts.push_back(var(g.fresh("w"), d.acc));
      body.push_back(declare_var(wts.back(), d.weight(p, t)));
    }
  // The band's input rows: row r of the array is input row oh0 * sh - pt + r, class k of it
  // holds padded columns k, k + sw, ...: input column j * sw + k - pl at element r * rowlen +
  // k * Q + j. Padding (and rows outside the input) is the pad value.
  std::vector<Stmt> copy_row, pad_row;
  for (int64_t k = 0; k < sw; ++k) {
    // j in [jl, jh): input column j * sw + k - pl inside [0, IW).
    const int64_t jl = std::clamp<int64_t>((pl - k + sw - 1) / sw, 0, Q);
    const int64_t jh = std::clamp<int64_t>((pl + IW - k + sw - 1) / sw, jl, Q);
    const Expr at = r * rowlen + k * Q;
    if (jl > 0) copy_row.push_back(for_loop(u, i32(0), i32(jl), store_shared(loc, at + u, pad)));
    copy_row.push_back(for_loop(u, i32(jl), i32(jh - jl),
                                store_shared(loc, at + u, d.read(src + u * sw + (k - pl)))));
    if (jh < Q) copy_row.push_back(for_loop(u, i32(jh), i32(Q - jh), store_shared(loc, at + u, pad)));
  }
  pad_row.push_back(for_loop(u, i32(0), i32(rowlen), store_shared(loc, r * rowlen + u, pad)));
  body.push_back(for_loop(
      r, i32(0), i32(LR),
      let(ih, oh0 * sh - pt + r,
          if_then(logical_and(ih >= 0, ih < IH),
                  let(src, d.in_plane(p) + ih * IW, block(std::move(copy_row))),
                  block(std::move(pad_row))))));
  if (tail > 0)
    body.push_back(for_loop(u, i32(LR * rowlen), i32(tail), store_shared(loc, u, pad)));
  // The combination of every tap for the output whose tap (kh, kw) reads array element
  // at(kh, kw), in variable `a`, one assignment per tap (built as one expression, a max's
  // select(x > a, x, a) would use `a` twice per tap: a 5x5 window's tree has 2^25 nodes).
  const Expr a = var("a", d.acc);
  auto combine_taps = [&](const std::function<Expr(int64_t, int64_t)> &at, Stmt then) {
    std::vector<Stmt> st{declare_var(a, init)};
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        const Expr x = load_shared(loc, at(kh, kw));
        if (d.combine == WindowDef::Combine::max) st.push_back(assign(a, select(x > a, x, a)));
        else if (d.weight) st.push_back(assign(a, a + x * wts[static_cast<size_t>(kh * KW + kw)]));
        else st.push_back(assign(a, a + x));
      }
    st.push_back(std::move(then));
    return block(std::move(st));
  };
  if (flat) {
    body.push_back(for_loop(u, i32(0), rb * PW,
                            combine_taps([&](int64_t kh, int64_t kw) {
                              return u + (kh * dh * PW + kw * dw);
                            }, store_shared(out, u, a))));
    KILN_ASSIGN(Stmt st, d.store(p, (oh0 + r) * OW + u, load_shared(out, r * PW + u)));
    body.push_back(for_loop(r, i32(0), rb, for_loop(u, i32(0), i32(OW), st)));
  } else {
    KILN_ASSIGN(Stmt st, d.store(p, (oh0 + r) * OW + u, a));
    body.push_back(for_loop(r, i32(0), rb, for_loop(u, i32(0), i32(OW), combine_taps([&](int64_t kh, int64_t kw) {
      const int64_t col = kw * dw; // padded column ow * sw + col: class col % sw, index ow + col / sw
      return (r * sh + kh * dh) * rowlen + ((col % sw) * Q + col / sw) + u;
    }, st))));
  }
  Stmt s = let(oh0, band * RB, let(rb, min(i32(RB), i32(OH) - band * RB), block(std::move(body))));
  s = let(band, cast(ScalarType::i32, workgroup_id(0)),
          let(p, cast(ScalarType::i32, workgroup_id(1)), s));
  g.kernel().name += "_rows";
  KILN_TRY(g.finish_grid({1, 1, 1},
                         {static_cast<uint32_t>(bands), static_cast<uint32_t>(d.planes), 1}, s));
  c.count_whole_rows();
  return true;
}

} // namespace

Status emit_window(GridKernel &g, const WindowDef &d, const WindowSchedule &s) {
  KILN_ASSERT(s.strategy == WindowStrategy::window_rows,
              "emit_window: the naive kernel is the lowering's");
  KILN_ASSIGN(const bool rows, whole_rows(g, d));
  if (rows) return Status::ok();
  const nn::Window &w = d.w;
  KILN_ASSERT(w.rank() >= 1 && s.rows >= 1 && d.planes > 0 && d.init && d.store,
              "emit_window: unsupported definition");
  Block b;
  b.d = &d;
  b.R = s.rows;
  b.rank = w.rank();
  const int64_t l = b.rank - 1, ow = w.out[l];
  b.nblk = (ow + b.R - 1) / b.R;
  std::set<int64_t> cols;
  for (int64_t rr = 0; rr < b.R; ++rr)
    for (int64_t k = 0; k < w.kernel[l]; ++k) cols.insert(rr * w.strides[l] + k * w.dilations[l]);
  b.cols.assign(cols.begin(), cols.end());
  Shape grid{d.planes};
  for (int64_t dd = 0; dd < l; ++dd) grid.push_back(w.out[dd]);
  grid.push_back(b.nblk);
  g.kernel().name += fmt::format("_wrows{}{}", b.R, s.hoist ? "" : "g");
  return g.finish_per_element(shape_numel(grid), [&](Expr i) {
    return let_all(g, "c", unflatten(i, grid),
                   [&](std::vector<Expr> cs) { return block_stmt(g, b, s, cs); });
  });
}

} // namespace kiln::compiler
