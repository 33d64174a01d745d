// kiln.attention (scaled dot-product attention with masks, KV cache, GQA, softcap) and
// kiln.rotary_embedding. Reference implementations accumulate in double.
#include "ops/misc_internal.h"

#include <algorithm>

namespace kiln::misc {
namespace {

// Product / sum of dims, kDynamic when one is unknown, std::nullopt on int64 overflow.
std::optional<int64_t> dmul(int64_t a, int64_t b) {
  return a < 0 || b < 0 ? kDynamic : checked_mul(a, b);
}
int64_t ddiv(int64_t a, int64_t b) { return a < 0 || b <= 0 ? kDynamic : a / b; }
std::optional<int64_t> dadd(int64_t a, int64_t b) {
  return a < 0 || b < 0 ? kDynamic : checked_add(a, b);
}

// Geometry of one attention evaluation (4-D view: [batch, heads, seq, head_size]).
struct AttnDims {
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, Sp = 0, St = 0, D = 0, Dk = 0, Dv = 0;
  bool is3d = false;
};

Status verify_attention(const Op &op) {
  int64_t mode = op.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return Status::error(fmt::format("{}: qk_matmul_output_mode {} is not supported",
                                     op.describe(), mode));
  if (op.attr_float("softcap", 0.0) < 0)
    return Status::error(op.describe() + ": softcap must be >= 0");
  return Status::ok();
}

Result<AttnDims> attention_dims(const Op &op, const Shape &q, const Shape &k, const Shape &v,
                                const Shape *past_key) {
  AttnDims d;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return Status::error(op.describe() + ": Q, K and V must all be 3-D or all be 4-D");
  d.B = q[0];
  if (q.size() == 3) {
    d.is3d = true;
    d.Hq = op.attr_int("q_num_heads", 0);
    d.Hkv = op.attr_int("kv_num_heads", 0);
    if (d.Hq <= 0 || d.Hkv <= 0)
      return Status::error(op.describe() + ": 3-D inputs need q_num_heads and kv_num_heads > 0");
    d.Sq = q[1];
    d.Skv = k[1];
    d.D = ddiv(q[2], d.Hq);
    d.Dk = ddiv(k[2], d.Hkv);
    d.Dv = ddiv(v[2], d.Hkv);
    for (auto [n, h] : {std::pair{q[2], d.Hq}, {k[2], d.Hkv}, {v[2], d.Hkv}})
      if (n >= 0 && n % h != 0)
        return Status::error(fmt::format("{}: hidden size {} is not divisible by {} heads",
                                         op.describe(), n, h));
  } else {
    d.Hq = q[1];
    d.Sq = q[2];
    d.D = q[3];
    d.Hkv = k[1];
    d.Skv = k[2];
    d.Dk = k[3];
    d.Dv = v[3];
  }
  d.Sp = past_key ? (past_key->size() == 4 ? (*past_key)[2] : -2) : 0;
  if (d.Sp == -2) return Status::error(op.describe() + ": past_key must be 4-D");
  const std::optional<int64_t> st = dadd(d.Sp, d.Skv);
  if (!st)
    return overflow_error(op, fmt::format("the total sequence length ({} past + {})", d.Sp, d.Skv));
  d.St = *st;
  return d;
}

Status infer_attention(InferCtx &ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.type(i).ranked) return ctx.error("Q, K and V must be ranked");
  if (ctx.present(4) && !ctx.type(4).ranked) return ctx.error("past_key must be ranked");
  KILN_ASSIGN(AttnDims d, attention_dims(ctx.op, ctx.type(0).dims, ctx.type(1).dims,
                                         ctx.type(2).dims,
                                         ctx.present(4) ? &ctx.type(4).dims : nullptr));
  DType dt = ctx.type(0).dtype;
  KILN_TRY(expect_float(ctx.op, "Q", dt));
  const std::optional<int64_t> hidden = dmul(d.Hq, d.Dv);
  if (!hidden)
    return overflow_error(ctx.op, fmt::format("the output hidden size ({} heads x {})", d.Hq, d.Dv));
  Shape y = d.is3d ? Shape{d.B, d.Sq, *hidden} : Shape{d.B, d.Hq, d.Sq, d.Dv};
  ctx.out = {TensorType{dt, y, true}, TensorType{dt, {d.B, d.Hkv, d.St, d.D}, true},
             TensorType{dt, {d.B, d.Hkv, d.St, d.Dv}, true},
             TensorType{dt, {d.B, d.Hq, d.Sq, d.St}, true}};
  return Status::ok();
}

// Q/K/V as a [B, H, S, D] double array (3-D inputs are split into heads).
std::vector<double> to_bhsd(const Tensor &t, bool is3d, int64_t H, int64_t D) {
  std::vector<double> src = t.to_f64s();
  if (!is3d) return src;
  const int64_t B = t.shape()[0], S = t.shape()[1];
  std::vector<double> out(src.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t e = 0; e < D; ++e)
          out[((b * H + h) * S + s) * D + e] = src[((b * S + s) * H + h) * D + e];
  return out;
}

// Concatenates past [B,H,Sp,D] and cur [B,H,S,D] along the sequence axis.
std::vector<double> concat_seq(const std::vector<double> &past, const std::vector<double> &cur,
                               int64_t BH, int64_t Sp, int64_t S, int64_t D) {
  std::vector<double> out(static_cast<size_t>(BH * (Sp + S) * D));
  for (int64_t bh = 0; bh < BH; ++bh) {
    std::copy_n(past.begin() + bh * Sp * D, Sp * D, out.begin() + bh * (Sp + S) * D);
    std::copy_n(cur.begin() + bh * S * D, S * D, out.begin() + bh * (Sp + S) * D + Sp * D);
  }
  return out;
}

// The additive mask input, broadcast to [B, Hq, Sq, St] (its last dim may be shorter: the
// missing keys are masked out).
struct MaskView {
  const Tensor *t = nullptr;
  std::vector<int64_t> strides = std::vector<int64_t>(4, 0);
  int64_t last = 0;
  bool boolean = false;

