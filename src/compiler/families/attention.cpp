// kiln.sdpa (the fused attention core, passes/fuse_attention.cpp): one attention definition
// (definitions/attention.h) run as one kernel per (batch entry, block of query rows), or, for
// more keys than one workgroup's loops may walk on llvmpipe, per (batch entry, block, range
// of keys) plus a kernel combining the ranges. Its result is stored through
// GridKernel::store, so elementwise epilogues and the head-merge transpose after it are fused
// into the store as for a contraction (lowering/fusion.cpp).
#include "compiler/definitions/attention.h"

#include <fmt/format.h>

namespace kiln::compiler {

using namespace kir;

namespace {

Status lower_sdpa(LowerCtx &c, const Op &op) {
  const Value *qv = op.operands[0], *kv = op.operands[1], *vv = op.operands[2];
  const Value *mv = op.operands.size() > 3 ? op.operands[3] : nullptr;
  const Shape &q = qv->type.dims, &k = kv->type.dims, &v = vv->type.dims;
  const size_t r = q.size();
  const DType dt = qv->type.dtype;
  if (dt != DType::f32 && dt != DType::f16)
    return unsupported(op, fmt::format("kiln.sdpa on {}", dtype_name(dt)));
  if (r < 2 || k.size() != r || v.size() != r)
    return Status::error(op.describe() + ": q, k and v must have one rank of at least 2");
  AttentionDef d;
  d.batch = shape_numel(Shape(q.begin(), q.end() - 2));
  d.sq = q[r - 2];
  d.d = q[r - 1];
  d.skv = k[r - 2];
  d.dv = v[r - 1];
  d.scale = op.attr_float("scale", 1.0);
  d.zero_nan_rows = op.attr_int("zero_nan_rows", 0) != 0;
  if (d.skv == 0)
    return unsupported(op, "kiln.sdpa without keys");
  GridKernel g(c, op, "sdpa");
  KILN_ASSIGN(AttentionSchedule s, schedule_attention(c, op, d));
  KILN_ASSIGN(BufferVar Q, g.in(qv));
  KILN_ASSIGN(BufferVar K, g.in(kv));
  KILN_ASSIGN(BufferVar V, g.in(vv));
  const auto as_f32 = [](BufferVar b) {
    return [b](const Expr &i) { return cast(ScalarType::f32, load(b, i)); };
  };
  d.read_q = as_f32(Q);
  d.read_k = as_f32(K);
  d.read_v = as_f32(V);
  const auto as_f32x4 = [](BufferVar b) {
    return [b](const Expr &i) { return cast(ScalarType::f32, vector_load(b, i, 4)); };
  };
  d.read_q4 = as_f32x4(Q);
  d.read_k4 = as_f32x4(K);
  d.read_v4 = as_f32x4(V);
  if (mv) {
    if (!is_float(mv->type.dtype) || mv->type.dims.size() > r)
      return Status::error(op.describe() + ": the mask must be a float tensor of rank <= q's");
    KILN_ASSIGN(BufferVar M, g.in(mv));
    d.read_mask = as_f32(M);
    // The mask's offset of batch entry b, and its strides along the rows and keys.
    Shape ms(r - mv->type.dims.size(), 1);
    ms.insert(ms.end(), mv->type.dims.begin(), mv->type.dims.end());
    const auto st = shape_strides(ms);
    d.mask_row_stride = ms[r - 2] == 1 ? 0 : st[r - 2];
    d.mask_key_stride = ms[r - 1] == 1 ? 0 : st[r - 1];
    const Shape batch(q.begin(), q.end() - 2), mbatch(ms.begin(), ms.end() - 2);
    const int64_t mat = ms[r - 2] * ms[r - 1];
    d.mask_base = [batch, mbatch, mat](const Expr &b) -> Expr {
      if (shape_numel(mbatch) == 1)
        return i32(0);
      if (mbatch == batch)
        return b * mat;
      return broadcast_index(unflatten(b, batch), mbatch) * mat;
    };
  }
  c.count_attention();
  if (s.splits == 1) {
    KILN_ASSIGN(BufferVar Y, g.out(op.results[0]));
    d.store = [&g, Y](const Expr &i, const Expr &value) {
      return g.store(Y, i, cast(Y.elem, value));
    };
    return emit_attention(g, d, s);
  }
  // Split keys: partial results in scratch, then the combine kernel stores y.
  const uint64_t rows = static_cast<uint64_t>(s.splits * d.batch * d.sq);
  const int acc = c.new_scratch(rows * static_cast<uint64_t>(d.dv) * 4);
  const int stats = c.new_scratch(rows * 3 * 4);
  AttentionPartials part{g.scratch(acc, ScalarType::f32, true),
                         g.scratch(stats, ScalarType::f32, true)};
  KILN_TRY(emit_attention(g, d, s, &part));
  GridKernel combine(c, op, "sdpa_combine");
  AttentionPartials in{combine.scratch(acc, ScalarType::f32, false),
                       combine.scratch(stats, ScalarType::f32, false)};
  KILN_ASSIGN(BufferVar Y, combine.out(op.results[0]));
  d.store = [&combine, Y](const Expr &i, const Expr &value) {
    return combine.store(Y, i, cast(Y.elem, value));
  };
  return emit_attention_combine(combine, d, s, in);
}

} // namespace

void add_attention_lowerings(LoweringTable &t) { t["kiln.sdpa"] = lower_sdpa; }

} // namespace kiln::compiler
