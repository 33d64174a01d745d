// SPIR-V emitter: every module goes through SPIRV-Tools' validator for Vulkan 1.2 and 1.3.
#include "kir/kir.h"
#include "kir/target.h"
#include "target/spirv/spirv.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.hpp>

using namespace kiln::kir;
using kiln::spirv::emit_spirv;

namespace {

const TargetDesc &lavapipe() { return *find_target("vulkan-lavapipe"); }
const TargetDesc &portable() { return *find_target("vulkan"); }

// Empty when valid; otherwise the validator's messages and the disassembly.
std::string validate(const std::vector<uint32_t> &words, spv_target_env env) {
  spvtools::SpirvTools tools(env);
  std::string messages;
  tools.SetMessageConsumer([&](spv_message_level_t, const char *, const spv_position_t &,
                               const char *m) { messages += std::string(m) + "\n"; });
  if (tools.Validate(words)) return "";
  std::string text;
  tools.Disassemble(words, &text, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES);
  return messages + text;
}

// Emits for `t`, validates for Vulkan 1.2 and 1.3, returns the requirements.
Requirements emit_valid(const Kernel &k, const TargetDesc &t = lavapipe()) {
  Requirements used;
  auto r = emit_spirv(k, t, &used);
  EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << print(k);
  if (!r.is_ok()) return used;
  EXPECT_EQ(validate(r.value(), SPV_ENV_VULKAN_1_2), "") << print(k);
  EXPECT_EQ(validate(r.value(), SPV_ENV_VULKAN_1_3), "") << print(k);
  return used;
}

std::string emit_error(const Kernel &k, const TargetDesc &t) {
  auto r = emit_spirv(k, t, nullptr);
  return r.is_ok() ? "" : r.status().message();
}

// out[i] = f(in[i]) for i < pc[0], over one input buffer of type `in_t`.
Kernel unary(ScalarType in_t, ScalarType out_t, const std::function<Expr(Expr)> &f) {
  Kernel k;
  k.name = "unary";
  k.workgroup_size[0] = 64;
  k.push_constant_count = 1;
  BufferVar in = k.add_buffer("in", in_t, true);
  BufferVar out = k.add_buffer("out", out_t, false, true);
  Expr i = var("i", ScalarType::u32);
  k.body = let(i, global_id(0), if_then(i < push_const(0), store(out, i, f(load(in, i)))));
  return k;
}

} // namespace

