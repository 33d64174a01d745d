// SPIR-V emitter: vector, subgroup and cooperative-matrix kernels. Vector and subgroup modules
// pass SPIRV-Tools' validator for Vulkan 1.2 and 1.3. Debian 12's SPIRV-Tools (2023.1) predates
// SPV_KHR_cooperative_matrix (it knows only the NV extension), so cooperative-matrix modules
// are checked structurally here: capabilities, extension, memory model and opcodes.
#include "kir/kir.h"
#include "kir/target.h"
#include "kir_test_kernels.h"
#include "target/spirv/spirv.h"

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.hpp>
#include <spirv/unified1/spirv.hpp>

#include <cstdlib>
#include <fstream>
#include <set>

using namespace kiln::kir;
using kiln::spirv::emit_spirv;

namespace {

const TargetDesc &lavapipe() { return *find_target("vulkan-lavapipe"); }
const TargetDesc &nvidia() { return *find_target("vulkan-nvidia"); }

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

std::vector<uint32_t> emit_ok(const Kernel &k, const TargetDesc &t, Requirements *used) {
  auto r = emit_spirv(k, t, used);
  EXPECT_TRUE(r.is_ok()) << r.status().message() << "\n" << print(k);
  return r.is_ok() ? r.value() : std::vector<uint32_t>();
}

Requirements emit_valid(const Kernel &k, const TargetDesc &t = lavapipe()) {
  Requirements used;
  std::vector<uint32_t> words = emit_ok(k, t, &used);
  if (words.empty()) return used;
  EXPECT_EQ(validate(words, SPV_ENV_VULKAN_1_2), "") << print(k);
  EXPECT_EQ(validate(words, SPV_ENV_VULKAN_1_3), "") << print(k);
  return used;
}

std::string emit_error(const Kernel &k, const TargetDesc &t) {
  auto r = emit_spirv(k, t, nullptr);
  return r.is_ok() ? "" : r.status().message();
}

// Opcodes, capabilities, extensions and the memory model of a module.
struct Module {
  std::set<uint32_t> opcodes, capabilities;
  std::set<std::string> extensions;
  uint32_t memory_model = ~0u;
  std::vector<std::vector<uint32_t>> instructions;
};

Module parse(const std::vector<uint32_t> &w) {
  Module m;
  for (size_t i = 5; i < w.size();) {
    uint32_t count = w[i] >> 16, opcode = w[i] & 0xffff;
    if (count == 0 || i + count > w.size()) {
      ADD_FAILURE() << "malformed instruction at word " << i;
      break;
    }
    m.opcodes.insert(opcode);
    m.instructions.emplace_back(w.begin() + i, w.begin() + i + count);
    if (opcode == spv::OpCapability) m.capabilities.insert(w[i + 1]);
    if (opcode == spv::OpExtension)
      m.extensions.insert(reinterpret_cast<const char *>(&w[i + 1]));
    if (opcode == spv::OpMemoryModel) m.memory_model = w[i + 2];
    i += count;
  }
  return m;
}

// Cooperative-matrix modules also go through an external validator when KILN_SPIRV_VAL names a
// spirv-val new enough to know SPV_KHR_cooperative_matrix (SPIRV-Tools 2023.3 or later):
// "" when valid or when no validator is given.
std::string validate_external(const std::vector<uint32_t> &words, const std::string &name) {
  const char *val = std::getenv("KILN_SPIRV_VAL");
  if (!val || !*val) return "";
  std::string path = ::testing::TempDir() + "kiln_" + name + ".spv";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(words.data()),
             static_cast<std::streamsize>(words.size() * 4));
  std::string cmd = std::string(val) + " --target-env vulkan1.3 " + path;
  return std::system(cmd.c_str()) == 0 ? "" : cmd + " failed";
}

