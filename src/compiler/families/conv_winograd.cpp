// Winograd F(m x m, 3x3), m = 4 (default) or 2, for the matrix strategy (the cpu target): a
// 3x3 stride-1 convolution of one group as three kernels (n = m + 2).
//   1. conv_wino{m}_in: per (input plane, row of tiles), the n input rows the tiles read are
//      copied into a local array, zero-padded, each row stored as m interleaved column classes
//      (columns c, c + m, ... for c < m); then V = B^T d B for every n x n tile, rows first
//      (one loop over the whole padded row) and columns second (the classes make every tap of
//      a row of tiles unit-stride). V is stored [n * n][C][T] (T tiles of all images).
//   2. conv_wino{m}_gemm: n * n products S_z [M][T] = U_z [M][C] x V_z [C][T] on the matrix
//      strategy, U = G g G^T the weights transformed (in double) and packed in panels at
//      compile time, one set per z; V multiplied in place.
//   3. conv_wino{m}_out: per (output plane, row of tiles), Y = A^T S A + bias for every tile,
//      columns first into a local array, then the m output rows, through the op's store (fused
//      epilogues); the columns and rows past the output are never stored.
// Multiplications per output and input channel: n^2 / m^2 (2.25 for m = 4, 4 for m = 2)
// against 9. The transforms and the larger intermediates cost memory traffic and U is n^2 / 9
// times the weights, so the form is taken only where an image has enough output positions.
#include "compiler/families/conv_winograd.h"

#include "compiler/definitions/contraction.h"
#include "compiler/families/kernel_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace kiln::compiler {

using namespace kir;