TEST(Spirv, BroadcastAdd) {
  // out[n, c, h, w] = a[n, c, h, w] + b[1, c, 1, 1], dims in push constants 0..3.
  Kernel k;
  k.name = "bcast_add";
  k.workgroup_size[0] = 128;
  k.push_constant_count = 4;
  BufferVar a = k.add_buffer("a", ScalarType::f32, true);
  BufferVar b = k.add_buffer("b", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  Expr i = var("i", ScalarType::u32), c = var("c", ScalarType::u32);
  Expr total = push_const(0) * push_const(1) * push_const(2) * push_const(3);
  Expr gid = global_id(0) + global_id(1) * imm_u32(65535 * 128);
  k.body = let(i, gid,
               if_then(i < total, let(c, (i / (push_const(2) * push_const(3))) % push_const(1),
                                      store(out, i, load(a, i) + load(b, c)))));
  Requirements used = emit_valid(k, portable());
  EXPECT_FALSE(used.float16 || used.int64 || used.storage8 || used.storage16);
  EXPECT_EQ(used.max_workgroup_invocations, 128u);
}

TEST(Spirv, RowReductionWithLoopAndVariable) {
  Kernel k;
  k.name = "row_sum";
  k.workgroup_size[0] = 32;
  k.push_constant_count = 2; // rows, cols
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  Expr row = var("row", ScalarType::i32), j = var("j", ScalarType::i32);
  Expr acc = var("acc", ScalarType::f32), cols = cast(ScalarType::i32, push_const(1));
  k.body = let(row, cast(ScalarType::i32, global_id(0)),
               if_then(row < cast(ScalarType::i32, push_const(0)),
                       block({declare_var(acc, imm_f32(0)),
                              for_loop(j, imm_i32(0), cols,
                                       assign(acc, acc + load(in, row * cols + j))),
                              store(out, row, acc)})));
  emit_valid(k, portable());
}

TEST(Spirv, NestedLoopsIfElseAndUnsignedCounter) {
  Kernel k;
  k.name = "nested";
  BufferVar out = k.add_buffer("out", ScalarType::i32, false, true);
  Expr x = var("x", ScalarType::u32), y = var("y", ScalarType::u32);
  Expr n = var("n", ScalarType::i32);
  k.body = block(
      {declare_var(n, imm_i32(0)),
       for_loop(x, imm_u32(0), imm_u32(4),
                for_loop(y, x, imm_u32(3),
                         if_then((x + y) % 2 == 0, assign(n, n + 1),
                                 if_then(y > x, assign(n, n - cast(ScalarType::i32, y)))))),
       store(out, imm_u32(0), n)});
  emit_valid(k, portable());
}

TEST(Spirv, SharedMemoryAndBarrier) {
  Kernel k;
  k.name = "rotate";
  k.workgroup_size[0] = 64;
  BufferVar in = k.add_buffer("in", ScalarType::f32, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32, false, true);
  SharedVar tile = k.add_shared("tile", ScalarType::f32, 64);
  SharedVar flags = k.add_shared("flags", ScalarType::boolean, 64);
  Expr l = var("l", ScalarType::u32), g = var("g", ScalarType::u32);
  Expr next = (l + 1) % 64;
  k.body = let(l, local_id(0),
               let(g, workgroup_id(0) * 64 + l,
                   block({store_shared(tile, l, load(in, g)),
                          store_shared(flags, l, load(in, g) > imm_f32(0)), barrier(),
                          store(out, g,
                                select(load_shared(flags, next), load_shared(tile, next),
                                       imm_f32(0)))})));
  Requirements used = emit_valid(k, portable());
  EXPECT_EQ(used.shared_memory_bytes, 64u * 4 + 64u * 4);
}

TEST(Spirv, Float16StorageOnlyNeedsNoFloat16Arithmetic) {
  Kernel k = unary(ScalarType::f16, ScalarType::f16, [](Expr x) {
    return cast(ScalarType::f16, cast(ScalarType::f32, x) * imm_f32(2));
  });
  Requirements used = emit_valid(k, portable());
  EXPECT_TRUE(used.storage16);
  EXPECT_FALSE(used.float16);
}

TEST(Spirv, Float16ArithmeticNeedsTheTarget) {
  Kernel k = unary(ScalarType::f16, ScalarType::f16,
                   [](Expr x) { return x * fimm(ScalarType::f16, 2) + x; });
  EXPECT_NE(emit_error(k, portable()).find("shaderFloat16"), std::string::npos);
  Requirements used = emit_valid(k, lavapipe());
  EXPECT_TRUE(used.float16 && used.storage16);
}

TEST(Spirv, Int64AndBoolBuffers) {
  Kernel k;
  k.name = "mixed";
  k.workgroup_size[0] = 16;
  BufferVar a = k.add_buffer("a", ScalarType::i64, true);
  BufferVar m = k.add_buffer("mask", ScalarType::boolean, true);
  BufferVar o = k.add_buffer("o", ScalarType::i64, false, true);
  BufferVar ob = k.add_buffer("ob", ScalarType::boolean, false, true);
  Expr i = var("i", ScalarType::u32);
  Expr v = load(a, i) * imm_i64(3) + cast(ScalarType::i64, i);
  k.body = let(i, global_id(0),
               block({store(o, i, select(load(m, i), v, imm_i64(-1) << imm_i64(40))),
                      store(ob, i, (load(a, i) > imm_i64(0)) && !load(m, i))}));
  Requirements used = emit_valid(k, portable());
  EXPECT_TRUE(used.int64 && used.storage8);
  EXPECT_FALSE(used.int8);
}

TEST(Spirv, EightBitStorageAndArithmetic) {
  Kernel storage = unary(ScalarType::u8, ScalarType::f32,
                         [](Expr x) { return cast(ScalarType::f32, x) * imm_f32(0.5f); });
  Requirements used = emit_valid(storage, portable());
  EXPECT_TRUE(used.storage8);
  EXPECT_FALSE(used.int8);
  Kernel arith = unary(ScalarType::i8, ScalarType::i8, [](Expr x) { return x + x; });
  used = emit_valid(arith, portable());
  EXPECT_TRUE(used.int8 && used.storage8);
}

TEST(Spirv, AllCastsValidate) {
  const ScalarType all[] = {ScalarType::boolean, ScalarType::i8,  ScalarType::u8,
                            ScalarType::i16,     ScalarType::u16, ScalarType::i32,
                            ScalarType::u32,     ScalarType::i64, ScalarType::u64,
                            ScalarType::f16,     ScalarType::f32, ScalarType::f64};
  for (ScalarType from : all)
    for (ScalarType to : all) {
      SCOPED_TRACE(std::string(to_string(from)) + " -> " + to_string(to));
      emit_valid(unary(from, to, [&](Expr x) { return cast(to, x); }));
    }
}

TEST(Spirv, AllIntrinsicsValidate) {
  for (int f = 0; f <= static_cast<int>(Intrinsic::isinf); ++f) {
    Intrinsic fn = static_cast<Intrinsic>(f);
    for (ScalarType t : {ScalarType::f32, ScalarType::f16}) {
      SCOPED_TRACE(std::string(to_string(fn)) + " " + to_string(t));
      bool predicate = fn == Intrinsic::isnan || fn == Intrinsic::isinf;
      emit_valid(unary(t, predicate ? ScalarType::boolean : t, [&](Expr x) {
        std::vector<Expr> args(arity(fn), x);
        return call(fn, args);
      }));
    }
  }
  for (ScalarType t : {ScalarType::i32, ScalarType::u32, ScalarType::i64, ScalarType::i16}) {
    emit_valid(unary(t, t, [](Expr x) { return call(Intrinsic::abs, {x}); }));
    emit_valid(unary(t, t, [](Expr x) { return call(Intrinsic::sign, {x}); }));
  }
}

TEST(Spirv, AllBinaryOpsValidate) {
  for (ScalarType t : {ScalarType::f32, ScalarType::f16, ScalarType::f64, ScalarType::i32,
                       ScalarType::u32, ScalarType::i64, ScalarType::u8, ScalarType::i16}) {
    for (int o = 0; o <= static_cast<int>(BinOp::shr); ++o) {
      BinOp op = static_cast<BinOp>(o);
      bool float_only = op == BinOp::pow;
      bool int_only = op >= BinOp::bit_and;
      if ((float_only && !is_float(t)) || (int_only && is_float(t))) continue;
      if (op == BinOp::pow && t == ScalarType::f64) continue; // an error, tested below
      SCOPED_TRACE(std::string(to_string(op)) + " " + to_string(t));
      emit_valid(unary(t, t, [&](Expr x) { return binary(op, x, x); }));
      emit_valid(unary(t, ScalarType::boolean, [&](Expr x) { return x <= x || x != x; }));
    }
  }
}

TEST(Spirv, Float64) {
  Kernel ok = unary(ScalarType::f64, ScalarType::f64,
                    [](Expr x) { return call(Intrinsic::sqrt, {x}) + fimm(ScalarType::f64, 0.1); });
  EXPECT_TRUE(emit_valid(ok).float64);
  EXPECT_NE(emit_error(ok, portable()).find("shaderFloat64"), std::string::npos);
  Kernel exp = unary(ScalarType::f64, ScalarType::f64,
                     [](Expr x) { return call(Intrinsic::exp, {x}); });
  EXPECT_NE(emit_error(exp, lavapipe()).find("exp on f64"), std::string::npos);
}

TEST(Spirv, TargetLimits) {
  Kernel k = unary(ScalarType::f32, ScalarType::f32, [](Expr x) { return x; });
  k.workgroup_size[0] = 256;
  EXPECT_NE(emit_error(k, portable()).find("exceeds"), std::string::npos);
  emit_valid(k, lavapipe());
  k.workgroup_size[0] = 64;
  k.add_shared("big", ScalarType::f32, 16384);
  k.body = block({store_shared(k.shared_array(0), imm_u32(0), imm_f32(1)), k.body});
  EXPECT_NE(emit_error(k, portable()).find("shared memory"), std::string::npos);
  k.push_constant_count = 40;
  EXPECT_NE(emit_error(k, lavapipe()).find("push constant"), std::string::npos);
}

TEST(Spirv, ValidatorCatchesBrokenModules) {
  // Guards the other tests against a validator that accepts everything.
  Kernel k = unary(ScalarType::f32, ScalarType::f32, [](Expr x) { return x + x; });
  auto r = emit_spirv(k, lavapipe(), nullptr);
  ASSERT_TRUE(r.is_ok());
  std::vector<uint32_t> words = r.value();
  ASSERT_EQ(validate(words, SPV_ENV_VULKAN_1_2), "");
  words.resize(words.size() - 1); // drop OpFunctionEnd
  EXPECT_NE(validate(words, SPV_ENV_VULKAN_1_2), "");
  EXPECT_EQ(words[0], 0x07230203u);
  EXPECT_EQ(words[1], 0x00010500u);
}

TEST(Spirv, RejectsKernelsThatFailVerification) {
  Kernel k = unary(ScalarType::f32, ScalarType::f32, [](Expr x) { return x; });
  k.body = store(9, imm_u32(0), imm_f32(0));
  EXPECT_NE(emit_error(k, lavapipe()).find("buffer b9"), std::string::npos);
}
