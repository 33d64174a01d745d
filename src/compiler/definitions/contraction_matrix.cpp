// The `matrix` contraction strategy of the C backend (moved out of contraction.cpp): one
// invocation per workgroup, tk-deep slices multiplied as f32 cooperative matrices.
#include "compiler/definitions/contraction_internal.h"
#include "kiln/artifact/cpu_abi.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

namespace kiln::compiler::contraction_detail {

using namespace kir;

// `matrix`: the workgroup is one invocation (one subgroup). Per tk step it stages the A slice
// (tm x tk) and the B slice (tk x tn) in shared memory, zero outside the operands, and
// multiplies them into a tm x tn accumulator matrix; the accumulator goes through shared
// memory to the guarded stores. The k coordinates are decomposed once per k, not per element.
// An operand that is a plain row-major matrix (A: m x k, B: k x n, unit stride along k for A
// and along n for B, as a weight matrix, a matmul operand or a 1x1 convolution's input) is
// multiplied straight from its buffer in the steps whose slice lies inside it; only the
// others stage it.
Result<Stmt> matrix_body(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                         const Layout &l) {
  const ScalarType f = d.acc;
  const auto tm = static_cast<uint32_t>(t.tm), tn = static_cast<uint32_t>(t.tn),
             tk = static_cast<uint32_t>(t.tk);
  SharedVar sa = g.kernel().add_shared("a_tile", f, tm * tk);
  SharedVar sb = g.kernel().add_shared("b_tile", f, tk * tn);
  SharedVar sc = g.kernel().add_shared("c_tile", f, tm * tn);
  const ValueType ta = ValueType::coop_matrix(f, tm, tk, MatrixUse::a);
  const ValueType tb = ValueType::coop_matrix(f, tk, tn, MatrixUse::b);
  const ValueType tc = ValueType::coop_matrix(f, tm, tn, MatrixUse::accumulator);
  const Expr acc = var("acc", tc), kt = var("kt", ScalarType::i32);
  const Expr kk = var("kk", ScalarType::i32), i = var("i", ScalarType::i32),
             j = var("j", ScalarType::i32), k = var("k", ScalarType::i32);
  const int64_t K = d.K(), steps = (K + t.tk - 1) / t.tk;
  auto kcoords = [&](int64_t kv) {
    std::vector<Expr> ks;
    for (const Expr &c : coords_of(i32(kv), d.kdims)) ks.push_back(c);
    return ks;
  };

  // The k coordinates of k = kt * tk + kk, bound once; `use` builds the statement over them.
  auto with_k = [&](const std::function<Stmt(const std::vector<Expr> &, const Expr &)> &use) {
    std::vector<Expr> ks;
    for (size_t r = 0; r < d.kdims.size(); ++r)
      ks.push_back(var(fmt::format("k{}", r), ScalarType::i32));
    const Expr inside_k = K % t.tk == 0 ? Expr() : k < i32(K);
    Stmt body = use(ks, inside_k);
    const std::vector<Expr> cs = coords_of(K % t.tk == 0 ? k : min(k, i32(K - 1)), d.kdims);
    for (size_t r = ks.size(); r-- > 0;) body = let(ks[r], cs[r], body);
    return let(k, kt * t.tk + kk, body);
  };
  bool stage_a_per_k = true, stage_b_per_k = true;
  Stmt stage_a = with_k([&](const std::vector<Expr> &ks, const Expr &inside_k) {
    const Expr m = clamp_to(l.m0 + i, d.M, t.tm);
    Expr ok = inside_k;
    if (d.M % t.tm != 0) ok = ok.defined() ? logical_and(ok, l.m0 + i < d.M) : l.m0 + i < d.M;
    return for_loop(i, i32(0), i32(t.tm),
                    store_shared(sa, i * t.tk + kk, read(d.a, d.a_at(l.z, m, ks), ok, f)));
  });
  // B row-major (unit stride along n), else transposed (a fully connected layer's weights:
  // unit stride along k): then it is multiplied column-major, staged slices included, so
  // every output sums its products in one order whichever way its tile's B arrives (a model
  // whose outputs must come out equal does not see direct and staged tiles round apart).
  // (Any stride: the matrix strategy is the C backend's, whose matrices take unaligned rows.)
  auto usable = [&](const std::optional<int64_t> &st, const BufferVar &buf) {
    return st && *st >= 0 && buf.elem == f;
  };
  const auto b_rows = row_major_stride(
      [&](int64_t z, int64_t kv, int64_t n) { return d.b_at(i32(z), kcoords(kv), i32(n)); },
      d.batch, K, d.N, t.tk);
  const auto b_ld = usable(b_rows, d.b)
                        ? b_rows
                        : row_major_stride([&](int64_t z, int64_t n, int64_t kv) {
                            return d.b_at(i32(z), kcoords(kv), i32(n));
                          }, d.batch, d.N, K);
  const bool b_transposed = !usable(b_rows, d.b) && usable(b_ld, d.b);
  Stmt stage_b = with_k([&](const std::vector<Expr> &ks, const Expr &inside_k) {
    const Expr n = clamp_to(l.n0 + j, d.N, t.tn);
    Expr ok = inside_k;
    if (d.N % t.tn != 0) ok = ok.defined() ? logical_and(ok, l.n0 + j < d.N) : l.n0 + j < d.N;
    const Expr at = b_transposed ? j * t.tk + kk : kk * t.tn + j;
    return for_loop(j, i32(0), i32(t.tn), store_shared(sb, at, read(d.b, d.b_at(l.z, ks, n), ok, f)));
  });
  // An operand that is row-major along its fast axis (A along k; B along n, or along k when
  // transposed) stages a partial slice as runs: per row the elements inside the operand are
  // copied (a loop a C compiler vectorises), the rest zeroed, instead of element by element
  // with a bounds test and the k coordinates decomposed per element.
  const auto a_ld = row_major_stride(
      [&](int64_t z, int64_t m, int64_t kv) { return d.a_at(i32(z), i32(m), kcoords(kv)); },
      d.batch, d.M, K);
  const Expr k0 = kt * t.tk;
  auto run_copy = [&](SharedVar dst, const Expr &row_at, int64_t len, const Expr &valid,
                      const BufferVar &src, const Expr &src_at) {
    const Expr u = var("u", ScalarType::i32);
    return block({for_loop(u, i32(0), valid,
                           store_shared(dst, row_at + u, cast(f, load(src, src_at + u)))),
                  for_loop(u, valid, i32(len) - valid,
                           store_shared(dst, row_at + u, make_const(f, 0)))});
  };
  auto clamp_valid = [](Expr left, int64_t tile, int64_t extent) {
    return extent % tile == 0 ? i32(tile) : max(i32(0), min(i32(tile), std::move(left)));
  };
  if (usable(a_ld, d.a)) {
    // Row i of the slice: A(m0 + i, k0 .. k0 + tk), valid up to K (and zero past M).
    const Expr kvalid = clamp_valid(i32(K) - k0, t.tk, K);
    const Expr m = clamp_to(l.m0 + i, d.M, t.tm);
    const Expr valid = d.M % t.tm == 0 ? kvalid : select(l.m0 + i < d.M, kvalid, i32(0));
    stage_a = for_loop(i, i32(0), i32(t.tm),
                       run_copy(sa, i * t.tk, t.tk, valid, d.a, d.a_at(l.z, m, coords_of(k0, d.kdims)).index));
    stage_a_per_k = false;
  }
  if (usable(b_rows, d.b)) {
    // Row kk of the slice: B(k, n0 .. n0 + tn), valid up to N (and zero past K).
    stage_b = with_k([&](const std::vector<Expr> &ks, const Expr &inside_k) {
      Expr valid = clamp_valid(i32(d.N) - l.n0, t.tn, d.N);
      if (inside_k.defined()) valid = select(inside_k, valid, i32(0));
      return run_copy(sb, kk * t.tn, t.tn, valid, d.b, d.b_at(l.z, ks, l.n0).index);
    });
  } else if (b_transposed) {
    // Column j of the slice (stored as row j): B(k0 .. k0 + tk, n0 + j), valid up to K.
    const Expr kvalid = clamp_valid(i32(K) - k0, t.tk, K);
    const Expr n = clamp_to(l.n0 + j, d.N, t.tn);
    const Expr valid = d.N % t.tn == 0 ? kvalid : select(l.n0 + j < d.N, kvalid, i32(0));
    stage_b = for_loop(j, i32(0), i32(t.tn),
                       run_copy(sb, j * t.tk, t.tk, valid, d.b, d.b_at(l.z, coords_of(k0, d.kdims), n).index));
    stage_b_per_k = false;
  }
  auto staging = [&](const Stmt &st, bool per_k) {
    return per_k ? for_loop(kk, i32(0), i32(t.tk), st) : st;
  };
  const Expr staged_a = matrix_load(ta, sa, i32(0), i32(t.tk), MatrixLayout::row_major);
  const Expr staged_b =
      b_transposed ? matrix_load(tb, sb, i32(0), i32(t.tk), MatrixLayout::col_major)
                   : matrix_load(tb, sb, i32(0), i32(t.tn), MatrixLayout::row_major);
  std::vector<Stmt> staged_step{staging(stage_a, stage_a_per_k),
                                staging(stage_b, stage_b_per_k),
                                assign(acc, matrix_mul_add(staged_a, staged_b, acc))};
  Stmt step = block(std::move(staged_step));

  // Direct operands, in the steps whose slice lies inside them (either, both or neither).
  auto inside = [&](const Expr &origin, int64_t extent, int64_t tile) {
    return extent % tile == 0 ? Expr() : origin + tile <= extent;
  };
  auto both = [](Expr a, const Expr &b) {
    return !a.defined() ? b : !b.defined() ? a : logical_and(a, b);
  };
  const Expr k_inside = inside(k0, K, t.tk);
  const bool a_panels = d.a_panel == t.tm && d.a_panel_k % t.tk == 0 && d.a.elem == f;
  const bool a_direct_ok = a_panels || usable(a_ld, d.a), b_direct_ok = usable(b_ld, d.b);
  if (a_direct_ok || b_direct_ok) {
    Expr a_direct, b_direct, a_in, b_in;
    if (a_panels) {
      // The panel of this tile's rows, k step kt: tm x tk column-major, contiguous; whole in
      // every step (padded with zeros past M and K).
      Expr at = l.m0 * d.a_panel_k + k0 * t.tm;
      if (d.a_panel_sets > 1)
        at = (d.a_panel_sets == d.batch ? l.z : l.z % d.a_panel_sets) * d.a_panel_batch + at;
      a_direct = matrix_load(ta, d.a, at, i32(t.tm), MatrixLayout::col_major);
    } else if (a_direct_ok) {
      // A straight from its buffer at (m0, k0): element (r, c) at offset + r * stride + c.
      a_direct = matrix_load(ta, d.a, d.a_at(l.z, l.m0, coords_of(k0, d.kdims)).index,
                             i32(*a_ld), MatrixLayout::row_major);
      a_in = both(inside(l.m0, d.M, t.tm), k_inside);
    }
    if (b_direct_ok) {
      b_direct = matrix_load(tb, d.b, d.b_at(l.z, coords_of(k0, d.kdims), l.n0).index,
                             i32(*b_ld),
                             b_transposed ? MatrixLayout::col_major : MatrixLayout::row_major);
      // Row-major B is read whole even in the last tile of N: its columns past N read
      // tn - N % tn elements past the operand's last one, within the binding's readable tail
      // on the C backend (KILN_CPU_BINDING_TAIL; this strategy is the C backend's), and only
      // feed accumulator columns the epilogue never stores. Staging that tile cost a third of
      // a 7x7 convolution's time (N = 63 in one tile: every step staged); bounding the
      // overread by tn - 1 instead staged every step of the one-tile shapes (N = 196 as 208
      // columns, 169 as 176).
      const int64_t past = d.N % t.tn == 0 ? 0 : t.tn - d.N % t.tn;
      const bool overread = !b_transposed && past * storage_bytes(d.b.elem) <= KILN_CPU_BINDING_TAIL;
      b_in = overread ? k_inside : both(inside(l.n0, d.N, t.tn), k_inside);
    }
    // The step with A (B) direct or staged; `when` guards the direct variants.
    auto variant = [&](bool ad, bool bd) {
      std::vector<Stmt> v;
      if (!ad) v.push_back(staging(stage_a, stage_a_per_k));
      if (!bd) v.push_back(staging(stage_b, stage_b_per_k));
      v.push_back(assign(acc, matrix_mul_add(ad ? a_direct : staged_a, bd ? b_direct : staged_b,
                                             acc)));
      return block(std::move(v));
    };
    auto guarded = [](const Expr &cond, Stmt yes, Stmt no) {
      return cond.defined() ? if_then(cond, std::move(yes), std::move(no)) : yes;
    };
    if (a_direct_ok && b_direct_ok)
      step = guarded(a_in, guarded(b_in, variant(true, true), variant(true, false)),
                     guarded(b_in, variant(false, true), step));
    else if (a_direct_ok)
      step = guarded(a_in, variant(true, false), step);
    else
      step = guarded(b_in, variant(false, true), step);
  }
  std::vector<Stmt> body{declare_var(acc, matrix_fill(tc, make_const(f, 0))),
                         for_loop(kt, i32(0), i32(steps), step),
                         d.store_n_outer
                             ? matrix_store(sc, i32(0), i32(t.tm), MatrixLayout::col_major, acc)
                             : matrix_store(sc, i32(0), i32(t.tn), MatrixLayout::row_major, acc)};
  const Expr m = var("om", ScalarType::i32), n = var("on", ScalarType::i32);
  // The tile's rows and columns inside the output.
  const Expr rows = d.M % t.tm == 0 ? i32(t.tm) : max(i32(0), min(i32(t.tm), i32(d.M) - l.m0));
  const Expr cols = d.N % t.tn == 0 ? i32(t.tn) : max(i32(0), min(i32(t.tn), i32(d.N) - l.n0));
  if (d.n_row > 0 && d.store_run && !d.store_n_outer) {
    // By runs: tile row i, then each row of n the tile touches (at most (tn - 1) / W + 2), its
    // valid columns [lo, hi) as one unit-stride loop.
    const int64_t W = d.n_row;
    const Expr rr = var("rr", ScalarType::i32), row = var("orow", ScalarType::i32),
               col = var("ocol", ScalarType::i32), lo = var("lo", ScalarType::i32),
               hi = var("hi", ScalarType::i32);
    KILN_ASSIGN(Stmt st, d.store_run(l.z, m, row, col,
                                     load_shared(sc, i * t.tn + row * W + col - l.n0)));
    Stmt runs = for_loop(col, lo, max(i32(0), hi - lo), st);
    runs = let(lo, max(i32(0), l.n0 - row * W),
               let(hi, min(min(i32(d.n_row_valid), l.n0 + i32(t.tn) - row * W),
                           i32(d.N) - row * W),
                   runs));
    runs = for_loop(rr, i32(0), i32((t.tn - 1) / W + 2), let(row, l.n0 / W + rr, runs));
    body.push_back(for_loop(i, i32(0), rows, let(m, l.m0 + i, runs)));
    return block(std::move(body));
  }
  // The epilogue: every in-bounds element through the definition's store; by rows of m, or
  // with n outermost (what n alone decides is then computed once per column).
  KILN_ASSIGN(Stmt st, d.store(l.z, m, n,
                               load_shared(sc, d.store_n_outer ? j * t.tm + i : i * t.tn + j)));
  // A tile inside the output stores with constant trip counts; a partial one stops its loops
  // at M and N instead of testing each element (either way loops a C compiler vectorises).
  Expr tile_in;
  if (d.M % t.tm != 0) tile_in = l.m0 + t.tm <= d.M;
  if (d.N % t.tn != 0) tile_in = both(tile_in, l.n0 + t.tn <= d.N);
  auto loops = [&](const Expr &em, const Expr &en) {
    if (d.store_n_outer)
      return for_loop(j, i32(0), en,
                      let(n, l.n0 + j, for_loop(i, i32(0), em, let(m, l.m0 + i, st))));
    return for_loop(i, i32(0), em,
                    for_loop(j, i32(0), en, let(m, l.m0 + i, let(n, l.n0 + j, st))));
  };
  const Expr whole_m = i32(t.tm), whole_n = i32(t.tn);
  body.push_back(tile_in.defined() ? if_then(tile_in, loops(whole_m, whole_n), loops(rows, cols))
                                   : loops(whole_m, whole_n));
  return block(std::move(body));
}

} // namespace kiln::compiler::contraction_detail
