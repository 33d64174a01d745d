// Kernel IR: factories, printer, simplifier, mutator identity and verifier.
#include "kir/kir.h"
#include "kir/target.h"

#include <gtest/gtest.h>

using namespace kiln::kir;

namespace {

Kernel add_kernel() {
  Kernel k;
  k.name = "add";
  k.workgroup_size[0] = 64;
  k.push_constant_count = 1;
  BufferVar a = k.add_buffer("a", ScalarType::f32, true);
  BufferVar b = k.add_buffer("b", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  Expr i = var("i", ScalarType::u32);
  k.body = let(i, global_id(0),
               if_then(i < push_const(0), store(out, i, load(a, i) + load(b, i))));
  return k;
}

} // namespace

TEST(Kir, PrintsKernel) {
  EXPECT_EQ(print(add_kernel()), "kernel add workgroup(64, 1, 1) push_constants 1\n"
                                 "  buffer b0 a: f32 readonly\n"
                                 "  buffer b1 b: f32 readonly\n"
                                 "  buffer b2 out: f32 writeonly\n"
                                 "{\n"
                                 "  let i: u32 = global_id.x\n"
                                 "  if ((i < pc[0])) {\n"
                                 "    b2[i] = (b0[i] + b1[i])\n"
                                 "  }\n"
                                 "}\n");
}

TEST(Kir, PrintsExpressions) {
  Expr x = var("x", ScalarType::f32);
  EXPECT_EQ(print(call(Intrinsic::fma, {x, imm_f32(2), fimm(ScalarType::f32, 0.5)})),
            "fma(x, 2.0f, 0.5f)");
  EXPECT_EQ(print(select(x < imm_f32(0), -x, x)), "select((x < 0.0f), (0.0f - x), x)");
  EXPECT_EQ(print(cast(ScalarType::i64, imm_u32(7))), "i64(7u)");
  EXPECT_EQ(print(max(imm_i32(1), imm_i32(-2))), "max(1, -2)");
  EXPECT_EQ(print(!imm_bool(true) && imm_bool(false)), "(!true && false)");
}

TEST(Kir, ImmediatesWrapToTheirType) {
  EXPECT_EQ(imm(ScalarType::u8, 300).as<IntImm>()->value, 44);
  EXPECT_EQ(imm(ScalarType::i8, 200).as<IntImm>()->value, -56);
  EXPECT_EQ(imm(ScalarType::u32, -1).as<IntImm>()->value, 4294967295);
  EXPECT_EQ(fimm(ScalarType::f16, 0.1).as<FloatImm>()->value, 0.0999755859375);
}

TEST(Kir, SimplifiesIdentities) {
  Expr x = var("x", ScalarType::i32);
  EXPECT_TRUE(simplify((x + 0) * 1).same_as(x));
  EXPECT_EQ(print(simplify(imm_i32(2) * imm_i32(3))), "6");
  EXPECT_EQ(print(simplify(x * 0)), "0");
  EXPECT_EQ(print(simplify((x + 3) + 4)), "(x + 7)");
  EXPECT_EQ(print(simplify((x * 3) * 4)), "(x * 12)");
  EXPECT_EQ(print(simplify(imm_i32(5) + x)), "(x + 5)");
  EXPECT_EQ(print(simplify((x - 2) + 2)), "x");
  EXPECT_EQ(print(simplify(imm_i32(-7) / imm_i32(2))), "-3");
  EXPECT_EQ(print(simplify(imm_i32(-7) % imm_i32(2))), "-1");
  EXPECT_EQ(print(simplify(imm_u32(1) - imm_u32(2))), "4294967295u");
  EXPECT_EQ(print(simplify(x / imm_i32(0))), "(x / 0)"); // left for the device
}

TEST(Kir, SimplifiesConditionsAndCasts) {
  Expr x = var("x", ScalarType::f32);
  EXPECT_TRUE(simplify(select(imm_i32(1) < imm_i32(2), x, imm_f32(0))).same_as(x));
  EXPECT_EQ(print(simplify(cast(ScalarType::f32, imm_i32(3)))), "3.0f");
  EXPECT_EQ(print(simplify(cast(ScalarType::u8, imm_i32(-1)))), "255:u8");
  EXPECT_EQ(print(simplify(cast(ScalarType::boolean, imm_f32(0.5f)))), "true");
  EXPECT_EQ(print(simplify(x * imm_f32(1))), "x");
  // x + 0.0 is not x for x = -0.0: left alone.
  EXPECT_EQ(print(simplify(x + imm_f32(0))), "(x + 0.0f)");
  EXPECT_EQ(print(simplify(imm_f32(1.5f) * imm_f32(2))), "3.0f");
}

TEST(Kir, SimplifiesStatements) {
  Kernel k = add_kernel();
  BufferVar out = k.buffer(2);
  Expr i = var("j", ScalarType::i32);
  Stmt s = block({if_then(imm_bool(false), store(out, imm_u32(0), imm_f32(1))),
                  for_loop(i, imm_i32(0), imm_i32(0), store(out, imm_u32(0), imm_f32(2))),
                  if_then(imm_bool(true), store(out, imm_u32(1), imm_f32(3) * imm_f32(1)))});
  EXPECT_EQ(print(simplify(s)), "b2[1u] = 3.0f\n");
}

TEST(Kir, MutatorKeepsUnchangedNodes) {
  Kernel k = add_kernel();
  EXPECT_TRUE(simplify(k.body).same_as(k.body));
  class Rename : public Mutator {
  protected:
    using Mutator::visit;
    Expr visit(const PushConst *, const Expr &) override { return imm_u32(10); }
  };
  Stmt changed = Rename().mutate(k.body);
  EXPECT_FALSE(changed.same_as(k.body));
  EXPECT_NE(print(changed).find("(i < 10u)"), std::string::npos);
}

TEST(Kir, VisitorCountsLoads) {
  class CountLoads : public Visitor {
  public:
    using Visitor::visit;
    int n = 0;
    void visit(const Load *l) override {
      ++n;
      Visitor::visit(l);
    }
  } c;
  c.visit(add_kernel().body);
  EXPECT_EQ(c.n, 2);
}

TEST(Kir, VerifierAcceptsGoodKernel) {
  kiln::Status s = verify(add_kernel());
  EXPECT_TRUE(s.is_ok()) << s.message();
}

TEST(Kir, VerifierRejectsBadBufferIndex) {
  Kernel k = add_kernel();
  k.body = store(5, imm_u32(0), imm_f32(1));
  kiln::Status s = verify(k);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("buffer b5"), std::string::npos) << s.message();
}

