// kiln.matmul (numpy batched, 1-D promotion) and kiln.gemm: contraction definitions run by
// the scheduled strategy (compiler/contraction.h); the naive strategy is one invocation per
// output element with a serial loop over K.
#include "compiler/definitions/contraction.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

// Accumulation type: f16 accumulates in f32, everything else in its own type.
ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }

// One contraction: out[b..., m, n] = sum_k A[abase + m*sam + k*sak] * B[bbase + k*sbk + n*sbn].
struct Contraction {
  Shape out;           // batch dims + [M, N] (the result's elements in this order)
  Shape a_batch, b_batch; // batch dims of A and B (broadcast to out's batch dims)
  int64_t K = 0;
  int64_t sam = 0, sak = 0, sbk = 0, sbn = 0; // element strides within one matrix
  int64_t a_mat = 0, b_mat = 0;               // elements per matrix of A / B
  bool b_is_operand = true; // B is bound from operand 1 as it is (split-K may bind it again)
};

// Builds the accumulation loop and returns {statements, accumulator}.
std::pair<std::vector<Stmt>, Expr> contract(GridKernel &g, const Contraction &ct, BufferVar a,
                                            BufferVar b, const std::vector<Expr> &cs) {
  const size_t nb = ct.out.size() - 2;
  std::vector<Expr> bc(cs.begin(), cs.begin() + static_cast<long>(nb));
  const Expr m = cs[nb], n = cs[nb + 1];
  Expr abase = broadcast_index(bc, ct.a_batch) * ct.a_mat + m * ct.sam;
  Expr bbase = broadcast_index(bc, ct.b_batch) * ct.b_mat + n * ct.sbn;
  const ScalarType at = acc_type(a.elem);
  Expr acc = var(g.fresh("acc"), at);
  Expr kk = var(g.fresh("k"), ScalarType::i32);
  Expr prod = cast(at, load(a, abase + kk * ct.sak)) * cast(at, load(b, bbase + kk * ct.sbk));
  std::vector<Stmt> s{declare_var(acc, make_const(at, 0)),
                      for_loop(kk, i32(0), i32(ct.K), assign(acc, acc + prod))};
  return {s, acc};
}

// The definition of `ct` over buffers a and b (batch entries z of ct.out's batch dims).
ContractionDef definition(const Contraction &ct, BufferVar a, BufferVar b) {
  const size_t nb = ct.out.size() - 2;
  const Shape batch(ct.out.begin(), ct.out.begin() + static_cast<long>(nb));
  ContractionDef d;
  d.batch = shape_numel(batch);
  d.M = ct.out[nb];
  d.N = ct.out[nb + 1];
  d.kdims = {ct.K};
  d.acc = acc_type(a.elem);
  d.a = a;
  d.b = b;
  auto base = [batch](const Expr &z, const Shape &operand_batch, int64_t mat) -> Expr {
    if (shape_numel(operand_batch) == 1) return i32(0);
    if (operand_batch == batch) return z * mat;
    return broadcast_index(unflatten(z, batch), operand_batch) * mat;
  };
  d.a_at = [=](const Expr &z, const Expr &m, const std::vector<Expr> &k) {
    return OperandRef{base(z, ct.a_batch, ct.a_mat) + m * ct.sam + k[0] * ct.sak, Expr()};
  };
  d.b_at = [=](const Expr &z, const std::vector<Expr> &k, const Expr &n) {
    return OperandRef{base(z, ct.b_batch, ct.b_mat) + k[0] * ct.sbk + n * ct.sbn, Expr()};
  };
  return d;
}

// The schedule for `ct`; a non-naive one is emitted with `value` turning the accumulator of
// output (m, n) into the stored value. Returns false (nothing emitted) for naive.
Result<bool> try_scheduled(LowerCtx &c, GridKernel &g, const Op &op, const Contraction &ct,
                           BufferVar a, BufferVar b, BufferVar o,
                           const std::function<Expr(const Expr &, const Expr &, Expr)> &value) {
  ContractionDef d = definition(ct, a, b);
  d.a_value = op.operands[0];
  d.b_value = ct.b_is_operand ? op.operands[1] : nullptr;
  const ContractionSchedule s = schedule_contraction(c, d);
  c.count_strategy(s.strategy);
  if (s.strategy == Strategy::naive) return false;
  const int64_t M = d.M, N = d.N;
  d.store = [&](const Expr &z, const Expr &m, const Expr &n, const Expr &acc) {
    return g.store(o, (z * M + m) * N + n, cast(o.elem, value(m, n, acc)));
  };
  KILN_TRY(emit_contraction(g, d, s));
  return true;
}

