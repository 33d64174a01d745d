// Contraction strategies: `tiled` (a workgroup stages tk-deep slices of its A and B tiles in
// shared memory, each invocation accumulates an rm x rn register block from them) and
// `registers` (the same register block read straight from global memory, no staging and no
// barriers). Invocation (tx, ty) of a workgroup owns rows ty + i * WY and columns tx + j * WX
// of the workgroup's tile, so neighbouring invocations read neighbouring B columns.
#include "compiler/contraction.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

constexpr int64_t kMaxGroups = 65535;

Expr as_i32(Expr e) { return cast(ScalarType::i32, std::move(e)); }
Expr zero(ScalarType t) { return make_const(t, 0); }

// Row-major coordinates of `flat` in `dims` (i32; `flat` < numel(dims)).
std::vector<Expr> coords_of(const Expr &flat, const Shape &dims) {
  std::vector<Expr> out(dims.size());
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    Expr c = stride == 1 ? flat : flat / stride;
    if (d > 0) c = c % dims[d];
    out[d] = c;
    stride *= dims[d];
  }
  return out;
}

// The value of one operand element as the accumulation type, zero outside the operand or
// where `extra` (undefined: none) is false; the index is clamped to 0 there so the load is
// always in bounds.
Expr read(const BufferVar &buf, const OperandRef &r, const Expr &extra, ScalarType acc) {
  Expr ok = r.inside;
  if (extra.defined()) ok = ok.defined() ? logical_and(extra, ok) : extra;
  if (!ok.defined()) return cast(acc, load(buf, r.index));
  return select(ok, cast(acc, load(buf, select(ok, r.index, i32(0)))), zero(acc));
}

// The invocation layout shared by both strategies.
struct Layout {
  int wx, wy;       // invocations along n and m
  Expr tx, ty, lid; // local coordinates, linear id
  Expr m0, n0, z;   // tile origin and batch entry
};

Layout make_layout(const TileConfig &t) {
  Layout l;
  l.wx = t.tn / t.rn;
  l.wy = t.tm / t.rm;
  l.tx = var("tx", ScalarType::i32);
  l.ty = var("ty", ScalarType::i32);
  l.lid = var("lid", ScalarType::i32);
  l.m0 = var("m0", ScalarType::i32);
  l.n0 = var("n0", ScalarType::i32);
  l.z = var("z", ScalarType::i32);
  return l;
}

// Wraps `body` in the lets defining the layout's variables.
Stmt bind_layout(const Layout &l, const TileConfig &t, Stmt body) {
  body = let(l.z, as_i32(workgroup_id(2)), body);
  body = let(l.n0, as_i32(workgroup_id(0)) * t.tn, body);
  body = let(l.m0, as_i32(workgroup_id(1)) * t.tm, body);
  body = let(l.lid, l.ty * l.wx + l.tx, body);
  body = let(l.ty, as_i32(local_id(1)), body);
  return let(l.tx, as_i32(local_id(0)), body);
}

struct Accumulators {
  std::vector<Expr> vars; // rm * rn, row-major
  Expr at(int i, int j, int rn) const { return vars[static_cast<size_t>(i * rn + j)]; }
};

Accumulators declare_accumulators(const TileConfig &t, ScalarType acc, std::vector<Stmt> &out) {
  Accumulators a;
  for (int i = 0; i < t.rm; ++i)
    for (int j = 0; j < t.rn; ++j) {
      a.vars.push_back(var(fmt::format("acc{}_{}", i, j), acc));
      out.push_back(declare_var(a.vars.back(), zero(acc)));
    }
  return a;
}

// acc[i][j] += a[i] * b[j] for the whole register block.
std::vector<Stmt> multiply_block(const Accumulators &acc, const std::vector<Expr> &av,
                                 const std::vector<Expr> &bv) {
  std::vector<Stmt> s;
  const int rn = static_cast<int>(bv.size());
  for (size_t i = 0; i < av.size(); ++i)
    for (size_t j = 0; j < bv.size(); ++j) {
      Expr x = acc.at(static_cast<int>(i), static_cast<int>(j), rn);
      s.push_back(assign(x, x + av[i] * bv[j]));
    }
  return s;
}

