// kiln.linear_attention (one invocation per (batch, kv head, value column): the state column
// evolves independently of the others, in an f32 scratch buffer),
// kiln.causal_conv_with_state (one invocation per output element) and the training
// optimisers kiln.adagrad / kiln.adam / kiln.momentum (elementwise), kiln.dft and kiln.stft
// (direct sums with host-computed twiddle factors).
#include "compiler/handwritten/seq.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::compiler {

namespace seq {
namespace {

using namespace kir;

bool float_kernel_dtype(DType t) { return t == DType::f32 || t == DType::f16; }

struct LinAttn {
  int64_t B = 0, T = 0, Hq = 0, Hkv = 0, Dk = 0, Dv = 0, dec_w = 0, bet_w = 0;
  bool gating = false, delta = false;
  double scale = 1;
};

Result<LinAttn> lin_attn_cfg(const Op &op) {
  LinAttn c;
  const std::string u = op.attr_str("update_rule", "gated_delta");
  if (u != "linear" && u != "gated" && u != "delta" && u != "gated_delta")
    return unsupported(op, "update_rule '" + u + "'");
  c.gating = u == "gated" || u == "gated_delta";
  c.delta = u == "delta" || u == "gated_delta";
  const Value *dec = operand_or_null(op, 4), *bet = operand_or_null(op, 5);
  if (c.gating != (dec != nullptr) || c.delta != (bet != nullptr))
    return Status::error(op.describe() + ": decay / beta do not match the update rule");
  const Shape &q = op.operands[0]->type.dims, &k = op.operands[1]->type.dims,
              &v = op.operands[2]->type.dims;
  c.Hq = op.attr_int("q_num_heads", 1);
  c.Hkv = op.attr_int("kv_num_heads", 1);
  if (q.size() != 3 || v.size() != 3 || c.Hq <= 0 || c.Hkv <= 0 || c.Hq % c.Hkv || q[2] % c.Hq ||
      v[2] % c.Hkv)
    return Status::error(op.describe() + ": hidden sizes not divisible by heads");
  c.B = q[0];
  c.T = q[1];
  c.Dk = q[2] / c.Hq;
  c.Dv = v[2] / c.Hkv;
  if (k != Shape{c.B, c.T, c.Hkv * c.Dk} || v[0] != c.B || v[1] != c.T)
    return Status::error(op.describe() + ": query/key/value shapes do not match");
  if (const Value *ps = operand_or_null(op, 3);
      ps && ps->type.dims != Shape{c.B, c.Hkv, c.Dk, c.Dv})
    return Status::error(op.describe() + ": past_state shape does not match");
  if (dec) {
    const Shape &d = dec->type.dims;
    if (d.size() != 3 || d[0] != c.B || d[1] != c.T || (d[2] != c.Hkv && d[2] != c.Hkv * c.Dk))
      return Status::error(op.describe() + ": decay must be [B, T, kv_heads (* d_k)]");
    c.dec_w = d[2];
  }
  if (bet) {
    const Shape &b = bet->type.dims;
    if (b.size() != 3 || b[0] != c.B || b[1] != c.T || (b[2] != c.Hkv && b[2] != 1))
      return Status::error(op.describe() + ": beta must be [B, T, kv_heads] or [B, T, 1]");
    c.bet_w = b[2];
  }
  c.scale = op.attr_float("scale", 0.0);
  if (c.scale == 0.0)
    c.scale = 1.0 / std::sqrt(static_cast<double>(c.Dk));
  return c;
}

Status lower_linear_attention(LowerCtx &ctx, const Op &op) {
  for (size_t i = 0; i < op.operands.size(); ++i)
    if (op.operands[i] && !float_kernel_dtype(op.operands[i]->type.dtype))
      return unsupported(op, "kiln.linear_attention on " +
                                 std::string(dtype_name(op.operands[i]->type.dtype)));
  KILN_ASSIGN(LinAttn c, lin_attn_cfg(op));
  SeqKernel g(ctx, op, "linear_attention");
  std::vector<BufferVar> in;
  for (size_t i = 0; i < 6; ++i) {
    BufferVar b{-1, ScalarType::f32};
    if (const Value *v = operand_or_null(op, i)) {
      KILN_ASSIGN(b, g.in(v));
    }
    in.push_back(b);
  }
  KILN_ASSIGN(BufferVar Out, g.out(op.results[0]));
  KILN_ASSIGN(BufferVar Fin, g.out(op.results[1]));
  // The state evolves in f32 (a scratch buffer); the final state is written at the end.
  const ScalarType f = ScalarType::f32;
  BufferVar St = g.bind(new_scratch(ctx, f, c.B * c.Hkv * c.Dk * c.Dv), f, false, false);
  auto ld = [&](size_t i, const Expr &idx) { return cast(f, load(in[i], idx)); };
  return g.grid(c.B * c.Hkv * c.Dv, [&](Expr idx) -> Result<Stmt> {
    auto cs = unflatten(idx, {c.B, c.Hkv, c.Dv});
    Expr b = cs[0], h = cs[1], m = cs[2];
    Expr sb = g.fresh("sb", ScalarType::i32); // state element (d, m) is at sb + d * Dv
    auto sidx = [&](const Expr &d) { return sb + d * c.Dv; };
    auto sld = [&](const Expr &d) { return cast(f, load(St, sidx(d))); };
    auto sst = [&](const Expr &d, const Expr &v) { return store(St, sidx(d), cast(St.elem, v)); };
    Stmt init = loop(
        g, c.Dk, [&](Expr d) { return sst(d, in[3].index >= 0 ? ld(3, sidx(d)) : imm_f32(0)); });
    Stmt steps = loop(g, c.T, [&](Expr t) {
      Expr bt = b * c.T + t;
      Expr kb = g.fresh("kb", ScalarType::i32), vt = g.fresh("vt", f);
      std::vector<Stmt> body;
      if (c.gating)
        body.push_back(loop(g, c.Dk, [&](Expr d) {
          Expr di = bt * c.dec_w + (c.dec_w == c.Hkv ? h : h * c.Dk + d);
          return sst(d, sld(d) * call(Intrinsic::exp, {ld(4, di)}));
        }));
      Expr v = ld(2, (bt * c.Hkv + h) * c.Dv + m);
      body.push_back(declare_var(vt, v));
      if (c.delta) {
        Expr ret = g.fresh("ret", f);
        Expr be = ld(5, bt * c.bet_w + (c.bet_w == 1 ? i32(0) : h));
        body.push_back(declare_var(ret, imm_f32(0)));
        body.push_back(
            loop(g, c.Dk, [&](Expr d) { return assign(ret, ret + sld(d) * ld(1, kb + d)); }));
        body.push_back(assign(vt, be * (v - ret)));
      }
      body.push_back(loop(g, c.Dk, [&](Expr d) { return sst(d, sld(d) + ld(1, kb + d) * vt); }));
      body.push_back(loop(g, c.Hq / c.Hkv, [&](Expr k) {
        Expr hq = h * (c.Hq / c.Hkv) + k, o = g.fresh("o", f);
        Expr qb = (bt * c.Hq + hq) * c.Dk;
        return block({declare_var(o, imm_f32(0)),
                      loop(g, c.Dk, [&](Expr d) { return assign(o, o + ld(0, qb + d) * sld(d)); }),
                      store(Out, (bt * c.Hq + hq) * c.Dv + m,
                            cast(Out.elem, o * imm_f32(static_cast<float>(c.scale))))});
      }));
      return let(kb, (bt * c.Hkv + h) * c.Dk, block(body));
    });
    Stmt fin = loop(g, c.Dk, [&](Expr d) { return store(Fin, sidx(d), cast(Fin.elem, sld(d))); });
    return let(sb, (b * c.Hkv + h) * c.Dk * c.Dv + m, block({init, steps, fin}));
  });
}

// ---- causal conv with state ----

Status lower_causal_conv(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *wv = op.operands[1];
  if (!float_kernel_dtype(xv->type.dtype))
    return unsupported(op,
                       "kiln.causal_conv_with_state on " + std::string(dtype_name(xv->type.dtype)));
  const Shape &xs = xv->type.dims, &ws = wv->type.dims;
  if (xs.size() != 3 || ws.size() != 3)
    return Status::error(op.describe() + ": input and weight must be 3-D");
  const int64_t B = xs[0], C = xs[1], L = xs[2], K = ws[2];
  const Value *bv = operand_or_null(op, 2), *pv = operand_or_null(op, 3);
  if (K < 1 || ws[0] != C || ws[1] != 1 || (bv && bv->type.dims != Shape{C}) ||
      (pv && pv->type.dims != Shape{B, C, K - 1}))
    return Status::error(op.describe() + ": weight / bias / past_state shapes do not match");
  const std::string act = op.attr_str("activation", "none");
  if (act != "none" && act != "silu" && act != "swish")
    return unsupported(op, "activation " + act);
  const bool silu = act != "none";
  // pad(bc, p): the input of channel row bc with the past state in front (K - 1 elements).
  auto padded = [&](const BufferVar &X, const BufferVar &P, const Expr &bc, const Expr &p) {
    Expr xval = cast(ScalarType::f32, load(X, bc * L + max(p - (K - 1), i32(0))));
    if (K == 1)
      return xval;
    Expr past = P.index >= 0 ? cast(ScalarType::f32, load(P, bc * (K - 1) + min(p, i32(K - 2))))
                             : imm_f32(0);
    return select(p < K - 1, past, xval);
  };
  {
    SeqKernel g(c, op, "causal_conv");
    KILN_ASSIGN(BufferVar X, g.in(xv));
    KILN_ASSIGN(BufferVar W, g.in(wv));
    BufferVar Bb{-1, X.elem}, P{-1, X.elem};
    if (bv) {
      KILN_ASSIGN(Bb, g.in(bv));
    }
    if (pv && K > 1) {
      KILN_ASSIGN(P, g.in(pv));
    }
    KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
    KILN_TRY(g.grid(B * C * L, [&](Expr i) -> Result<Stmt> {
      auto cs = unflatten(i, xs);
      Expr bc = g.fresh("bc", ScalarType::i32), s = g.fresh("s", ScalarType::f32);
      Expr ch = cs[1], t = cs[2];
      Expr init = Bb.index >= 0 ? cast(ScalarType::f32, load(Bb, ch)) : imm_f32(0);
      Stmt acc = loop(g, K, [&](Expr j) {
        return assign(s, s + cast(ScalarType::f32, load(W, ch * K + j)) * padded(X, P, bc, t + j));
      });
      Expr y = silu ? s / (imm_f32(1) + call(Intrinsic::exp, {-s})) : s;
      return let(bc, i / L, block({declare_var(s, init), acc, store(Y, i, cast(Y.elem, y))}));
    }));
  }
  SeqKernel g(c, op, "causal_conv_state");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar P{-1, X.elem};
  if (pv && K > 1) {
    KILN_ASSIGN(P, g.in(pv));
  }
  KILN_ASSIGN(BufferVar S, g.out(op.results[1]));
  return g.grid(B * C * (K - 1), [&](Expr i) -> Result<Stmt> {
    Expr bc = i / (K - 1), p = i % (K - 1) + L;
    return store(S, i, cast(S.elem, padded(X, P, bc, p)));
  });
}

// ---- optimisers ----

Status lower_optimizer(LowerCtx &c, const Op &op) {
  const std::string name(op.name());
  const int k = name == "kiln.adam" ? 4 : 3;
  const size_t nops = op.operands.size();
  if (nops < 2 + static_cast<size_t>(k) || (nops - 2) % k != 0)
    return Status::error(op.describe() + ": unexpected operand count");
  const int64_t n = static_cast<int64_t>((nops - 2) / k);
  for (const Value *v : op.operands)
    if (!v)
      return Status::error(op.describe() + ": optimiser operands must all be present");
  if (!float_kernel_dtype(op.operands[0]->type.dtype) || !is_integer(op.operands[1]->type.dtype))
    return unsupported(op, name + " with these R / T dtypes");
  const std::string mode = op.attr_str("mode", "standard");
  if (mode != "standard" && mode != "nesterov")
    return unsupported(op, "mode " + mode);
  const double norm = op.attr_float("norm_coefficient", 0.0);
  for (int64_t gi = 0; gi < n; ++gi) {
    const Value *xv = op.operands[static_cast<size_t>(2 + gi)];
    SeqKernel g(c, op, name.substr(5));
    std::vector<BufferVar> in; // R, T, X, G, A, [B]
    for (int s = -1; s <= k; ++s) {
      const size_t idx = s < 0 ? 0 : s == 0 ? 1 : static_cast<size_t>(2 + (s - 1) * n + gi);
      const Value *v = op.operands[idx];
      if (s > 0 && (v->type.dims != xv->type.dims || !float_kernel_dtype(v->type.dtype)))
        return unsupported(op, name + " with these tensor shapes / dtypes");
      KILN_ASSIGN(BufferVar b, g.in(v));
      in.push_back(b);
    }
    std::vector<BufferVar> out;
    for (int s = 0; s < k - 1; ++s) {
      KILN_ASSIGN(BufferVar b, g.out(op.results[static_cast<size_t>(s * n + gi)]));
      out.push_back(b);
    }
    const ScalarType f = ScalarType::f32;
    auto cf = [](double v) { return imm_f32(static_cast<float>(v)); };
    KILN_TRY(g.grid(shape_numel(xv->type.dims), [&](Expr e) -> Result<Stmt> {
      Expr r = cast(f, load(in[0], i32(0))), t = cast(ScalarType::i32, load(in[1], i32(0)));
      Expr x = g.fresh("x", f), gr = g.fresh("gr", f), a = g.fresh("a", f);
      auto put = [&](int s, const Expr &v) { return store(out[s], e, cast(out[s].elem, v)); };
      Stmt body;
      if (name == "kiln.adagrad") {
        Expr lr = r / (cf(1) + cast(f, t) * cf(op.attr_float("decay_factor", 0.0)));
        Expr eps = cf(op.attr_float("epsilon", 0.0));
        body = block({put(1, a), put(0, x - lr * gr / (call(Intrinsic::sqrt, {a}) + eps))});
        body = let(a, cast(f, load(in[4], e)) + gr * gr, body);
      } else if (name == "kiln.momentum") {
        const double al = op.attr_float("alpha", 0.0);
        Expr be = select(t > 0, cf(op.attr_float("beta", 0.0)), cf(1));
        Expr upd = mode == "nesterov" ? r * (gr + cf(al) * a) : r * a;
        body =
            let(a, cf(al) * cast(f, load(in[4], e)) + be * gr, block({put(1, a), put(0, x - upd)}));
      } else {
        const double al = op.attr_float("alpha", 0.9), be = op.attr_float("beta", 0.999);
        Expr bb = g.fresh("bb", f), td = cast(f, t);
        Expr lr = select(
            t > 0, r * call(Intrinsic::sqrt, {cf(1) - pow(cf(be), td)}) / (cf(1) - pow(cf(al), td)),
            r);
        Expr xn = (x - lr * a / (call(Intrinsic::sqrt, {bb}) + cf(op.attr_float("epsilon", 0.0)))) *
                  cf(1 - op.attr_float("norm_coefficient_post", 0.0));
        body = let(a, cf(al) * cast(f, load(in[4], e)) + cf(1 - al) * gr,
                   let(bb, cf(be) * cast(f, load(in[5], e)) + cf(1 - be) * gr * gr,
                       block({put(1, a), put(2, bb), put(0, xn)})));
      }
      return let(x, cast(f, load(in[2], e)), let(gr, cf(norm) * x + cast(f, load(in[3], e)), body));
    }));
  }
  return Status::ok();
}

// ---- DFT ----

// A constant table of the n twiddle factors of a length-n DFT computed in double:
// cos(2 pi q / n) at q, sign * sin(2 pi q / n) at n + q.
int twiddles(LowerCtx &c, int64_t n, double sign, ScalarType f) {
  Tensor tw(f == ScalarType::f64 ? DType::f64 : DType::f32, {2 * n});
  for (int64_t q = 0; q < n; ++q) {
    const double ang = 2 * M_PI * static_cast<double>(q) / static_cast<double>(n);
    tw.set_f64(q, std::cos(ang));
    tw.set_f64(n + q, sign * std::sin(ang));
  }
  return c.new_constant(std::move(tw));
}

// One invocation per output value (real or imaginary part): a direct sum over the signal
// (the reference is a direct O(n^2) sum too) with a table of the n twiddle factors computed
// in double on the host; the sum runs in f64 where the target has it, else in f32.
Status lower_dft(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xs = xv->type.dims;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (!float_kernel_dtype(xv->type.dtype))
    return unsupported(op, "kiln.dft on " + std::string(dtype_name(xv->type.dtype)));
  if (rank < 2 || (xs.back() != 1 && xs.back() != 2))
    return Status::error(op.describe() + ": input must have rank >= 2 and a last dim of 1 or 2");
  const bool inverse = op.attr_int("inverse", 0) != 0, onesided = op.attr_int("onesided", 0) != 0;
  int64_t axis = op.attr_int("axis", 1);
  if (operand_or_null(op, 2)) {
    const Tensor *t = const_operand(op, 2);
    if (!t || t->numel() != 1)
      return unsupported(op, "kiln.dft with a non-constant axis");
    axis = t->get_i64(0);
  }
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return Status::error(op.describe() + ": axis out of range");
  const int64_t in_len = xs[static_cast<size_t>(axis)];
  int64_t n = inverse && onesided ? 2 * (in_len - 1) : in_len;
  if (operand_or_null(op, 1)) {
    const Tensor *t = const_operand(op, 1);
    if (!t || t->numel() != 1)
      return unsupported(op, "kiln.dft with a non-constant dft_length");
    n = t->get_i64(0);
  }
  if (n <= 0)
    return Status::error(op.describe() + ": dft_length must be positive");
  const int64_t out_len = !inverse && onesided ? n / 2 + 1 : n;
  if (out_len * n > std::numeric_limits<int32_t>::max())
    return unsupported(op, fmt::format("kiln.dft of length {}", n));
  const int64_t cin = xs.back(), cout = inverse && onesided ? 1 : 2;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= xs[static_cast<size_t>(i)];
  for (int64_t i = axis + 1; i + 1 < rank; ++i)
    inner *= xs[static_cast<size_t>(i)];
  if (shape_numel(op.results[0]->type.dims) != outer * out_len * inner * cout)
    return Status::error(op.describe() + ": result shape does not match the transform");
  const bool f64 = c.target().float64;
  const ScalarType f = f64 ? ScalarType::f64 : ScalarType::f32;
  const double sign = inverse ? 1.0 : -1.0;
  SeqKernel g(c, op, "dft");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar Tw = g.bind(twiddles(c, n, sign, f), f, true, false);
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.grid(outer * out_len * inner * cout, [&](Expr idx) -> Result<Stmt> {
    auto cs = unflatten(idx, {outer, out_len, inner, cout});
    Expr o = cs[0], fr = cs[1], i = cs[2], part = cs[3];
    Expr re = g.fresh("re", f), im = g.fresh("im", f), zero = make_const(f, 0);
    // Element k of the input line (zero beyond it): real or imaginary part.
    auto elem = [&](const Expr &k, bool imag) {
      if (imag && cin == 1)
        return zero;
      Expr off = ((o * in_len + min(k, i32(in_len - 1))) * inner + i) * cin;
      return select(k < in_len, cast(f, load(X, imag ? off + 1 : off)), zero);
    };
    Stmt body = loop(g, n, [&](Expr t) {
      Expr sr = elem(t, false), si = elem(t, true);
      if (inverse && onesided) { // Hermitian extension (numpy irfft)
        const int64_t m = n / 2 + 1;
        Expr k = select(t < m, t, i32(n) - t);
        sr = elem(k, false);
        si = select(t < m, elem(k, true), -elem(k, true));
      }
      Expr q = g.fresh("q", ScalarType::i32), cr = g.fresh("cr", f), ci = g.fresh("ci", f);
      Stmt acc = block({assign(re, re + sr * cr - si * ci), assign(im, im + sr * ci + si * cr)});
      return let(q, (fr * t) % n, let(cr, load(Tw, q), let(ci, load(Tw, q + n), acc)));
    });
    Expr scale = make_const(f, inverse ? 1.0 / static_cast<double>(n) : 1.0);
    Expr v = cout == 1 ? re : select(part == 0, re, im);
    return block({declare_var(re, zero), declare_var(im, zero), body,
                  store(Y, idx, cast(Y.elem, v * scale))});
  });
}

// Short-time Fourier transform: one invocation per output value (batch, frame, bin, part),
// a direct windowed sum over the frame (twiddle table as for kiln.dft).
Status lower_stft(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *wv = operand_or_null(op, 2);
  const Shape &xs = xv->type.dims;
  if (!float_kernel_dtype(xv->type.dtype) || (wv && !float_kernel_dtype(wv->type.dtype)))
    return unsupported(op, "kiln.stft on " + std::string(dtype_name(xv->type.dtype)));
  if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2))
    return Status::error(op.describe() + ": signal must be [batch, length, 1 or 2]");
  const int64_t B = xs[0], L = xs[1], C = xs[2];
  const Tensor *st = const_operand(op, 1);
  if (!st || st->numel() != 1)
    return unsupported(op, "kiln.stft with a non-constant frame_step");
  const int64_t step = st->get_i64(0);
  int64_t fl = wv ? shape_numel(wv->type.dims) : L;
  if (operand_or_null(op, 3)) {
    const Tensor *t = const_operand(op, 3);
    if (!t || t->numel() != 1)
      return unsupported(op, "kiln.stft with a non-constant frame_length");
    fl = t->get_i64(0);
  }
  if ((wv && (wv->type.dims.size() != 1 || wv->type.dims[0] != fl)) || step <= 0 || fl <= 0 ||
      fl > L)
    return Status::error(op.describe() + ": invalid window / frame_step / frame_length");
  const int64_t frames = 1 + (L - fl) / step;
  const int64_t bins = op.attr_int("onesided", 1) ? fl / 2 + 1 : fl;
  if (op.results[0]->type.dims != Shape{B, frames, bins, 2})
    return Status::error(op.describe() + ": result shape does not match the transform");
  if (bins * fl > std::numeric_limits<int32_t>::max())
    return unsupported(op, fmt::format("kiln.stft with frame length {}", fl));
  const ScalarType f = c.target().float64 ? ScalarType::f64 : ScalarType::f32;
  SeqKernel g(c, op, "stft");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  BufferVar W{-1, f};
  if (wv) {
    KILN_ASSIGN(W, g.in(wv));
  }
  BufferVar Tw = g.bind(twiddles(c, fl, -1.0, f), f, true, false);
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.grid(B * frames * bins * 2, [&](Expr idx) -> Result<Stmt> {
    auto cs = unflatten(idx, {B, frames, bins, 2});
    Expr b = cs[0], fr = cs[1], k = cs[2], part = cs[3];
    Expr re = g.fresh("re", f), im = g.fresh("im", f), zero = make_const(f, 0);
    Stmt body = loop(g, fl, [&](Expr t) {
      Expr off = g.fresh("off", ScalarType::i32), w = g.fresh("w", f);
      Expr q = g.fresh("q", ScalarType::i32), cr = g.fresh("cr", f), ci = g.fresh("ci", f);
      Expr sr = cast(f, load(X, off)) * w;
      Expr si = C == 2 ? cast(f, load(X, off + 1)) * w : zero;
      Stmt acc = block({assign(re, re + sr * cr - si * ci), assign(im, im + sr * ci + si * cr)});
      return let(off, (b * L + fr * step + t) * C,
                 let(w, W.index >= 0 ? cast(f, load(W, t)) : make_const(f, 1),
                     let(q, (k * t) % fl, let(cr, load(Tw, q), let(ci, load(Tw, q + fl), acc)))));
    });
    return block({declare_var(re, zero), declare_var(im, zero), body,
                  store(Y, idx, cast(Y.elem, select(part == 0, re, im)))});
  });
}

} // namespace
} // namespace seq

void add_seq_misc_lowerings(LoweringTable &t) {
  t["kiln.linear_attention"] = seq::lower_linear_attention;
  t["kiln.causal_conv_with_state"] = seq::lower_causal_conv;
  t["kiln.dft"] = seq::lower_dft;
  t["kiln.stft"] = seq::lower_stft;
  for (const char *n : {"kiln.adagrad", "kiln.adam", "kiln.momentum"})
    t[n] = seq::lower_optimizer;
}

} // namespace kiln::compiler
