// Quantisation ops, one invocation per output element:
//   kiln.quantize_linear / kiln.dequantize_linear (per tensor, per axis, blocked; float8 /
//   float4 rounded by NarrowEncoder and decoded by table);
//   kiln.dynamic_quantize_linear (one invocation computes scale / zero point, then a map);
//   kiln.matmul_integer / kiln.qlinear_matmul (i32 accumulation of zero-point corrected
//   values; the reference accumulates in i64, which only differs past 2^31).
#include "compiler/families/kernel_helpers.h"
#include "compiler/families/narrow_encode.h"
#include "support/narrow.h"

#include <fmt/format.h>

namespace kiln::compiler::helpers {

using namespace kir;

namespace {

// Flat index of the scale / zero point of element `i` (coordinates from `i`) of x; mirrors
// scale_index() of src/ops/nn_quant.cpp.
Result<Expr> scale_index(const Op &op, const Shape &xs, const Shape &ss, const Expr &i) {
  const int64_t rank = static_cast<int64_t>(xs.size());
  const int64_t block = op.attr_int("block_size", 0);
  if (shape_numel(ss) == 1 && block == 0 && ss.size() <= 1) return i32(0);
  if (rank == 0) return unsupported(op, "a scalar input with a non-scalar scale");
  KILN_ASSIGN(int64_t axis, norm_axis(op, op.attr_int("axis", 1), rank));
  const size_t a = static_cast<size_t>(axis);
  int64_t inner = 1;
  for (size_t d = a + 1; d < xs.size(); ++d) inner *= xs[d];
  if (block <= 0) {
    if (ss.size() != 1 || ss[0] != xs[a]) return unsupported(op, "this per-axis scale shape");
    return (i / inner) % xs[a];
  }
  bool ok = ss.size() == xs.size();
  for (size_t d = 0; ok && d < xs.size(); ++d)
    ok = d == a ? ss[d] == (xs[d] + block - 1) / block : ss[d] == xs[d];
  if (!ok) return unsupported(op, "this blocked scale shape");
  Expr o = i / (xs[a] * inner), k = (i / inner) % xs[a], j = i % inner;
  return (o * ss[a] + k / block) * inner + j;
}

bool wide(ScalarType t) { return t == ScalarType::i32 || t == ScalarType::u32; }

// A 256-entry f32 table of the values of the bit patterns of float8 / float4 type `t`,
// computed by the reference's decoder (exact: every such value is an f32), bound to `g`.
BufferVar decode_table(LowerCtx &c, GridKernel &g, DType t) {
  Tensor table(DType::f32, {256});
  for (int b = 0; b < 256; ++b)
    table.data_mut<float>()[b] = static_cast<float>(
        narrow_float_to_f64(t, static_cast<uint8_t>(t == DType::f4e2m1 ? b & 0xF : b)));
  return g.scratch(c.new_constant(std::move(table)), ScalarType::f32, false);
}

// To float8 / float4, as the reference: x / scale (in f32 unless an operand is f64) plus the
// decoded zero point, in f32, rounded once to the type with the op's saturate (NarrowEncoder).
Status lower_quantize_narrow_float(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *sv = op.operands[1];
  const Value *zv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Shape &xd = xv->type.dims;
  const DType yd = op.results[0]->type.dtype;
  GridKernel g(c, op, "quantize_linear");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar S, g.in(sv));
  BufferVar Z{-1, ScalarType::u8}, T{-1, ScalarType::f32};
  if (zv) {
    KILN_ASSIGN(Z, g.in(zv));
    T = decode_table(c, g, zv->type.dtype);
  }
  const NarrowEncoder enc =
      NarrowEncoder::make(c, g, NarrowEncoding{yd, op.attr_int("saturate", 1) != 0});
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const bool dbl = X.elem == ScalarType::f64 || S.elem == ScalarType::f64;
  if ((dbl || X.elem == ScalarType::i32) && !c.target().float64)
    return unsupported(op, "kiln.quantize_linear of f64 / i32 on a device without f64");
  const ScalarType dt = dbl ? ScalarType::f64 : ScalarType::f32;
  BufferVar bits{-1, ScalarType::u32};
  if (xv->type.dtype == DType::f32 || xv->type.dtype == DType::f16) bits = bits_view(c, g, xv);
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    KILN_ASSIGN(Expr k, scale_index(op, xd, sv->type.dims, i));
    std::vector<Stmt> s;
    Expr kv = def(g, s, "k", k);
    Expr xval = X.elem == ScalarType::i32 ? cast(dt, cast(ScalarType::f64, load(X, i)))
                                          : cast(dt, load(X, i));
    Expr xq = def(g, s, "x", xval);
    Expr q = cast(ScalarType::f32, call(Intrinsic::div_exact, {xq, cast(dt, load(S, kv))}));
    if (Z.index >= 0) q = q + load(T, cast(ScalarType::i32, load(Z, kv)));
    Expr qv = def(g, s, "q", q);
    // A NaN x gives a NaN of x's sign (the reference's division returns its NaN operand).
    Expr xneg = bits.index >= 0 ? sign_bit(bits, i) : imm_bool(false);
    Expr neg = select(call(Intrinsic::isnan, {xq}), xneg, sign_of(qv));
    Expr code = enc.encode(g, s, qv, neg);
    s.push_back(store(Y, i, code));
    return block(s);
  });
}

} // namespace