// A kernel exercising every vector form: 2/3/4 lanes, casts, selects, intrinsics, pow.
Kernel vector_forms_kernel() {
  Kernel k;
  k.name = "vector_forms";
  k.workgroup_size[0] = 64;
  BufferVar a = k.add_buffer("a", ScalarType::f32, true);
  BufferVar h = k.add_buffer("h", ScalarType::f16, true);
  BufferVar out = k.add_buffer("out", ScalarType::f32);
  BufferVar iout = k.add_buffer("iout", ScalarType::i32, false, true);
  const ValueType f4 = ValueType::vector(ScalarType::f32, 4);
  Expr i = var("i", ScalarType::u32), v = var("v", f4), w = var("w", f4);
  Expr e = i * 4;
  Expr three = vector_load(a, e, 3);
  Expr two = make_vector({extract_lane(three, 0), extract_lane(three, 2)});
  Expr body = select(v > broadcast(imm_f32(0), 4), call(Intrinsic::exp, {v}),
                     pow(v, broadcast(imm_f32(2), 4)));
  k.body = let(
      i, global_id(0),
      let(v, vector_load(a, e, 4),
          block({declare_var(w, body),
                 assign(w, w + cast(ScalarType::f32, vector_load(h, e, 4))),
                 vector_store(out, e, call(Intrinsic::erf, {w})),
                 vector_store(out, e + 4, cast(ScalarType::f32, cast(ScalarType::i32, two)) *
                                              broadcast(extract_lane(w, 1), 2)),
                 vector_store(iout, e, cast(ScalarType::i32, three)),
                 store(out, e + 8, extract_lane(subgroup_reduce(ReduceOp::min, v), 3))})));
  return k;
}

} // namespace

TEST(SpirvNodes, VectorKernelsValidate) {
  Requirements used = emit_valid(kir_test::vector_axpy_kernel());
  EXPECT_EQ(used.subgroup_operations, 0u);
  EXPECT_FALSE(used.cooperative_matrix);
  used = emit_valid(vector_forms_kernel());
  EXPECT_TRUE(used.storage16);
  EXPECT_EQ(used.subgroup_operations, subgroup_ops::basic | subgroup_ops::arithmetic);
}

TEST(SpirvNodes, VectorLoadIsOneVec4Access) {
  Requirements used;
  Module m = parse(emit_ok(kir_test::vector_axpy_kernel(), lavapipe(), &used));
  // Two variables on each vector-accessed binding, both Aliased; the loads and the store
  // are OpLoad/OpStore of a 4 x f32 vector.
  uint32_t vec4 = 0, aliased = 0, loads_of_vec4 = 0, stores = 0, f32 = 0;
  for (const auto &ins : m.instructions) {
    uint32_t op = ins[0] & 0xffff;
    if (op == spv::OpTypeFloat && ins[2] == 32) f32 = ins[1];
    if (op == spv::OpTypeVector && ins[2] == f32 && ins[3] == 4) vec4 = ins[1];
    if (op == spv::OpDecorate && ins[2] == spv::DecorationAliased) ++aliased;
    if (op == spv::OpLoad && ins[1] == vec4) ++loads_of_vec4;
    if (op == spv::OpStore) ++stores;
  }
  EXPECT_NE(vec4, 0u);
  EXPECT_EQ(loads_of_vec4, 2u);
  EXPECT_EQ(stores, 1u);
  EXPECT_EQ(aliased, 6u); // a, b, out: the scalar variable and the vec4 view each
}

TEST(SpirvNodes, SharedArrayOfVectorsIsOneVec4Load) {
  Requirements used;
  Module m = parse(emit_ok(kir_test::shared_vector_kernel(), lavapipe(), &used));
  EXPECT_EQ(used.shared_memory_bytes, 1024u);
  // The Workgroup variable is an array of 64 vec4; the vector read is one OpLoad of a vec4,
  // the four scalar stores go through two-index access chains (vector, lane).
  uint32_t f32 = 0, vec4 = 0, shared_loads_of_vec4 = 0, array_of_vec4 = 0, lane_chains = 0;
  std::set<uint32_t> workgroup_vars, shared_pointers;
  for (const auto &ins : m.instructions) {
    uint32_t op = ins[0] & 0xffff;
    if (op == spv::OpTypeFloat && ins[2] == 32) f32 = ins[1];
    if (op == spv::OpTypeVector && ins[2] == f32 && ins[3] == 4) vec4 = ins[1];
    if (op == spv::OpTypeArray && vec4 != 0 && ins[2] == vec4) ++array_of_vec4;
    if (op == spv::OpVariable && ins[3] == spv::StorageClassWorkgroup) workgroup_vars.insert(ins[2]);
    if (op == spv::OpAccessChain && workgroup_vars.count(ins[3])) {
      shared_pointers.insert(ins[2]);
      if (ins.size() == 6) ++lane_chains; // base, vector index, lane index
    }
    if (op == spv::OpLoad && vec4 != 0 && ins[1] == vec4 && shared_pointers.count(ins[3]))
      ++shared_loads_of_vec4;
  }
  EXPECT_EQ(array_of_vec4, 1u);
  EXPECT_EQ(shared_loads_of_vec4, 1u);
  EXPECT_EQ(lane_chains, 4u);
  emit_valid(kir_test::shared_vector_kernel());
}

