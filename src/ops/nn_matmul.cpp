// kiln.matmul (numpy semantics), kiln.gemm (2-D, transposes, alpha/beta, broadcast C) and
// kiln.matmul_integer (8-bit operands with zero points, i32 result).
#include "ops/nn_internal.h"
#include "ops/nn_kernels.h"
#include "ops/op_util.h"
#include "ops/quant_params.h"

#include <array>

namespace kiln {

using nn::CType;

namespace {

// Shapes of a matmul with 1-D operands promoted (A [.., M, K], B [.., K, N]).
struct MatmulDims {
  Shape a_batch, b_batch, batch, out;
  int64_t M = 0, K = 0, N = 0;
};

Result<MatmulDims> matmul_dims(const Op &op, const Shape &a, const Shape &b, bool dynamic_ok) {
  if (a.empty() || b.empty())
    return Status::error(op.describe() + ": operands must have rank >= 1 (got a scalar)");
  MatmulDims d;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  d.M = a_vec ? 1 : a[a.size() - 2];
  d.K = a.back();
  const int64_t kb = b_vec ? b[0] : b[b.size() - 2];
  d.N = b_vec ? 1 : b.back();
  if (d.K >= 0 && kb >= 0 && d.K != kb)
    return Status::error(fmt::format("{}: inner dims differ ([{}] x [{}])", op.describe(),
                                     shape_str(a), shape_str(b)));
  if (d.K < 0) d.K = kb;
  if (!dynamic_ok && (d.K < 0 || d.M < 0 || d.N < 0))
    return Status::error(op.describe() + ": dynamic dims at run time");
  d.a_batch.assign(a.begin(), a.end() - (a_vec ? 1 : 2));
  d.b_batch.assign(b.begin(), b.end() - (b_vec ? 1 : 2));
  KILN_ASSIGN(d.batch, broadcast_dims(op, d.a_batch, d.b_batch));
  d.out = d.batch;
  if (!a_vec) d.out.push_back(d.M);
  if (!b_vec) d.out.push_back(d.N);
  return d;
}

Status infer_matmul(InferCtx &ctx, DType out_dt) {
  const TensorType &a = ctx.type(0), &b = ctx.type(1);
  if (!a.ranked || !b.ranked) {
    ctx.out = {TensorType{out_dt, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(MatmulDims d, matmul_dims(ctx.op, a.dims, b.dims, true));
  ctx.out = {TensorType{out_dt, d.out, true}};
  return Status::ok();
}

// Batched A x B in compute type T (A, B already adjusted by zero points where needed).
template <class T> Tensor matmul_typed(const T *A, const T *B, const MatmulDims &d) {
  std::vector<T> C(static_cast<size_t>(shape_numel(d.out)));
  const int64_t sa = d.M * d.K, sb = d.K * d.N, sc = d.M * d.N;
  BroadcastIndexer bi(d.batch, {d.a_batch, d.b_batch});
  bi.for_each([&](int64_t i, const int64_t *off) {
    nn::gemm<T>(d.M, d.N, d.K, A + off[0] * sa, d.K, B + off[1] * sb, d.N, C.data() + i * sc, d.N,
                false);
  });
  return nn::store<T>(C, std::is_same_v<T, float> ? DType::f32
                         : std::is_same_v<T, double> ? DType::f64
                                                     : DType::i64,
                      d.out);
}

Status eval_matmul(EvalCtx &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  KILN_ASSIGN(MatmulDims d, matmul_dims(ctx.op, a.shape(), b.shape(), false));
  KILN_TRY(nn::check_result_size(ctx.op, d.out));
  const DType dt = a.dtype();
  Tensor r;
  switch (nn::compute_type(dt)) {
  case CType::f32: {
    nn::View<float> va(a), vb(b);
    r = matmul_typed<float>(va.data(), vb.data(), d);
    break;
  }
  case CType::f64: {
    nn::View<double> va(a), vb(b);
    r = matmul_typed<double>(va.data(), vb.data(), d);
    break;
  }
  case CType::u64: {
    nn::View<uint64_t> va(a), vb(b);
    r = matmul_typed<uint64_t>(va.data(), vb.data(), d);
    break;
  }
  }
  ctx.out = {r.dtype() == dt ? r : r.cast(dt)};
  return Status::ok();
}

// ---- matmul_integer --------------------------------------------------------------------------

// The operand minus its zero point, as uint64 (wrapping int64). `per` is the length of the
// per-row (A: rows M, axis -2) or per-column (B: cols N, axis -1) zero point.
Result<std::vector<uint64_t>> sub_zero_point(const Op &op, const Tensor &x, const Tensor *zp,
                                             bool rows, int64_t M, int64_t N) {
  std::vector<uint64_t> v(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) v[i] = static_cast<uint64_t>(x.get_i64(i));
  if (!zp) return v;
  const int64_t n = zp->numel();
  const int64_t want = rows ? M : N;
  if (n != 1 && !(zp->rank() == 1 && n == want))
    return Status::error(fmt::format("{}: zero point of shape [{}] is not supported (scalar or "
                                     "1-D of {} values)",
                                     op.describe(), shape_str(zp->shape()), want));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t j = n == 1 ? 0 : rows ? (i / N) % M : i % N;
    v[i] -= static_cast<uint64_t>(zp->get_i64(j));
  }
  return v;
}

Status eval_matmul_integer(EvalCtx &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  KILN_ASSIGN(MatmulDims d, matmul_dims(ctx.op, a.shape(), b.shape(), false));
  KILN_TRY(nn::check_result_size(ctx.op, d.out));
  const Tensor *za = ctx.present(2) ? &ctx.input(2) : nullptr;
  const Tensor *zb = ctx.present(3) ? &ctx.input(3) : nullptr;
  KILN_ASSIGN(auto va, sub_zero_point(ctx.op, a, za, true, d.M, d.K));
  KILN_ASSIGN(auto vb, sub_zero_point(ctx.op, b, zb, false, d.K, d.N));
  Tensor r = matmul_typed<uint64_t>(va.data(), vb.data(), d);
  ctx.out = {r.cast(DType::i32)};
  return Status::ok();
}

// ---- gemm ------------------------------------------------------------------------------------

Result<std::array<int64_t, 3>> gemm_dims(const Op &op, const Shape &a, const Shape &b) {
  if (a.size() != 2 || b.size() != 2)
    return Status::error(op.describe() + ": operands A and B must be 2-D");
  const bool ta = op.attr_int("trans_a", 0) != 0, tb = op.attr_int("trans_b", 0) != 0;
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  const int64_t kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K >= 0 && kb >= 0 && K != kb)
    return Status::error(fmt::format("{}: inner dims differ ([{}] x [{}])", op.describe(),
                                     shape_str(a), shape_str(b)));
  return std::array<int64_t, 3>{M, K < 0 ? kb : K, N};
}

template <class T> std::vector<T> transposed(const T *x, int64_t rows, int64_t cols) {
  std::vector<T> t(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) t[j * rows + i] = x[i * cols + j];
  return t;
}

template <class T>
std::vector<T> gemm_typed(const Op &op, const Tensor &a, const Tensor &b, int64_t M, int64_t K,
                          int64_t N) {
  nn::View<T> va(a), vb(b);
  std::vector<T> at;
  const T *A = va.data();
  if (op.attr_int("trans_a", 0) != 0) {
    at = transposed<T>(A, K, M);
    A = at.data();
  }
  std::vector<T> C(static_cast<size_t>(M * N));
  if (op.attr_int("trans_b", 0) != 0) nn::gemm_bt<T>(M, N, K, A, K, vb.data(), K, C.data(), N, false);
  else nn::gemm<T>(M, N, K, A, K, vb.data(), N, C.data(), N, false);
  return C;
}

Status eval_gemm(EvalCtx &ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  KILN_ASSIGN(auto dims, gemm_dims(ctx.op, a.shape(), b.shape()));
  const auto [M, K, N] = dims;
  KILN_TRY(nn::check_result_size(ctx.op, {M, N}));
  const double alpha = ctx.op.attr_float("alpha", 1.0), beta = ctx.op.attr_float("beta", 1.0);
  const DType dt = a.dtype();
  const Shape out_shape{M, N};
  const Tensor *c = ctx.present(2) ? &ctx.input(2) : nullptr;
  if (c && !broadcast_shapes(out_shape, c->shape()).is_ok())
    return ctx.error(fmt::format("C of shape [{}] does not broadcast to [{}]",
                                 shape_str(c->shape()), shape_str(out_shape)));
  if (nn::compute_type(dt) == CType::f32) {
    std::vector<float> y = gemm_typed<float>(ctx.op, a, b, M, K, N);
    const float fa = static_cast<float>(alpha), fb = static_cast<float>(beta);
    if (fa != 1.0f)
      for (float &v : y) v *= fa;
    if (c && fb != 0.0f) {
      BroadcastIndexer bi(out_shape, {c->shape()});
      nn::View<float> vc(*c);
      bi.for_each([&](int64_t i, const int64_t *off) { y[i] += fb * vc[off[0]]; });
    }
    ctx.out = {nn::store<float>(y, dt, out_shape)};
    return Status::ok();
  }
  std::vector<double> y(static_cast<size_t>(M * N));
  if (nn::compute_type(dt) == CType::f64) {
    y = gemm_typed<double>(ctx.op, a, b, M, K, N);
  } else {
    std::vector<uint64_t> yi = gemm_typed<uint64_t>(ctx.op, a, b, M, K, N);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<double>(static_cast<int64_t>(yi[i]));
  }
  for (double &v : y) v *= alpha;
  if (c && beta != 0.0) {
    BroadcastIndexer bi(out_shape, {c->shape()});
    bi.for_each([&](int64_t i, const int64_t *off) { y[i] += beta * c->get_f64(off[0]); });
  }
  Tensor r(dt, out_shape);
  for (int64_t i = 0; i < M * N; ++i) r.set_f64(i, y[i]);
  ctx.out = {r};
  return Status::ok();
}

Status infer_gemm(InferCtx &ctx) {
  const TensorType &a = ctx.type(0), &b = ctx.type(1);
  if (!a.ranked || !b.ranked) {
    ctx.out = {TensorType{a.dtype, dynamic_dims(2), true}};
    return Status::ok();
  }
  KILN_ASSIGN(auto dims, gemm_dims(ctx.op, a.dims, b.dims));
  if (ctx.present(2) && ctx.type(2).ranked) {
    if (ctx.type(2).rank() > 2) return ctx.error("C must have rank <= 2");
    KILN_ASSIGN(Shape s, broadcast_dims(ctx.op, {dims[0], dims[2]}, ctx.type(2).dims));
    (void)s;
  }
  ctx.out = {TensorType{a.dtype, {dims[0], dims[2]}, true}};
  return Status::ok();
}

Status check_operands(const InferCtx &ctx, size_t n) {
  const DType dt = ctx.type(0).dtype;
  for (size_t i = 1; i < n; ++i)
    if (ctx.present(i) && ctx.type(i).dtype != dt)
      return ctx.error(fmt::format("operand {} has dtype {} but operand 0 has {}", i,
                                   dtype_name(ctx.type(i).dtype), dtype_name(dt)));
  if (is_bool(dt)) return ctx.error("bool operands are not supported");
  return Status::ok();
}

Status check_int8(const InferCtx &ctx) {
  for (size_t i = 0; i < ctx.in.size(); ++i) {
    if (!ctx.present(i)) continue;
    KILN_TRY(expect_dtype_in(ctx.op, "operand", ctx.type(i).dtype, {DType::i8, DType::u8}));
  }
  if (ctx.present(2))
    KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(2).dtype, ctx.type(0).dtype,
                                           "a_zero_point", "A"));
  if (ctx.present(3))
    KILN_TRY(quant::check_zero_point_dtype(ctx.op, ctx.type(3).dtype, ctx.type(1).dtype,
                                           "b_zero_point", "B"));
  // Zero points per tensor, or per row of A / per column of B.
  const TensorType &a = ctx.type(0), &b = ctx.type(1);
  if (ctx.present(2) && a.ranked)
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(2),
                                      a.rank() >= 2 ? a.dims[a.dims.size() - 2] : 1,
                                      "a_zero_point", "row of A"));
  if (ctx.present(3) && b.ranked)
    KILN_TRY(quant::check_per_channel(ctx.op, ctx.type(3), b.rank() >= 2 ? b.dims.back() : 1,
                                      "b_zero_point", "column of B"));
  return Status::ok();
}

} // namespace

void register_nn_matmul_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.matmul",
      .min_operands = 2,
      .max_operands = 2,
      .infer =
          [](InferCtx &ctx) {
            KILN_TRY(check_operands(ctx, 2));
            return infer_matmul(ctx, ctx.type(0).dtype);
          },
      .eval = eval_matmul,
  });
  r.add(OpDef{
      .name = "kiln.matmul_integer",
      .min_operands = 2,
      .max_operands = 4,
      .infer =
          [](InferCtx &ctx) {
            KILN_TRY(check_int8(ctx));
            return infer_matmul(ctx, DType::i32);
          },
      .eval = eval_matmul_integer,
  });
  r.add(OpDef{
      .name = "kiln.gemm",
      .min_operands = 2,
      .max_operands = 3,
      .infer =
          [](InferCtx &ctx) {
            KILN_TRY(check_operands(ctx, 3));
            return infer_gemm(ctx);
          },
      .eval = eval_gemm,
  });
}

} // namespace kiln
