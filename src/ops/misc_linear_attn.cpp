// kiln.linear_attention (recurrent linear attention with linear / gated / delta /
// gated_delta state updates) and kiln.causal_conv_with_state (depthwise causal conv1d with a
// carried state). References in double.
#include "ops/misc_internal.h"

#include <algorithm>

namespace kiln::misc {
namespace {

struct LinAttnCfg {
  int64_t B = 0, T = 0, Hq = 0, Hkv = 0, Dk = 0, Dv = 0;
  bool gating = false, delta = false;
};

Status verify_linear_attn(const Op &op) {
  std::string u = op.attr_str("update_rule", "gated_delta");
  if (u != "linear" && u != "gated" && u != "delta" && u != "gated_delta")
    return Status::error(fmt::format("{}: unknown update_rule '{}'", op.describe(), u));
  int64_t hq = op.attr_int("q_num_heads", 0), hkv = op.attr_int("kv_num_heads", 0);
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    return Status::error(op.describe() + ": q_num_heads must be a positive multiple of kv_num_heads");
  return Status::ok();
}

Status infer_linear_attn(InferCtx &ctx) {
  for (size_t i = 0; i < 3; ++i) {
    KILN_TRY(expect_rank(ctx.op, "query/key/value", ctx.type(i), {3}));
    KILN_TRY(expect_float(ctx.op, "query/key/value", ctx.type(i).dtype));
  }
  const auto &q = ctx.type(0).dims, &v = ctx.type(2).dims;
  const int64_t hq = ctx.op.attr_int("q_num_heads", 1), hkv = ctx.op.attr_int("kv_num_heads", 1);
  if (hq <= 0 || hkv <= 0) return ctx.error("q_num_heads and kv_num_heads must be positive");
  auto div = [](int64_t a, int64_t b) { return a < 0 ? kDynamic : a / b; };
  const int64_t dk = div(q[2], hq), dv = div(v[2], hkv);
  DType sdt = ctx.present(3) ? ctx.type(3).dtype : ctx.type(0).dtype;
  const std::optional<int64_t> hidden = dv < 0 ? kDynamic : checked_mul(hq, dv);
  if (!hidden)
    return overflow_error(ctx.op, fmt::format("the output hidden size ({} heads x {})", hq, dv));
  ctx.out = {TensorType{ctx.type(0).dtype, {q[0], q[1], *hidden}, true},
             TensorType{sdt, {q[0], hkv, dk, dv}, true}};
  return Status::ok();
}

Result<LinAttnCfg> linear_attn_cfg(const EvalCtx &ctx) {
  const Op &op = ctx.op;
  LinAttnCfg c;
  const std::string u = op.attr_str("update_rule", "gated_delta");
  c.gating = u == "gated" || u == "gated_delta";
  c.delta = u == "delta" || u == "gated_delta";
  if (c.gating != ctx.present(4)) return ctx.error("decay is required exactly for gated rules");
  if (c.delta != ctx.present(5)) return ctx.error("beta is required exactly for delta rules");
  const Shape &q = ctx.input(0).shape(), &k = ctx.input(1).shape(), &v = ctx.input(2).shape();
  c.Hq = op.attr_int("q_num_heads", 1);
  c.Hkv = op.attr_int("kv_num_heads", 1);
  c.B = q[0];
  c.T = q[1];
  if (q[2] % c.Hq != 0 || v[2] % c.Hkv != 0) return ctx.error("hidden sizes not divisible by heads");
  c.Dk = q[2] / c.Hq;
  c.Dv = v[2] / c.Hkv;
  if (k != Shape{c.B, c.T, c.Hkv * c.Dk} || v[0] != c.B || v[1] != c.T)
    return ctx.error("query/key/value shapes do not match");
  if (ctx.present(3) && ctx.input(3).shape() != Shape{c.B, c.Hkv, c.Dk, c.Dv})
    return ctx.error("past_state shape does not match [B, kv_heads, d_k, d_v]");
  if (c.gating) {
    const Shape &d = ctx.input(4).shape();
    if (d.size() != 3 || d[0] != c.B || d[1] != c.T || (d[2] != c.Hkv && d[2] != c.Hkv * c.Dk))
      return ctx.error("decay must be [B, T, kv_heads] or [B, T, kv_heads * d_k]");
  }
  if (c.delta) {
    const Shape &b = ctx.input(5).shape();
    if (b.size() != 3 || b[0] != c.B || b[1] != c.T || (b[2] != c.Hkv && b[2] != 1))
      return ctx.error("beta must be [B, T, kv_heads] or [B, T, 1]");
  }
  return c;
}

Status eval_linear_attn(EvalCtx &ctx) {
  KILN_ASSIGN(LinAttnCfg c, linear_attn_cfg(ctx));
  const std::vector<double> q = ctx.input(0).to_f64s(), k = ctx.input(1).to_f64s(),
                            v = ctx.input(2).to_f64s();
  const std::vector<double> dec = c.gating ? ctx.input(4).to_f64s() : std::vector<double>{};
  const std::vector<double> bet = c.delta ? ctx.input(5).to_f64s() : std::vector<double>{};
  const int64_t dec_w = c.gating ? ctx.input(4).shape()[2] : 0;
  const int64_t bet_w = c.delta ? ctx.input(5).shape()[2] : 0;
  std::vector<double> S = ctx.present(3) ? ctx.input(3).to_f64s()
                                         : std::vector<double>(c.B * c.Hkv * c.Dk * c.Dv, 0.0);
  double scale = ctx.op.attr_float("scale", 0.0);
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(c.Dk));
  const int64_t group = c.Hq / c.Hkv, Dk = c.Dk, Dv = c.Dv;
  std::vector<double> out(static_cast<size_t>(c.B * c.T * c.Hq * Dv), 0.0), vt(Dv);
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t t = 0; t < c.T; ++t)
      for (int64_t h = 0; h < c.Hkv; ++h) {
        double *st = &S[(b * c.Hkv + h) * Dk * Dv];
        const double *kt = &k[((b * c.T + t) * c.Hkv + h) * Dk];
        const double *vv = &v[((b * c.T + t) * c.Hkv + h) * Dv];
        if (c.gating)
          for (int64_t d = 0; d < Dk; ++d) {
            const int64_t di = (b * c.T + t) * dec_w + (dec_w == c.Hkv ? h : h * Dk + d);
            const double g = std::exp(dec[di]);
            for (int64_t m = 0; m < Dv; ++m) st[d * Dv + m] *= g;
          }
        for (int64_t m = 0; m < Dv; ++m) vt[m] = vv[m];
        if (c.delta) {
          const double be = bet[(b * c.T + t) * bet_w + (bet_w == 1 ? 0 : h)];
          for (int64_t m = 0; m < Dv; ++m) {
            double ret = 0;
            for (int64_t d = 0; d < Dk; ++d) ret += st[d * Dv + m] * kt[d];
            vt[m] = be * (vv[m] - ret);
          }
        }
        for (int64_t d = 0; d < Dk; ++d)
          for (int64_t m = 0; m < Dv; ++m) st[d * Dv + m] += kt[d] * vt[m];
        for (int64_t hq = h * group; hq < (h + 1) * group; ++hq) {
          const double *qt = &q[((b * c.T + t) * c.Hq + hq) * Dk];
          double *o = &out[((b * c.T + t) * c.Hq + hq) * Dv];
          for (int64_t d = 0; d < Dk; ++d)
            for (int64_t m = 0; m < Dv; ++m) o[m] += scale * qt[d] * st[d * Dv + m];
        }
      }
  const DType sdt = ctx.present(3) ? ctx.input(3).dtype() : ctx.input(0).dtype();
  ctx.out = {tensor_from_f64(out, {c.B, c.T, c.Hq * Dv}, ctx.input(0).dtype()),
             tensor_from_f64(S, {c.B, c.Hkv, Dk, Dv}, sdt)};
  return Status::ok();
}

