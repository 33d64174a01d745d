// Vulkan lowerings: attention and rotary embedding (the recurrent and other sequence-model
// ops are in rnn.cpp and sequence_misc.cpp).
//
// kiln.attention runs as: present_key / present_value (concatenations of the past and current
// K / V, 4-D), one invocation per query row computing scores + bias and the softmax into a
// scratch buffer of probabilities, one invocation per element of qk_matmul_output, and one per
// element of Y (probabilities times V). Everything accumulates in f32 (f16 inputs included).
#include "compiler/handwritten/seq.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::compiler {

void add_seq_rnn_lowerings(LoweringTable &t);
void add_seq_misc_lowerings(LoweringTable &t);

namespace seq {
namespace {

using namespace kir;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Attn {
  int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Skv = 0, Sp = 0, St = 0, D = 0, Dv = 0;
  bool is3d = false;
  int64_t group() const { return Hq / Hkv; }
};

Result<Attn> attn_dims(const Op &op) {
  const Shape &q = op.operands[0]->type.dims, &k = op.operands[1]->type.dims,
              &v = op.operands[2]->type.dims;
  Attn a;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    return Status::error(op.describe() + ": Q, K and V must all be 3-D or all be 4-D");
  a.B = q[0];
  int64_t Dk = 0, vs = 0, vh = 0;
  if (q.size() == 3) {
    a.is3d = true;
    a.Hq = op.attr_int("q_num_heads", 0);
    a.Hkv = op.attr_int("kv_num_heads", 0);
    if (a.Hq <= 0 || a.Hkv <= 0 || q[2] % a.Hq || k[2] % a.Hkv || v[2] % a.Hkv)
      return Status::error(op.describe() + ": hidden sizes do not divide into the heads");
    a.Sq = q[1];
    a.Skv = k[1];
    a.D = q[2] / a.Hq;
    Dk = k[2] / a.Hkv;
    a.Dv = v[2] / a.Hkv;
    vs = v[1];
    vh = a.Hkv;
  } else {
    a.Hq = q[1];
    a.Sq = q[2];
    a.D = q[3];
    a.Hkv = k[1];
    a.Skv = k[2];
    Dk = k[3];
    a.Dv = v[3];
    vs = v[2];
    vh = v[1];
  }
  if (a.Hkv <= 0 || a.Hq % a.Hkv != 0 || Dk != a.D || vs != a.Skv || vh != a.Hkv || k[0] != a.B ||
      v[0] != a.B)
    return Status::error(op.describe() + ": Q, K and V shapes do not match");
  const Value *pk = operand_or_null(op, 4), *pv = operand_or_null(op, 5);
  if ((pk == nullptr) != (pv == nullptr))
    return Status::error(op.describe() + ": past_key and past_value must be given together");
  if (pk) {
    a.Sp = pk->type.dims.size() == 4 ? pk->type.dims[2] : -1;
    if (pk->type.dims != Shape{a.B, a.Hkv, a.Sp, a.D} ||
        pv->type.dims != Shape{a.B, a.Hkv, a.Sp, a.Dv})
      return Status::error(op.describe() + ": past_key/past_value shapes do not match K/V");
  }
  a.St = a.Sp + a.Skv;
  return a;
}

// present_key (which = 1) or present_value (which = 2): past and current along the sequence.
Status lower_present(LowerCtx &c, const Op &op, const Attn &a, int which) {
  const int64_t E = which == 1 ? a.D : a.Dv;
  SeqKernel g(c, op, which == 1 ? "attention_present_key" : "attention_present_value");
  const Value *past = operand_or_null(op, static_cast<size_t>(which + 3));
  KILN_ASSIGN(BufferVar Cur, g.in(op.operands[static_cast<size_t>(which)]));
  BufferVar Past{-1, Cur.elem};
  if (past && a.Sp > 0) {
    KILN_ASSIGN(Past, g.in(past));
  }
  KILN_ASSIGN(BufferVar Out, g.out(op.results[static_cast<size_t>(which)]));
  return g.grid(a.B * a.Hkv * a.St * E, [&](Expr i) -> Result<Stmt> {
    auto cs = unflatten(i, {a.B, a.Hkv, a.St, E});
    Expr b = cs[0], h = cs[1], j = cs[2], e = cs[3];
    Expr jj = j - a.Sp;
    Expr cur_idx =
        a.is3d ? ((b * a.Skv + jj) * a.Hkv + h) * E + e : ((b * a.Hkv + h) * a.Skv + jj) * E + e;
    Stmt cur = store(Out, i, load(Cur, cur_idx));
    if (Past.index < 0)
      return cur;
    Stmt pst = store(Out, i, load(Past, ((b * a.Hkv + h) * a.Sp + j) * E + e));
    return if_then(j < a.Sp, pst, cur);
  });
}

// The additive bias of score (b, h, i, j): attention mask, causal mask, nonpad lengths.
struct BiasSpec {
  const Attn *a = nullptr;
  BufferVar mask{-1, ScalarType::f32}, nonpad{-1, ScalarType::i64};
  int64_t stride[4] = {0, 0, 0, 0}, last = 0;
  bool causal = false;