  double at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!t) return 0.0;
    if (j >= last) return kNegInf;
    int64_t off = b * strides[0] + h * strides[1] + i * strides[2] + j * strides[3];
    if (boolean) return t->get_i64(off) ? 0.0 : kNegInf;
    return t->get_f64(off);
  }
};

Result<MaskView> make_mask(const EvalCtx &ctx, const AttnDims &d) {
  MaskView m;
  if (!ctx.present(3)) return m;
  const Tensor &t = ctx.input(3);
  if (t.rank() < 1 || t.rank() > 4) return ctx.error("attn_mask must have rank 1 to 4");
  m.t = &t;
  m.boolean = t.dtype() == DType::boolean;
  if (!m.boolean && !is_float(t.dtype())) return ctx.error("attn_mask must be bool or float");
  Shape full(4, 1);
  std::copy(t.shape().begin(), t.shape().end(), full.begin() + (4 - t.rank()));
  auto st = shape_strides(full);
  const int64_t want[3] = {d.B, d.Hq, d.Sq};
  for (int k = 0; k < 3; ++k) {
    if (full[k] != 1 && full[k] != want[k])
      return ctx.error(fmt::format("attn_mask shape [{}] does not broadcast to [{}x{}x{}x{}]",
                                   shape_str(t.shape()), d.B, d.Hq, d.Sq, d.St));
    m.strides[k] = full[k] == 1 ? 0 : st[k];
  }
  if (full[3] > d.St) return ctx.error("attn_mask has more keys than K (with past_key)");
  m.last = full[3];
  m.strides[3] = 1;
  return m;
}

struct AttnParams {
  double scale = 1.0, softcap = 0.0;
  bool causal = false;
  int64_t mode = 0;
  std::vector<int64_t> nonpad; // empty when absent
};

// One query row: fills probs (and the qk_matmul_output row), returns nothing.
void attention_row(const AttnDims &d, const AttnParams &p, const MaskView &mask,
                   const double *q, const double *k, int64_t b, int64_t h, int64_t i,
                   std::vector<double> &bias, std::vector<double> &x, double *qk_out) {
  const int64_t St = d.St;
  bool all_masked = true;
  for (int64_t j = 0; j < St; ++j) {
    double bj = mask.at(b, h, i, j);
    if (p.causal) {
      int64_t offset = d.Sp;
      if (!p.nonpad.empty() && d.Sp == 0) offset = p.nonpad[b] - d.Sq;
      if (j > i + offset) bj += kNegInf;
    }
    if (!p.nonpad.empty() && j >= p.nonpad[b]) bj += kNegInf;
    bias[j] = bj;
    if (!(std::isinf(bj) && bj < 0)) all_masked = false;
    double s = 0;
    const double *kr = k + j * d.D;
    for (int64_t e = 0; e < d.D; ++e) s += q[e] * kr[e];
    s *= p.scale;
    if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
    x[j] = s + bj;
    if (p.mode <= 1) qk_out[j] = s;
    else if (p.mode == 2) qk_out[j] = x[j];
  }
  // Softmax (numpy semantics: NaN propagates; a row of -inf gives zeros).
  double mx = kNegInf;
  bool nan = false;
  for (int64_t j = 0; j < St; ++j) {
    if (std::isnan(x[j])) nan = true;
    mx = std::max(mx, x[j]);
  }
  if (nan) mx = std::numeric_limits<double>::quiet_NaN();
  double safe = std::isinf(mx) && mx < 0 ? 0.0 : mx, sum = 0;
  for (int64_t j = 0; j < St; ++j) sum += (x[j] = std::exp(x[j] - safe));
  if (sum == 0) sum = 1;
  for (int64_t j = 0; j < St; ++j) x[j] = all_masked ? 0.0 : x[j] / sum;
  if (p.mode == 3)
    for (int64_t j = 0; j < St; ++j) qk_out[j] = x[j];
}