TEST(Kir, VerifierRejectsTypeMismatch) {
  Kernel k = add_kernel();
  k.body = store(2, imm_u32(0), imm_i32(1)); // f32 buffer
  kiln::Status s = verify(k);
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("with type i32"), std::string::npos) << s.message();

  Expr wrong = load(0, ScalarType::f16, imm_u32(0)); // buffer 0 holds f32
  k.body = store(2, imm_u32(0), select(wrong == fimm(ScalarType::f16, 0), imm_f32(0), imm_f32(1)));
  EXPECT_FALSE(verify(k).is_ok());
}

TEST(Kir, VerifierChecksScopesAndPermissions) {
  Kernel k = add_kernel();
  Expr x = var("x", ScalarType::f32), n = var("n", ScalarType::i32);
  k.body = store(2, imm_u32(0), x);
  EXPECT_NE(verify(k).message().find("out of scope"), std::string::npos);
  k.body = for_loop(n, imm_i32(0), imm_i32(4), assign(n, n + 1));
  EXPECT_NE(verify(k).message().find("immutable"), std::string::npos);
  k.body = store(0, imm_u32(0), imm_f32(1));
  EXPECT_NE(verify(k).message().find("readonly"), std::string::npos);
  k.body = store(2, imm_u32(0), load(2, ScalarType::f32, imm_u32(0)));
  EXPECT_NE(verify(k).message().find("writeonly"), std::string::npos);
  k.body = store(1 + 1, imm_u32(0), cast(ScalarType::f32, push_const(3)));
  EXPECT_NE(verify(k).message().find("push constant slot 3"), std::string::npos);
  // DeclareVar is scoped to the rest of its block.
  k.body = block({block({declare_var(x, imm_f32(0))}), store(2, imm_u32(0), x)});
  EXPECT_FALSE(verify(k).is_ok());
  k.body = block({declare_var(x, imm_f32(0)), assign(x, x + imm_f32(1)), store(2, imm_u32(0), x)});
  EXPECT_TRUE(verify(k).is_ok()) << verify(k).message();
}