  Expr operator()(const Expr &b, const Expr &h, const Expr &i, const Expr &j) const {
    Expr zero = imm_f32(0), ninf = make_const(ScalarType::f32, -kInf);
    Expr bias = zero;
    if (mask.index >= 0) {
      Expr idx = b * stride[0] + h * stride[1] + i * stride[2] + min(j, i32(last - 1));
      Expr m = load(mask, idx);
      Expr mv = mask.elem == ScalarType::boolean ? select(m, zero, ninf) : cast(ScalarType::f32, m);
      bias = last < a->St ? select(j >= last, ninf, mv) : mv;
    }
    Expr np = nonpad.index >= 0 ? cast(ScalarType::i32, load(nonpad, b)) : Expr();
    if (causal) {
      Expr offset = np.defined() && a->Sp == 0 ? np - a->Sq : i32(a->Sp);
      bias = bias + select(j > i + offset, ninf, zero);
    }
    if (np.defined())
      bias = bias + select(j >= np, ninf, zero);
    return bias;
  }
};

Result<BiasSpec> bias_spec(SeqKernel &g, const Op &op, const Attn &a) {
  BiasSpec s;
  s.a = &a;
  s.causal = op.attr_int("is_causal", 0) != 0;
  if (const Value *m = operand_or_null(op, 3)) {
    const Shape &ms = m->type.dims;
    if (ms.empty() || ms.size() > 4)
      return unsupported(op, "an attn_mask of rank 0 or > 4");
    if (m->type.dtype != DType::boolean && !is_float(m->type.dtype))
      return Status::error(op.describe() + ": attn_mask must be bool or float");
    Shape full(4, 1);
    std::copy(ms.begin(), ms.end(), full.begin() + static_cast<long>(4 - ms.size()));
    const auto st = shape_strides(full);
    const int64_t want[3] = {a.B, a.Hq, a.Sq};
    for (int k = 0; k < 3; ++k) {
      if (full[k] != 1 && full[k] != want[k])
        return Status::error(op.describe() + ": attn_mask does not broadcast to the scores");
      s.stride[k] = full[k] == 1 ? 0 : st[k];
    }
    if (full[3] > a.St || full[3] == 0)
      return Status::error(op.describe() + ": attn_mask has more keys than K (with past_key)");
    s.last = full[3];
    KILN_ASSIGN(s.mask, g.in(m));
  }
  if (const Value *np = operand_or_null(op, 6)) {
    if (np->type.dims != Shape{a.B})
      return Status::error(op.describe() + ": nonpad_kv_seqlen must be [batch]");
    if (!is_integer(np->type.dtype))
      return unsupported(op, "non-integer nonpad_kv_seqlen");
    KILN_ASSIGN(s.nonpad, g.in(np));
  }
  return s;
}

struct ScoreSpec {
  const Attn *a = nullptr;
  BufferVar q, k; // Q operand and present_key
  double scale = 1, softcap = 0;

