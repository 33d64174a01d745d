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

namespace kiln::compiler {

using namespace kir;

namespace {

constexpr int64_t kMaxGroups = 65535;
constexpr int64_t kLoopCap = 65535;   // llvmpipe's iterations per invocation
constexpr int64_t kMaxOutputs = 32;   // accumulators (registers) per invocation
constexpr int64_t kUnroll = 4;        // keys per iteration of the per-row loops (divides bk)

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Elements of the dot product per loop iteration.
int64_t unroll_of(int64_t d) { return d % 4 == 0 ? 4 : d % 2 == 0 ? 2 : 1; }

uint64_t shared_bytes(const AttentionDef &d, int64_t bq, int64_t bk) {
  return 4 * static_cast<uint64_t>(bq * d.d + bk * d.d + bk * d.dv + bq * bk + 4 * bq);
}

// Loop iterations of one invocation, as kir::loop_iterations counts them, when the keys are
// split into `splits` ranges of whole blocks.
int64_t iterations(const AttentionDef &d, int64_t wg, int64_t bq, int64_t bk, int64_t splits) {
  const int64_t per_block = 1 + ceil_div(bk * d.d, wg) + ceil_div(bk * d.dv, wg) +
                            ceil_div(bq * bk, wg) * (1 + d.d / unroll_of(d.d)) +
                            3 * (bk / kUnroll);
  return ceil_div(bq * d.d, wg) + ceil_div(ceil_div(d.skv, bk), splits) * per_block;
}

Expr as_i32(Expr e) { return cast(ScalarType::i32, std::move(e)); }
Expr workgroup_id_i32(int axis) { return as_i32(workgroup_id(axis)); }
Expr f32c(double v) { return make_const(ScalarType::f32, v); }

// `body(i)` for i = t, t + wg, ... below `count` (guarded where the strides overrun it).
Stmt strided(const std::string &name, const Expr &t, int64_t wg, int64_t count,
             const std::function<Stmt(const Expr &)> &body) {
  Expr u = var(name + "u", ScalarType::i32), i = var(name, ScalarType::i32);
  Stmt st = body(i);
  if (count % wg != 0) st = if_then(i < count, st);
  return for_loop(u, i32(0), i32(ceil_div(count, wg)), let(i, t + u * wg, st));
}

struct Shared {
  SharedVar q, k, v, p, m, l, alpha, nan;
};

// Step 1: the k and v rows of the block at key k0.
Stmt stage_kv(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh, const Expr &t,
              const Expr &b, const Expr &k0) {
  auto rows = [&](const char *name, int64_t width, const SharedVar &dst,
                  const std::function<Expr(const Expr &)> &read) {
    return strided(name, t, s.wg, s.bk * width, [&](const Expr &i) {
      Expr key = k0 + i / width;
      Expr at = (b * d.skv + min(key, i32(d.skv - 1))) * width + i % width;
      return store_shared(dst, i, select(key < d.skv, read(at), f32c(0)));
    });
  };
  return block({rows("sk", d.d, sh.k, d.read_k), rows("sv", d.dv, sh.v, d.read_v)});
}

// Step 2: the scores of the block.
Stmt scores(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh, const Expr &t,
            const Expr &q0, const Expr &k0, const Expr &mbase) {
  const int64_t un = unroll_of(d.d);
  return strided("ss", t, s.wg, s.bq * s.bk, [&](const Expr &i) {
    Expr r = var("sr", ScalarType::i32), j = var("sj", ScalarType::i32);
    Expr acc = var("dot", ScalarType::f32), e = var("de", ScalarType::i32);
    Expr sum = acc;
    for (int64_t x = 0; x < un; ++x)
      sum = sum + load_shared(sh.q, r * d.d + e * un + x) * load_shared(sh.k, j * d.d + e * un + x);
    Expr score = acc;
    if (d.read_mask) {
      Expr row = min(q0 + r, i32(d.sq - 1)), key = min(k0 + j, i32(d.skv - 1));
      score = score + d.read_mask(mbase + row * d.mask_row_stride + key * d.mask_key_stride);
    }
    score = select(k0 + j < d.skv, score, f32c(-std::numeric_limits<double>::infinity()));
    Stmt body = block({declare_var(acc, f32c(0)), for_loop(e, i32(0), i32(d.d / un), assign(acc, sum)),
                       store_shared(sh.p, i, score)});
    return let(r, i / s.bk, let(j, i % s.bk, body));
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
  Stmt rest = block(
      {declare_var(sum, f32c(0)), exp_loop,
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

Outputs outputs(const AttentionDef &d, const AttentionSchedule &s, const Expr &t) {
  Outputs o;
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
      if (s.wg % d.dv == 0) row = min(row, i32(s.bq - 1)); // read in range when not valid
    }
    o.row.push_back(row);
    o.col.push_back(col);
    o.valid.push_back(valid);
  }
  return o;
}

// Step 4: acc = acc * alpha + p x v over the block (kUnroll keys per iteration).
Stmt accumulate(const AttentionDef &d, const AttentionSchedule &s, const Shared &sh,
                const Outputs &o) {
  std::vector<Stmt> scale, add;
  Expr jj = var("aj", ScalarType::i32);
  for (size_t u = 0; u < o.acc.size(); ++u)
    scale.push_back(assign(o.acc[u], o.acc[u] * load_shared(sh.alpha, o.row[u])));
  for (int64_t x = 0; x < kUnroll; ++x) {
    Expr j = jj * kUnroll + x;
    for (size_t u = 0; u < o.acc.size(); ++u)
      add.push_back(assign(o.acc[u], o.acc[u] + load_shared(sh.p, o.row[u] * s.bk + j) *
                                                    load_shared(sh.v, j * d.dv + o.col[u])));
  }
  scale.push_back(for_loop(jj, i32(0), i32(s.bk / kUnroll), block(std::move(add))));
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
      if (o.valid[u].defined()) inside = o.valid[u] && inside;
      out.push_back(if_then(inside, store(part->acc, (base + o.row[u]) * d.dv + o.col[u],
                                          o.acc[u])));
    }
    Expr row = (base + t) * 3;
    out.push_back(if_then(t < s.bq && q0 + t < d.sq,
                          block({store(part->stats, row, load_shared(sh.m, t)),
                                 store(part->stats, row + 1, load_shared(sh.l, t)),
                                 store(part->stats, row + 2,
                                       cast(ScalarType::f32, load_shared(sh.nan, t)))})));
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
    if (o.valid[u].defined()) inside = o.valid[u] && inside;
    out.push_back(if_then(inside, st));
  }
  return block(std::move(out));
}

} // namespace

Result<AttentionSchedule> schedule_attention(const LowerCtx &c, const Op &op,
                                             const AttentionDef &d) {
  const kir::TargetDesc &t = c.target();
  AttentionSchedule s;
  s.wg = std::min<int64_t>({128, t.max_workgroup_invocations, t.max_workgroup_size[0]});
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
      if (n <= kLoopCap) return AttentionSchedule{s.wg, bq, bk, 1};
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
  while (s.splits < blocks && (iterations(d, s.wg, s.bq, s.bk, s.splits) > kLoopCap ||
                               2 * s.splits > kLoopCap))
    ++s.splits;
  if (s.splits > kMaxGroups) return unsupported(op, "attention over this many keys");
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
  body.push_back(strided("sq", t, s.wg, s.bq * d.d, [&](const Expr &i) {
    Expr row = q0 + i / d.d;
    Expr at = (b * d.sq + min(row, i32(d.sq - 1))) * d.d + i % d.d;
    return store_shared(sh.q, i, select(row < d.sq, d.read_q(at) * f32c(d.scale), f32c(0)));
  }));
  body.push_back(if_then(t < s.bq, block({store_shared(sh.m, t, f32c(-std::numeric_limits<double>::infinity())),
                                          store_shared(sh.l, t, f32c(0)),
                                          store_shared(sh.nan, t, i32(0))})));
  const Outputs o = outputs(d, s, t);
  body.insert(body.end(), o.decls.begin(), o.decls.end());
  std::vector<Stmt> step{barrier(), stage_kv(d, s, sh, t, b, k0), barrier(),
                         scores(d, s, sh, t, q0, k0, mbase), barrier(),
                         if_then(t < s.bq, row_update(s, sh, t)), barrier(),
                         accumulate(d, s, sh, o)};
  // With splits, workgroup z walks blocks [z * per, z * per + per); blocks past the last key
  // are all masked and change nothing.
  const int64_t per = ceil_div(ceil_div(d.skv, s.bk), s.splits);
  Expr first = s.splits > 1 ? workgroup_id_i32(2) * per : i32(0);
  body.push_back(for_loop(kb, i32(0), i32(per),
                          let(k0, (first + kb) * s.bk, block(std::move(step)))));
  KILN_ASSIGN(Stmt fin, finish(d, s, sh, o, b, q0, t, part));
  body.push_back(fin);
  Stmt st = block(std::move(body));
  st = let(mbase, d.read_mask ? d.mask_base(b) : i32(0), st);
  st = let(q0, as_i32(workgroup_id(0)) * s.bq, st);
  st = let(b, as_i32(workgroup_id(1)), st);
  st = let(t, as_i32(local_id(0)), st);
  k.name += fmt::format("_q{}_k{}", s.bq, s.bk) + (s.splits > 1 ? "_split" : "");
  return g.finish_grid({static_cast<uint32_t>(s.wg), 1, 1},
                       {static_cast<uint32_t>(ceil_div(d.sq, s.bq)),
                        static_cast<uint32_t>(d.batch), static_cast<uint32_t>(s.splits)},
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
    Stmt maxes = for_loop(sp, i32(0), i32(s.splits),
                          block({assign(mx, select(stat(0) > mx, stat(0), mx)),
                                 assign(bad, max(bad, stat(2)))}));
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