TEST(SpirvNodes, SubgroupKernelValidatesAndRecordsOperations) {
  Requirements used = emit_valid(kir_test::subgroup_kernel());
  EXPECT_EQ(used.subgroup_operations, subgroup_ops::basic | subgroup_ops::arithmetic |
                                          subgroup_ops::shuffle | subgroup_ops::ballot);
  // Every reduction, broadcast and shuffle form, on floats, unsigned and vectors.
  Kernel k;
  k.name = "subgroup_forms";
  k.workgroup_size[0] = 32;
  BufferVar f = k.add_buffer("f", ScalarType::f32);
  BufferVar u = k.add_buffer("u", ScalarType::u32);
  Expr g = global_id(0);
  Expr x = load(f, g), y = load(u, g);
  std::vector<Stmt> body;
  for (ReduceOp op : {ReduceOp::add, ReduceOp::mul, ReduceOp::min, ReduceOp::max}) {
    body.push_back(store(f, g, subgroup_reduce(op, x)));
    body.push_back(store(u, g, subgroup_reduce(op, y)));
  }
  body.push_back(store(f, g, subgroup_broadcast(x, imm_u32(0))));
  body.push_back(store(u, g, subgroup_shuffle(y, num_subgroups() - 1)));
  body.push_back(store(f, g, extract_lane(subgroup_shuffle_xor(broadcast(x, 2), imm_u32(2)), 1)));
  body.push_back(store(u, g, select(subgroup_broadcast_first(y > imm_u32(3)), y, y + 1)));
  k.body = block(body);
  emit_valid(k);
  EXPECT_NE(emit_error(k, *find_target("vulkan")).find("subgroup operations 0x1c"),
            std::string::npos)
      << emit_error(k, *find_target("vulkan"));
}

TEST(SpirvNodes, TwoAndThreeDimensionalGrids) {
  // out[z][y][x] = x + 100 y + 10000 z over a 3-D grid of 4 x 4 x 4 workgroups.
  for (int dims : {2, 3}) {
    Kernel k;
    k.name = "grid";
    k.workgroup_size[0] = 8;
    k.workgroup_size[1] = dims == 2 ? 8 : 4;
    k.workgroup_size[2] = dims == 3 ? 4 : 1;
    k.push_constant_count = 3;
    BufferVar out = k.add_buffer("out", ScalarType::u32, false, true);
    Expr x = global_id(0), y = global_id(1), z = global_id(2);
    Expr index = (z * push_const(1) + y) * push_const(0) + x;
    k.body = if_then(x < push_const(0) && y < push_const(1) && z < push_const(2),
                     store(out, index, x + y * 100 + z * 10000));
    Requirements used = emit_valid(k);
    EXPECT_EQ(used.max_workgroup_invocations, dims == 2 ? 64u : 128u);
  }
  Kernel big;
  big.name = "too_deep";
  big.workgroup_size[2] = 128;
  big.add_buffer("out", ScalarType::u32);
  big.body = store(0, global_id(2), global_id(2));
  EXPECT_NE(emit_error(big, nvidia()).find("workgroup size 128 on axis 2 exceeds"),
            std::string::npos);
}