Expr quantize_expr(const Expr &x, const Expr &scale, const Expr &zp, ScalarType to) {
  Expr q = cast(ScalarType::f32, call(Intrinsic::round_even, {call(Intrinsic::div_exact, {x, scale})}));
  if (zp.defined()) q = q + cast(ScalarType::f32, zp);
  return round_saturate(q, to);
}

Expr dequantize_expr(const Expr &q, const Expr &scale, const Expr &zp) {
  Expr d = cast(ScalarType::i32, q);
  if (zp.defined()) d = d - cast(ScalarType::i32, zp);
  return cast(ScalarType::f32, d) * scale;
}

Expr quantize_dequantize_expr(const Expr &x, const Expr &scale, const Expr &zp, ScalarType to,
                              const Expr &dq_scale, const Expr &dq_zp) {
  const double lo = to == ScalarType::u8 ? 0 : -128, hi = to == ScalarType::u8 ? 255 : 127;
  Expr r = cast(ScalarType::f32, call(Intrinsic::round_even, {call(Intrinsic::div_exact, {x, scale})}));
  if (zp.defined()) r = r + cast(ScalarType::f32, zp);
  const Expr flo = make_const(ScalarType::f32, lo), fhi = make_const(ScalarType::f32, hi);
  Expr q = select(r <= flo, flo, select(r >= fhi, fhi, r));
  q = select(call(Intrinsic::isnan, {r}), make_const(ScalarType::f32, 0), q);
  if (dq_zp.defined()) q = q - cast(ScalarType::f32, dq_zp);
  return q * dq_scale;
}

bool qdq_epilogue_op(const Op &op) {
  const bool q = op.name() == "kiln.quantize_linear", dq = op.name() == "kiln.dequantize_linear";
  if ((!q && !dq) || op.results.size() != 1 || op.operands.size() < 2 || op.operands.size() > 3)
    return false;
  for (const Value *v : op.operands)
    if (!v) return false;
  const DType f = q ? op.operands[0]->type.dtype : op.results[0]->type.dtype;
  const DType i = q ? op.results[0]->type.dtype : op.operands[0]->type.dtype;
  if (f != DType::f32 || op.operands[1]->type.dtype != DType::f32 ||
      (i != DType::i8 && i != DType::u8))
    return false;
  for (size_t k = 1; k < op.operands.size(); ++k)
    if (!op.operands[k]->type.is_static() || shape_numel(op.operands[k]->type.dims) != 1)
      return false;
  return op.attr_int("block_size", 0) == 0;
}

