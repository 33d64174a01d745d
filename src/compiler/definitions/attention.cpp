// The fused attention kernel. Workgroup (x, y) owns query rows [x * bq, x * bq + bq) of batch
// entry y. Its q rows, scaled, are staged once in shared memory; then for each block of bk
// keys, separated by barriers:
//   1. the block's k and v rows are staged (zero past the last key);
//   2. the bq x bk scores are computed, a few per invocation (masked, -inf past the last key);
//   3. one invocation per query row takes the block's max, the new running max m', rescales
//      its running sum by alpha = exp(m - m'), adds exp(s - m') of the block (left in place
//      as the probabilities) and records alpha;
//   4. every invocation rescales its accumulators (bq x dv outputs spread over the
//      workgroup, each in a register) by its row's alpha and adds the block's p x v.
// Finally each output is the accumulator over the running sum, stored through the
// definition's callback. A row whose scores hold a NaN or whose max stays -inf (every key
// masked) or reaches +inf is a row of NaN probabilities in the unfused graph: NaN, or zeros
// with zero_nan_rows. The max ignores NaN (tracked apart), and a max of -inf is taken as 0
// when exponentiating so that exp(-inf - m) is 0, not NaN.
#include "compiler/definitions/attention.h"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <string>

namespace kiln::compiler {

using namespace kir;

namespace {

constexpr int64_t kMaxGroups = 65535;
constexpr int64_t kLoopCap = 65535; // llvmpipe's iterations per invocation
constexpr int64_t kMaxOutputs = 32; // accumulators (registers) per invocation
constexpr int64_t kUnroll = 4;      // keys per iteration of the per-row loops (divides bk)
constexpr int64_t kTileK = 4;       // keys of an invocation's tile of scores (divides bk)

// Rows of an invocation's tile of scores.
int64_t tile_q(int64_t bq) { return bq % 4 == 0 ? 4 : bq % 2 == 0 ? 2 : 1; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Lanes of the staging copies of rows of `width` elements (4 where a 4-lane read exists).
int vector_rows(int64_t width, const std::function<Expr(const Expr &)> &read4) {
  return read4 && width % 4 == 0 ? 4 : 1;
}

uint64_t shared_bytes(const AttentionDef &d, int64_t bq, int64_t bk) {
  return 4 * static_cast<uint64_t>(bq * d.d + bk * d.d + bk * d.dv + bq * bk + 4 * bq);
}

// Loop iterations of one invocation, as kir::loop_iterations counts them, when the keys are
// split into `splits` ranges of whole blocks.
int64_t iterations(const AttentionDef &d, int64_t wg, int64_t bq, int64_t bk, int64_t splits) {
  const int64_t per_block = 1 + ceil_div(bk * d.d / vector_rows(d.d, d.read_k4), wg) +
                            ceil_div(bk * d.dv / vector_rows(d.dv, d.read_v4), wg) +
                            ceil_div((bq / tile_q(bq)) * (bk / kTileK), wg) * (1 + d.d) +
                            3 * (bk / kUnroll);
  return ceil_div(bq * d.d / vector_rows(d.d, d.read_q4), wg) +
         ceil_div(ceil_div(d.skv, bk), splits) * per_block;
}

Expr as_i32(Expr e) { return cast(ScalarType::i32, std::move(e)); }

Expr workgroup_id_i32(int axis) { return as_i32(workgroup_id(axis)); }
Expr f32c(double v) { return make_const(ScalarType::f32, v); }

// `body(i)` for i = t, t + wg, ... below `count` (guarded where the strides overrun it).
Stmt strided(const std::string &name, const Expr &t, int64_t wg, int64_t count,
             const std::function<Stmt(const Expr &)> &body) {
  Expr u = var(name + "u", ScalarType::i32), i = var(name, ScalarType::i32);
  Stmt st = body(i);
  if (count % wg != 0)
    st = if_then(i < count, st);
  return for_loop(u, i32(0), i32(ceil_div(count, wg)), let(i, t + u * wg, st));
}

struct Shared {
  SharedVar q, k, v, p, m, l, alpha, nan;
};

// Step 1: the k and v rows of the block at key k0.
// Copies rows [first, first + rows) of an operand of `count` rows of `width` elements (batch
// entry b) into `dst`, scaled; rows past the last are zero. Four elements at a time (one
// vector load, four shared stores) where the operand has a 4-lane read and the width is a
// multiple of 4.
Stmt stage_rows(const char *name, const AttentionSchedule &s, const Expr &t, const Expr &b,
                const Expr &first, int64_t rows, int64_t count, int64_t width, const SharedVar &dst,
                const std::function<Expr(const Expr &)> &read,
                const std::function<Expr(const Expr &)> &read4, double scale = 1.0) {
  const int lanes = vector_rows(width, read4);
  return strided(name, t, s.wg, rows * width / lanes, [&](const Expr &v) {
    Expr i = lanes == 1 ? v : v * lanes;
    Expr row = first + i / width;
    Expr at = (b * count + min(row, i32(count - 1))) * width + i % width;
    Expr x = lanes == 1 ? read(at) : read4(at);
    Expr zero = lanes == 1 ? f32c(0) : broadcast(f32c(0), lanes);
    if (scale != 1.0)
      x = x * (lanes == 1 ? f32c(scale) : broadcast(f32c(scale), lanes));
    x = select(row < count, x, zero);
    if (lanes == 1)
      return store_shared(dst, i, x);
    Expr xv = var(std::string(name) + "x", ValueType::vector(ScalarType::f32, lanes));
    std::vector<Stmt> stores;
    for (int l = 0; l < lanes; ++l)
      stores.push_back(store_shared(dst, i + l, extract_lane(xv, l)));
    return let(xv, x, block(std::move(stores)));
  });
}

Stmt stage_kv(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh, const Expr &t,
              const Expr &b, const Expr &k0) {
  return block({stage_rows("sk", s, t, b, k0, s.bk, d.skv, d.d, sh.k, d.read_k, d.read_k4),
                stage_rows("sv", s, t, b, k0, s.bk, d.skv, d.dv, sh.v, d.read_v, d.read_v4)});
}

// Step 2: the scores of the block, a tile of kTileQ rows x kTileK keys per invocation (per
// step of the head dim, kTileQ q and kTileK k values loaded from shared memory feed
// kTileQ * kTileK products).

Stmt scores(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh, const Expr &t,
            const Expr &q0, const Expr &k0, const Expr &mbase) {
  const int64_t tq = tile_q(s.bq), across = s.bk / kTileK;
  return strided("ss", t, s.wg, (s.bq / tq) * across, [&](const Expr &i) {
    Expr r = var("sr", ScalarType::i32), j = var("sj", ScalarType::i32);
    Expr e = var("de", ScalarType::i32);
    std::vector<Stmt> decls, step, out;
    std::vector<Expr> qs, ks;
    for (int64_t a = 0; a < tq; ++a)
      qs.push_back(var(fmt::format("sq{}", a), ScalarType::f32));
    for (int64_t c = 0; c < kTileK; ++c)
      ks.push_back(var(fmt::format("sk{}", c), ScalarType::f32));
    for (int64_t a = 0; a < tq; ++a)
      for (int64_t c = 0; c < kTileK; ++c) {
        Expr acc = var(fmt::format("dot{}_{}", a, c), ScalarType::f32);
        decls.push_back(declare_var(acc, f32c(0)));
        step.push_back(assign(acc, acc + qs[static_cast<size_t>(a)] * ks[static_cast<size_t>(c)]));
        Expr score = acc;
        if (d.read_mask) {
          Expr row = min(q0 + r + a, i32(d.sq - 1)), key = min(k0 + j + c, i32(d.skv - 1));
          score = score + d.read_mask(mbase + row * d.mask_row_stride + key * d.mask_key_stride);
        }
        score = select(k0 + j + c < d.skv, score, f32c(-std::numeric_limits<double>::infinity()));
        out.push_back(store_shared(sh.p, (r + a) * s.bk + j + c, score));
      }
    Stmt inner = block(std::move(step));
    for (int64_t c = kTileK - 1; c >= 0; --c)
      inner = let(ks[static_cast<size_t>(c)], load_shared(sh.k, (j + c) * d.d + e), inner);
    for (int64_t a = tq - 1; a >= 0; --a)
      inner = let(qs[static_cast<size_t>(a)], load_shared(sh.q, (r + a) * d.d + e), inner);
    decls.push_back(for_loop(e, i32(0), i32(d.d), inner));
    decls.insert(decls.end(), out.begin(), out.end());
    return let(r, (i / across) * tq, let(j, (i % across) * kTileK, block(std::move(decls))));
  });
}

// Step 3: the running max and sum of row t (t < bq). Loops over the block's keys run kUnroll
// keys per iteration (bk is a multiple of it), which divides their count in llvmpipe's
// per-invocation budget.
Stmt row_update(const AttentionSchedule &s, const Shared &sh, const Expr &t) {
  const Expr ninf = f32c(-std::numeric_limits<double>::infinity());
  Expr mx = var("mx", ScalarType::f32), nan = var("bad", ScalarType::i32);
  Expr jj = var("rj", ScalarType::i32);
  Expr mold = var("mold", ScalarType::f32), mnew = var("mnew", ScalarType::f32);
  Expr safe = var("msafe", ScalarType::f32), sum = var("psum", ScalarType::f32);
  std::vector<Stmt> maxes, exps;
  for (int64_t u = 0; u < kUnroll; ++u) {
    Expr at = t * s.bk + jj * kUnroll + u;
    Expr x = var(fmt::format("rx{}", u), ScalarType::f32);
    maxes.push_back(let(x, load_shared(sh.p, at),
                        block({assign(mx, select(x > mx, x, mx)),
                               assign(nan, select(call(Intrinsic::isnan, {x}), i32(1), nan))})));
    Expr pj = var(fmt::format("pj{}", u), ScalarType::f32);
    exps.push_back(let(pj, call(Intrinsic::exp, {load_shared(sh.p, at) - safe}),
                       block({store_shared(sh.p, at, pj), assign(sum, sum + pj)})));
  }
  const int64_t n = s.bk / kUnroll;
  Stmt max_loop = for_loop(jj, i32(0), i32(n), block(std::move(maxes)));
  Stmt exp_loop = for_loop(jj, i32(0), i32(n), block(std::move(exps)));
  Expr alpha = var("alpha", ScalarType::f32);
  Stmt rest = block({declare_var(sum, f32c(0)), exp_loop,
                     let(alpha, call(Intrinsic::exp, {mold - safe}),
                         block({store_shared(sh.l, t, load_shared(sh.l, t) * alpha + sum),
                                store_shared(sh.alpha, t, alpha), store_shared(sh.m, t, mnew),
                                store_shared(sh.nan, t, nan)}))});
  return block({declare_var(mx, ninf), declare_var(nan, load_shared(sh.nan, t)), max_loop,
                let(mold, load_shared(sh.m, t),
                    let(mnew, select(mx > mold, mx, mold),
                        let(safe, select(mnew == ninf, f32c(0), mnew), rest)))});
}

// The invocation's accumulators: output (row, col) of the block for each, and whether it lies
// in the block (undefined: always). Where the workgroup covers whole rows (wg a multiple of
// dv) or a row is whole multiples of the workgroup (dv a multiple of wg), rows and columns are
// a variable plus a constant, so the kernel holds one or two index registers instead of
// three per accumulator.
struct Outputs {
  std::vector<Expr> acc, row, col, valid;
  std::vector<Stmt> decls;
};

// A tile of rq rows x rc columns per invocation (rows rg * rq + a, columns cg + b * (dv / rc),
// so neighbouring invocations read neighbouring v elements): per key, rq probabilities and rc
// v elements feed rq * rc accumulators. {0, 0} when no tile of powers of two covers the block
// with the workgroup.
std::pair<int64_t, int64_t> output_tile(const AttentionDef &d, const AttentionSchedule &s) {
  const int64_t n = ceil_div(s.bq * d.dv, s.wg);
  std::pair<int64_t, int64_t> best{0, 0};
  for (int64_t rq = 1; rq <= s.bq && rq <= kMaxOutputs; rq *= 2)
    for (int64_t rc = 1; rq * rc <= kMaxOutputs; rc *= 2) {
      if (s.bq % rq != 0 || d.dv % rc != 0 || rq * rc < n || (s.bq / rq) * (d.dv / rc) > s.wg)
        continue;
      const int64_t cost = rq * rc * 64 + (rq + rc); // fewest accumulators, then fewest loads
      if (best.first == 0 || cost < best.first * best.second * 64 + best.first + best.second)
        best = {rq, rc};
    }
  return best;
}

Outputs outputs(const AttentionDef &d, const AttentionSchedule &s, const Expr &t) {
  Outputs o;
  if (auto [rq, rc] = output_tile(d, s); rq > 0) {
    const int64_t groups = d.dv / rc, busy = (s.bq / rq) * groups;
    Expr rg = var("org", ScalarType::i32), cg = var("ocg", ScalarType::i32);
    o.decls = {declare_var(rg, min(t / groups, i32(s.bq / rq - 1)) * rq),
               declare_var(cg, t % groups)};
    for (int64_t a = 0; a < rq; ++a)
      for (int64_t b = 0; b < rc; ++b) {
        o.acc.push_back(var(fmt::format("o{}_{}", a, b), ScalarType::f32));
        o.decls.push_back(declare_var(o.acc.back(), f32c(0)));
        o.row.push_back(rg + a);
        o.col.push_back(cg + b * groups);
        o.valid.push_back(busy < s.wg ? t < busy : Expr());
      }
    return o;
  }
  const int64_t n = ceil_div(s.bq * d.dv, s.wg);
  Expr r0 = var("or", ScalarType::i32), c0 = var("oc", ScalarType::i32);
  if (s.wg % d.dv == 0) {
    o.decls = {declare_var(r0, t / d.dv), declare_var(c0, t % d.dv)};
  }
  for (int64_t u = 0; u < n; ++u) {
    o.acc.push_back(var(fmt::format("o{}", u), ScalarType::f32));
    o.decls.push_back(declare_var(o.acc.back(), f32c(0)));
    const int64_t first = u * s.wg; // the output index of invocation 0
    Expr row, col;
    if (s.wg % d.dv == 0) {
      row = r0 + first / d.dv;
      col = c0;
    } else if (d.dv % s.wg == 0) {
      row = i32(first / d.dv);
      col = t + first % d.dv;
    } else {
      Expr idx = var(fmt::format("oi{}", u), ScalarType::i32);
      o.decls.push_back(declare_var(idx, t + first));
      row = var(fmt::format("or{}", u), ScalarType::i32);
      col = var(fmt::format("oc{}", u), ScalarType::i32);
      o.decls.push_back(declare_var(row, min(idx / d.dv, i32(s.bq - 1))));
      o.decls.push_back(declare_var(col, idx % d.dv));
    }
    Expr valid;
    if (first + s.wg > s.bq * d.dv) {
      valid = t + first < s.bq * d.dv;
      if (s.wg % d.dv == 0)
        row = min(row, i32(s.bq - 1)); // read in range when not valid
    }
    o.row.push_back(row);
    o.col.push_back(col);
    o.valid.push_back(valid);
  }
  return o;
}

// Step 4: acc = acc * alpha + p x v over the block (kUnroll keys per iteration). Each
// probability and v element is loaded once per key and shared by the accumulators that use it
// (the layouts of outputs() give several accumulators one column or one row).
Stmt accumulate(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh,
                const Outputs &o) {
  std::vector<Stmt> scale, add;
  std::vector<std::pair<Expr, Expr>> loads; // (variable, load), in order
  std::map<std::string, Expr> loaded;       // by the load's text
  auto once = [&](const Expr &load) {
    const std::string key = print(load);
    auto it = loaded.find(key);
    if (it != loaded.end())
      return it->second;
    Expr v = var(fmt::format("pv{}", loads.size()), ScalarType::f32);
    loads.emplace_back(v, load);
    loaded.emplace(key, v);
    return v;
  };
  Expr jj = var("aj", ScalarType::i32);
  for (size_t u = 0; u < o.acc.size(); ++u)
    scale.push_back(assign(o.acc[u], o.acc[u] * load_shared(sh.alpha, o.row[u])));
  for (int64_t x = 0; x < kUnroll; ++x) {
    Expr j = jj * kUnroll + x;
    for (size_t u = 0; u < o.acc.size(); ++u)
      add.push_back(assign(o.acc[u], o.acc[u] + once(load_shared(sh.p, o.row[u] * s.bk + j)) *
                                                    once(load_shared(sh.v, j * d.dv + o.col[u]))));
  }
  Stmt body = block(std::move(add));
  for (auto it = loads.rbegin(); it != loads.rend(); ++it)
    body = let(it->first, it->second, body);
  scale.push_back(for_loop(jj, i32(0), i32(s.bk / kUnroll), body));
  return block(std::move(scale));
}

// The outputs: acc / sum, NaN (or zero) for a NaN row.
Result<Stmt> finish(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh,
                    const Outputs &o, const Expr &b, const Expr &q0, const Expr &t,
                    const AttentionPartials *part) {
  std::vector<Stmt> out;
  if (part) { // the split's unnormalised accumulators and its rows' statistics
    const Expr base = (workgroup_id_i32(2) * d.batch + b) * d.sq + q0; // row 0 of the block
    for (size_t u = 0; u < o.acc.size(); ++u) {
      Expr inside = q0 + o.row[u] < d.sq;
      if (o.valid[u].defined())
        inside = o.valid[u] && inside;
      out.push_back(
          if_then(inside, store(part->acc, (base + o.row[u]) * d.dv + o.col[u], o.acc[u])));
    }
    Expr row = (base + t) * 3;
    out.push_back(if_then(
        t < s.bq && q0 + t < d.sq,
        block({store(part->stats, row, load_shared(sh.m, t)),
               store(part->stats, row + 1, load_shared(sh.l, t)),
               store(part->stats, row + 2, cast(ScalarType::f32, load_shared(sh.nan, t)))})));
    return block(std::move(out));
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t u = 0; u < o.acc.size(); ++u) {
    Expr m = load_shared(sh.m, o.row[u]);
    Expr bad = load_shared(sh.nan, o.row[u]) != 0 || m == f32c(-inf) || m == f32c(inf);
    Expr y = select(bad, f32c(d.zero_nan_rows ? 0.0 : std::nan("")),
                    o.acc[u] / load_shared(sh.l, o.row[u]));
    KILN_ASSIGN(Stmt st, d.store((b * d.sq + q0 + o.row[u]) * d.dv + o.col[u], y));
    Expr inside = q0 + o.row[u] < d.sq;
    if (o.valid[u].defined())
      inside = o.valid[u] && inside;
    out.push_back(if_then(inside, st));
  }
  return block(std::move(out));
}

} // namespace

Result<AttentionSchedule> schedule_attention(const LowerCtx &c, const Op &op,
                                             const AttentionDef &d) {
  const kir::TargetDesc &t = c.target();
  AttentionSchedule s;
  // llvmpipe (lavapipe, subgroup 8) runs a workgroup's invocations as coroutines of 8 lanes
  // that every barrier switches between: 32 invocations measured fastest there (4 heads of
  // 512 positions, head size 64: 83 ms against 147 at 64 and 265 at 128; the unfused graph
  // 132); 128 elsewhere.
  const int64_t wg = t.subgroup_size == 8 ? 32 : 128;
  s.wg = std::min<int64_t>({wg, t.max_workgroup_invocations, t.max_workgroup_size[0]});
  if (d.batch > kMaxGroups)
    return unsupported(op, fmt::format("attention over {} batch entries (more than {} "
                                       "workgroups)",
                                       d.batch, kMaxGroups));
  // The preferred blocks first; the first within the loop budget wins, else the one needing
  // the fewest iterations.
  bool found = false;
  int64_t best = 0;
  for (int64_t bq : {32, 16, 8, 4, 2, 1}) {
    if (bq > s.wg || (bq > 1 && bq / 2 >= d.sq) || ceil_div(bq * d.dv, s.wg) > kMaxOutputs ||
        ceil_div(d.sq, bq) > kMaxGroups)
      continue;
    for (int64_t bk : {32, 16, 8}) {
      if ((bk > 8 && bk / 2 >= d.skv) || shared_bytes(d, bq, bk) > t.shared_memory_bytes)
        continue;
      const int64_t n = iterations(d, s.wg, bq, bk, 1);
      if (n <= kLoopCap)
        return AttentionSchedule{s.wg, bq, bk, 1};
      if (!found || n < best) {
        s.bq = bq;
        s.bk = bk;
        best = n;
      }
      found = true;
    }
  }
  if (!found)
    return unsupported(op, fmt::format("attention with head sizes {} / {} (no block fits {} "
                                       "bytes of shared memory)",
                                       d.d, d.dv, t.shared_memory_bytes));
  // Too many keys for one workgroup's loops: the fewest splits of the keys that fit (the
  // combine kernel loops over the splits, once to rescale, once to add).
  const int64_t blocks = ceil_div(d.skv, s.bk);
  s.splits = 2;
  while (s.splits < blocks &&
         (iterations(d, s.wg, s.bq, s.bk, s.splits) > kLoopCap || 2 * s.splits > kLoopCap))
    ++s.splits;
  if (s.splits > kMaxGroups)
    return unsupported(op, "attention over this many keys");
  return s;
}

Status emit_attention(GridKernel &g, const AttentionDef &d, const AttentionSchedule &s,
                      const AttentionPartials *part) {
  KILN_ASSERT((s.splits > 1) == (part != nullptr), "emit_attention: partials iff split");
  KILN_ASSERT(d.batch > 0 && d.sq > 0 && d.skv > 0 && d.dv > 0 && s.bq > 0 && s.bk > 0,
              "emit_attention: empty attention");
  Kernel &k = g.kernel();
  Shared sh;
  const auto u32 = [](int64_t n) { return static_cast<uint32_t>(n); };
  sh.q = k.add_shared("aq", ScalarType::f32, u32(std::max<int64_t>(1, s.bq * d.d)));
  sh.k = k.add_shared("ak", ScalarType::f32, u32(std::max<int64_t>(1, s.bk * d.d)));
  sh.v = k.add_shared("av", ScalarType::f32, u32(s.bk * d.dv));
  sh.p = k.add_shared("ap", ScalarType::f32, u32(s.bq * s.bk));
  sh.m = k.add_shared("am", ScalarType::f32, u32(s.bq));
  sh.l = k.add_shared("al", ScalarType::f32, u32(s.bq));
  sh.alpha = k.add_shared("aa", ScalarType::f32, u32(s.bq));
  sh.nan = k.add_shared("an", ScalarType::i32, u32(s.bq));
  Expr t = var("t", ScalarType::i32), b = var("b", ScalarType::i32);
  Expr q0 = var("q0", ScalarType::i32), k0 = var("k0", ScalarType::i32);
  Expr kb = var("kb", ScalarType::i32), mbase = var("mbase", ScalarType::i32);
  std::vector<Stmt> body;
  // The scaled q rows (zero past the last row) and the rows' initial state.
  body.push_back(
      stage_rows("sq", s, t, b, q0, s.bq, d.sq, d.d, sh.q, d.read_q, d.read_q4, d.scale));
  body.push_back(if_then(
      t < s.bq, block({store_shared(sh.m, t, f32c(-std::numeric_limits<double>::infinity())),
                       store_shared(sh.l, t, f32c(0)), store_shared(sh.nan, t, i32(0))})));
  const Outputs o = outputs(d, s, t);
  body.insert(body.end(), o.decls.begin(), o.decls.end());
  std::vector<Stmt> step{barrier(), stage_kv(d, s, sh, t, b, k0),
                         barrier(), scores(d, s, sh, t, q0, k0, mbase),
                         barrier(), if_then(t < s.bq, row_update(s, sh, t)),
                         barrier(), accumulate(d, s, sh, o)};
  // With splits, workgroup z walks blocks [z * per, z * per + per); blocks past the last key
  // are all masked and change nothing.
  const int64_t per = ceil_div(ceil_div(d.skv, s.bk), s.splits);
  Expr first = s.splits > 1 ? workgroup_id_i32(2) * per : i32(0);
  body.push_back(
      for_loop(kb, i32(0), i32(per), let(k0, (first + kb) * s.bk, block(std::move(step)))));
  KILN_ASSIGN(Stmt fin, finish(d, s, sh, o, b, q0, t, part));
  body.push_back(fin);
  Stmt st = block(std::move(body));
  st = let(mbase, d.read_mask ? d.mask_base(b) : i32(0), st);
  st = let(q0, as_i32(workgroup_id(0)) * s.bq, st);
  st = let(b, as_i32(workgroup_id(1)), st);
  st = let(t, as_i32(local_id(0)), st);
  k.name += fmt::format("_q{}_k{}", s.bq, s.bk) + (s.splits > 1 ? "_split" : "");
  return g.finish_grid({static_cast<uint32_t>(s.wg), 1, 1},
                       {static_cast<uint32_t>(ceil_div(d.sq, s.bq)), static_cast<uint32_t>(d.batch),
                        static_cast<uint32_t>(s.splits)},
                       st);
}

Status emit_attention_combine(GridKernel &g, const AttentionDef &d, const AttentionSchedule &s,
                              const AttentionPartials &part) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t rows = d.batch * d.sq;
  return g.finish(rows * d.dv, [&](Expr i) -> Result<Stmt> {
    Expr row = var(g.fresh("row"), ScalarType::i32), sp = var(g.fresh("sp"), ScalarType::i32);
    Expr mx = var(g.fresh("mx"), ScalarType::f32), bad = var(g.fresh("bad"), ScalarType::f32);
    Expr sum = var(g.fresh("sum"), ScalarType::f32), acc = var(g.fresh("acc"), ScalarType::f32);
    Expr w = var(g.fresh("w"), ScalarType::f32), safe = var(g.fresh("safe"), ScalarType::f32);
    auto stat = [&](int k) { return load(part.stats, ((sp * rows) + row) * 3 + k); };
    Stmt maxes = for_loop(
        sp, i32(0), i32(s.splits),
        block({assign(mx, select(stat(0) > mx, stat(0), mx)), assign(bad, max(bad, stat(2)))}));
    Stmt sums = for_loop(
        sp, i32(0), i32(s.splits),
        let(w, call(Intrinsic::exp, {stat(0) - safe}),
            block({assign(sum, sum + stat(1) * w),
                   assign(acc, acc + load(part.acc, (sp * rows + row) * d.dv + i % d.dv) * w)})));
    Expr nan_row = bad != f32c(0) || mx == f32c(-inf) || mx == f32c(inf);
    Expr y = select(nan_row, f32c(d.zero_nan_rows ? 0.0 : std::nan("")), acc / sum);
    KILN_ASSIGN(Stmt st, d.store(i, y));
    return let(row, i / d.dv,
               block({declare_var(mx, f32c(-inf)), declare_var(bad, f32c(0)), maxes,
                      declare_var(sum, f32c(0)), declare_var(acc, f32c(0)),
                      let(safe, select(mx == f32c(-inf), f32c(0), mx), block({sums, st}))}));
  });
}

} // namespace kiln::compiler
