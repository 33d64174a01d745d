// Kernel IR structural hash and equality (the compiler's kernel de-duplication key).
#include "kir/kir.h"

#include <gtest/gtest.h>

#include <functional>

using namespace kiln::kir;

namespace {

// A kernel that uses every expression and statement kind; `v` renames its variables and
// buffers, `tweak` (0 = none) changes one detail so the kernel differs structurally.
Kernel every_kind(const std::string &v, int tweak = 0) {
  Kernel k;
  k.name = "k" + v;
  k.workgroup_size[0] = tweak == 1 ? 32 : 64;
  k.push_constant_count = 2;
  BufferVar in = k.add_buffer("in" + v, ScalarType::f32, true);
  BufferVar out = k.add_buffer("out" + v, tweak == 2 ? ScalarType::i32 : ScalarType::f32);
  SharedVar tile = k.add_shared("tile" + v, ScalarType::f32, tweak == 3 ? 128 : 64);
  Expr i = var("i" + v, ScalarType::u32), j = var("j" + v, ScalarType::u32);
  Expr acc = var("acc" + v, ScalarType::f32), f = var("f" + v, ScalarType::f32);
  Expr x = load(in, i);
  Expr cond = logical_and(cmp(tweak == 4 ? CmpOp::le : CmpOp::lt, i, push_const(0)),
                          logical_or(!imm_bool(false), builtin(BuiltinKind::local_id_x) == 0u));
  Expr value = select(cond, call(Intrinsic::exp, {x}),
                      cast(ScalarType::f32, i) * fimm(ScalarType::f32, tweak == 5 ? 0.25 : 0.5));
  Stmt loop = for_loop(j, imm_u32(0), push_const(1),
                       assign(acc, acc + load_shared(tile, j % imm_u32(tweak == 6 ? 32 : 64))));
  auto put = [&](Expr e) { return store(out, i, tweak == 2 ? cast(ScalarType::i32, e) : e); };
  std::vector<Stmt> body{store_shared(tile, local_id(0), x), barrier(), declare_var(acc, f), loop,
                         if_then(cond, put(acc), tweak == 7 ? Stmt() : put(value))};
  k.body = let(i, global_id(0), let(f, value, block(std::move(body))));
  return k;
}

} // namespace

TEST(KirHash, NamesDoNotMatter) {
  const Kernel a = every_kind("a"), b = every_kind("b");
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_TRUE(structural_equal(a, a));
}

TEST(KirHash, EveryDifferenceIsSeen) {
  const Kernel base = every_kind("a");
  for (int tweak = 1; tweak <= 7; ++tweak) {
    const Kernel other = every_kind("a", tweak);
    EXPECT_FALSE(structural_equal(base, other)) << "tweak " << tweak;
    EXPECT_NE(structural_hash(base), structural_hash(other)) << "tweak " << tweak;
  }
  Kernel ro = base;
  ro.buffers[1].writeonly = true;
  EXPECT_FALSE(structural_equal(base, ro));
  Kernel pc = base;
  pc.push_constant_count = 3;
  EXPECT_FALSE(structural_equal(base, pc));
}

TEST(KirHash, VariablesCompareUpToConsistentRenaming) {
  Expr x = var("x", ScalarType::i32), y = var("y", ScalarType::i32);
  // x + y and y + x: each is a renaming of the other.
  EXPECT_TRUE(structural_equal(x + y, y + x));
  // x + x is not a renaming of x + y.
  EXPECT_FALSE(structural_equal(x + x, x + y));
  EXPECT_NE(structural_hash(x + x), structural_hash(x + y));
  // Same name, different type.
  EXPECT_FALSE(structural_equal(x, var("x", ScalarType::u32)));
}

TEST(KirHash, ConstantsAndOperators) {
  Expr x = var("x", ScalarType::f32);
  EXPECT_FALSE(structural_equal(x + imm_f32(1) * x, x - imm_f32(1) * x));
  EXPECT_FALSE(structural_equal(fimm(ScalarType::f32, 0.0), fimm(ScalarType::f32, -0.0)));
  EXPECT_FALSE(structural_equal(imm_i32(1), imm_u32(1)));
  EXPECT_TRUE(structural_equal(imm_i64(7), imm_i64(7)));
  EXPECT_FALSE(structural_equal(call(Intrinsic::sin, {x}), call(Intrinsic::cos, {x})));
  // A statement list's length is part of the structure: [s, s] is not [s] followed by s.
  Stmt s = barrier();
  EXPECT_FALSE(structural_equal(block({s, s}), block({block({s}), s})));
}