namespace {

Status lower_quantize(LowerCtx &c, const Op &op) {
  if (is_narrow_float(op.results[0]->type.dtype)) return lower_quantize_narrow_float(c, op);
  const Value *xv = op.operands[0], *sv = op.operands[1];
  const Value *zv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Shape &xd = xv->type.dims;
  GridKernel g(c, op, "quantize_linear");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar S, g.in(sv));
  BufferVar Z{-1, ScalarType::u8};
  if (zv) {
    KILN_ASSIGN(Z, g.in(zv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  // Divide in single precision unless an operand is f64 (as the reference); 32-bit results
  // and i32 inputs need f64 for the rounding / saturation.
  const bool dbl = X.elem == ScalarType::f64 || S.elem == ScalarType::f64;
  const bool need64 = wide(Y.elem) || X.elem == ScalarType::i32;
  if (need64 && !c.target().float64)
    return unsupported(op, "32-bit kiln.quantize_linear on a device without f64");
  const ScalarType dt = dbl ? ScalarType::f64 : ScalarType::f32;
  const ScalarType rt = need64 || dbl ? ScalarType::f64 : ScalarType::f32;
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    KILN_ASSIGN(Expr k, scale_index(op, xd, sv->type.dims, i));
    std::vector<Stmt> s;
    Expr kv = def(g, s, "k", k);
    Expr xval = X.elem == ScalarType::i32 ? cast(dt, cast(ScalarType::f64, load(X, i)))
                                          : cast(dt, load(X, i));
    const DType yd = op.results[0]->type.dtype;
    if (qdq_epilogue_op(op)) { // the expression a fused epilogue computes, bit for bit
      // Through GridKernel::store: a fused DequantizeLinear after it applies there.
      KILN_ASSIGN(Stmt st, g.store(Y, i, quantize_expr(xval, load(S, kv),
                                                        Z.index >= 0 ? load(Z, kv) : Expr(), Y.elem)));
      s.push_back(st);
      return block(s);
    }
    Expr q = cast(rt, call(Intrinsic::round_even,
                           {call(Intrinsic::div_exact, {xval, cast(dt, load(S, kv))})}));
    if (Z.index >= 0) q = q + cast(rt, load(Z, kv));
    if (is_narrow_int(yd)) { // held as i8 / u8: clamp to the narrow range first (NaN stays)
      const Expr lo = make_const(rt, static_cast<double>(int_lowest(yd)));
      const Expr hi = make_const(rt, static_cast<double>(int_highest(yd)));
      q = select(q < lo, lo, select(q > hi, hi, q));
    }
    s.push_back(store(Y, i, round_saturate(q, Y.elem)));
    return block(s);
  });
}

Status lower_dequantize(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0], *sv = op.operands[1];
  const Value *zv = op.operands.size() > 2 ? op.operands[2] : nullptr;
  const Shape &xd = xv->type.dims;
  GridKernel g(c, op, "dequantize_linear");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar S, g.in(sv));
  BufferVar Z{-1, X.elem};
  if (zv) {
    KILN_ASSIGN(Z, g.in(zv));
  }
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  const DType xt = xv->type.dtype;
  if (is_narrow_float(xt)) { // float8 / float4: decoded by table, (x - zero_point) * scale in f32
    const BufferVar T = decode_table(c, g, xt);
    auto decode = [&](const BufferVar &b, const Expr &at) {
      return load(T, cast(ScalarType::i32, load(b, at)));
    };
    return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
      KILN_ASSIGN(Expr k, scale_index(op, xd, sv->type.dims, i));
      std::vector<Stmt> s;
      Expr kv = def(g, s, "k", k);
      Expr d = decode(X, i);
      if (Z.index >= 0) d = d - decode(Z, kv);
      s.push_back(store(Y, i, cast(Y.elem, d * cast(ScalarType::f32, load(S, kv)))));
      return block(s);
    });
  }
  // q - zero_point exactly: i32 for 8/16-bit inputs, i64 for 32-bit ones.
  const ScalarType it = wide(X.elem) ? ScalarType::i64 : ScalarType::i32;
  if (it == ScalarType::i64 && !c.target().int64)
    return unsupported(op, "32-bit kiln.dequantize_linear on a device without int64");
  const ScalarType at = float_acc(S.elem);
  return g.finish(shape_numel(xd), [&](Expr i) -> Result<Stmt> {
    KILN_ASSIGN(Expr k, scale_index(op, xd, sv->type.dims, i));
    std::vector<Stmt> s;
    Expr kv = def(g, s, "k", k);
    if (qdq_epilogue_op(op)) { // the expression a fused epilogue computes, bit for bit
      KILN_ASSIGN(Stmt st, g.store(Y, i, dequantize_expr(load(X, i), load(S, kv),
                                                          Z.index >= 0 ? load(Z, kv) : Expr())));
      s.push_back(st);
      return block(s);
    }
    Expr q = cast(it, load(X, i));
    if (Z.index >= 0) q = q - cast(it, load(Z, kv));
    s.push_back(store(Y, i, cast(Y.elem, cast(at, q) * cast(at, load(S, kv)))));
    return block(s);
  });
}