// Stores the register block through the definition's store callback, guarded by the bounds.
Result<Stmt> store_block(const ContractionDef &d, const TileConfig &t, const Layout &l,
                         const Accumulators &acc) {
  std::vector<Stmt> out;
  for (int i = 0; i < t.rm; ++i)
    for (int j = 0; j < t.rn; ++j) {
      Expr m = var(fmt::format("om{}_{}", i, j), ScalarType::i32);
      Expr n = var(fmt::format("on{}_{}", i, j), ScalarType::i32);
      KILN_ASSIGN(Stmt st, d.store(l.z, m, n, acc.at(i, j, t.rn)));
      Expr inb;
      if (d.M % t.tm != 0) inb = m < d.M;
      if (d.N % t.tn != 0) inb = inb.defined() ? logical_and(inb, n < d.N) : n < d.N;
      if (inb.defined()) st = if_then(inb, st);
      st = let(n, l.n0 + l.tx + j * l.wx, st);
      out.push_back(let(m, l.m0 + l.ty + i * l.wy, st));
    }
  return block(std::move(out));
}

// Row m (or column n) of the tile clamped into the operand, so reads past the edge stay in
// bounds; the clamped rows compute values that are never stored.
Expr clamp_to(const Expr &x, int64_t extent, int64_t tile) {
  return extent % tile == 0 ? x : min(x, i32(extent - 1));
}

Result<Stmt> registers_body(const ContractionDef &d, const TileConfig &t, const Layout &l) {
  std::vector<Stmt> body;
  Accumulators acc = declare_accumulators(t, d.acc, body);
  std::vector<Expr> ks;
  for (size_t r = 0; r < d.kdims.size(); ++r)
    ks.push_back(var(fmt::format("k{}", r), ScalarType::i32));
  std::vector<Expr> av, bv;
  std::vector<Stmt> inner;
  for (int i = 0; i < t.rm; ++i) {
    Expr m = clamp_to(l.m0 + l.ty + i * l.wy, d.M, t.tm);
    Expr x = var(fmt::format("a{}", i), d.acc);
    inner.push_back(declare_var(x, read(d.a, d.a_at(l.z, m, ks), Expr(), d.acc)));
    av.push_back(x);
  }
  for (int j = 0; j < t.rn; ++j) {
    Expr n = clamp_to(l.n0 + l.tx + j * l.wx, d.N, t.tn);
    Expr x = var(fmt::format("b{}", j), d.acc);
    inner.push_back(declare_var(x, read(d.b, d.b_at(l.z, ks, n), Expr(), d.acc)));
    bv.push_back(x);
  }
  for (Stmt &s : multiply_block(acc, av, bv)) inner.push_back(std::move(s));
  Stmt loop = block(std::move(inner));
  for (size_t r = d.kdims.size(); r-- > 0;)
    if (d.kdims[r] > 0) loop = for_loop(ks[r], i32(0), i32(d.kdims[r]), loop);
  body.push_back(loop);
  KILN_ASSIGN(Stmt st, store_block(d, t, l, acc));
  body.push_back(st);
  return block(std::move(body));
}

// Copies one tk-deep slice of the A tile (k-major, rows of tm + 1) or the B tile (k-major,
// rows of tn) into shared memory: `count` elements spread over the workgroup's invocations.
struct StageArgs {
  SharedVar dst;
  int rows, row_len, cols; // the slice is rows (k) x cols (m or n), stored with row_len
  bool k_fastest;          // neighbouring invocations take neighbouring k (A) or columns (B)
};

Stmt stage_slice(const ContractionDef &d, const TileConfig &t, const Layout &l,
                 const Expr &k0, const StageArgs &s, bool is_a) {
  const int nt = t.invocations(), count = s.rows * s.cols;
  const int64_t K = d.K(), extent = is_a ? d.M : d.N, tile = is_a ? t.tm : t.tn;
  std::vector<Stmt> out;
  for (int e = 0; e * nt < count; ++e) {
    Expr idx = l.lid + e * nt;
    Expr kk = s.k_fastest ? idx % s.rows : idx / s.cols;
    Expr cc = s.k_fastest ? idx / s.rows : idx % s.cols;
    Expr gk = k0 + kk;
    Expr gc = clamp_to((is_a ? l.m0 : l.n0) + cc, extent, tile);
    Expr kin = K % t.tk == 0 ? Expr() : gk < K;
    Expr gkc = K % t.tk == 0 ? gk : min(gk, i32(K - 1));
    std::vector<Expr> kc = coords_of(gkc, d.kdims);
    OperandRef r = is_a ? d.a_at(l.z, gc, kc) : d.b_at(l.z, kc, gc);
    Stmt st = store_shared(s.dst, kk * s.row_len + cc, read(is_a ? d.a : d.b, r, kin, d.acc));
    if ((e + 1) * nt > count) st = if_then(idx < count, st);
    out.push_back(st);
  }
  return block(std::move(out));
}

