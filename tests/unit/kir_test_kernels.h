// Kernels built from the vector, subgroup and cooperative-matrix node kinds, shared by the
// kernel-IR, SPIR-V and run-time tests.
#pragma once

#include "kir/kir.h"

namespace kir_test {

using namespace kiln::kir;

// out[4i .. 4i+3] = a[4i ..] * 2 + b[4i ..] for i < pc[0] (pc[0] = element count / 4), with
// f32x4 vector loads and stores.
inline Kernel vector_axpy_kernel() {
  Kernel k;
  k.name = "vector_axpy";
  k.workgroup_size[0] = 64;
  k.push_constant_count = 1;
  BufferVar a = k.add_buffer("a", ScalarType::f32, true);
  BufferVar b = k.add_buffer("b", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  Expr i = var("i", ScalarType::u32), e = var("e", ScalarType::u32);
  Expr two = broadcast(imm_f32(2), 4);
  k.body = let(i, global_id(0),
               if_then(i < push_const(0),
                       let(e, i * 4,
                           vector_store(out, e, vector_load(a, e, 4) * two +
                                                    vector_load(b, e, 4)))));
  return k;
}

// A shared array stored as 4-lane vectors, 64 invocations per workgroup: invocation l stores
// in[base + l + 64 * r] as scalar element l + 64 * r (r < 4: every lane of every vector gets
// written through a scalar lane address), then, after a barrier, reads vector 63 - l with one
// 4-lane load and writes its lanes times (r + 1) to out[base + 4 * l + r]:
// out[base + 4 * l + r] = (r + 1) * in[base + 4 * (63 - l) + r].
inline Kernel shared_vector_kernel() {
  Kernel k;
  k.name = "shared_vector";
  k.workgroup_size[0] = 64;
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  SharedVar tile = k.add_shared("tile", ScalarType::f32, 256, 4);
  Expr l = var("l", ScalarType::i32), base = var("base", ScalarType::i32);
  Expr v = var("v", ValueType::vector(ScalarType::f32, 4));
  std::vector<Stmt> body;
  for (int r = 0; r < 4; ++r)
    body.push_back(store_shared(tile, l + r * 64, load(in, base + l + r * 64)));
  body.push_back(barrier());
  body.push_back(declare_var(v, load_shared_vector(tile, (imm_i32(63) - l) * 4)));
  for (int r = 0; r < 4; ++r)
    body.push_back(store(out, base + l * 4 + r, extract_lane(v, r) * imm_f32(float(r + 1))));
  k.body = let(l, cast(ScalarType::i32, local_id(0)),
               let(base, cast(ScalarType::i32, workgroup_id(0)) * 256, block(std::move(body))));
  return k;
}

// Per invocation g (of pc[0]): sum[g] = subgroup sum of x, max[g] = subgroup max of x,
// xor1[g] = x of invocation (id ^ 1), first[g] = x of the lowest invocation, info[g] =
// subgroup_size << 16 | subgroup_id << 8 | subgroup_invocation_id. The grid covers pc[0]
// exactly (no bounds guard: every invocation of a subgroup takes part).
inline Kernel subgroup_kernel() {
  Kernel k;
  k.name = "subgroup_ops";
  k.workgroup_size[0] = 64;
  k.push_constant_count = 1;
  BufferVar x = k.add_buffer("x", ScalarType::i32, true);
  BufferVar sum = k.add_buffer("sum", ScalarType::i32, false, true);
  BufferVar mx = k.add_buffer("max", ScalarType::i32, false, true);
  BufferVar xor1 = k.add_buffer("xor1", ScalarType::i32, false, true);
  BufferVar first = k.add_buffer("first", ScalarType::i32, false, true);
  BufferVar info = k.add_buffer("info", ScalarType::u32, false, true);
  Expr g = var("g", ScalarType::u32), v = var("v", ScalarType::i32);
  Expr packed = (subgroup_size() << imm_u32(16)) | (subgroup_id() << imm_u32(8)) |
                subgroup_invocation_id();
  k.body = let(g, global_id(0),
               let(v, load(x, g),
                   block({store(sum, g, subgroup_reduce(ReduceOp::add, v)),
                          store(mx, g, subgroup_reduce(ReduceOp::max, v)),
                          store(xor1, g, subgroup_shuffle_xor(v, imm_u32(1))),
                          store(first, g, subgroup_broadcast_first(v)),
                          store(info, g, packed)})));
  return k;
}

// C[M x N] (f32, row-major) = A[M x K] (f16, row-major) * B[K x N] (f16, column-major) with
// one subgroup (32 invocations) per 16 x 16 tile of C: workgroup (n tile, m tile), a loop over
// K in steps of 16. pc[0] = M, pc[1] = N, pc[2] = K, all multiples of 16.
inline Kernel coopmat_gemm_kernel(uint32_t subgroup = 32) {
  Kernel k;
  k.name = "coopmat_gemm_16x16x16";
  k.workgroup_size[0] = subgroup;
  k.push_constant_count = 3;
  BufferVar a = k.add_buffer("a", ScalarType::f16, true);
  BufferVar b = k.add_buffer("b", ScalarType::f16, true);
  BufferVar c = k.add_buffer("c", ScalarType::f32, false, true);
  const ValueType ta = ValueType::coop_matrix(ScalarType::f16, 16, 16, MatrixUse::a);
  const ValueType tb = ValueType::coop_matrix(ScalarType::f16, 16, 16, MatrixUse::b);
  const ValueType tc = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);
  Expr m0 = var("m0", ScalarType::u32), n0 = var("n0", ScalarType::u32);
  Expr kk = var("kk", ScalarType::u32), acc = var("acc", tc);
  Expr N = push_const(1), K = push_const(2); // pc[0] = M sizes the grid only
  Expr step = matrix_mul_add(
      matrix_load(ta, a, m0 * K + kk * 16, K, MatrixLayout::row_major),
      matrix_load(tb, b, n0 * K + kk * 16, K, MatrixLayout::col_major), acc);
  k.body = let(m0, workgroup_id(1) * 16,
               let(n0, workgroup_id(0) * 16,
                   block({declare_var(acc, matrix_fill(tc, imm_f32(0))),
                          for_loop(kk, imm_u32(0), K / imm_u32(16), assign(acc, step)),
                          matrix_store(c, m0 * N + n0, N, MatrixLayout::row_major, acc)})));
  return k;
}

} // namespace kir_test