// Scale and zero point in one invocation (f32, as the reference): the range of x widened to
// include 0. NaN inputs (an error in the reference) are ignored here.
Status lower_dynamic_quantize(LowerCtx &c, const Op &op) {
  const Value *xv = op.operands[0];
  const int64_t n = shape_numel(xv->type.dims);
  const ScalarType f = ScalarType::f32;
  {
    GridKernel g(c, op, "dynamic_quantize_range");
    KILN_ASSIGN(BufferVar X, g.in(xv));
    KILN_ASSIGN(BufferVar S, g.out(op.results[1]));
    KILN_ASSIGN(BufferVar Z, g.out(op.results[2]));
    KILN_TRY(g.finish(1, [&](Expr) -> Result<Stmt> {
      std::vector<Stmt> s;
      Expr mx = def(g, s, "mx", make_const(f, 0)), mn = def(g, s, "mn", make_const(f, 0));
      Expr j = var(g.fresh("j"), ScalarType::i32), v = var(g.fresh("v"), f);
      s.push_back(for_loop(j, i32(0), i32(n),
                           let(v, load(X, j),
                               block({assign(mx, select(v > mx, v, mx)),
                                      assign(mn, select(v < mn, v, mn))}))));
      // Divisions correctly rounded, as the reference's: a quotient 2.5 ULP off moves ties.
      Expr scale = def(g, s, "scale",
                       call(Intrinsic::div_exact,
                            {select(mx == mn, make_const(f, 1), mx - mn), make_const(f, 255)}));
      Expr zpf = clamp(make_const(f, 0) - call(Intrinsic::div_exact, {mn, scale}),
                       make_const(f, 0), make_const(f, 255));
      s.push_back(store(S, i32(0), scale));
      s.push_back(store(Z, i32(0), round_saturate(zpf, ScalarType::u8)));
      return block(s);
    }));
  }
  GridKernel g(c, op, "dynamic_quantize_map");
  KILN_ASSIGN(BufferVar X, g.in(xv));
  KILN_ASSIGN(BufferVar S, g.in(op.results[1]));
  KILN_ASSIGN(BufferVar Z, g.in(op.results[2]));
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(n, [&](Expr i) -> Result<Stmt> {
    Expr q = call(Intrinsic::round_even,
                  {call(Intrinsic::div_exact, {load(X, i), load(S, i32(0))})}) +
             cast(f, cast(ScalarType::i32, load(Z, i32(0))));
    return store(Y, i, round_saturate(q, ScalarType::u8));
  });
}