// ---- causal conv with state ----

Status verify_causal_conv(const Op &op) {
  std::string a = op.attr_str("activation", "none");
  if (a != "none" && a != "silu" && a != "swish")
    return Status::error(fmt::format("{}: activation '{}' is not supported", op.describe(), a));
  return Status::ok();
}

Status infer_causal_conv(InferCtx &ctx) {
  KILN_TRY(expect_rank(ctx.op, "input", ctx.type(0), {3}));
  KILN_TRY(expect_rank(ctx.op, "weight", ctx.type(1), {3}));
  KILN_TRY(expect_float(ctx.op, "input", ctx.type(0).dtype));
  const auto &x = ctx.type(0).dims;
  const int64_t k = ctx.type(1).dims[2];
  ctx.out = {ctx.type(0), TensorType{ctx.type(0).dtype, {x[0], x[1], k < 1 ? kDynamic : k - 1}, true}};
  return Status::ok();
}

Status eval_causal_conv(EvalCtx &ctx) {
  const Tensor &X = ctx.input(0), &W = ctx.input(1);
  if (X.rank() != 3 || W.rank() != 3) return ctx.error("input and weight must be 3-D");
  const int64_t B = X.shape()[0], C = X.shape()[1], L = X.shape()[2], K = W.shape()[2];
  if (K < 1 || W.shape()[0] != C || W.shape()[1] != 1) return ctx.error("weight must be [C, 1, k]");
  if (ctx.present(2) && ctx.input(2).shape() != Shape{C}) return ctx.error("bias must be [C]");
  if (ctx.present(3) && ctx.input(3).shape() != Shape{B, C, K - 1})
    return ctx.error("past_state must be [B, C, k - 1]");
  const std::vector<double> x = X.to_f64s(), w = W.to_f64s();
  const std::vector<double> bias = ctx.present(2) ? ctx.input(2).to_f64s() : std::vector<double>(C, 0.0);
  const std::vector<double> past = ctx.present(3) ? ctx.input(3).to_f64s()
                                                  : std::vector<double>(B * C * (K - 1), 0.0);
  const bool silu = ctx.op.attr_str("activation", "none") != "none";
  const int64_t P = L + K - 1;
  std::vector<double> out(static_cast<size_t>(B * C * L)), state(static_cast<size_t>(B * C * (K - 1)));
  std::vector<double> padded(P);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t ch = 0; ch < C; ++ch) {
      const int64_t bc = b * C + ch;
      std::copy_n(past.begin() + bc * (K - 1), K - 1, padded.begin());
      std::copy_n(x.begin() + bc * L, L, padded.begin() + (K - 1));
      for (int64_t t = 0; t < L; ++t) {
        double s = bias[ch];
        for (int64_t j = 0; j < K; ++j) s += w[ch * K + j] * padded[t + j];
        out[bc * L + t] = silu ? s / (1 + std::exp(-s)) : s;
      }
      std::copy_n(padded.begin() + L, K - 1, state.begin() + bc * (K - 1));
    }
  ctx.out = {tensor_from_f64(out, X.shape(), X.dtype()),
             tensor_from_f64(state, {B, C, K - 1}, X.dtype())};
  return Status::ok();
}

} // namespace

void register_linear_attn_ops(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.linear_attention", .min_operands = 3, .max_operands = 6,
              .min_results = 2, .max_results = 2, .verify = verify_linear_attn,
              .infer = infer_linear_attn, .eval = eval_linear_attn});
  r.add(OpDef{.name = "kiln.causal_conv_with_state", .min_operands = 2, .max_operands = 4,
              .min_results = 2, .max_results = 2, .verify = verify_causal_conv,
              .infer = infer_causal_conv, .eval = eval_causal_conv});
}

} // namespace kiln::misc