TEST(Kir, TargetPresets) {
  ASSERT_NE(find_target("vulkan"), nullptr);
  ASSERT_NE(find_target("vulkan-lavapipe"), nullptr);
  ASSERT_NE(find_target("vulkan-nvidia"), nullptr);
  EXPECT_EQ(find_target("nope"), nullptr);
  EXPECT_FALSE(find_target("vulkan")->float16);
  EXPECT_TRUE(find_target("vulkan-lavapipe")->float64);
  EXPECT_EQ(find_target("vulkan-lavapipe")->subgroup_size, 8u);
  EXPECT_TRUE(find_target("vulkan-nvidia")->cooperative_matrix);
}

// A sum over n elements in one invocation: acc += in[r] for r < n.
static Kernel sum_kernel(int64_t n) {
  Kernel k;
  k.name = "sum";
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  Expr acc = var("acc", ScalarType::f32), r = var("r", ScalarType::i32);
  k.body = block({declare_var(acc, imm_f32(0)),
                  for_loop(r, imm_i32(0), imm_i32(static_cast<int32_t>(n)),
                           assign(acc, acc + load(in, r))),
                  store(out, imm_i32(0), acc)});
  return k;
}

TEST(Kir, CountsLoopIterationsPerInvocation) {
  EXPECT_EQ(loop_iterations(sum_kernel(100000).body), 100000);
  Expr i = var("i", ScalarType::i32), j = var("j", ScalarType::i32);
  Expr acc = var("acc", ScalarType::i32);
  // 10 outer iterations, each running 20 inner ones: 10 + 200 back-edges.
  Stmt nest = for_loop(i, imm_i32(0), imm_i32(10),
                       for_loop(j, imm_i32(0), imm_i32(20), assign(acc, acc + i * j)));
  EXPECT_EQ(loop_iterations(block({declare_var(acc, imm_i32(0)), nest})), 210);
  // A loop whose extent is only known at run time has no count.
  Stmt dynamic = for_loop(i, imm_i32(0), cast(ScalarType::i32, push_const(0)), assign(acc, acc + i));
  EXPECT_EQ(loop_iterations(block({declare_var(acc, imm_i32(0)), dynamic})), -1);
}

TEST(Kir, UnrollsLongInnermostLoops) {
  Kernel k = sum_kernel(100003);
  Kernel u = simplify(unroll_long_loops(k, 1024, 8));
  EXPECT_TRUE(verify(u).is_ok()) << verify(u).message();
  // 100003 = 8 * 12500 + 3: the loop runs 12500 times, three iterations follow it.
  EXPECT_EQ(loop_iterations(u.body), 12500);
  const std::string text = print(u);
  EXPECT_NE(text.find("r.unrolled"), std::string::npos) << text;
  // Short loops are left alone.
  Kernel s = unroll_long_loops(sum_kernel(100), 1024, 8);
  EXPECT_EQ(loop_iterations(s.body), 100);
  EXPECT_EQ(print(s), print(sum_kernel(100)));
}