Status eval_attention(EvalCtx &ctx) {
  const Op &op = ctx.op;
  const Tensor &Q = ctx.input(0), &K = ctx.input(1), &V = ctx.input(2);
  const bool has_past = ctx.present(4) || ctx.present(5);
  if (has_past && !(ctx.present(4) && ctx.present(5)))
    return ctx.error("past_key and past_value must be given together");
  KILN_ASSIGN(AttnDims d, attention_dims(op, Q.shape(), K.shape(), V.shape(),
                                         has_past ? &ctx.input(4).shape() : nullptr));
  if (d.Hkv <= 0 || d.Hq % d.Hkv != 0)
    return ctx.error(fmt::format("q heads {} is not a multiple of kv heads {}", d.Hq, d.Hkv));
  if (K.shape()[0] != d.B || V.shape()[0] != d.B || d.Dk != d.D ||
      (d.is3d ? V.shape()[1] : V.shape()[2]) != d.Skv || (!d.is3d && V.shape()[1] != d.Hkv))
    return ctx.error("Q, K and V shapes do not match");
  std::vector<double> q = to_bhsd(Q, d.is3d, d.Hq, d.D);
  std::vector<double> k = to_bhsd(K, d.is3d, d.Hkv, d.D);
  std::vector<double> v = to_bhsd(V, d.is3d, d.Hkv, d.Dv);
  if (has_past) {
    const Tensor &pk = ctx.input(4), &pv = ctx.input(5);
    if (pk.shape() != Shape{d.B, d.Hkv, d.Sp, d.D} || pv.shape() != Shape{d.B, d.Hkv, d.Sp, d.Dv})
      return ctx.error("past_key/past_value shapes do not match K/V");
    k = concat_seq(pk.to_f64s(), k, d.B * d.Hkv, d.Sp, d.Skv, d.D);
    v = concat_seq(pv.to_f64s(), v, d.B * d.Hkv, d.Sp, d.Skv, d.Dv);
  }
  AttnParams p;
  p.scale = op.has_attr("scale") ? op.attr_float("scale", 1.0)
                                 : 1.0 / std::sqrt(static_cast<double>(d.D));
  p.softcap = op.attr_float("softcap", 0.0);
  p.causal = op.attr_int("is_causal", 0) != 0;
  p.mode = op.attr_int("qk_matmul_output_mode", 0);
  if (ctx.present(6)) {
    p.nonpad = ctx.input(6).to_i64s();
    if (static_cast<int64_t>(p.nonpad.size()) != d.B)
      return ctx.error("nonpad_kv_seqlen must have one entry per batch");
  }
  KILN_ASSIGN(MaskView mask, make_mask(ctx, d));

  const int64_t group = d.Hq / d.Hkv;
  std::vector<double> y(static_cast<size_t>(d.B * d.Hq * d.Sq * d.Dv));
  std::vector<double> qk(static_cast<size_t>(d.B * d.Hq * d.Sq * d.St));
  std::vector<double> bias(d.St), x(d.St);
  for (int64_t b = 0; b < d.B; ++b)
    for (int64_t h = 0; h < d.Hq; ++h) {
      const int64_t kvh = b * d.Hkv + h / group;
      for (int64_t i = 0; i < d.Sq; ++i) {
        const int64_t row = (b * d.Hq + h) * d.Sq + i;
        attention_row(d, p, mask, &q[row * d.D], &k[kvh * d.St * d.D], b, h, i, bias, x,
                      &qk[row * d.St]);
        double *yr = &y[row * d.Dv];
        for (int64_t j = 0; j < d.St; ++j) {
          if (x[j] == 0) continue;
          const double *vr = &v[(kvh * d.St + j) * d.Dv];
          for (int64_t e = 0; e < d.Dv; ++e) yr[e] += x[j] * vr[e];
        }
      }
    }
  const DType dt = Q.dtype();
  Tensor yt = tensor_from_f64(y, {d.B, d.Hq, d.Sq, d.Dv}, dt);
  if (d.is3d) {
    std::vector<double> y3(y.size());
    for (int64_t b = 0; b < d.B; ++b)
      for (int64_t h = 0; h < d.Hq; ++h)
        for (int64_t s = 0; s < d.Sq; ++s)
          for (int64_t e = 0; e < d.Dv; ++e)
            y3[((b * d.Sq + s) * d.Hq + h) * d.Dv + e] = y[((b * d.Hq + h) * d.Sq + s) * d.Dv + e];
    yt = tensor_from_f64(y3, {d.B, d.Sq, d.Hq * d.Dv}, dt);
  }
  ctx.out = {yt, tensor_from_f64(k, {d.B, d.Hkv, d.St, d.D}, dt),
             tensor_from_f64(v, {d.B, d.Hkv, d.St, d.Dv}, dt),
             tensor_from_f64(qk, {d.B, d.Hq, d.Sq, d.St}, dt)};
  return Status::ok();
}

