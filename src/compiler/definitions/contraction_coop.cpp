// `coop`: the contraction of f16 operands on cooperative matrices (VK_KHR_cooperative_matrix,
// subgroup scope, 16 x 16 x 16 f16 x f16 -> f32). A workgroup computes a tm x tn tile with
// (tm / rm) x (tn / rn) subgroups, each owning an rm x rn block of 16 x 16 accumulators. Per
// tk step the workgroup stages the A slice (tm rows of tk) and the B slice (tk rows of tn, or
// tn rows of tk for a B contiguous along k) in shared memory as f16, zero outside the
// operands, so every cooperative-matrix load reads a whole matrix and needs no guard (the
// uniform control flow the instructions require). The next slice's global reads are issued
// into registers before the current slice's multiply-adds (two staging buffers: one barrier
// per step). An operand that is a row-major matrix with rows aligned to 4 elements is read as
// 4-element vectors; others (a convolution's gathered input) element by element through the
// definition's index maps. The epilogue passes each accumulator through a per-subgroup f32
// matrix in shared memory, from which the subgroup's invocations store its elements through
// the definition's store callback (bias, activations, casts: the fused epilogue).
#include "compiler/definitions/contraction_internal.h"

#include <fmt/format.h>

namespace kiln::compiler::contraction_detail {

using namespace kir;

namespace {

constexpr ScalarType kF16 = ScalarType::f16;

// How one operand's slice is staged: `rows` x `cols` elements, row r at r * row_len, rows of
// m (A), of k (B), or of n (a B contiguous along k: `b_by_n`). Neighbouring invocations take
// neighbouring elements (or vectors of `lanes`) along a row.
struct Slice {
  SharedVar tile;
  int rows = 0, cols = 0, row_len = 0, lanes = 1;
  bool is_a = true, b_by_n = false;
  int size() const { return rows * row_len; } // one staging buffer
  int units() const { return rows * cols / lanes; }
};

// What the kernel's statements need from the layout: the workgroup's tile origin, batch entry,
// linear invocation id and subgroup coordinates.
struct CoopLayout {
  Expr lid, m0, n0, z, sg, lane, sx, sy;
  Expr slice; // split-K: the workgroup's K slice (else undefined)
  int invocations = 0, subgroup = 32;
};

// The stride of a row-major operand whose rows may be read as 4-element vectors: stride, the
// first element of every batch entry and the run length along the vector axis all multiples of
// 4; nothing otherwise.
std::optional<int64_t> vector_stride(
    const std::function<OperandRef(int64_t z, int64_t x, int64_t y)> &at, int64_t batch,
    int64_t X, int64_t Y) {
  const auto st = row_major_stride(at, batch, X, Y);
  if (!st || *st % 4 != 0 || Y % 4 != 0) return std::nullopt;
  for (int64_t z : {int64_t(0), std::min<int64_t>(1, batch - 1)}) {
    const Expr i = simplify(at(z, 0, 0).index);
    const auto *c = i.as<IntImm>();
    if (!c || c->value % 4 != 0) return std::nullopt;
  }
  return st;
}

// Whether an operand's rows along y are runs of 4 contiguous elements, each starting at an
// index that is a multiple of 4: element (z, x, y) at index(z, x, y - y % 4) + y % 4, Y a
// multiple of 4, no padding (probed at sample points, as row_major_stride). A batch of images
// folded into a 1x1 convolution's N is such an operand when the positions per image are a
// multiple of 4: no run crosses an image. A 4-lane read then loads from its first element's
// own index.
bool vector_runs(const std::function<OperandRef(int64_t z, int64_t x, int64_t y)> &at,
                 int64_t batch, int64_t X, int64_t Y) {
  if (Y % 4 != 0 || Y < 4) return false;
  auto index = [&](int64_t z, int64_t x, int64_t y) -> std::optional<int64_t> {
    const OperandRef r = at(z, x, y);
    if (r.inside.defined()) {
      const Expr inside = simplify(r.inside); // keeps the node `c` points into alive
      const auto *c = inside.as<IntImm>();
      if (!c || c->value == 0) return std::nullopt;
    }
    const Expr i = simplify(r.index);
    if (const auto *c = i.as<IntImm>()) return c->value;
    return std::nullopt;
  };
  std::vector<int64_t> ys, xs;
  for (int64_t y = 0; y < std::min<int64_t>(Y, 64); y += 4) ys.push_back(y);
  for (int64_t y : {Y / 3, Y / 2, (2 * Y) / 3, Y - 64, Y - 4}) ys.push_back(std::max<int64_t>(0, y - y % 4));
  for (int64_t x : {int64_t(0), int64_t(1), X / 2, X - 1}) xs.push_back(x);
  for (int64_t z : {int64_t(0), batch - 1})
    for (int64_t x : xs)
      for (int64_t y : ys) {
        const auto first = index(z, x, y);
        if (!first || *first % 4 != 0) return false;
        for (int64_t q = 1; q < 4; ++q) {
          const auto v = index(z, x, y + q);
          if (!v || *v != *first + q) return false;
        }
      }
  return true;
}

// The global read of staging unit `u` (< units) of the slice starting at k0: a scalar or a
// vector of f16, zero outside the operand.
Expr unit_read(const ContractionDef &d, const Slice &s, const CoopLayout &l, const Expr &k0,
               const Expr &u, const std::optional<int64_t> &stride) {
  const int per_row = s.cols / s.lanes;
  const Expr r = u / per_row, c = (u % per_row) * s.lanes;
  const int64_t K = d.K();
  Expr mn, k, off;              // the row / column of the operand, the reduction index
  if (s.is_a || s.b_by_n) mn = (s.is_a ? l.m0 : l.n0) + r, off = c;
  else off = r, mn = l.n0 + c;
  k = k0 + off;
  const int tk = s.is_a || s.b_by_n ? s.cols : s.rows;
  const int64_t extent = s.is_a ? d.M : d.N;
  // Only a partial tile or k step can reach past the operand: there the read is clamped into
  // it and the value replaced by zero.
  Expr ok, mc = mn, kc = k;
  auto both = [&](const Expr &e) { ok = ok.defined() ? logical_and(ok, e) : e; };
  if (extent % (s.is_a || s.b_by_n ? s.rows : s.cols) != 0)
    both(mn < extent), mc = min(mn, i32(extent - 1));
  if (K % (s.is_a || s.b_by_n ? s.cols : s.rows) != 0) both(k < K), kc = min(k, i32(K - 1));
  const BufferVar &buf = s.is_a ? d.a : d.b;
  // The reduction coordinates: where the innermost reduction dim is a whole number of steps
  // (a tap-major convolution's channels), a step never crosses it, so k0's coordinates
  // (uniform across the workgroup) are decomposed once and only the innermost one moves.
  std::vector<Expr> ks;
  if (d.kdims.size() > 1 && d.kdims.back() % tk == 0) {
    ks = coords_of(k0, d.kdims);
    ks.back() = ks.back() + off;
  } else {
    ks = coords_of(kc, d.kdims);
  }
  if (s.lanes > 1 && !stride) {
    // Runs of 4 along n (vector_runs): the first element's own index; a clamped run starts at
    // N - 4, still a whole run.
    const Expr n = d.N % s.cols != 0 ? min(mn, i32(d.N - 4)) : mn;
    const Expr index = d.b_at(l.z, ks, n).index;
    if (!ok.defined()) return vector_load(buf, index, s.lanes);
    return select(ok, vector_load(buf, index, s.lanes), broadcast(make_const(kF16, 0), s.lanes));
  }
  if (s.lanes == 1) {
    const OperandRef ref = s.is_a ? d.a_at(l.z, mc, ks) : d.b_at(l.z, ks, mc);
    return read(buf, ref, ok, kF16);
  }
  // Row-major along the vector axis (k for A and a B by n, n for B): origin + row * stride +
  // column, the origin the batch entry's first element.
  const std::vector<Expr> k_zero = coords_of(i32(0), d.kdims);
  const Expr origin = s.is_a ? d.a_at(l.z, i32(0), k_zero).index : d.b_at(l.z, k_zero, i32(0)).index;
  const Expr index = s.is_a || s.b_by_n ? origin + mc * *stride + kc : origin + kc * *stride + mc;
  if (!ok.defined()) return vector_load(buf, index, s.lanes);
  return select(ok, vector_load(buf, select(ok, index, i32(0)), s.lanes),
                broadcast(make_const(kF16, 0), s.lanes));
}

// The staging registers of one slice: declared (first slice) or assigned from the slice at k0,
// and stored to staging buffer `buf` (undefined: the only one).
struct Staging {
  const ContractionDef &d;
  const Slice &s;
  const CoopLayout &l;
  std::optional<int64_t> stride;
  std::vector<Expr> regs;