// ---- integer matmuls ---------------------------------------------------------------------------

struct MatDims {
  Shape out, a_batch, b_batch;
  int64_t M = 0, K = 0, N = 0;
  bool a1 = false, b1 = false; // 1-D operands (promoted)
};

Result<MatDims> mat_dims(const Op &op, const Shape &ad, const Shape &bd, const Shape &yd) {
  if (ad.empty() || bd.empty()) return unsupported(op, "a matmul of scalars");
  MatDims d;
  d.a1 = ad.size() == 1, d.b1 = bd.size() == 1;
  const Shape a = d.a1 ? Shape{1, ad[0]} : ad, b = d.b1 ? Shape{bd[0], 1} : bd;
  d.M = a[a.size() - 2], d.K = a.back(), d.N = b.back();
  if (b[b.size() - 2] != d.K) return unsupported(op, "mismatched matmul operands");
  d.a_batch.assign(a.begin(), a.end() - 2);
  d.b_batch.assign(b.begin(), b.end() - 2);
  KILN_ASSIGN(d.out, broadcast_shapes(d.a_batch, d.b_batch));
  d.out.push_back(d.M);
  d.out.push_back(d.N);
  if (shape_numel(d.out) != shape_numel(yd)) return unsupported(op, "this matmul result shape");
  return d;
}

// Per-tensor value, or one of `count` values indexed by `idx`, loaded and cast to `t`.
Result<Expr> param(const Op &op, GridKernel &g, const Value *v, int64_t count, const Expr &idx,
                   ScalarType t) {
  if (!v) return make_const(t, 0);
  const int64_t n = shape_numel(v->type.dims);
  if (n != 1 && !(n == count && v->type.dims.size() <= 2)) return unsupported(op, "this quantisation parameter shape");
  KILN_ASSIGN(BufferVar b, g.in(v));
  return cast(t, load(b, n == 1 ? i32(0) : idx));
}

struct IntMatmul {
  const Value *a, *b, *za, *zb;
};

// acc = sum_k (a[m,k] - za[m]) * (b[k,n] - zb[n]) in i32 for output coordinates `cs`.
Result<std::pair<std::vector<Stmt>, Expr>> int_matmul(GridKernel &g, const Op &op,
                                                      const IntMatmul &im, const MatDims &d,
                                                      const std::vector<Expr> &cs) {
  const size_t nb = d.out.size() - 2;
  std::vector<Expr> bc(cs.begin(), cs.begin() + static_cast<long>(nb));
  const Expr m = cs[nb], n = cs[nb + 1];
  KILN_ASSIGN(BufferVar A, g.in(im.a));
  KILN_ASSIGN(BufferVar B, g.in(im.b));
  KILN_ASSIGN(Expr za, param(op, g, im.za, d.M, m, ScalarType::i32));
  KILN_ASSIGN(Expr zb, param(op, g, im.zb, d.N, n, ScalarType::i32));
  Expr abase = broadcast_index(bc, d.a_batch) * (d.M * d.K) + m * d.K;
  Expr bbase = broadcast_index(bc, d.b_batch) * (d.K * d.N) + n;
  std::vector<Stmt> s;
  Expr zav = def(g, s, "za", za), zbv = def(g, s, "zb", zb);
  Expr acc = def(g, s, "acc", i32(0));
  Expr k = var(g.fresh("k"), ScalarType::i32);
  Expr prod = (cast(ScalarType::i32, load(A, abase + k)) - zav) *
              (cast(ScalarType::i32, load(B, bbase + k * d.N)) - zbv);
  s.push_back(for_loop(k, i32(0), i32(d.K), assign(acc, acc + prod)));
  return std::make_pair(s, acc);
}