// ---- rotary embedding ----

Status infer_rotary(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (!x.ranked || (x.rank() != 3 && x.rank() != 4))
    return ctx.error("input must be 3-D or 4-D");
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  if (x.rank() == 3 && ctx.op.attr_int("num_heads", 0) <= 0)
    return ctx.error("3-D input needs num_heads > 0");
  return infer_same_as(ctx, 0);
}

struct RotaryGeom {
  int64_t B, S, H, D, rd;
  bool is3d;
  // Flat offset of x(b, s, h, 0).
  int64_t base(int64_t b, int64_t s, int64_t h) const {
    return is3d ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
  }
};

Result<RotaryGeom> rotary_geom(const EvalCtx &ctx) {
  const Shape &xs = ctx.input(0).shape();
  RotaryGeom g{};
  g.is3d = xs.size() == 3;
  g.B = xs[0];
  if (g.is3d) {
    g.S = xs[1];
    g.H = ctx.op.attr_int("num_heads", 0);
    if (g.H <= 0 || xs[2] % g.H != 0) return ctx.error("hidden size not divisible by num_heads");
    g.D = xs[2] / g.H;
  } else {
    g.H = xs[1];
    g.S = xs[2];
    g.D = xs[3];
  }
  g.rd = ctx.op.attr_int("rotary_embedding_dim", 0);
  if (g.rd == 0) g.rd = g.D;
  if (g.rd < 0 || g.rd > g.D || g.rd % 2 != 0)
    return ctx.error(fmt::format("rotary_embedding_dim {} is invalid for head size {}", g.rd, g.D));
  return g;
}

Status eval_rotary(EvalCtx &ctx) {
  KILN_ASSIGN(RotaryGeom g, rotary_geom(ctx));
  const Tensor &X = ctx.input(0), &C = ctx.input(1), &Sn = ctx.input(2);
  const int64_t half = g.rd / 2;
  const bool has_pos = ctx.present(3);
  std::vector<int64_t> pos;
  if (has_pos) {
    pos = ctx.input(3).to_i64s();
    if (C.rank() != 2 || Sn.shape() != C.shape() || C.shape()[1] != half ||
        ctx.input(3).shape() != Shape{g.B, g.S})
      return ctx.error("cos/sin caches must be [max_pos, rotary_dim/2], position_ids [B, S]");
  } else if (C.shape() != Shape{g.B, g.S, half} || Sn.shape() != C.shape()) {
    return ctx.error("cos/sin caches must be [batch, seq, rotary_dim/2]");
  }
  const bool inter = ctx.op.attr_int("interleaved", 0) != 0;
  std::vector<double> x = X.to_f64s(), c = C.to_f64s(), sn = Sn.to_f64s();
  std::vector<double> out = x;
  for (int64_t b = 0; b < g.B; ++b)
    for (int64_t s = 0; s < g.S; ++s) {
      int64_t crow = b * g.S + s;
      if (has_pos) {
        crow = pos[b * g.S + s];
        if (crow < 0 || crow >= C.shape()[0]) return ctx.error("position id out of range");
      }
      for (int64_t h = 0; h < g.H; ++h) {
        const int64_t o = g.base(b, s, h);
        for (int64_t e = 0; e < half; ++e) {
          const int64_t i1 = inter ? 2 * e : e, i2 = inter ? 2 * e + 1 : e + half;
          const double cv = c[crow * half + e], sv = sn[crow * half + e];
          out[o + i1] = cv * x[o + i1] - sv * x[o + i2];
          out[o + i2] = sv * x[o + i1] + cv * x[o + i2];
        }
      }
    }
  ctx.out = {tensor_from_f64(out, X.shape(), X.dtype())};
  return Status::ok();
}

} // namespace

void register_attention_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.attention",
      .min_operands = 3,
      .max_operands = 7,
      .min_results = 4,
      .max_results = 4,
      .verify = verify_attention,
      .infer = infer_attention,
      .eval = eval_attention,
  });
  r.add(OpDef{
      .name = "kiln.rotary_embedding",
      .min_operands = 3,
      .max_operands = 4,
      .infer = infer_rotary,
      .eval = eval_rotary,
  });
}

} // namespace kiln::misc
