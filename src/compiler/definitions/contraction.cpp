// Contraction strategies: `tiled` (a workgroup stages tk-deep slices of its A and B tiles in
// shared memory, double-buffered, each invocation accumulates an rm x rn register block from
// them) and `registers` (the same register block read straight from global memory, no staging
// and no barriers). Invocation (tx, ty) of a workgroup owns columns tx + j * WX of the
// workgroup's tile, so neighbouring invocations read and store neighbouring columns, and rows
// ty + i * WY (`registers`) or, in `tiled` with VA-lane staging, rows in groups of VA
// consecutive rows, group g at g * WY * VA + ty * VA. In `tiled` each group of VA rows is one
// vector load from shared memory, and so is each group of VB of the invocation's columns: B is
// staged with its columns permuted (stage_column) so that columns tx + (g * VB + r) * WX,
// r < VB, sit next to each other.
#include "compiler/definitions/contraction.h"
#include "compiler/definitions/contraction_internal.h"

#include <fmt/format.h>

#include <cstdlib>

#include <algorithm>
#include <functional>
#include <optional>

namespace kiln::compiler {

using namespace kir;

namespace contraction_detail {

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

Expr read(const BufferVar &buf, const OperandRef &r, const Expr &extra, ScalarType as) {
  Expr ok = r.inside;
  if (extra.defined()) ok = ok.defined() ? logical_and(extra, ok) : extra;
  if (!ok.defined()) return cast(as, load(buf, r.index));
  return select(ok, cast(as, load(buf, select(ok, r.index, i32(0)))), make_const(as, 0));
}

Expr clamp_to(const Expr &x, int64_t extent, int64_t tile) {
  return extent % tile == 0 ? x : min(x, i32(extent - 1));
}

} // namespace contraction_detail

using namespace contraction_detail;

namespace {

Expr zero(ScalarType t) { return make_const(t, 0); }
// Widest single N tile the matrix strategy takes to avoid padding a few tiles; KILN_ONE_TILE
// overrides it (tuning; 0 turns it off).
const int64_t kSingleTileCols = [] {
  const char *e = std::getenv("KILN_ONE_TILE");
  return e ? std::atoi(e) : 256;
}();
// Tile width of the matrix strategy for matrix-vector products (M <= 4); KILN_GEMV_COLS
// overrides it (tuning).
const int kGemvCols = [] {
  const char *e = std::getenv("KILN_GEMV_COLS");
  return e ? std::max(16, std::atoi(e) / 16 * 16) : 1024;
}();


Layout make_layout(const TileConfig &t, bool split_k, bool grouped) {
  Layout l;
  if (grouped) {
    l.va = t.a_lanes();
    l.vb = t.b_lanes();
  }
  l.wx = t.tn / t.rn;
  l.wy = t.tm / t.rm;
  l.tx = var("tx", ScalarType::i32);
  l.ty = var("ty", ScalarType::i32);
  l.lid = var("lid", ScalarType::i32);
  l.m0 = var("m0", ScalarType::i32);
  l.n0 = var("n0", ScalarType::i32);
  l.z = var("z", ScalarType::i32);
  if (split_k) {
    l.zg = var("zg", ScalarType::i32);
    l.slice = var("slice", ScalarType::i32);
  }
  return l;
}

// Wraps `body` in the lets defining the layout's variables.
Stmt bind_layout(const Layout &l, const TileConfig &t, int64_t batch, Stmt body) {
  if (l.slice.defined()) {
    body = let(l.z, batch == 1 ? i32(0) : l.zg % batch, body);
    body = let(l.slice, batch == 1 ? l.zg : l.zg / batch, body);
    body = let(l.zg, as_i32(workgroup_id(2)), body);
  } else {
    body = let(l.z, as_i32(workgroup_id(2)), body);
  }
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
      st = let(n, l.n0 + l.col(j), st);
      out.push_back(let(m, l.m0 + l.row(i), st));
    }
  return block(std::move(out));
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

} // namespace

// Whether an operand map is a plain row-major matrix over (x, y), x < X, y < Y: its index at
// every coordinate is offset + x * stride + y, with no padding predicate (A: x = m, y = k; B:
// x = k, y = n, or x = n, y = k for a transposed B). Probed by folding the map at constant
// coordinates (first and last batch entries, every x and y up to 256 and a spread of others):
// maps with padding, strides or windows fail. With `chunk` < X, rows need only be row-major
// within each run of `chunk` rows starting at a multiple of it (one k step of the matrix
// strategy; its origin is folded per step): offset(x0) + (x - x0) * stride + y with x0 the
// run's first row, the same stride in every run. The stride, or nothing.
std::optional<int64_t> contraction_detail::row_major_stride(
    const std::function<OperandRef(int64_t z, int64_t x, int64_t y)> &at, int64_t batch,
    int64_t X, int64_t Y, int64_t chunk) {
  if (chunk <= 0) chunk = X;
  auto index = [&](int64_t z, int64_t x, int64_t y) -> std::optional<int64_t> {
    OperandRef r = at(z, x, y);
    if (r.inside.defined()) {
      const Expr in = simplify(r.inside);
      const auto *c = in.as<IntImm>();
      if (!c || c->value == 0) return std::nullopt;
    }
    const Expr i = simplify(r.index);
    if (const auto *c = i.as<IntImm>()) return c->value;
    return std::nullopt;
  };
  const auto o = index(0, 0, 0);
  if (!o) return std::nullopt;
  int64_t stride = 0;
  if (X > 1 && chunk > 1) {
    const auto x1 = index(0, 1, 0);
    if (!x1) return std::nullopt;
    stride = *x1 - *o;
  }
  std::vector<std::pair<int64_t, int64_t>> points;
  for (int64_t y = 0; y < std::min<int64_t>(Y, 256); ++y) points.push_back({0, y});
  for (int64_t x = 0; x < std::min<int64_t>(X, 256); ++x) points.push_back({x, 0});
  for (int64_t a : {X - 1, X / 2, X / 3, (2 * X) / 3})
    for (int64_t b : {Y - 1, Y / 2, Y / 3, (2 * Y) / 3}) points.push_back({a, b});
  for (int64_t z : {int64_t(0), batch - 1}) {
    for (auto [x, y] : points) {
      const int64_t x0 = x - x % chunk;
      const auto base = z == 0 && x0 == 0 ? o : index(z, x0, 0);
      const auto v = index(z, x, y);
      if (!base || !v || *v != *base + (x - x0) * stride + y) return std::nullopt;
    }
  }
  return stride;
}

namespace {

// One tk-deep slice of the A tile (k-major, rows of tm + 1) or the B tile (k-major, rows of
// tn) in shared memory: `count` elements spread over the workgroup's invocations, each
// invocation owning elements lid + e * invocations.
struct StageArgs {
  SharedVar dst;
  int rows, row_len, cols; // the slice is rows (k) x cols (m or n), stored with row_len
  bool k_fastest;          // neighbouring invocations take neighbouring k (A) or columns (B)
  int wx = 1, vb = 1;      // B with vb > 1: columns permuted (stage_column)
};

// Where B's tile column c is staged: column c = tx + j * WX of invocation tx, j = g * VB + r,
// goes to g * WX * VB + tx * VB + r, so the invocation's VB columns of group g are one vector.
Expr stage_column(const Expr &c, int wx, int vb) {
  if (vb == 1) return c;
  const Expr j = c / wx;
  return (j / vb) * (wx * vb) + (c % wx) * vb + j % vb;
}

// The slice's elements this invocation stages: a register each (loaded from global memory
// ahead of use), where it goes in shared memory, and the guard of a partial last round.
struct Staged {
  std::vector<Expr> regs, at, guard;
};

Staged staged_elements(const TileConfig &t, const Layout &l, const StageArgs &s, ScalarType acc,
                       const char *prefix) {
  const int nt = t.invocations(), count = s.rows * s.cols;
  Staged st;
  for (int e = 0; e * nt < count; ++e) {
    Expr idx = l.lid + e * nt;
    Expr kk = s.k_fastest ? idx % s.rows : idx / s.cols;
    Expr cc = s.k_fastest ? idx / s.rows : idx % s.cols;
    st.regs.push_back(var(fmt::format("{}{}", prefix, e), acc));
    st.at.push_back(kk * s.row_len + stage_column(cc, s.wx, s.vb));
    st.guard.push_back((e + 1) * nt > count ? idx < count : Expr());
  }
  return st;
}

// The first reduction dim of the longest suffix of `kdims` whose element count (above 1)
// divides `tk`, leaving at least one leading dim; kdims.size() when there is none.
size_t suffix_dividing(const Shape &kdims, int tk) {
  size_t best = kdims.size();
  int64_t p = 1;
  for (size_t j = kdims.size(); j-- > 1;) {
    p *= kdims[j];
    if (p > 1 && tk % p == 0) best = j;
  }
  return best;
}

// The global reads of the staged elements for the slice starting at reduction index k0.
std::vector<Expr> slice_reads(const ContractionDef &d, const TileConfig &t, const Layout &l,
                              const Expr &k0, const StageArgs &s, bool is_a) {
  const int nt = t.invocations(), count = s.rows * s.cols;
  const int64_t K = d.K(), extent = is_a ? d.M : d.N, tile = is_a ? t.tm : t.tn;
  std::vector<Expr> out;
  for (int e = 0; e * nt < count; ++e) {
    // A partial last round clamps its index: the value read there is never stored.
    Expr idx = (e + 1) * nt > count ? min(l.lid + e * nt, i32(count - 1)) : l.lid + e * nt;
    Expr kk = s.k_fastest ? idx % s.rows : idx / s.cols;
    Expr cc = s.k_fastest ? idx / s.rows : idx % s.cols;
    Expr gk = k0 + kk;
    Expr gc = clamp_to((is_a ? l.m0 : l.n0) + cc, extent, tile);
    Expr kin = K % t.tk == 0 ? Expr() : gk < K;
    std::vector<Expr> kc;
    if (const size_t split = suffix_dividing(d.kdims, t.tk); split < d.kdims.size()) {
      // The reduction dims from `split` on span P elements and P divides tk (so every k0):
      // their coordinates depend on kk alone (fixed per invocation and element) and the
      // leading dims' flat index is k0 / P (uniform) + kk / P.
      const Shape lead(d.kdims.begin(), d.kdims.begin() + static_cast<long>(split));
      const Shape tail(d.kdims.begin() + static_cast<long>(split), d.kdims.end());
      const int64_t P = shape_numel(tail);
      Expr lf = k0 / P + kk / P;
      if (K % t.tk != 0) lf = min(lf, i32(K / P - 1));
      kc = coords_of(lf, lead);
      for (Expr &c : coords_of(kk % P, tail)) kc.push_back(std::move(c));
    } else {
      kc = coords_of(K % t.tk == 0 ? gk : min(gk, i32(K - 1)), d.kdims);
    }
    OperandRef r = is_a ? d.a_at(l.z, gc, kc) : d.b_at(l.z, kc, gc);
    out.push_back(read(is_a ? d.a : d.b, r, kin, d.acc));
  }
  return out;
}

// The register block's values of one operand at reduction step kk of the staged slice whose
// first element is `base`: per group of `lanes` rows (columns), one vector load from shared
// memory whose lanes are declared as separate values; scalar loads when lanes is 1.
std::vector<Expr> block_operand(const SharedVar &tile, const Expr &at, int count, int lanes,
                                int stride, const char *prefix, std::vector<Stmt> &out) {
  std::vector<Expr> values;
  for (int g = 0; g < count / lanes; ++g) {
    const Expr index = at + g * stride;
    if (lanes == 1) {
      Expr x = var(fmt::format("{}{}", prefix, g), tile.elem);
      out.push_back(declare_var(x, load_shared(tile, index)));
      values.push_back(x);
      continue;
    }
    Expr v = var(fmt::format("{}v{}", prefix, g), ValueType::vector(tile.elem, lanes));
    out.push_back(declare_var(v, load_shared_vector(tile, index)));
    for (int r = 0; r < lanes; ++r) values.push_back(extract_lane(v, r));
  }
  return values;
}

// `steps_per_slice` > 0: split-K, the invocation runs tk steps [slice * it, min(+it, all)).
// Software pipelining: the next step's global reads are issued into registers before the
// current step's multiply-adds, so their latency hides behind the arithmetic. With two stages
// the staged slices are double-buffered (step kt reads buffer kt % 2) and the registers go to
// the other buffer after the multiply-adds: one barrier per step. With one stage they go to
// the only buffer at the start of the next step, between two barriers (fewer registers live
// across the step, which some tile shapes need for occupancy: the strategy table decides).
Result<Stmt> tiled_body(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                        const Layout &l, int64_t steps_per_slice) {
  const int a_size = t.tk * t.a_row(), b_size = t.tk * t.tn; // one buffer of each
  const bool two = t.stages == 2;
  SharedVar as = g.kernel().add_shared("a_tile", d.acc, static_cast<uint32_t>(t.stages * a_size), l.va);
  SharedVar bs = g.kernel().add_shared("b_tile", d.acc, static_cast<uint32_t>(t.stages * b_size), l.vb);
  const StageArgs sa{as, t.tk, t.a_row(), t.tm, true};
  const StageArgs sb{bs, t.tk, t.tn, t.tn, false, l.wx, l.vb};
  const Staged pa = staged_elements(t, l, sa, d.acc, "pa"), pb = staged_elements(t, l, sb, d.acc, "pb");
  std::vector<Stmt> body;
  Accumulators acc = declare_accumulators(t, d.acc, body);
  const int64_t steps = (d.K() + t.tk - 1) / t.tk;
  Expr kt = var("kt", ScalarType::i32), k0 = var("k0", ScalarType::i32);
  Expr kk = var("kk", ScalarType::i32), cur = var("cur", ScalarType::i32);
  std::vector<Stmt> inner;
  const Expr a_at = kk * t.a_row() + l.ty * l.va, b_at = kk * t.tn + l.tx * l.vb;
  const std::vector<Expr> av = block_operand(as, two ? cur * a_size + a_at : a_at, t.rm, l.va,
                                             l.wy * l.va, "a", inner);
  const std::vector<Expr> bv = block_operand(bs, two ? cur * b_size + b_at : b_at, t.rn, l.vb,
                                             l.wx * l.vb, "b", inner);
  for (Stmt &s : multiply_block(acc, av, bv)) inner.push_back(std::move(s));
  Expr first = i32(0), count = i32(steps), end = i32(steps);
  if (steps_per_slice > 0) {
    first = l.slice * steps_per_slice;
    count = min(i32(steps_per_slice), i32(steps) - first);
    end = first + count;
  }
  auto reads_into = [&](const Expr &at_k0, bool declare) {
    std::vector<Stmt> out;
    const std::vector<Expr> ra = slice_reads(d, t, l, at_k0, sa, true);
    const std::vector<Expr> rb = slice_reads(d, t, l, at_k0, sb, false);
    for (size_t e = 0; e < ra.size(); ++e)
      out.push_back(declare ? declare_var(pa.regs[e], ra[e]) : assign(pa.regs[e], ra[e]));
    for (size_t e = 0; e < rb.size(); ++e)
      out.push_back(declare ? declare_var(pb.regs[e], rb[e]) : assign(pb.regs[e], rb[e]));
    return out;
  };
  // The staged registers into buffer `buf` (0 or 1; undefined: the only one).
  auto stores_into = [&](const Expr &buf) {
    std::vector<Stmt> out;
    for (const Staged *st : {&pa, &pb})
      for (size_t e = 0; e < st->regs.size(); ++e) {
        const Expr at = buf.defined() ? buf * (st == &pa ? a_size : b_size) + st->at[e] : st->at[e];
        Stmt s = store_shared(st == &pa ? as : bs, at, st->regs[e]);
        out.push_back(st->guard[e].defined() ? if_then(st->guard[e], s) : s);
      }
    return out;
  };
  // Prologue: the first step's slice into its buffer. Then per step: the next step's reads,
  // the multiply-adds on this step's buffer, the next slice into the other buffer, barrier.
  for (Stmt &s : reads_into(first * t.tk, true)) body.push_back(std::move(s));
  Stmt next_reads =
      if_then(kt + 1 < end, let(k0, (kt + 1) * t.tk, block(reads_into(k0, false))));
  std::vector<Stmt> step;
  if (two) {
    for (Stmt &s : stores_into(first % 2)) body.push_back(std::move(s));
    body.push_back(barrier());
    step.push_back(next_reads);
    step.push_back(for_loop(kk, i32(0), i32(t.tk), block(std::move(inner))));
    step.push_back(if_then(kt + 1 < end, block(stores_into(i32(1) - cur))));
    step.push_back(barrier());
    body.push_back(for_loop(kt, first, count, let(cur, kt % 2, block(std::move(step)))));
  } else {
    step = stores_into(Expr());
    step.push_back(barrier());
    step.push_back(next_reads);
    step.push_back(for_loop(kk, i32(0), i32(t.tk), block(std::move(inner))));
    step.push_back(barrier());
    body.push_back(for_loop(kt, first, count, block(std::move(step))));
  }
  KILN_ASSIGN(Stmt st, store_block(d, t, l, acc));
  body.push_back(st);
  return block(std::move(body));
}

std::array<uint64_t, 3> grid_of(const ContractionDef &d, const TileConfig &t, int split_k) {
  return {static_cast<uint64_t>((d.N + t.tn - 1) / t.tn),
          static_cast<uint64_t>((d.M + t.tm - 1) / t.tm),
          static_cast<uint64_t>(d.batch) * static_cast<uint64_t>(split_k)};
}

// Split-K: the partial-sum kernel (its own GridKernel binding the operands and a scratch
// buffer of [slices, batch, M, N] partial sums), then `g` adds each output's slices and stores
// it through the definition's store callback.
Status emit_split_k(GridKernel &g, const ContractionDef &d, const ContractionSchedule &s) {
  const TileConfig &t = s.tile;
  const int64_t steps = (d.K() + t.tk - 1) / t.tk;
  const int64_t per = (steps + s.split_k - 1) / s.split_k;
  const int64_t slices = (steps + per - 1) / per;
  const int64_t outputs = d.batch * d.M * d.N;
  LowerCtx &c = g.ctx();
  c.count_split_k();
  const int partials = c.new_scratch(static_cast<uint64_t>(slices * outputs) * 4);
  GridKernel gp(c, g.op(), g.kernel().name + fmt::format("_{}{}x{}_splitk{}", to_string(s.strategy),
                                                         t.tm, t.tn, slices));
  ContractionDef pd = d;
  KILN_ASSIGN(pd.a, gp.in(d.a_value));
  KILN_ASSIGN(pd.b, gp.in(d.b_value));
  const BufferVar part = gp.scratch(partials, d.acc, true);
  const Layout l = make_layout(t, true, true); // l.zg: the grid's z, as the coop kernel binds it
  pd.store = [&](const Expr &, const Expr &m, const Expr &n, const Expr &acc) -> Result<Stmt> {
    return kir::store(part, (l.zg * d.M + m) * d.N + n, acc);
  };
  auto grid = grid_of(d, t, static_cast<int>(slices));
  if (grid[2] > static_cast<uint64_t>(kMaxGroups))
    return Status::error(g.op().describe() + ": split-K grid exceeds 65535 workgroups");
  if (s.strategy == Strategy::coop) {
    KILN_TRY(emit_coop(gp, pd, t, per, slices));
  } else {
    KILN_ASSIGN(Stmt body, tiled_body(gp, pd, t, l, per));
    KILN_TRY(gp.finish_grid({static_cast<uint32_t>(l.wx), static_cast<uint32_t>(l.wy), 1},
                            {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                             static_cast<uint32_t>(grid[2])},
                            bind_layout(l, t, d.batch, body)));
  }
  const BufferVar in = g.scratch(partials, d.acc, false);
  g.kernel().name += fmt::format("_splitk{}_sum", slices);
  return g.finish(outputs, [&](Expr i) -> Result<Stmt> {
    Expr sum = load(in, i);
    for (int64_t k = 1; k < slices; ++k) sum = sum + load(in, i + k * outputs);
    const Shape out{d.batch, d.M, d.N};
    return let_all(g, "o", unflatten(i, out), [&](std::vector<Expr> zmn) {
      return d.store(zmn[0], zmn[1], zmn[2], sum);
    });
  });
}

} // namespace

ContractionSchedule schedule_contraction(LowerCtx &c, const ContractionDef &d) {
  ContractionSchedule s = pick_contraction(c.target(), c.options().schedule, d.shape(),
                                           &c.options().contraction_override);
  if (s.strategy == Strategy::naive) return s;
  if (s.strategy == Strategy::tiled && d.kdims.size() > 1 && !s.everywhere) {
    // A window reduction (kernel taps after the channel dim): tk becomes a whole number of
    // windows, so the staged reads decompose k without per-element division (slice_reads).
    const int64_t window = shape_numel(Shape(d.kdims.begin() + 1, d.kdims.end()));
    if (window > 1 && window <= 64 && s.tile.tk % window != 0) {
      TileConfig t = s.tile;
      t.tk = static_cast<int>(window * std::max<int64_t>(1, (t.tk + window / 2) / window));
      if (t.shared_bytes() <= c.target().shared_memory_bytes) {
        const bool table_split = s.split_k > 1 && s.reason.rfind("--contraction", 0) != 0;
        s.tile = t;
        if (table_split)
          s.split_k = pick_split_k(c.target(), d.shape(), t, s.min_groups, s.max_groups);
      }
    }
  }
  if (s.split_k > 1 &&
      ((s.strategy != Strategy::tiled && s.strategy != Strategy::coop) || !d.a_value || !d.b_value))
    s.split_k = 1;
  if (s.strategy == Strategy::matrix) {
    // Matrices of one invocation per subgroup and f32 (what the C backend multiplies); other
    // targets and accumulators keep a register block.
    if (c.target().subgroup_size != 1 || d.acc != kir::ScalarType::f32) {
      s.strategy = Strategy::registers;
      s.tile = TileConfig{64, 64, 1, 4, 4};
      s.reason += " (matrix needs f32 and one invocation per subgroup: registers)";
    } else {
      // A small M or N takes a tile of its size (rounded to the microkernel's 4 rows and 16
      // columns) rather than a mostly padded one: a 1 x 1000 x 1280 classifier. A larger one
      // takes as many tiles as the table's size needs, made equal: M = 96 is two 48-row tiles,
      // not 64 + 32 padded to 64 (mobilenet_v2's 96-channel expansions).
      auto fit = [](int tile, int64_t extent, int64_t step) {
        const int64_t tiles = (extent + tile - 1) / tile;
        const int64_t even = (extent + tiles - 1) / tiles;
        return static_cast<int>(std::min<int64_t>(tile, (even + step - 1) / step * step));
      };
      // An M or K that fits one tile takes it exactly: the operand then lies inside the tile
      // and is multiplied in place in every step, where rounding up staged it every time (a
      // grouped 1x1 convolution of 34 channels per group: tm 36 and two k steps of 20 staged
      // A in every step and B in the second).
      s.tile.tm = s.tile.rm = d.M <= s.tile.tm ? static_cast<int>(d.M) : fit(s.tile.tm, d.M, 4);
      s.tile.tn = s.tile.rn = fit(s.tile.tn, d.N, 16);
      // An N of a few tiles that the 16-column rounding would pad by much (196 positions of a
      // 14x14 layer: four tiles of 49 computed as 64, 256 columns) takes one tile of N
      // rounded to 16 (208) where the batch and M still give at least four workgroups.
      {
        const int64_t tiles = (d.N + s.tile.tn - 1) / s.tile.tn;
        const int64_t one = (d.N + 15) / 16 * 16;
        const int64_t m_tiles = (d.M + s.tile.tm - 1) / s.tile.tm;
        if (tiles > 1 && one <= kSingleTileCols && one < tiles * s.tile.tn &&
            d.batch * m_tiles >= 4)
          s.tile.tn = s.tile.rn = static_cast<int>(one);
      }
      s.tile.tk = d.K() <= 64 ? static_cast<int>(d.K()) : fit(s.tile.tk, d.K(), 4);
      // A matrix-vector product (M of a few rows: a batch-1 fully connected layer) streams B
      // once, memory-bound: wide tiles read each row of a row-major B as one long run instead
      // of 64-column strips.
      if (d.M <= 4) s.tile.tn = s.tile.rn = fit(kGemvCols, d.N, 16);
    }
  }
  for (uint64_t n : grid_of(d, s.tile, s.split_k))
    if (n > static_cast<uint64_t>(kMaxGroups)) {
      s.strategy = Strategy::naive;
      s.split_k = 1;
      s.reason = "grid exceeds 65535 workgroups along an axis";
    }
  return s;
}

void bind_a_panels(GridKernel &g, ContractionDef &d, const float *w, int64_t panel_rows,
                   int64_t tk, int64_t sets) {
  const int64_t M = d.M, K = d.K(), pk = (K + tk - 1) / tk * tk;
  const int64_t panels = (M + panel_rows - 1) / panel_rows, per = panels * pk * panel_rows;
  Tensor packed(DType::f32, Shape{sets * per});
  float *dst = packed.data_mut<float>();
  std::fill(dst, dst + sets * per, 0.0f);
  for (int64_t z = 0; z < sets; ++z)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        dst[z * per + ((m / panel_rows) * pk + k) * panel_rows + m % panel_rows] =
            w[(z * M + m) * K + k];
  d.a = g.scratch(g.ctx().new_constant(std::move(packed)), kir::ScalarType::f32, false);
  d.a_panel = panel_rows;
  d.a_panel_k = pk;
  d.a_panel_batch = sets > 1 ? per : 0;
  d.a_panel_sets = sets;
  const Shape kdims = d.kdims;
  const int64_t batch = d.batch;
  d.a_at = [=](const Expr &z, const Expr &m, const std::vector<Expr> &k) {
    Expr at = ((m / panel_rows) * pk + flatten(k, kdims)) * panel_rows + m % panel_rows;
    if (sets == 1) return OperandRef{at, Expr()};
    return OperandRef{(sets == batch ? z : z % sets) * per + at, Expr()};
  };
}

Status emit_contraction(GridKernel &g, const ContractionDef &d, const ContractionSchedule &s) {
  KILN_ASSERT(s.strategy != Strategy::naive, "emit_contraction: the naive kernel is the lowering's");
  const TileConfig &t = s.tile;
  KILN_ASSERT(t.tm % t.rm == 0 && t.tn % t.rn == 0, "contraction tile not a multiple of its block");
  if (s.split_k > 1) return emit_split_k(g, d, s);
  if (s.strategy == Strategy::coop) return emit_coop(g, d, t);
  const Layout l = make_layout(t, false, s.strategy == Strategy::tiled);
  Result<Stmt> body = s.strategy == Strategy::tiled    ? tiled_body(g, d, t, l, 0)
                      : s.strategy == Strategy::matrix ? matrix_body(g, d, t, l)
                                                       : registers_body(d, t, l);
  if (!body) return body.status();
  const auto grid = grid_of(d, t, 1);
  g.kernel().name += fmt::format("_{}{}x{}", to_string(s.strategy), t.tm, t.tn);
  return g.finish_grid({static_cast<uint32_t>(l.wx), static_cast<uint32_t>(l.wy), 1},
                       {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
                        static_cast<uint32_t>(grid[2])},
                       bind_layout(l, t, d.batch, *body));
}

} // namespace kiln::compiler
