// Kernel IR: the vector, subgroup and cooperative-matrix node kinds (factories, printer,
// verifier, simplifier, mutator identity).
#include "kir/kir.h"
#include "kir_test_kernels.h"

#include <gtest/gtest.h>

using namespace kiln::kir;

namespace {

const ValueType kA = ValueType::coop_matrix(ScalarType::f16, 16, 16, MatrixUse::a);
const ValueType kB = ValueType::coop_matrix(ScalarType::f16, 16, 16, MatrixUse::b);
const ValueType kC = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);

} // namespace

TEST(KirNodes, VectorTypesAndPrinting) {
  Expr v = var("v", ValueType::vector(ScalarType::f32, 4));
  EXPECT_EQ(v.lanes(), 4);
  EXPECT_TRUE(v.is_vector());
  EXPECT_EQ(to_string(v.value_type()), "f32x4");
  Expr l = vector_load(BufferVar{0, ScalarType::f32}, imm_u32(8), 4);
  EXPECT_EQ(print(l), "vload<f32x4>(b0, 8u)");
  EXPECT_EQ(print(l * broadcast(imm_f32(2), 4)), "(vload<f32x4>(b0, 8u) * broadcast<f32x4>(2.0f))");
  EXPECT_EQ(print(extract_lane(v, 3)), "extract_lane<f32>(v, 3)");
  EXPECT_EQ(print(make_vector({imm_i32(1), imm_i32(2)})), "make_vector<i32x2>(1, 2)");
  EXPECT_EQ(print(cast(ScalarType::i32, v)), "i32x4(v)");
  EXPECT_EQ(cast(ScalarType::i32, v).lanes(), 4);
  Expr c = v < broadcast(imm_f32(0), 4);
  EXPECT_EQ(to_string(c.value_type()), "boolx4");
  EXPECT_EQ(select(c, v, -v).lanes(), 4);
  EXPECT_EQ(call(Intrinsic::isnan, {v}).value_type(), ValueType::vector(ScalarType::boolean, 4));
  EXPECT_EQ(print(vector_store(2, imm_u32(4), v)), "vstore<f32x4>(b2, 4u, v)\n");
}

TEST(KirNodes, SubgroupPrinting) {
  Expr x = var("x", ScalarType::f32);
  EXPECT_EQ(print(subgroup_reduce(ReduceOp::max, x)), "subgroup_reduce<max, f32>(x)");
  EXPECT_EQ(print(subgroup_broadcast(x, imm_u32(3))), "subgroup_broadcast<f32>(x, 3u)");
  EXPECT_EQ(print(subgroup_broadcast_first(x)), "subgroup_broadcast_first<f32>(x)");
  EXPECT_EQ(print(subgroup_shuffle(x, subgroup_invocation_id())),
            "subgroup_shuffle<f32>(x, subgroup.invocation_id)");
  EXPECT_EQ(print(subgroup_shuffle_xor(x, imm_u32(1))), "subgroup_shuffle_xor<f32>(x, 1u)");
  EXPECT_EQ(print(subgroup_size() + subgroup_id() + num_subgroups()),
            "((subgroup.size + subgroup.id) + subgroup.num_subgroups)");
  Expr v = var("v", ValueType::vector(ScalarType::i32, 2));
  EXPECT_EQ(print(subgroup_reduce(ReduceOp::add, v)), "subgroup_reduce<add, i32x2>(v)");
}