Status lower_matmul(LowerCtx &c, const Op &op) {
  const Shape ad = op.operands[0]->type.dims, bd = op.operands[1]->type.dims;
  if (ad.empty() || bd.empty()) return unsupported(op, "kiln.matmul of scalars");
  const Shape a = ad.size() == 1 ? Shape{1, ad[0]} : ad;
  const Shape b = bd.size() == 1 ? Shape{bd[0], 1} : bd;
  Contraction ct;
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  ct.a_batch.assign(a.begin(), a.end() - 2);
  ct.b_batch.assign(b.begin(), b.end() - 2);
  KILN_ASSIGN(Shape batch, broadcast_shapes(ct.a_batch, ct.b_batch));
  ct.out = batch;
  ct.out.resize(batch.size() + 2);
  ct.out[batch.size()] = M;
  ct.out[batch.size() + 1] = N;
  ct.K = K;
  ct.sam = K, ct.sak = 1, ct.sbk = N, ct.sbn = 1;
  ct.a_mat = M * K, ct.b_mat = K * N;
  if (shape_numel(ct.b_batch) == 1 && ct.a_batch == batch && shape_numel(batch) > 1 &&
      c.options().schedule != ScheduleMode::naive) {
    // One B for every batch entry of a row-major A: the batch entries are more rows of one
    // [batch * M, K] x [K, N] product (same result layout), so the tiles see the whole M.
    const int64_t rows = shape_numel(batch) * M;
    ct.out = {rows, N};
    ct.a_batch = ct.b_batch = {};
    ct.a_mat = rows * K;
  }
  GridKernel g(c, op, "matmul");
  KILN_ASSIGN(BufferVar av, g.in(op.operands[0]));
  KILN_ASSIGN(BufferVar bv, g.in(op.operands[1]));
  KILN_ASSIGN(BufferVar ov, g.out(op.results[0]));
  if (shape_numel(ct.out) == 0) return Status::ok();
  KILN_ASSIGN(bool done, try_scheduled(c, g, op, ct, av, bv, ov,
                                       [](const Expr &, const Expr &, Expr acc) { return acc; }));
  if (done) return Status::ok();
  return g.finish(shape_numel(ct.out), [&](Expr i) {
    return let_all(g, "c", unflatten(i, ct.out), [&](std::vector<Expr> cs) -> Result<Stmt> {
      auto [stmts, acc] = contract(g, ct, av, bv, cs);
      KILN_ASSIGN(Stmt st, g.store(ov, i, cast(ov.elem, acc)));
      stmts.push_back(st);
      return block(stmts);
    });
  });
}

Status lower_gemm(LowerCtx &c, const Op &op) {
  const Shape &ad = op.operands[0]->type.dims, &bd = op.operands[1]->type.dims;
  const bool ta = op.attr_int("trans_a", 0) != 0, tb = op.attr_int("trans_b", 0) != 0;
  const double alpha = op.attr_float("alpha", 1.0), beta = op.attr_float("beta", 1.0);
  Contraction ct;
  const int64_t M = ta ? ad[1] : ad[0], K = ta ? ad[0] : ad[1];
  const int64_t N = tb ? bd[0] : bd[1];
  ct.out = {M, N};
  ct.K = K;
  ct.sam = ta ? 1 : K, ct.sak = ta ? M : 1;
  ct.sbk = tb ? 1 : N, ct.sbn = tb ? K : 1;
  ct.a_mat = M * K, ct.b_mat = K * N;
  const Value *cv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  GridKernel g(c, op, "gemm");
  KILN_ASSIGN(BufferVar av, g.in(op.operands[0]));
  BufferVar bv;
  const Tensor *wt = tb ? const_operand(op, 1) : nullptr;
  const auto f32 = ScalarType::f32;
  if (wt && wt->dtype() == DType::f32 && av.elem == f32 && op.results[0]->type.dtype == DType::f32 &&
      schedule_contraction(c, definition(ct, av, BufferVar{av.index, f32})).strategy ==
          Strategy::matrix) {
    // Constant B^T (a fully connected layer's [N][K] weights) on the matrix strategy: stored
    // [K][N] at compile time, so tiles multiply it in place with unit stride along n, instead of
    // dot products along k reduced across vector lanes at every k step.
    Tensor t(DType::f32, Shape{K, N});
    const float *src = wt->data<float>();
    float *dst = t.data_mut<float>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) dst[k * N + n] = src[n * K + k];
    bv = g.scratch(c.new_constant(std::move(t)), f32, false);
    ct.sbk = N, ct.sbn = 1;
    ct.b_is_operand = false;
  } else {
    KILN_ASSIGN(bv, g.in(op.operands[1]));
  }
  BufferVar ccv{-1, ScalarType::f32};
  if (cv && beta != 0.0 && shape_numel(cv->type.dims) > 0) {
    KILN_ASSIGN(ccv, g.in(cv));
  }
  KILN_ASSIGN(BufferVar ov, g.out(op.results[0]));
  auto epilogue = [&](const std::vector<Expr> &cs, Expr acc) {
    Expr y = alpha == 1.0 ? acc : acc * make_const(acc.type(), alpha);
    if (ccv.index >= 0) {
      Expr cval = cast(acc.type(), load(ccv, broadcast_index(cs, cv->type.dims)));
      y = y + (beta == 1.0 ? cval : cval * make_const(acc.type(), beta));
    }
    return y;
  };
  if (M * N == 0) return Status::ok();
  KILN_ASSIGN(bool done, try_scheduled(c, g, op, ct, av, bv, ov,
                                       [&](const Expr &m, const Expr &n, Expr acc) {
                                         return epilogue({m, n}, acc);
                                       }));
  if (done) return Status::ok();
  return g.finish(M * N, [&](Expr i) {
    return let_all(g, "c", unflatten(i, ct.out), [&](std::vector<Expr> cs) -> Result<Stmt> {
      auto [stmts, acc] = contract(g, ct, av, bv, cs);
      KILN_ASSIGN(Stmt st, g.store(ov, i, cast(ov.elem, epilogue(cs, acc))));
      stmts.push_back(st);
      return block(stmts);
    });
  });
}

} // namespace

void add_matmul_lowerings(LoweringTable &t) {
  t["kiln.matmul"] = lower_matmul;
  t["kiln.gemm"] = lower_gemm;
}

} // namespace kiln::compiler