  Staging(const ContractionDef &d_, const Slice &s_, const CoopLayout &l_,
          std::optional<int64_t> st, const char *prefix)
      : d(d_), s(s_), l(l_), stride(st) {
    const ValueType t = s.lanes == 1 ? ValueType(kF16) : ValueType::vector(kF16, s.lanes);
    for (int e = 0; e * l.invocations < s.units(); ++e)
      regs.push_back(var(fmt::format("{}{}", prefix, e), t));
  }
  Expr unit(int e) const {
    const int n = s.units();
    const Expr u = l.lid + e * l.invocations;
    return (e + 1) * l.invocations > n ? min(u, i32(n - 1)) : u;
  }
  void reads(const Expr &k0, bool declare, std::vector<Stmt> &out) const {
    for (size_t e = 0; e < regs.size(); ++e) {
      const Expr v = unit_read(d, s, l, k0, unit(static_cast<int>(e)), stride);
      out.push_back(declare ? declare_var(regs[e], v) : assign(regs[e], v));
    }
  }
  void stores(const Expr &buf, std::vector<Stmt> &out) const {
    const int per_row = s.cols / s.lanes, n = s.units();
    for (size_t e = 0; e < regs.size(); ++e) {
      const Expr u = l.lid + static_cast<int>(e) * l.invocations;
      Expr at = (u / per_row) * s.row_len + (u % per_row) * s.lanes;
      if (buf.defined()) at = buf * s.size() + at;
      std::vector<Stmt> st;
      if (s.lanes == 1) st.push_back(store_shared(s.tile, at, regs[e]));
      for (int q = 0; s.lanes > 1 && q < s.lanes; ++q)
        st.push_back(store_shared(s.tile, at + q, extract_lane(regs[e], q)));
      Stmt b = block(std::move(st));
      out.push_back((static_cast<int>(e) + 1) * l.invocations > n ? if_then(u < n, b) : b);
    }
  }
};

// The multiply-adds of one staged slice (buffer `cur`, undefined: the only one) into the
// subgroup's accumulators.
std::vector<Stmt> multiply_slice(const TileConfig &t, const Slice &a, const Slice &b,
                                 const CoopLayout &l, const Expr &cur,
                                 const std::vector<Expr> &acc) {
  const ValueType ta = ValueType::coop_matrix(kF16, kCoopM, kCoopK, MatrixUse::a);
  const ValueType tb = ValueType::coop_matrix(kF16, kCoopK, kCoopN, MatrixUse::b);
  const int fm = t.rm / kCoopM, fn = t.rn / kCoopN;
  std::vector<Stmt> out;
  for (int kq = 0; kq < t.tk / kCoopK; ++kq) {
    std::vector<Stmt> step;
    std::vector<Expr> av, bv;
    const Expr abase = cur.defined() ? cur * a.size() : i32(0);
    const Expr bbase = cur.defined() ? cur * b.size() : i32(0);
    for (int i = 0; i < fm; ++i) {
      av.push_back(var(fmt::format("fa{}", i), ta));
      const Expr at = abase + (l.sy * t.rm + i * kCoopM) * a.row_len + kq * kCoopK;
      step.push_back(declare_var(av.back(),
                                 matrix_load(ta, a.tile, at, i32(a.row_len), MatrixLayout::row_major)));
    }
    for (int j = 0; j < fn; ++j) {
      bv.push_back(var(fmt::format("fb{}", j), tb));
      const Expr col = l.sx * t.rn + j * kCoopN;
      const Expr at = b.b_by_n ? bbase + col * b.row_len + kq * kCoopK
                               : bbase + (kq * kCoopK) * b.row_len + col;
      step.push_back(declare_var(
          bv.back(), matrix_load(tb, b.tile, at, i32(b.row_len),
                                 b.b_by_n ? MatrixLayout::col_major : MatrixLayout::row_major)));
    }
    for (int i = 0; i < fm; ++i)
      for (int j = 0; j < fn; ++j) {
        const Expr &c = acc[static_cast<size_t>(i * fn + j)];
        step.push_back(assign(c, matrix_mul_add(av[static_cast<size_t>(i)],
                                                bv[static_cast<size_t>(j)], c)));
      }
    out.push_back(block(std::move(step)));
  }
  return out;
}

// The epilogue: each accumulator through the subgroup's f32 matrix in shared memory, then its
// elements (each invocation 256 / subgroup of them) through the store callback, guarded.
Result<Stmt> store_accumulators(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                                const CoopLayout &l, const std::vector<Expr> &acc) {
  const int fm = t.rm / kCoopM, fn = t.rn / kCoopN, per = kCoopM * kCoopN;
  SharedVar sc = g.kernel().add_shared("c_tile", ScalarType::f32,
                                       static_cast<uint32_t>(t.invocations() * per));
  const Expr q = var("q", ScalarType::i32), e = var("e", ScalarType::i32);
  const Expr om = var("om", ScalarType::i32), on = var("on", ScalarType::i32);
  std::vector<Stmt> out;
  for (int i = 0; i < fm; ++i)
    for (int j = 0; j < fn; ++j) {
      out.push_back(matrix_store(sc, l.sg * per, i32(kCoopN), MatrixLayout::row_major,
                                 acc[static_cast<size_t>(i * fn + j)]));
      out.push_back(barrier());
      KILN_ASSIGN(Stmt st, d.store(l.z, om, on, load_shared(sc, l.sg * per + e)));
      Expr inb;
      if (d.M % t.tm != 0) inb = om < d.M;
      if (d.N % t.tn != 0) inb = inb.defined() ? logical_and(inb, on < d.N) : on < d.N;
      if (inb.defined()) st = if_then(inb, st);
      st = let(om, l.m0 + l.sy * t.rm + (i * kCoopM) + e / kCoopN,
               let(on, l.n0 + l.sx * t.rn + (j * kCoopN) + e % kCoopN, st));
      out.push_back(for_loop(q, i32(0), i32(per / l.subgroup), let(e, l.lane + q * l.subgroup, st)));
      out.push_back(barrier());
    }
  return block(std::move(out));
}

// The slices' shapes and vector reads for `d`.
struct Slices {
  Slice a, b;
  std::optional<int64_t> a_stride, b_stride;
};

Slices plan_slices(GridKernel &g, const ContractionDef &d, const TileConfig &t) {
  Slices p;
  const int64_t K = d.K();
  auto kc = [&](int64_t kv) { return coords_of(i32(kv), d.kdims); };
  p.a_stride = vector_stride([&](int64_t z, int64_t m, int64_t k) { return d.a_at(i32(z), i32(m), kc(k)); },
                             d.batch, d.M, K);
  p.b_stride = vector_stride([&](int64_t z, int64_t k, int64_t n) { return d.b_at(i32(z), kc(k), i32(n)); },
                             d.batch, K, d.N);
  std::optional<int64_t> b_by_n;
  if (!p.b_stride)
    b_by_n = vector_stride([&](int64_t z, int64_t n, int64_t k) { return d.b_at(i32(z), kc(k), i32(n)); },
                           d.batch, d.N, K);
  const auto stages = static_cast<uint32_t>(t.stages);
  p.a = Slice{{}, t.tm, t.tk, t.tk + kCoopPad, p.a_stride ? 4 : 1, true, false};
  if (b_by_n) {
    p.b = Slice{{}, t.tn, t.tk, t.tk + kCoopPad, 4, false, true};
    p.b_stride = b_by_n;
  } else {
    const bool runs = !p.b_stride && vector_runs([&](int64_t z, int64_t k, int64_t n) {
      return d.b_at(i32(z), kc(k), i32(n));
    }, d.batch, K, d.N);
    p.b = Slice{{}, t.tk, t.tn, t.tn + kCoopPad, p.b_stride || runs ? 4 : 1, false, false};
  }
  p.a.tile = g.kernel().add_shared("a_tile", kF16, stages * static_cast<uint32_t>(p.a.size()));
  p.b.tile = g.kernel().add_shared("b_tile", kF16, stages * static_cast<uint32_t>(p.b.size()));
  return p;
}

// `steps_per_slice` > 0: split-K, the workgroup runs tk steps [slice * it, min(+it, all)).
Result<Stmt> coop_body(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                       const CoopLayout &l, int64_t steps_per_slice) {
  const Slices p = plan_slices(g, d, t);
  const Staging sa(d, p.a, l, p.a_stride, "ra"), sb(d, p.b, l, p.b_stride, "rb");
  const ValueType tc = ValueType::coop_matrix(ScalarType::f32, kCoopM, kCoopN, MatrixUse::accumulator);
  std::vector<Stmt> body;
  std::vector<Expr> acc;
  for (int i = 0; i < (t.rm / kCoopM) * (t.rn / kCoopN); ++i) {
    acc.push_back(var(fmt::format("acc{}", i), tc));
    body.push_back(declare_var(acc.back(), matrix_fill(tc, make_const(ScalarType::f32, 0))));
  }
  const int64_t steps = (d.K() + t.tk - 1) / t.tk;
  const Expr kt = var("kt", ScalarType::i32), cur = var("cur", ScalarType::i32);
  const bool two = t.stages == 2;
  // The steps this workgroup runs: all, or its slice's (uniform across the workgroup).
  Expr first = i32(0), count = i32(steps), end = i32(steps);
  if (steps_per_slice > 0) {
    first = l.slice * steps_per_slice;
    count = min(i32(steps_per_slice), i32(steps) - first);
    end = first + count;
  }
  sa.reads(first * t.tk, true, body);
  sb.reads(first * t.tk, true, body);
  std::vector<Stmt> next, step;
  sa.reads((kt + 1) * t.tk, false, next);
  sb.reads((kt + 1) * t.tk, false, next);
  const Stmt next_reads = if_then(kt + 1 < end, block(std::move(next)));
  if (two) {
    sa.stores(i32(0), body);
    sb.stores(i32(0), body);
    body.push_back(barrier());
    step.push_back(next_reads);
    for (Stmt &s : multiply_slice(t, p.a, p.b, l, cur, acc)) step.push_back(std::move(s));
    std::vector<Stmt> st;
    sa.stores(i32(1) - cur, st);
    sb.stores(i32(1) - cur, st);
    step.push_back(if_then(kt + 1 < end, block(std::move(st))));
    step.push_back(barrier());
    // Buffer 0 holds the first step's slice: step kt uses buffer (kt - first) % 2.
    body.push_back(for_loop(kt, first, count, let(cur, (kt - first) % 2, block(std::move(step)))));
  } else {
    sa.stores(Expr(), step);
    sb.stores(Expr(), step);
    step.push_back(barrier());
    step.push_back(next_reads);
    for (Stmt &s : multiply_slice(t, p.a, p.b, l, Expr(), acc)) step.push_back(std::move(s));
    step.push_back(barrier());
    body.push_back(for_loop(kt, first, count, block(std::move(step))));
  }
  KILN_ASSIGN(Stmt epilogue, store_accumulators(g, d, t, l, acc));
  body.push_back(epilogue);
  return block(std::move(body));
}

} // namespace

Status emit_coop(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                 int64_t steps_per_slice, int64_t slices) {
  const kir::TargetDesc &target = g.ctx().target();
  CoopLayout l;
  l.subgroup = static_cast<int>(target.subgroup_size);
  l.invocations = static_cast<int>(coop_invocations(t, target));
  l.lid = var("lid", ScalarType::i32);
  l.m0 = var("m0", ScalarType::i32);
  l.n0 = var("n0", ScalarType::i32);
  l.z = var("z", ScalarType::i32);
  l.sg = var("sg", ScalarType::i32);
  l.lane = var("lane", ScalarType::i32);
  l.sx = var("sx", ScalarType::i32);
  l.sy = var("sy", ScalarType::i32);
  if (steps_per_slice > 0) l.slice = var("slice", ScalarType::i32);
  KILN_ASSIGN(Stmt body, coop_body(g, d, t, l, steps_per_slice));
  const int wsn = t.tn / t.rn;
  body = let(l.sx, l.sg % wsn, let(l.sy, l.sg / wsn, body));
  body = let(l.sg, as_i32(subgroup_id()), let(l.lane, as_i32(subgroup_invocation_id()), body));
  if (steps_per_slice > 0) {
    // The grid's z is slice * batch + batch entry, bound as `zg` (split-K's partial store
    // callback addresses the scratch buffer with it).
    const Expr zg = var("zg", ScalarType::i32);
    body = let(l.z, d.batch == 1 ? i32(0) : zg % d.batch, body);
    body = let(l.slice, d.batch == 1 ? zg : zg / d.batch, body);
    body = let(zg, as_i32(workgroup_id(2)), body);
  } else {
    body = let(l.z, as_i32(workgroup_id(2)), body);
  }
  body = let(l.n0, as_i32(workgroup_id(0)) * t.tn, body);
  body = let(l.m0, as_i32(workgroup_id(1)) * t.tm, body);
  body = let(l.lid, as_i32(local_id(0)), body);
  const uint64_t gx = static_cast<uint64_t>((d.N + t.tn - 1) / t.tn),
                 gy = static_cast<uint64_t>((d.M + t.tm - 1) / t.tm),
                 gz = static_cast<uint64_t>(d.batch * slices);
  if (gx > kMaxGroups || gy > kMaxGroups || gz > kMaxGroups)
    return Status::error(g.op().describe() + ": coop grid exceeds 65535 workgroups");
  if (steps_per_slice == 0) g.kernel().name += fmt::format("_coop{}x{}", t.tm, t.tn);
  return g.finish_grid({static_cast<uint32_t>(l.invocations), 1, 1},
                       {static_cast<uint32_t>(gx), static_cast<uint32_t>(gy),
                        static_cast<uint32_t>(gz)},
                       body);
}

} // namespace kiln::compiler::contraction_detail