TEST(KirNodes, CooperativeMatrixPrinting) {
  Expr a = matrix_load(kA, BufferVar{0, ScalarType::f16}, imm_u32(0), imm_u32(16),
                       MatrixLayout::row_major);
  EXPECT_EQ(print(a), "coopmat_load<f16, 16x16, a>(b0, 0u, 16u, row_major)");
  Expr b = matrix_load(kB, SharedVar{1, ScalarType::f16}, imm_u32(0), imm_u32(16),
                       MatrixLayout::col_major);
  EXPECT_EQ(print(b), "coopmat_load<f16, 16x16, b>(s1, 0u, 16u, col_major)");
  Expr acc = var("acc", kC);
  Expr d = matrix_mul_add(a, b, acc);
  EXPECT_EQ(d.value_type(), kC);
  EXPECT_EQ(print(matrix_mul_add(var("x", kA), var("y", kB), acc)),
            "coopmat_muladd<f32, 16x16, accumulator>(x, y, acc)");
  EXPECT_EQ(print(matrix_fill(kC, imm_f32(0))), "coopmat_fill<f32, 16x16, accumulator>(0.0f)");
  EXPECT_EQ(print(matrix_scale(acc, imm_f32(0.5f))),
            "coopmat_scale<f32, 16x16, accumulator>(acc, 0.5f)");
  EXPECT_EQ(print(matrix_length(kA)), "coopmat_length<f16, 16x16, a>()");
  EXPECT_EQ(print(cast(ScalarType::f16, acc)), "coopmat<f16, 16x16, accumulator>(acc)");
  EXPECT_EQ(print(acc + acc), "(acc + acc)");
  EXPECT_EQ(print(matrix_store(BufferVar{2, ScalarType::f32}, imm_u32(0), imm_u32(16),
                               MatrixLayout::row_major, acc)),
            "coopmat_store<f32, 16x16, accumulator>(b2, 0u, 16u, row_major, acc)\n");
  EXPECT_EQ(print(declare_var(acc, matrix_fill(kC, imm_f32(1)))),
            "var acc: coopmat<f32, 16x16, accumulator> = "
            "coopmat_fill<f32, 16x16, accumulator>(1.0f)\n");
}

TEST(KirNodes, GemmKernelVerifiesAndPrints) {
  Kernel k = kir_test::coopmat_gemm_kernel();
  ASSERT_TRUE(verify(k).is_ok()) << verify(k).message();
  std::string text = print(k);
  EXPECT_NE(text.find("coopmat_muladd<f32, 16x16, accumulator>(coopmat_load<f16, 16x16, a>(b0, "
                      "((m0 * pc[2]) + (kk * 16u)), pc[2], row_major)"),
            std::string::npos)
      << text;
  EXPECT_TRUE(verify(kir_test::vector_axpy_kernel()).is_ok());
  EXPECT_TRUE(verify(kir_test::subgroup_kernel()).is_ok());
}

TEST(KirNodes, VerifierRejectsMisuse) {
  Kernel k;
  k.name = "bad";
  k.workgroup_size[0] = 32;
  BufferVar a = k.add_buffer("a", ScalarType::f16, true);
  BufferVar c = k.add_buffer("c", ScalarType::f32, false, true);
  Expr ld = matrix_load(kA, a, imm_u32(0), imm_u32(16), MatrixLayout::row_major);
  // Divergent control flow around a cooperative-matrix operation.
  Expr i = var("i", ScalarType::u32);
  k.body = let(i, local_id(0),
               if_then(i < imm_u32(4), matrix_store(c, imm_u32(0), imm_u32(16),
                                                    MatrixLayout::row_major,
                                                    matrix_fill(kC, imm_f32(0)))));
  EXPECT_NE(verify(k).message().find("may diverge within a subgroup"), std::string::npos)
      << verify(k).message();
  // A uniform condition (the workgroup id) is fine.
  k.body = if_then(workgroup_id(0) < imm_u32(4),
                   matrix_store(c, imm_u32(0), imm_u32(16), MatrixLayout::row_major,
                                matrix_fill(kC, imm_f32(0))));
  EXPECT_TRUE(verify(k).is_ok()) << verify(k).message();
  // Strides that are not 16-byte multiples are the kernel IR's to allow (the C backend takes
  // them; the SPIR-V emitter refuses them: SpirvNodes.CooperativeMatrixStridesOfWholeUnits);
  // stores to read-only buffers are not.
  k.body = matrix_store(c, imm_u32(0), imm_u32(6), MatrixLayout::row_major,
                        matrix_fill(kC, imm_f32(0)));
  EXPECT_TRUE(verify(k).is_ok()) << verify(k).message();
  k.body = let(var("m", kA), ld,
               vector_store(a, imm_u32(0), broadcast(fimm(ScalarType::f16, 1), 4)));
  EXPECT_NE(verify(k).message().find("vector store to readonly buffer b0"), std::string::npos);
  k.body = vector_store(c, imm_u32(2), broadcast(imm_f32(1), 4));
  EXPECT_NE(verify(k).message().find("index 2 is not a multiple of its 4 lanes"),
            std::string::npos);
  // A broadcast from a lane that differs between invocations.
  k.body = store(c, global_id(0),
                 subgroup_broadcast(imm_f32(1), subgroup_invocation_id() ^ imm_u32(1)));
  EXPECT_NE(verify(k).message().find("lane may differ between invocations"), std::string::npos)
      << verify(k).message();
  // A vector variable used with another lane count.
  k.body = let(var("v", ValueType::vector(ScalarType::f32, 4)), broadcast(imm_f32(1), 4),
               vector_store(c, imm_u32(0), var("v", ValueType::vector(ScalarType::f32, 2))));
  EXPECT_NE(verify(k).message().find("used as f32x2 but declared f32x4"), std::string::npos)
      << verify(k).message();
}