namespace {

// A form F(m x m, 3x3): tiles of m x m outputs from n x n inputs (n = m + 2), with
// Y = A^T [(G g G^T) * (B^T d B)] A. F(2x2, 3x3) (points 0, 1, -1, infinity) rounds like direct
// summation; F(4x4, 3x3) uses the points 0, -1, 1, 1/2, -2, infinity, whose transforms round
// 2-3x less than the usual 0, 1, -1, 2, -2 (simulated in float32 against float64 over 64 and 256
// channels: 1.3e-6 and 1.5e-6 of the output's range against 2.7e-6 and 4.3e-6; direct
// summation 1.8e-7 and 3.8e-7).
struct Form {
  int m, n;
  double bt[6][6], g[6][3], at[4][6];
};

constexpr Form kF2 = {2,
                      4,
                      {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
                      {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
                      {{1, 1, 1, 0}, {0, 1, -1, -1}}};
constexpr Form kF4 = {4,
                      6,
                      {{1, -1.5, -2, 1.5, 1, 0},
                       {0, 1, -2.5, 0.5, 1, 0},
                       {0, -1, 0.5, 2.5, 1, 0},
                       {0, -2, -1, 2, 1, 0},
                       {0, 0.5, -1, -0.5, 1, 0},
                       {0, 1, -1.5, -2, 1.5, 1}},
                      {{1, 0, 0},
                       {-1.0 / 3, 1.0 / 3, -1.0 / 3},
                       {1.0 / 3, 1.0 / 3, 1.0 / 3},
                       {-16.0 / 15, -8.0 / 15, -4.0 / 15},
                       {1.0 / 15, -2.0 / 15, 4.0 / 15},
                       {0, 0, 1}},
                      {{1, 1, 1, 1, 1, 0},
                       {0, -1, 1, 0.5, -2, 0},
                       {0, 1, 1, 0.25, 4, 0},
                       {0, -1, 1, 0.125, -8, 1}}};

// Fewest output positions per image: below them (a 7x7 plane at batch 1) the products are too
// thin and the transformed weights (n^2 / 9 times the weights) dominate; bench/RESULTS.md.
constexpr int64_t kMinPositions = 196;
// Bytes of local arrays per kernel invocation (as the window bands).
constexpr int64_t kLocalBudget = 32768;

// sum_i coef[i] * v[i] with the zero terms left out and +-1 as additions.
Expr combine(const double *coef, const std::vector<Expr> &v) {
  Expr acc;
  for (size_t i = 0; i < v.size(); ++i) {
    const double c = coef[i];
    if (c == 0) continue;
    const double mag = c < 0 ? -c : c;
    Expr term = mag == 1 ? v[i] : v[i] * make_const(ScalarType::f32, mag);
    if (!acc.defined()) acc = c < 0 ? make_const(ScalarType::f32, 0) - term : term;
    else acc = c < 0 ? acc - term : acc + term;
  }
  return acc.defined() ? acc : make_const(ScalarType::f32, 0);
}

// U[z][o][c] = (G g G^T)[z / n][z % n] for the weights g [M][C][3][3], in double.
std::vector<float> transform_weights(const Form &f, const float *g, int64_t M, int64_t C) {
  const int n = f.n;
  std::vector<float> u(static_cast<size_t>(n * n * M * C));
  for (int64_t o = 0; o < M; ++o)
    for (int64_t ci = 0; ci < C; ++ci) {
      const float *k = g + (o * C + ci) * 9;
      double t[6][3]; // G g
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3; ++j)
          t[i][j] = f.g[i][0] * k[j] + f.g[i][1] * k[3 + j] + f.g[i][2] * k[6 + j];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double v = t[i][0] * f.g[j][0] + t[i][1] * f.g[j][1] + t[i][2] * f.g[j][2];
          u[static_cast<size_t>(((i * n + j) * M + o) * C + ci)] = static_cast<float>(v);
        }
    }
  return u;
}

struct Tiles {
  const Form *f;
  int64_t images, C, M, IH, IW, OH, OW, pt, pl;
  int64_t TH, TW, T; // tile rows and columns per image, tiles in all
  int64_t Q;         // a column class's length: padded columns 0 .. m * Q - 1
};

// Kernel 1: the input transform into V.
Status emit_input_transform(LowerCtx &c, const Op &op, const Tiles &t, int v_id) {
  const Form &f = *t.f;
  const int64_t m = f.m, n = f.n;
  GridKernel g(c, op, fmt::format("conv_wino{}_in", m));
  KILN_ASSIGN(const BufferVar X, g.in(op.operands[0]));
  const BufferVar V = g.scratch(v_id, ScalarType::f32, true);
  const int64_t RL = m * t.Q;
  const SharedVar rows = g.kernel().add_shared("rows", ScalarType::f32, static_cast<uint32_t>(n * RL));
  const SharedVar tr = g.kernel().add_shared("tr", ScalarType::f32, static_cast<uint32_t>(n * RL));
  const Expr ty = var("ty", ScalarType::i32), p = var("p", ScalarType::i32);
  const Expr r = var("r", ScalarType::i32), q = var("q", ScalarType::i32),
             y = var("y", ScalarType::i32), src = var("src", ScalarType::i32),
             u = var("u", ScalarType::i32), tx = var("tx", ScalarType::i32);
  const Expr zero = make_const(ScalarType::f32, 0);
  // Row r of the array: input row ty * m - pt + r; padded column x' = m q + k (input column
  // x' - pl) at r * RL + k * Q + q.
  std::vector<Stmt> copy;
  int64_t qa = 0, qb = t.Q; // q where every class reads inside the row
  std::vector<int64_t> ql(static_cast<size_t>(m)), qh(static_cast<size_t>(m));
  for (int64_t k = 0; k < m; ++k) {
    ql[k] = std::clamp<int64_t>((t.pl - k + m - 1) / m, 0, t.Q);
    qh[k] = std::clamp<int64_t>((t.pl + t.IW - k + m - 1) / m, ql[k], t.Q);
    qa = std::max(qa, ql[k]);
    qb = std::min(qb, qh[k]);
  }
  qb = std::max(qa, qb);
  {
    std::vector<Stmt> all;
    for (int64_t k = 0; k < m; ++k)
      all.push_back(store_shared(rows, r * RL + (k * t.Q) + q, load(X, src + q * m + (k - t.pl))));
    copy.push_back(for_loop(q, i32(qa), i32(qb - qa), block(std::move(all))));
  }
  for (int64_t k = 0; k < m; ++k) {
    const Expr at = r * RL + k * t.Q;
    const Expr in = load(X, src + q * m + (k - t.pl));
    // Left of the interior: zeros, then the columns inside; right likewise.
    const int64_t left = std::min(qa, qh[k]), right = std::max(qb, ql[k]);
    if (ql[k] > 0) copy.push_back(for_loop(q, i32(0), i32(ql[k]), store_shared(rows, at + q, zero)));
    if (left > ql[k]) copy.push_back(for_loop(q, i32(ql[k]), i32(left - ql[k]), store_shared(rows, at + q, in)));
    if (qh[k] > right) copy.push_back(for_loop(q, i32(right), i32(qh[k] - right), store_shared(rows, at + q, in)));
    if (t.Q > qh[k]) copy.push_back(for_loop(q, i32(qh[k]), i32(t.Q - qh[k]), store_shared(rows, at + q, zero)));
  }
  const int64_t plane = t.IH * t.IW;
  std::vector<Stmt> body;
  body.push_back(for_loop(
      r, i32(0), i32(n),
      let(y, ty * m - t.pt + r,
          if_then(logical_and(y >= 0, y < t.IH), let(src, p * plane + y * t.IW, block(std::move(copy))),
                  for_loop(u, i32(0), i32(RL), store_shared(rows, r * RL + u, zero))))));
  // Rows: tr[k][u] = sum_i BT[k][i] rows[i][u], over the whole padded row.
  {
    std::vector<Expr> in;
    for (int64_t i = 0; i < n; ++i) in.push_back(load_shared(rows, u + i * RL));
    std::vector<Stmt> all;
    for (int64_t k = 0; k < n; ++k) all.push_back(store_shared(tr, u + k * RL, combine(f.bt[k], in)));
    body.push_back(for_loop(u, i32(0), i32(RL), block(std::move(all))));
  }
  // Columns: V[k * n + l][channel][tile] = sum_j BT[l][j] tr[k][m tx + j].
  const Expr ch = var("ch", ScalarType::i32), t0 = var("t0", ScalarType::i32);
  for (int64_t k = 0; k < n; ++k) {
    std::vector<Expr> in;
    for (int64_t j = 0; j < n; ++j) in.push_back(load_shared(tr, tx + (k * RL + (j % m) * t.Q + j / m)));
    std::vector<Stmt> all;
    for (int64_t l = 0; l < n; ++l)
      all.push_back(store(V, (ch + (k * n + l) * t.C) * t.T + t0 + tx, combine(f.bt[l], in)));
    body.push_back(for_loop(tx, i32(0), i32(t.TW), block(std::move(all))));
  }
  Stmt s = let(ch, p % t.C, let(t0, ((p / t.C) * t.TH + ty) * t.TW, block(std::move(body))));
  s = let(ty, cast(ScalarType::i32, workgroup_id(0)), let(p, cast(ScalarType::i32, workgroup_id(1)), s));
  return g.finish_grid({1, 1, 1}, {static_cast<uint32_t>(t.TH), static_cast<uint32_t>(t.images * t.C), 1}, s);
}

// Kernel 3: the output transform from S, bias and the op's epilogue.
Status emit_output_transform(LowerCtx &c, const Op &op, const Tiles &t, int s_id) {
  const Form &f = *t.f;
  const int64_t m = f.m, n = f.n;
  GridKernel g(c, op, fmt::format("conv_wino{}_out", m));
  KILN_ASSIGN(const helpers::ConvBuffers bufs, helpers::bind_conv_buffers(g, op, false));
  const BufferVar B = bufs.B, Y = bufs.Y;
  const BufferVar S = g.scratch(s_id, ScalarType::f32, false);
  const SharedVar cols = g.kernel().add_shared("cols", ScalarType::f32, static_cast<uint32_t>(n * m * t.TW));
  const Expr ty = var("ty", ScalarType::i32), p = var("p", ScalarType::i32);
  const Expr img = var("img", ScalarType::i32), oc = var("oc", ScalarType::i32),
             t0 = var("t0", ScalarType::i32), tx = var("tx", ScalarType::i32),
             bias = var("bias", ScalarType::f32);
  std::vector<Stmt> body;
  body.push_back(declare_var(bias, B.index >= 0 ? load(B, oc) : make_const(ScalarType::f32, 0)));
  // Columns: cols[k][j][tile] = sum_l AT[j][l] S[k * n + l][oc][tile].
  for (int64_t k = 0; k < n; ++k) {
    std::vector<Expr> in;
    for (int64_t l = 0; l < n; ++l) in.push_back(load(S, (oc + (k * n + l) * t.M) * t.T + t0 + tx));
    std::vector<Stmt> all;
    for (int64_t j = 0; j < m; ++j) all.push_back(store_shared(cols, tx + (k * m + j) * t.TW, combine(f.at[j], in)));
    body.push_back(for_loop(tx, i32(0), i32(t.TW), block(std::move(all))));
  }
  // Rows: output row m ty + i, column m tx + j = sum_k AT[i][k] cols[k][j][tx] + bias.
  const int64_t full = t.OW / m, rest = t.OW % m, out_size = t.OH * t.OW;
  for (int64_t i = 0; i < m; ++i) {
    const Expr oy = ty * m + i;
    auto tile = [&](const Expr &x, int64_t js) -> Result<Stmt> {
      std::vector<Stmt> st;
      for (int64_t j = 0; j < js; ++j) {
        std::vector<Expr> in;
        for (int64_t k = 0; k < n; ++k) in.push_back(load_shared(cols, x + (k * m + j) * t.TW));
        const Expr ox = x * m + j;
        KILN_ASSIGN(Stmt one, g.store(Y, (img * t.M + oc) * out_size + oy * t.OW + ox,
                                      combine(f.at[i], in) + bias, {img, oc, oy, ox}));
        st.push_back(std::move(one));
      }
      return block(std::move(st));
    };
    std::vector<Stmt> row;
    if (full > 0) {
      KILN_ASSIGN(Stmt whole, tile(tx, m));
      row.push_back(for_loop(tx, i32(0), i32(full), whole));
    }
    if (rest > 0) {
      KILN_ASSIGN(Stmt part, tile(i32(full), rest));
      row.push_back(part);
    }
    Stmt rs = block(std::move(row));
    body.push_back(t.OH % m == 0 || i == 0 ? rs : if_then(oy < t.OH, rs));
  }
  Stmt s = let(img, p / t.M, let(oc, p % t.M, let(t0, (img * t.TH + ty) * t.TW, block(std::move(body)))));
  s = let(ty, cast(ScalarType::i32, workgroup_id(0)), let(p, cast(ScalarType::i32, workgroup_id(1)), s));
  return g.finish_grid({1, 1, 1}, {static_cast<uint32_t>(t.TH), static_cast<uint32_t>(t.images * t.M), 1}, s);
}

} // namespace