Status lower_matmul_integer(LowerCtx &c, const Op &op) {
  auto opnd = [&](size_t k) { return op.operands.size() > k ? op.operands[k] : nullptr; };
  IntMatmul im{op.operands[0], op.operands[1], opnd(2), opnd(3)};
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(MatDims d, mat_dims(op, im.a->type.dims, im.b->type.dims, yd));
  GridKernel g(c, op, "matmul_integer");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, d.out), [&](std::vector<Expr> cs) -> Result<Stmt> {
      KILN_ASSIGN(auto sa, int_matmul(g, op, im, d, cs));
      sa.first.push_back(store(Y, i, cast(Y.elem, sa.second)));
      return block(sa.first);
    });
  });
}

Status lower_qlinear_matmul(LowerCtx &c, const Op &op) {
  const auto &o = op.operands;
  IntMatmul im{o[0], o[3], o[2], o[5]};
  const Shape &yd = op.results[0]->type.dims;
  KILN_ASSIGN(MatDims d, mat_dims(op, im.a->type.dims, im.b->type.dims, yd));
  const bool f32r = op.attr_str("requant", "f64") == "f32";
  const ScalarType at = requant_type(c, f32r);
  GridKernel g(c, op, "qlinear_matmul");
  KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
  return g.finish(shape_numel(yd), [&](Expr i) {
    return let_all(g, "c", unflatten(i, d.out), [&](std::vector<Expr> cs) -> Result<Stmt> {
      const Expr m = cs[cs.size() - 2], n = cs.back();
      KILN_ASSIGN(auto sa, int_matmul(g, op, im, d, cs));
      const ScalarType st = scale_type(o[1]->type.dtype);
      const ScalarType mt = st == ScalarType::f64 ? ScalarType::f64 : ScalarType::f32;
      KILN_ASSIGN(Expr ra, param(op, g, o[1], d.M, m, mt));
      KILN_ASSIGN(Expr rb, param(op, g, o[4], d.N, n, mt));
      KILN_ASSIGN(Expr ys, param(op, g, o[6], d.N, n, mt));
      KILN_ASSIGN(Expr yz, param(op, g, o[7], d.N, n, at));
      Expr real = cast(at, sa.second) * cast(at, requant_multiplier(c, st, ra, rb, ys));
      sa.first.push_back(store(Y, i, round_saturate(requantize(real, yz, f32r), Y.elem)));
      return block(sa.first);
    });
  });
}

} // namespace

ScalarType scale_type(DType t) {
  return t == DType::f64 ? ScalarType::f64 : t == DType::f16 ? ScalarType::f16 : ScalarType::f32;
}

Expr requant_multiplier(const LowerCtx &c, ScalarType st, const Expr &s1, const Expr &s2,
                        const Expr &s3) {
  auto round = [&](const Expr &v) {
    return st == ScalarType::f16 && c.target().float16 ? cast(v.type(), cast(ScalarType::f16, v))
                                                        : v;
  };
  return round(call(Intrinsic::div_exact, {round(s1 * s2), s3}));
}

ScalarType requant_type(const LowerCtx &c, bool f32) {
  // acc * multiplier in f64 where the device has it (the reference multiplies in double).
  return !f32 && c.target().float64 ? ScalarType::f64 : ScalarType::f32;
}

Expr requantize(const Expr &real, const Expr &zp, bool f32) {
  return f32 ? call(Intrinsic::round_even, {real}) + zp : call(Intrinsic::round_even, {real + zp});
}

} // namespace kiln::compiler::helpers

namespace kiln::compiler {

void add_quantize_lowerings(LoweringTable &t) {
  t["kiln.quantize_linear"] = helpers::lower_quantize;
  t["kiln.dequantize_linear"] = helpers::lower_dequantize;
  t["kiln.dynamic_quantize_linear"] = helpers::lower_dynamic_quantize;
  t["kiln.matmul_integer"] = helpers::lower_matmul_integer;
  t["kiln.qlinear_matmul"] = helpers::lower_qlinear_matmul;
}

} // namespace kiln::compiler