TEST(KirNodes, SimplifierAndMutator) {
  Expr x = var("x", ScalarType::i32);
  EXPECT_TRUE(simplify(extract_lane(broadcast(x, 4), 2)).same_as(x));
  EXPECT_TRUE(simplify(extract_lane(make_vector({x, imm_i32(3)}), 0)).same_as(x));
  EXPECT_EQ(print(simplify(extract_lane(make_vector({x, imm_i32(1) + imm_i32(2)}), 1))), "3");
  Expr v = var("v", ValueType::vector(ScalarType::i32, 4));
  Expr d = v - v; // no scalar zero for a vector
  EXPECT_TRUE(simplify(d).same_as(d));
  EXPECT_EQ(print(simplify(vector_load(BufferVar{0, ScalarType::i32}, x * imm_i32(1), 4))),
            "vload<i32x4>(b0, x)");
  Kernel k = kir_test::coopmat_gemm_kernel();
  EXPECT_TRUE(simplify(k).body.same_as(k.body)); // nothing to fold: the same nodes come back
  Kernel s = kir_test::subgroup_kernel();
  EXPECT_TRUE(simplify(s).body.same_as(s.body));
  EXPECT_EQ(loop_iterations(k.body), -1); // K is a push constant
}

TEST(KirNodes, FactoriesAssertOnMisuse) {
  Expr v4 = var("v", ValueType::vector(ScalarType::f32, 4));
  Expr v2 = var("w", ValueType::vector(ScalarType::f32, 2));
  EXPECT_DEATH(v4 + v2, "operand types differ");
  EXPECT_DEATH(broadcast(imm_f32(1), 5), "2 to 4 lanes");
  EXPECT_DEATH(extract_lane(v2, 2), "lane out of range");
  EXPECT_DEATH(store(0, imm_u32(0), v4), "must be a scalar");
  EXPECT_DEATH(matrix_mul_add(var("a", kB), var("b", kA), var("c", kC)), "A, B and accumulator");
  EXPECT_DEATH(min(var("c", kC), var("d", kC)), "only add/sub/mul/div");
  EXPECT_DEATH(subgroup_reduce(ReduceOp::add, imm_bool(true)), "number scalar or vector");
  EXPECT_DEATH(subgroup_shuffle(imm_f32(1), imm_i32(0)), "lane must be u32");
}

TEST(KirNodes, PrintsVectorKernel) {
  EXPECT_EQ(print(kir_test::vector_axpy_kernel()),
            "kernel vector_axpy workgroup(64, 1, 1) push_constants 1\n"
            "  buffer b0 a: f32 readonly\n"
            "  buffer b1 b: f32 readonly\n"
            "  buffer b2 out: f32 writeonly\n"
            "{\n"
            "  let i: u32 = global_id.x\n"
            "  if ((i < pc[0])) {\n"
            "    let e: u32 = (i * 4u)\n"
            "    vstore<f32x4>(b2, e, ((vload<f32x4>(b0, e) * broadcast<f32x4>(2.0f)) + "
            "vload<f32x4>(b1, e)))\n"
            "  }\n"
            "}\n");
}