Result<Stmt> tiled_body(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                        const Layout &l) {
  SharedVar as = g.kernel().add_shared("a_tile", d.acc, static_cast<uint32_t>(t.tk * (t.tm + 1)));
  SharedVar bs = g.kernel().add_shared("b_tile", d.acc, static_cast<uint32_t>(t.tk * t.tn));
  std::vector<Stmt> body;
  Accumulators acc = declare_accumulators(t, d.acc, body);
  const int64_t steps = (d.K() + t.tk - 1) / t.tk;
  Expr kt = var("kt", ScalarType::i32), k0 = var("k0", ScalarType::i32);
  Expr kk = var("kk", ScalarType::i32);
  std::vector<Expr> av, bv;
  std::vector<Stmt> inner;
  for (int i = 0; i < t.rm; ++i) {
    Expr x = var(fmt::format("a{}", i), d.acc);
    inner.push_back(declare_var(x, load_shared(as, kk * (t.tm + 1) + l.ty + i * l.wy)));
    av.push_back(x);
  }
  for (int j = 0; j < t.rn; ++j) {
    Expr x = var(fmt::format("b{}", j), d.acc);
    inner.push_back(declare_var(x, load_shared(bs, kk * t.tn + l.tx + j * l.wx)));
    bv.push_back(x);
  }
  for (Stmt &s : multiply_block(acc, av, bv)) inner.push_back(std::move(s));
  Stmt step = block({stage_slice(d, t, l, k0, {as, t.tk, t.tm + 1, t.tm, true}, true),
                     stage_slice(d, t, l, k0, {bs, t.tk, t.tn, t.tn, false}, false), barrier(),
                     for_loop(kk, i32(0), i32(t.tk), block(std::move(inner))), barrier()});
  body.push_back(for_loop(kt, i32(0), i32(steps), let(k0, kt * t.tk, step)));
  KILN_ASSIGN(Stmt st, store_block(d, t, l, acc));
  body.push_back(st);
  return block(std::move(body));
}

std::array<uint64_t, 3> grid_of(const ContractionDef &d, const TileConfig &t) {
  return {static_cast<uint64_t>((d.N + t.tn - 1) / t.tn),
          static_cast<uint64_t>((d.M + t.tm - 1) / t.tm), static_cast<uint64_t>(d.batch)};
}

} // namespace

ContractionSchedule schedule_contraction(LowerCtx &c, const ContractionDef &d) {
  ContractionSchedule s = pick_contraction(c.target(), c.options().schedule, d.shape(),
                                           &c.options().contraction_override);
  if (s.strategy == Strategy::naive) return s;
  for (uint64_t n : grid_of(d, s.tile))
    if (n > static_cast<uint64_t>(kMaxGroups)) {
      s.strategy = Strategy::naive;
      s.reason = "grid exceeds 65535 workgroups along an axis";
    }
  return s;
}

Status emit_contraction(GridKernel &g, const ContractionDef &d, const ContractionSchedule &s) {
  KILN_ASSERT(s.strategy != Strategy::naive, "emit_contraction: the naive kernel is the lowering's");
  const TileConfig &t = s.tile;
  KILN_ASSERT(t.tm % t.rm == 0 && t.tn % t.rn == 0, "contraction tile not a multiple of its block");
  const Layout l = make_layout(t);
  Result<Stmt> body = s.strategy == Strategy::tiled ? tiled_body(g, d, t, l)
                                                    : registers_body(d, t, l);
  if (!body) return body.status();
  const auto grid = grid_of(d, t);
  g.kernel().name += fmt::format("_{}{}x{}", to_string(s.strategy), t.tm, t.tn);
  return g.finish_grid({static_cast<uint32_t>(l.wx), static_cast<uint32_t>(l.wy), 1},
                       {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                        static_cast<uint32_t>(grid[2])},
                       bind_layout(l, t, *body));
}

} // namespace kiln::compiler