  // Statements that leave the scaled (and softcapped) score of (b, h, i, j) in the new
  // variable `s`, followed by `rest` (in the scope of `s`).
  Stmt operator()(SeqKernel &g, const Expr &b, const Expr &h, const Expr &i, const Expr &j,
                  const Expr &s, Stmt rest) const {
    const Attn &A = *a;
    Expr qbase = g.fresh("qb", ScalarType::i32), kbase = g.fresh("kb", ScalarType::i32);
    Expr qi = A.is3d ? ((b * A.Sq + i) * A.Hq + h) * A.D : ((b * A.Hq + h) * A.Sq + i) * A.D;
    Expr ki = ((b * A.Hkv + h / A.group()) * A.St + j) * A.D;
    std::vector<Stmt> body{declare_var(s, imm_f32(0)), loop(g, A.D, [&](Expr e) {
                             return assign(s, s + cast(ScalarType::f32, load(q, qbase + e)) *
                                                      cast(ScalarType::f32, load(k, kbase + e)));
                           })};
    body.push_back(assign(s, s * imm_f32(static_cast<float>(scale))));
    if (softcap > 0)
      body.push_back(assign(s, imm_f32(static_cast<float>(softcap)) *
                                   tanh_expr(s / imm_f32(static_cast<float>(softcap)))));
    body.push_back(std::move(rest));
    return let(qbase, qi, let(kbase, ki, block(body)));
  }
};

Result<ScoreSpec> score_spec(SeqKernel &g, const Op &op, const Attn &a) {
  ScoreSpec s;
  s.a = &a;
  s.scale = op.has_attr("scale") ? op.attr_float("scale", 1.0)
                                 : 1.0 / std::sqrt(static_cast<double>(a.D));
  s.softcap = op.attr_float("softcap", 0.0);
  KILN_ASSIGN(s.q, g.in(op.operands[0]));
  KILN_ASSIGN(s.k, g.in(op.results[1]));
  return s;
}

// Probabilities of every query row into scratch P [B, Hq, Sq, St] (f32).
Status lower_probs(LowerCtx &c, const Op &op, const Attn &a, int P) {
  SeqKernel g(c, op, "attention_softmax");
  KILN_ASSIGN(ScoreSpec score, score_spec(g, op, a));
  KILN_ASSIGN(BiasSpec bias, bias_spec(g, op, a));
  BufferVar Pb = g.bind(P, ScalarType::f32, false, false);
  const ScalarType f = ScalarType::f32;
  return g.grid(a.B * a.Hq * a.Sq, [&](Expr r) -> Result<Stmt> {
    auto cs = unflatten(r, {a.B, a.Hq, a.Sq});
    Expr b = cs[0], h = cs[1], i = cs[2];
    Expr base = g.fresh("base", ScalarType::i32);
    Expr mx = g.fresh("mx", f), nan = g.fresh("nan", ScalarType::boolean);
    Expr allm = g.fresh("allm", ScalarType::boolean), sum = g.fresh("sum", f);
    Expr safe = g.fresh("safe", f), den = g.fresh("den", f);
    Stmt scores = loop(g, a.St, [&](Expr j) {
      Expr s = g.fresh("s", f), bj = g.fresh("bj", f), x = g.fresh("x", f);
      Stmt upd = block({store(Pb, base + j, x), assign(nan, nan || call(Intrinsic::isnan, {x})),
                        assign(mx, select(x > mx, x, mx)),
                        assign(allm, allm && call(Intrinsic::isinf, {bj}) && bj < imm_f32(0))});
      return score(g, b, h, i, j, s, let(bj, bias(b, h, i, j), let(x, s + bj, upd)));
    });
    Stmt expsum = loop(g, a.St, [&](Expr j) {
      Expr e = g.fresh("e", f);
      return let(e, call(Intrinsic::exp, {load(Pb, base + j) - safe}),
                 block({store(Pb, base + j, e), assign(sum, sum + e)}));
    });
    Stmt norm = loop(g, a.St, [&](Expr j) {
      return store(Pb, base + j, select(allm, imm_f32(0), load(Pb, base + j) / den));
    });
    Expr safe_v = select(nan, make_const(f, std::nan("")),
                         select(call(Intrinsic::isinf, {mx}) && mx < imm_f32(0), imm_f32(0), mx));
    Stmt tail = let(safe, safe_v,
                    block({declare_var(sum, imm_f32(0)), expsum,
                           let(den, select(sum == imm_f32(0), imm_f32(1), sum), norm)}));
    return let(base, r * a.St,
               block({declare_var(mx, make_const(f, -kInf)), declare_var(nan, imm_bool(false)),
                      declare_var(allm, imm_bool(true)), scores, tail}));
  });
}

// qk_matmul_output: raw scores (mode 0/1), scores + bias (2) or probabilities (3).
Status lower_qk_output(LowerCtx &c, const Op &op, const Attn &a, int P, int64_t mode) {
  SeqKernel g(c, op, "attention_qk_output");
  KILN_ASSIGN(BufferVar Out, g.out(op.results[3]));
  if (mode == 3) {
    BufferVar Pb = g.bind(P, ScalarType::f32, true, false);
    return g.grid(a.B * a.Hq * a.Sq * a.St, [&](Expr i) -> Result<Stmt> {
      return store(Out, i, cast(Out.elem, load(Pb, i)));
    });
  }
  KILN_ASSIGN(ScoreSpec score, score_spec(g, op, a));
  BiasSpec bias;
  if (mode == 2) {
    KILN_ASSIGN(bias, bias_spec(g, op, a));
  }
  return g.grid(a.B * a.Hq * a.Sq * a.St, [&](Expr idx) -> Result<Stmt> {
    auto cs = unflatten(idx, {a.B, a.Hq, a.Sq, a.St});
    Expr s = g.fresh("s", ScalarType::f32);
    Expr v = mode == 2 ? s + bias(cs[0], cs[1], cs[2], cs[3]) : s;
    return score(g, cs[0], cs[1], cs[2], cs[3], s, store(Out, idx, cast(Out.elem, v)));
  });
}

// Y = P x present_value, in the layout of Q (3-D: [B, Sq, Hq * Dv]).
Status lower_attn_output(LowerCtx &c, const Op &op, const Attn &a, int P) {
  SeqKernel g(c, op, "attention_output");
  BufferVar Pb = g.bind(P, ScalarType::f32, true, false);
  KILN_ASSIGN(BufferVar V, g.in(op.results[2]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.grid(a.B * a.Hq * a.Sq * a.Dv, [&](Expr idx) -> Result<Stmt> {
    Expr b, h, i, e;
    if (a.is3d) {
      auto cs = unflatten(idx, {a.B, a.Sq, a.Hq, a.Dv});
      b = cs[0], i = cs[1], h = cs[2], e = cs[3];
    } else {
      auto cs = unflatten(idx, {a.B, a.Hq, a.Sq, a.Dv});
      b = cs[0], h = cs[1], i = cs[2], e = cs[3];
    }
    Expr pb = g.fresh("pb", ScalarType::i32), vb = g.fresh("vb", ScalarType::i32);
    Expr acc = g.fresh("acc", ScalarType::f32);
    Stmt body = loop(g, a.St, [&](Expr j) {
      Expr p = g.fresh("p", ScalarType::f32);
      Expr v = cast(ScalarType::f32, load(V, vb + j * a.Dv));
      return let(p, load(Pb, pb + j),
                 assign(acc, acc + select(p == imm_f32(0), imm_f32(0), p * v)));
    });
    return let(pb, ((b * a.Hq + h) * a.Sq + i) * a.St,
               let(vb, (b * a.Hkv + h / a.group()) * a.St * a.Dv + e,
                   block({declare_var(acc, imm_f32(0)), body, store(Y, idx, cast(Y.elem, acc))})));
  });
}

Status lower_attention(LowerCtx &c, const Op &op) {
  const DType dt = op.operands[0]->type.dtype;
  if (dt != DType::f32 && dt != DType::f16)
    return unsupported(op, fmt::format("kiln.attention on {}", dtype_name(dt)));
  for (size_t i = 1; i < op.operands.size() && i < 6; ++i)
    if (op.operands[i] && i != 3 && op.operands[i]->type.dtype != dt)
      return unsupported(op, "kiln.attention with mixed Q/K/V dtypes");
  KILN_ASSIGN(Attn a, attn_dims(op));
  const int64_t mode = op.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3)
    return unsupported(op, fmt::format("qk_matmul_output_mode {}", mode));
  if (a.St == 0 || a.D == 0)
    return unsupported(op, "kiln.attention with no keys");
  KILN_TRY(lower_present(c, op, a, 1));
  KILN_TRY(lower_present(c, op, a, 2));
  const int P = new_scratch(c, ScalarType::f32, a.B * a.Hq * a.Sq * a.St);
  KILN_TRY(lower_probs(c, op, a, P));
  KILN_TRY(lower_qk_output(c, op, a, P, mode));
  return lower_attn_output(c, op, a, P);
}

// ---- rotary embedding ----

Status lower_rotary(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const Shape &xs = xv->type.dims;
  if (!is_float(xv->type.dtype) || xv->type.dtype == DType::f64)
    return unsupported(op, "kiln.rotary_embedding on " + std::string(dtype_name(xv->type.dtype)));
  const bool is3d = xs.size() == 3;
  if (!is3d && xs.size() != 4)
    return Status::error(op.describe() + ": input must be 3-D or 4-D");
  const int64_t B = xs[0], S = is3d ? xs[1] : xs[2];
  const int64_t H = is3d ? op.attr_int("num_heads", 0) : xs[1];
  if (H <= 0 || (is3d && xs[2] % H))
    return Status::error(op.describe() + ": hidden size not divisible by num_heads");
  const int64_t D = is3d ? xs[2] / H : xs[3];
  int64_t rd = op.attr_int("rotary_embedding_dim", 0);
  if (rd == 0)
    rd = D;
  if (rd < 0 || rd > D || rd % 2)
    return Status::error(op.describe() + ": invalid rotary_embedding_dim");
  const int64_t half = rd / 2;
  const Value *cv = op.operands[1], *sv = op.operands[2], *pv = operand_or_null(op, 3);
  const Shape &cshape = cv->type.dims;
  if (sv->type.dims != cshape || (pv ? cshape.size() != 2 || cshape[0] == 0 || cshape[1] != half ||
                                           pv->type.dims != Shape{B, S}
                                     : cshape != Shape{B, S, half}))
    return Status::error(op.describe() + ": cos/sin cache or position_ids shapes do not match");
  const bool inter = op.attr_int("interleaved", 0) != 0;
  SeqKernel g(c, op, "rotary_embedding");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar C, g.in(cv));
  KILN_ASSIGN(BufferVar Sn, g.in(sv));
  BufferVar Pos{-1, ScalarType::i64};
  if (pv) {
    KILN_ASSIGN(Pos, g.in(pv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const ScalarType at = acc_type(X.elem);
  return g.grid(shape_numel(xs), [&](Expr idx) -> Result<Stmt> {
    auto cs = unflatten(idx, xs);
    Expr b = cs[0], s = is3d ? cs[1] : cs[2];
    Expr e = is3d ? cs[2] % D : cs[3];
    Expr head = idx - e; // offset of element 0 of this head
    Expr p = inter ? e / 2 : select(e < half, e, e - half);
    Expr first = inter ? e % 2 == 0 : e < half;
    Expr i1 = head + (inter ? p * 2 : p), i2 = head + (inter ? p * 2 + 1 : p + half);
    // Position ids out of range are an error in the reference; the kernel clamps them.
    Expr crow = b * S + s;
    if (pv)
      crow = min(max(cast(ScalarType::i32, load(Pos, b * S + s)), i32(0)), i32(cshape[0] - 1));
    Expr cosv = g.fresh("cos", at), sinv = g.fresh("sin", at);
    Expr x1 = g.fresh("x1", at), x2 = g.fresh("x2", at);
    Expr rot = select(first, cosv * x1 - sinv * x2, sinv * x1 + cosv * x2);
    Stmt st = let(cosv, cast(at, load(C, crow * half + p)),
                  let(sinv, cast(at, load(Sn, crow * half + p)),
                      let(x1, cast(at, load(X, i1)),
                          let(x2, cast(at, load(X, i2)), store(Y, idx, cast(Y.elem, rot))))));
    if (rd == D)
      return st;
    return if_then(e < rd, st, store(Y, idx, load(X, idx)));
  });
}

} // namespace
} // namespace seq

void add_seq_lowerings(LoweringTable &t) {
  t["kiln.attention"] = seq::lower_attention;
  t["kiln.rotary_embedding"] = seq::lower_rotary;
  add_seq_rnn_lowerings(t);
  add_seq_misc_lowerings(t);
}

} // namespace kiln::compiler