TEST(SpirvNodes, CooperativeMatrixGemmForNvidia) {
  Requirements used;
  std::vector<uint32_t> words = emit_ok(kir_test::coopmat_gemm_kernel(), nvidia(), &used);
  ASSERT_FALSE(words.empty());
  EXPECT_EQ(validate_external(words, "coopmat_gemm"), "");
  EXPECT_TRUE(used.cooperative_matrix);
  EXPECT_TRUE(used.float16);
  EXPECT_TRUE(used.storage16);
  Module m = parse(words);
  EXPECT_TRUE(m.capabilities.count(6022)) << "CooperativeMatrixKHR";
  EXPECT_TRUE(m.capabilities.count(spv::CapabilityVulkanMemoryModel));
  EXPECT_TRUE(m.capabilities.count(spv::CapabilityFloat16));
  EXPECT_TRUE(m.extensions.count("SPV_KHR_cooperative_matrix"));
  EXPECT_EQ(m.memory_model, static_cast<uint32_t>(spv::MemoryModelVulkan));
  for (uint32_t op : {4456u, 4457u, 4458u, 4459u}) EXPECT_TRUE(m.opcodes.count(op)) << op;
  // Three matrix types (A, B, accumulator), each of subgroup scope.
  int types = 0;
  for (const auto &ins : m.instructions)
    if ((ins[0] & 0xffff) == 4456) ++types;
  EXPECT_EQ(types, 3);
}

TEST(SpirvNodes, CooperativeMatrixElementwiseForms) {
  Kernel k;
  k.name = "coopmat_forms";
  k.workgroup_size[0] = 32;
  BufferVar c = k.add_buffer("c", ScalarType::f32);
  BufferVar h = k.add_buffer("h", ScalarType::f16, false, true);
  BufferVar n = k.add_buffer("n", ScalarType::u32, false, true);
  k.add_shared("tile", ScalarType::f32, 256);
  const ValueType tc = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);
  Expr m = var("m", tc);
  Expr loaded = matrix_load(tc, c, imm_u32(0), imm_u32(16), MatrixLayout::col_major);
  Expr staged =
      matrix_load(tc, k.shared_array(0), imm_u32(0), imm_u32(16), MatrixLayout::row_major);
  k.body = let(m, matrix_scale(loaded + matrix_fill(tc, imm_f32(1)), imm_f32(0.5f)),
               block({matrix_store(k.shared_array(0), imm_u32(0), imm_u32(16),
                                   MatrixLayout::row_major, m * m - m),
                      barrier(),
                      matrix_store(h, imm_u32(0), imm_u32(16), MatrixLayout::row_major,
                                   cast(ScalarType::f16, staged / m)),
                      store(n, global_id(0), matrix_length(tc))}));
  Requirements used;
  std::vector<uint32_t> words = emit_ok(k, nvidia(), &used);
  EXPECT_EQ(validate_external(words, "coopmat_forms"), "");
  Module mod = parse(words);
  EXPECT_TRUE(used.cooperative_matrix);
  EXPECT_TRUE(mod.opcodes.count(spv::OpMatrixTimesScalar));
  EXPECT_TRUE(mod.opcodes.count(spv::OpFConvert));
  EXPECT_TRUE(mod.opcodes.count(4460)) << "OpCooperativeMatrixLengthKHR";
}

// Vulkan wants cooperative-matrix strides and offsets in whole 16-byte units: a constant one
// that is not is refused by the emitter, naming it (the kernel IR itself allows it).
TEST(SpirvNodes, CooperativeMatrixStridesOfWholeUnits) {
  Kernel k;
  k.name = "coopmat_stride";
  k.workgroup_size[0] = 32;
  BufferVar c = k.add_buffer("c", ScalarType::f32, false, true);
  const ValueType tc = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);
  k.body = matrix_store(c, imm_u32(0), imm_u32(6), MatrixLayout::row_major,
                        matrix_fill(tc, imm_f32(0)));
  ASSERT_TRUE(verify(k).is_ok()) << verify(k).message();
  std::string err = emit_error(k, nvidia());
  EXPECT_NE(err.find("cooperative-matrix stride 6 (24 bytes) is not a multiple of 16 bytes"),
            std::string::npos)
      << err;
  k.body = matrix_store(c, imm_u32(2), imm_u32(16), MatrixLayout::row_major,
                        matrix_fill(tc, imm_f32(0)));
  err = emit_error(k, nvidia());
  EXPECT_NE(err.find("offset 2 (8 bytes) is not a multiple of 16 bytes"), std::string::npos)
      << err;
  k.body = matrix_store(c, imm_u32(4), imm_u32(16), MatrixLayout::row_major,
                        matrix_fill(tc, imm_f32(0)));
  EXPECT_FALSE(emit_ok(k, nvidia(), nullptr).empty());
}