Result<bool> lower_conv_winograd(LowerCtx &c, const Op &op, const nn::Window &w) {
  const int tile = c.options().winograd;
  if ((tile != 2 && tile != 4) || c.target().subgroup_size != 1 || w.rank() != 2) return false;
  for (int64_t r = 0; r < 2; ++r)
    if (w.kernel[r] != 3 || w.strides[r] != 1 || w.dilations[r] != 1) return false;
  if (op.attr_int("group", 1) != 1) return false;
  // The convolution of an integer QDQ group (its input dequantized, its weights integers) sums
  // exact products in f32, which its bit-exact match with the integer reference relies on;
  // the transforms would round them.
  const Op *producer = op.operands[0]->def;
  if (producer && producer->name() == "kiln.dequantize_linear") return false;
  const Shape &xd = op.operands[0]->type.dims;
  if (op.operands[0]->type.dtype != DType::f32 || op.results[0]->type.dtype != DType::f32)
    return false;
  const Tensor *wt = const_operand(op, 1);
  if (!wt || wt->dtype() != DType::f32) return false;
  Tiles t{};
  t.f = tile == 2 ? &kF2 : &kF4;
  const int64_t m = t.f->m, n = t.f->n;
  t.images = xd[0];
  t.C = xd[1];
  t.M = op.operands[1]->type.dims[0];
  t.IH = w.in[0];
  t.IW = w.in[1];
  t.OH = w.out[0];
  t.OW = w.out[1];
  t.pt = w.pad_begin[0];
  t.pl = w.pad_begin[1];
  t.TH = (t.OH + m - 1) / m;
  t.TW = (t.OW + m - 1) / m;
  t.T = t.images * t.TH * t.TW;
  t.Q = t.TW + 1;
  if (t.C % 4 != 0 || t.OH * t.OW < kMinPositions) return false;
  if (2 * n * m * t.Q * 4 > kLocalBudget || n * m * t.TW * 4 > kLocalBudget) return false;
  const uint64_t v_count = static_cast<uint64_t>(n * n * t.C * t.T),
                 s_count = static_cast<uint64_t>(n * n * t.M * t.T);
  if (v_count > static_cast<uint64_t>(INT32_MAX) || s_count > static_cast<uint64_t>(INT32_MAX) ||
      t.images * t.C > 65535 || t.images * t.M > 65535 || t.TH > 65535)
    return false;
  ContractionDef d;
  d.batch = n * n;
  d.M = t.M;
  d.N = t.T;
  d.kdims = Shape{t.C};
  const ContractionSchedule sched = schedule_contraction(c, d);
  if (sched.strategy != Strategy::matrix || sched.split_k != 1) return false;
  c.count_strategy(sched.strategy);
  c.count_winograd();

  const int v_id = c.new_scratch(v_count * 4), s_id = c.new_scratch(s_count * 4);
  KILN_TRY(emit_input_transform(c, op, t, v_id));
  {
    GridKernel g(c, op, fmt::format("conv_wino{}_gemm", m));
    d.acc = ScalarType::f32;
    const std::vector<float> u = transform_weights(*t.f, wt->data<float>(), t.M, t.C);
    bind_a_panels(g, d, u.data(), sched.tile.tm, sched.tile.tk, n * n);
    d.b = g.scratch(v_id, ScalarType::f32, false);
    const BufferVar S = g.scratch(s_id, ScalarType::f32, true);
    const int64_t C = t.C, T = t.T, M = t.M;
    d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &nn) {
      return OperandRef{(z * C + k[0]) * T + nn, Expr()};
    };
    d.store = [=](const Expr &z, const Expr &om, const Expr &on, const Expr &acc) -> Result<Stmt> {
      return store(S, (z * M + om) * T + on, acc);
    };
    KILN_TRY(emit_contraction(g, d, sched));
  }
  KILN_TRY(emit_output_transform(c, op, t, s_id));
  return true;
}

} // namespace kiln::compiler