TEST(SpirvNodes, CooperativeMatrixNeedsTheTarget) {
  std::string err = emit_error(kir_test::coopmat_gemm_kernel(8), lavapipe());
  EXPECT_NE(err.find("cooperative matrices (VK_KHR_cooperative_matrix), which target "
                     "'vulkan-lavapipe' lacks"),
            std::string::npos)
      << err;
  EXPECT_FALSE(lavapipe().cooperative_matrix);
  EXPECT_TRUE(nvidia().cooperative_matrix);
}

TEST(SpirvNodes, CooperativeMatrixShapesComeFromTheTarget) {
  // f32 A/B: no device advertises it; a target without a shape list does not check.
  Kernel k;
  k.name = "f32_mma";
  k.workgroup_size[0] = 32;
  BufferVar c = k.add_buffer("c", ScalarType::f32);
  const ValueType ta = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::a);
  const ValueType tb = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::b);
  const ValueType tc = ValueType::coop_matrix(ScalarType::f32, 16, 16, MatrixUse::accumulator);
  k.body = matrix_store(c, imm_u32(0), imm_u32(16), MatrixLayout::row_major,
                        matrix_mul_add(matrix_fill(ta, imm_f32(1)), matrix_fill(tb, imm_f32(1)),
                                       matrix_fill(tc, imm_f32(0))));
  EXPECT_NE(emit_error(k, nvidia()).find("multiply-add 16x16x16 f32 x f32 + f32 is not among the "
                                         "shapes target 'vulkan-nvidia' offers"),
            std::string::npos)
      << emit_error(k, nvidia());
  TargetDesc any = nvidia();
  any.cooperative_matrix_shapes.clear();
  EXPECT_EQ(emit_error(k, any), "");
  // Signed 8-bit components carry the signedness operands.
  Kernel s;
  s.name = "s8_mma";
  s.workgroup_size[0] = 32;
  BufferVar a8 = s.add_buffer("a", ScalarType::i8, true);
  BufferVar c32 = s.add_buffer("c", ScalarType::i32, false, true);
  const ValueType sa = ValueType::coop_matrix(ScalarType::i8, 16, 32, MatrixUse::a);
  const ValueType sb = ValueType::coop_matrix(ScalarType::i8, 32, 16, MatrixUse::b);
  const ValueType sc = ValueType::coop_matrix(ScalarType::i32, 16, 16, MatrixUse::accumulator);
  s.body = matrix_store(
      c32, imm_u32(0), imm_u32(16), MatrixLayout::row_major,
      matrix_mul_add(matrix_load(sa, a8, imm_u32(0), imm_u32(32), MatrixLayout::row_major),
                     matrix_load(sb, a8, imm_u32(512), imm_u32(32), MatrixLayout::col_major),
                     matrix_fill(sc, imm_i32(0))));
  Requirements used;
  std::vector<uint32_t> words = emit_ok(s, nvidia(), &used);
  EXPECT_EQ(validate_external(words, "coopmat_s8"), "");
  Module m = parse(words);
  EXPECT_TRUE(used.int8 && used.storage8);
  bool found = false;
  for (const auto &ins : m.instructions)
    if ((ins[0] & 0xffff) == 4459) {
      ASSERT_EQ(ins.size(), 7u); // type, id, A, B, C, operands
      EXPECT_EQ(ins[6], 0xfu);   // A, B, C and result signed
      found = true;
    }
  EXPECT_TRUE(found);
}
