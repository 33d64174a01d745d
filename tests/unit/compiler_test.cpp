// The Vulkan compiler: graph IR -> kernels -> SPIR-V -> artifact. Checks artifact structure
// (FlatBuffers verification, dispatch counts, memory plan), SPIR-V validity (SPIRV-Tools, when
// available) and that real models compile.
#include "compiler/compiler.h"
#include "e2e_util.h"
#include "frontend/onnx/importer.h"
#include "ir/builder.h"
#include "ops/ops.h"
#include "test_module.h"

#include "kiln/artifact/kiln_generated.h"

#ifdef KILN_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

#include <filesystem>
#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

using test::lavapipe;
using test::TestModule;


// Verifies the buffer as a KLN1 artifact and validates every executable's SPIR-V.
const fb::Model *check_artifact(const std::vector<uint8_t> &bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  EXPECT_TRUE(fb::VerifyModelBuffer(v));
  EXPECT_TRUE(fb::ModelBufferHasIdentifier(bytes.data()));
  const fb::Model *m = fb::GetModel(bytes.data());
  EXPECT_EQ(m->schema_version(), 3u);
  EXPECT_EQ(m->producer()->str(), "kiln 0.1");
#ifdef KILN_HAVE_SPIRV_TOOLS
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string diag;
  tools.SetMessageConsumer([&](spv_message_level_t, const char *, const spv_position_t &,
                               const char *msg) { diag += std::string(msg) + "\n"; });
  spvtools::ValidatorOptions opts;
  opts.SetScalarBlockLayout(true);
  for (const fb::Executable *e : *m->executables()) {
    const fb::SpirvCode *code = e->code_as_SpirvCode();
    EXPECT_NE(code, nullptr) << e->name()->str() << ": not SPIR-V";
    if (!code)
      continue;
    std::vector<uint32_t> words(code->words()->begin(), code->words()->end());
    EXPECT_TRUE(tools.Validate(words.data(), words.size(), opts))
        << e->name()->str() << ": " << diag;
  }
#endif
  // Every binding is non-empty, every transient range lies in the arena, aligned.
  for (const fb::CommandEntry *c : *m->commands()) {
    if (const fb::Dispatch *d = c->command_as_Dispatch()) {
      EXPECT_LT(d->executable(), m->executables()->size());
      for (const fb::BufferRef *r : *d->bindings()) {
        EXPECT_GT(r->size(), 0u);
        if (r->kind() == fb::BufferKind::transient) {
          EXPECT_EQ(r->offset() % 64, 0u);
          EXPECT_LE(r->offset() + r->size(), m->arena_bytes());
        }
      }
    }
  }
  return m;
}

int count_dispatches(const fb::Model *m) {
  int n = 0;
  for (const fb::CommandEntry *c : *m->commands()) n += c->command_as_Dispatch() != nullptr;
  return n;
}

std::vector<uint8_t> compile_ok(const Module &m, CompileStats *stats = nullptr) {
  auto r = compile_to_artifact(m, lavapipe(), {}, stats);
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  return r.is_ok() ? r.value() : std::vector<uint8_t>{};
}

TEST(Compiler, AddReluWithBroadcast) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 3}, "x");
  Value *y = t.param(DType::f32, {3}, "y");
  Value *r = t.op("kiln.relu", {t.op("kiln.add", {x, y})});
  t.g->results = {r};
  auto bytes = compile_ok(t.m);
  ASSERT_FALSE(bytes.empty());
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 1); // the relu is fused into the add's kernel
  EXPECT_EQ(m->arena_bytes(), 0u);    // so the sum gets no buffer
  ASSERT_EQ(m->inputs()->size(), 2u);
  EXPECT_EQ(m->inputs()->Get(0)->name()->str(), "x");
  ASSERT_EQ(m->outputs()->size(), 1u);
  // The fused kernel writes the output buffer directly.
  const fb::Dispatch *last = m->commands()->Get(0)->command_as_Dispatch();
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->bindings()->Get(2)->kind(), fb::BufferKind::output);
  EXPECT_EQ(m->target()->str(), "vulkan-lavapipe");
}

TEST(Compiler, MatMulBatched) {
  TestModule t;
  Value *a = t.param(DType::f32, {2, 3, 4}, "a");
  Value *w = t.b.constant(Tensor::from_f32s(std::vector<float>(20, 0.5f), {4, 5}));
  t.g->results = {t.op("kiln.matmul", {a, w})};
  CompileStats st;
  auto bytes = compile_ok(t.m, &st);
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 1);
  EXPECT_EQ(m->arena_bytes(), 0u);
  ASSERT_EQ(m->constants()->size(), 1u);
  EXPECT_EQ(m->constants()->Get(0)->size(), 80u);
  EXPECT_EQ(m->constants()->Get(0)->offset() % 64, 0u);
  EXPECT_EQ(st.constant_bytes, 80u);
}

TEST(Compiler, ConvPoolReshapeChain) {
  TestModule t;
  Value *x = t.param(DType::f32, {1, 3, 9, 9}, "x");
  Value *w = t.b.constant(Tensor::from_f32s(std::vector<float>(8 * 3 * 9, 0.1f), {8, 3, 3, 3}));
  Value *bias = t.b.constant(Tensor::from_f32s(std::vector<float>(8, 0.2f), {8}));
  Value *c = t.op("kiln.conv", {x, w, bias},
                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                   {"strides", std::vector<int64_t>{2, 2}}});
  Value *r = t.op("kiln.relu", {c});
  Value *p = t.op("kiln.max_pool", {r},
                  {{"kernel_shape", std::vector<int64_t>{3, 3}},
                   {"strides", std::vector<int64_t>{2, 2}},
                   {"ceil_mode", int64_t(1)}});
  Value *gp = t.op("kiln.global_pool", {p}, {{"mode", std::string("avg")}});
  Value *flat = t.op("kiln.reshape", {gp, t.b.i64s({1, 8})});
  t.g->results = {flat};
  CompileStats st;
  auto bytes = compile_ok(t.m, &st);
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 3); // conv+relu fused, max_pool, global_pool; reshape aliases
  EXPECT_EQ(st.aliased_ops, 1);
  EXPECT_EQ(m->outputs()->Get(0)->shape()->size(), 2u);
}

TEST(Compiler, ArenaReusesDeadBuffers) {
  TestModule t;
  Value *v = t.param(DType::f32, {1024}, "x");
  // Each value is used twice, so no elementwise op is fused into the previous one.
  for (int i = 0; i < 5; ++i) v = t.op(i % 2 ? "kiln.add" : "kiln.mul", {v, v});
  t.g->results = {v};
  auto bytes = compile_ok(t.m);
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 5);
  EXPECT_EQ(m->arena_bytes(), 2u * 4096u); // ping-pong between two slots
  EXPECT_LE(m->executables()->size(), 2u); // mul and add, deduplicated
}

// Structurally equal kernels share one executable whatever their names: y = x*x + x*x builds
// two identical mul kernels (each x*x used twice, so not fused) and one add.
TEST(Compiler, StructurallyEqualKernelsShareAnExecutable) {
  TestModule t;
  Value *x = t.param(DType::f32, {64}, "x");
  Value *a = t.op("kiln.mul", {x, x});
  Value *b = t.op("kiln.mul", {x, x});
  Value *s = t.op("kiln.add", {a, b});
  t.g->results = {t.op("kiln.add", {s, t.op("kiln.add", {a, b})})};
  CompileStats st;
  auto bytes = compile_ok(t.m, &st);
  const fb::Model *m = check_artifact(bytes);
  ASSERT_GE(count_dispatches(m), 3);
  // The two muls (the first two commands) dispatch the same executable.
  const fb::Dispatch *first = m->commands()->Get(0)->command_as_Dispatch();
  const fb::Dispatch *second = m->commands()->Get(1)->command_as_Dispatch();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->executable(), second->executable());
  EXPECT_LT(int(m->executables()->size()), count_dispatches(m));
  EXPECT_EQ(st.executables, int(m->executables()->size()));
}

// A target naming a backend this kiln lacks is a clear error listing the backends.
TEST(Compiler, UnknownBackendIsAnError) {
  TestModule t;
  Value *x = t.param(DType::f32, {4}, "x");
  t.g->results = {t.op("kiln.relu", {x})};
  kir::TargetDesc target = lavapipe();
  target.backend = "ptx";
  auto r = compile_to_artifact(t.m, target, {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().message(), "target 'vulkan-lavapipe' needs backend 'ptx', which this "
                                  "kiln lacks (backends: spirv, c)");
}

TEST(Compiler, OutputThatIsAnInputOrConstantIsCopied) {
  TestModule t;
  Value *x = t.param(DType::f32, {4}, "x");
  Value *k = t.b.constant(Tensor::from_f32s({1, 2, 3, 4}, {4}));
  t.g->results = {x, k, t.op("kiln.reshape", {x, t.b.i64s({2, 2})})};
  auto bytes = compile_ok(t.m);
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 0);
  ASSERT_EQ(m->commands()->size(), 3u);
  for (const fb::CommandEntry *c : *m->commands()) {
    const fb::Copy *cp = c->command_as_Copy();
    ASSERT_NE(cp, nullptr);
    EXPECT_EQ(cp->dst()->kind(), fb::BufferKind::output);
    EXPECT_EQ(cp->src()->size(), 16u);
  }
}

TEST(Compiler, TransformerStyleOps) {
  TestModule t;
  Value *ids = t.param(DType::i64, {2, 5}, "ids");
  Value *mask = t.param(DType::boolean, {2, 5}, "mask");
  std::vector<float> tab(10 * 8);
  for (size_t i = 0; i < tab.size(); ++i) tab[i] = 0.01f * static_cast<float>(i);
  Value *emb = t.op("kiln.gather", {t.b.constant(Tensor::from_f32s(tab, {10, 8})), ids});
  Value *ln = t.op("kiln.normalize",
                   {emb, t.b.constant(Tensor::from_f32s(std::vector<float>(8, 1.f), {8})),
                    t.b.constant(Tensor::from_f32s(std::vector<float>(8, 0.f), {8}))},
                   {{"axes", std::vector<int64_t>{-1}}, {"epsilon", 1e-5},
                    {"kind", std::string("standard")}});
  Value *tr = t.op("kiln.transpose", {ln}, {{"perm", std::vector<int64_t>{0, 2, 1}}});
  Value *scores = t.op("kiln.matmul", {ln, tr});
  Value *m3 = t.op("kiln.unsqueeze", {mask, t.b.i64s({1})});
  Value *masked = t.op("kiln.where", {m3, scores, t.b.scalar_f(DType::f32, -1e4)});
  Value *sm = t.op("kiln.softmax", {masked}, {{"kind", std::string("softmax")},
                                               {"axis", int64_t(-1)}});
  Value *act = t.op("kiln.erf", {sm});
  Value *sl = t.op("kiln.slice", {act, t.b.i64s({1}), t.b.i64s({4}), t.b.i64s({2})});
  Value *cat = t.op("kiln.concat", {sl, sm}, {{"axis", int64_t(2)}});
  Value *red = t.op("kiln.reduce", {cat, t.b.i64s({1})},
                    {{"kind", std::string("mean")}, {"keepdims", int64_t(0)}});
  Value *pad = t.op("kiln.pad", {red, t.b.i64s({0, 1, 0, 2})}, {{"mode", std::string("reflect")}});
  t.g->results = {pad, t.op("kiln.cast", {ids}, {{"to", DType::f32}})};
  CompileStats st;
  auto bytes = compile_ok(t.m, &st);
  ASSERT_FALSE(bytes.empty());
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 12); // every op but unsqueeze
}

TEST(Compiler, UnsupportedOpIsAClearError) {
  TestModule t;
  Value *rate = t.param(DType::i64, {}, "rate");
  Value *lo = t.param(DType::f32, {}, "lo");
  Value *hi = t.param(DType::f32, {}, "hi");
  t.b.set_loc("my_mel");
  Value *c = t.op("kiln.mel_weight_matrix",
                  {t.b.scalar_i(DType::i64, 8), t.b.scalar_i(DType::i64, 16), rate, lo, hi});
  t.g->results = {c};
  auto r = compile_to_artifact(t.m, lavapipe(), {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("kiln.mel_weight_matrix"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("my_mel"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("no Vulkan lowering"), std::string::npos);
}

TEST(Compiler, DynamicShapesAreRefused) {
  TestModule t;
  Value *x = t.param(DType::f32, {kDynamic, 4}, "x");
  t.g->results = {t.op("kiln.relu", {x})};
  auto r = compile_to_artifact(t.m, lavapipe(), {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("static"), std::string::npos) << r.status().message();
}

fs::path find_model(const std::string &name) {
  for (fs::path p : {fs::path(KILN_SOURCE_DIR) / "models" / name,
                     fs::path(KILN_SOURCE_DIR) / ".." / "shared" / "models" / name})
    if (fs::exists(p)) return p;
  return {};
}

void compile_model(const std::string &name, int min_dispatches) {
  fs::path p = find_model(name);
  if (p.empty()) GTEST_SKIP() << name << " not present";
  auto mod = onnx_fe::import_file(p.string());
  ASSERT_TRUE(mod.is_ok()) << mod.status().message();
  CompileStats st;
  auto r = compile_to_artifact(*mod.value(), lavapipe(), {}, &st);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  const fb::Model *m = check_artifact(r.value());
  EXPECT_GE(count_dispatches(m), min_dispatches);
  std::printf("%s: %d dispatches, %d executables, %d copies, %d aliased ops, arena %llu bytes, "
              "constants %llu bytes\n",
              name.c_str(), st.dispatches, st.executables, st.copies, st.aliased_ops,
              static_cast<unsigned long long>(st.arena_bytes),
              static_cast<unsigned long long>(st.constant_bytes));
}

TEST(CompilerModels, Squeezenet) { compile_model("squeezenet1_1.onnx", 26); }
TEST(CompilerModels, MobilenetV2) { compile_model("mobilenet_v2.onnx", 50); }
TEST(CompilerModels, BertTiny) { compile_model("bert_tiny.onnx", 20); }

} // namespace
} // namespace kiln

// ---- end to end: compile, run on a Vulkan device (lavapipe in CI), compare with the reference


namespace kiln {
namespace {

using test::expect_matches_reference;
using test::random_tensor;
using test::vulkan_device;

TEST(CompilerE2E, ElementwiseFamily) {
  TestModule t;
  Value *x = t.param(DType::f32, {3, 4, 5}, "x");
  Value *y = t.param(DType::f32, {4, 1}, "y");
  Value *s = t.op("kiln.add", {x, y});
  Value *clip = t.op("kiln.min", {t.op("kiln.max", {s, t.b.scalar_f(DType::f32, -1)}),
                                  t.b.scalar_f(DType::f32, 1.5)});
  std::vector<Value *> outs{clip};
  for (const char *u : {"kiln.relu", "kiln.sigmoid", "kiln.tanh", "kiln.erf", "kiln.gelu",
                        "kiln.exp", "kiln.abs", "kiln.neg", "kiln.floor", "kiln.round",
                        "kiln.softplus", "kiln.hard_swish", "kiln.sign"})
    outs.push_back(t.op(u, {s}));
  Value *pos = t.op("kiln.add", {t.op("kiln.abs", {x}), t.b.scalar_f(DType::f32, 0.5)});
  for (const char *u : {"kiln.log", "kiln.sqrt", "kiln.reciprocal"}) outs.push_back(t.op(u, {pos}));
  for (const char *b : {"kiln.sub", "kiln.mul", "kiln.div", "kiln.pow", "kiln.mod", "kiln.fmod",
                        "kiln.prelu"})
    outs.push_back(t.op(b, {x, b == std::string("kiln.pow") || b == std::string("kiln.div") ||
                                       b == std::string("kiln.mod") || b == std::string("kiln.fmod")
                                   ? t.op("kiln.add", {t.op("kiln.abs", {y}),
                                                       t.b.scalar_f(DType::f32, 0.25)})
                                   : y}));
  Value *lt = t.op("kiln.less", {x, y});
  outs.push_back(t.op("kiln.where", {lt, x, t.op("kiln.mul", {y, y})}));
  outs.push_back(t.op("kiln.and", {lt, t.op("kiln.greater_equal", {x, t.b.scalar_f(DType::f32, 0)})}));
  Value *xi = t.op("kiln.cast", {x}, {{"to", DType::i32}});
  outs.push_back(xi);
  outs.push_back(t.op("kiln.cast", {t.op("kiln.div", {xi, t.b.scalar_i(DType::i32, 2)})},
                      {{"to", DType::f32}}));
  outs.push_back(t.op("kiln.cast", {lt}, {{"to", DType::f32}}));
  t.g->results = outs;
  expect_matches_reference(t.m, {}, 1e-4, 1e-5);
}

TEST(CompilerE2E, MatMulAndGemm) {
  TestModule t;
  Value *a = t.param(DType::f32, {2, 3, 7}, "a");
  Value *b = t.param(DType::f32, {3, 7, 5}, "b");
  Value *v = t.param(DType::f32, {7}, "v");
  Value *m2 = t.param(DType::f32, {7, 4}, "m2");
  Value *c = t.param(DType::f32, {4}, "c");
  Value *b2 = t.op("kiln.reshape", {b, t.b.i64s({3, 1, 7, 5})});
  t.g->results = {t.op("kiln.matmul", {a, b2}), t.op("kiln.matmul", {a, v}),
                  t.op("kiln.matmul", {v, m2}),
                  t.op("kiln.gemm", {m2, m2, c}, {{"trans_a", int64_t(1)}, {"alpha", 0.5},
                                                 {"beta", 2.0}}),
                  t.op("kiln.gemm", {m2, m2}, {{"trans_b", int64_t(1)}})};
  expect_matches_reference(t.m);
}

TEST(CompilerE2E, ConvAndPools) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 4, 9, 8}, "x");
  Value *w = t.param(DType::f32, {6, 2, 3, 2}, "w");
  Value *bias = t.param(DType::f32, {6}, "bias");
  Value *c = t.op("kiln.conv", {x, w, bias},
                  {{"group", int64_t(2)}, {"pads", std::vector<int64_t>{1, 0, 2, 1}},
                   {"strides", std::vector<int64_t>{2, 1}},
                   {"dilations", std::vector<int64_t>{1, 2}}});
  Value *w2 = t.param(DType::f32, {3, 4, 3, 3}, "w2");
  Value *c2 = t.op("kiln.conv", {x, w2}, {{"auto_pad", std::string("SAME_UPPER")}});
  Value *mp = t.op("kiln.max_pool", {x}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                          {"strides", std::vector<int64_t>{2, 2}},
                                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                          {"ceil_mode", int64_t(1)}});
  Value *ap = t.op("kiln.avg_pool", {x}, {{"kernel_shape", std::vector<int64_t>{2, 3}},
                                          {"strides", std::vector<int64_t>{2, 2}},
                                          {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                          {"count_include_pad", int64_t(1)}});
  Value *ap0 = t.op("kiln.avg_pool", {x}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                           {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  t.g->results = {c, c2, mp, ap, ap0,
                  t.op("kiln.global_pool", {x}, {{"mode", std::string("avg")}}),
                  t.op("kiln.global_pool", {x}, {{"mode", std::string("max")}})};
  expect_matches_reference(t.m);
}

TEST(CompilerE2E, DataMovement) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 3, 4}, "x");
  Value *ix = t.param(DType::i64, {2, 2}, "ix");
  Tensor idx = Tensor::from_i64s({0, -1, 2, 1}).reshaped({2, 2});
  Value *sp = t.b.i64s({1, 2});
  auto split = t.b.create("kiln.split", {x, sp}, {{"axis", int64_t(1)}}, 2);
  ASSERT_TRUE(split.is_ok()) << split.status().message();
  t.g->results = {
      t.op("kiln.transpose", {x}, {{"perm", std::vector<int64_t>{2, 0, 1}}}),
      t.op("kiln.concat", {x, t.op("kiln.neg", {x}), x}, {{"axis", int64_t(1)}}),
      t.op("kiln.slice", {x, t.b.i64s({-1, 1}), t.b.i64s({-100, 4}), t.b.i64s({2, 1}),
                          t.b.i64s({-1, 1})}),
      t.op("kiln.gather", {x, ix}, {{"axis", int64_t(1)}}),
      t.op("kiln.pad", {x, t.b.i64s({0, 1, 2, 0, 2, 1})}, {{"mode", std::string("constant")}}),
      t.op("kiln.pad", {x, t.b.i64s({0, 2, 1, 0, 1, 3})}, {{"mode", std::string("reflect")}}),
      t.op("kiln.pad", {x, t.b.i64s({1, 1, 1, 1, 1, 1})}, {{"mode", std::string("edge")}}),
      t.op("kiln.expand", {t.op("kiln.slice", {x, t.b.i64s({0}), t.b.i64s({1})}),
                           t.b.i64s({3, 3, 4})}),
      t.op("kiln.tile", {x, t.b.i64s({1, 2, 2})}),
      split.value()[0], split.value()[1]};
  expect_matches_reference(t.m, {random_tensor(x->type, *std::make_unique<std::mt19937>(3)), idx});
}

TEST(CompilerE2E, ReductionsAndNormalisation) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 3, 8}, "x");
  Value *sc = t.param(DType::f32, {8}, "scale");
  Value *bi = t.param(DType::f32, {8}, "bias");
  Value *c3 = t.param(DType::f32, {3}, "c3");
  std::vector<Value *> outs;
  for (const char *k : {"sum", "mean", "max", "min", "prod", "l1", "l2", "sum_square",
                        "log_sum_exp"})
    outs.push_back(t.op("kiln.reduce", {x, t.b.i64s({0, 2})},
                        {{"kind", std::string(k)}, {"keepdims", int64_t(1)}}));
  outs.push_back(t.op("kiln.reduce", {x, t.b.i64s({1})},
                      {{"kind", std::string("sum")}, {"keepdims", int64_t(0)}}));
  outs.push_back(t.op("kiln.softmax", {x}, {{"kind", std::string("softmax")}, {"axis", int64_t(-1)}}));
  outs.push_back(t.op("kiln.softmax", {x}, {{"kind", std::string("log_softmax")}, {"axis", int64_t(1)}}));
  outs.push_back(t.op("kiln.normalize", {x, sc, bi},
                      {{"axes", std::vector<int64_t>{2}}, {"epsilon", 1e-5},
                       {"kind", std::string("standard")}}));
  outs.push_back(t.op("kiln.normalize", {x, sc},
                      {{"axes", std::vector<int64_t>{2}}, {"epsilon", 1e-6},
                       {"kind", std::string("rms")}}));
  outs.push_back(t.op("kiln.normalize", {x, c3, c3},
                      {{"axes", std::vector<int64_t>{2}}, {"epsilon", 1e-5},
                       {"kind", std::string("standard")}, {"param_axis", int64_t(1)}}));
  Value *var = t.op("kiln.add", {t.op("kiln.abs", {c3}), t.b.scalar_f(DType::f32, 0.1)});
  outs.push_back(t.op("kiln.batch_norm", {x, c3, c3, c3, var}, {{"epsilon", 1e-5}}));
  t.g->results = outs;
  expect_matches_reference(t.m);
}

// Max and min reductions propagate NaN like the reference (a NaN in a row makes it NaN).
TEST(CompilerE2E, MaxMinReductionsPropagateNaN) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 3}, "x");
  std::vector<Value *> outs;
  for (const char *k : {"max", "min"})
    outs.push_back(t.op("kiln.reduce", {x, t.b.i64s({1})},
                        {{"kind", std::string(k)}, {"keepdims", int64_t(0)}}));
  t.g->results = outs;
  Tensor in = Tensor::from_f32s({1.0f, NAN, 3.0f, 4.0f, 5.0f, 6.0f}, {2, 3});
  expect_matches_reference(t.m, {in});
}

// Reductions of 8192 or more elements per output run as several kernels (partials, then their
// combination): strided and contiguous reduced axes, a count that does not divide into the
// chunks, f16 and integer inputs, NaN propagation, and products near 1.
TEST(CompilerE2E, LargeReductionsSplitAcrossInvocations) {
  TestModule t;
  Value *x = t.param(DType::f32, {2, 10007, 3}, "x");
  Value *flat = t.param(DType::f32, {70001}, "flat");
  Value *h = t.param(DType::f16, {3, 9000}, "h");
  Value *n = t.param(DType::i32, {2, 9001}, "n");
  Value *near1 = t.param(DType::f32, {12000}, "near1");
  Value *nan = t.param(DType::f32, {2, 9000}, "nan");
  Value *huge = t.param(DType::f32, {(int64_t{1} << 21) + 3}, "huge"); // two partial stages
  std::vector<Value *> outs;
  auto reduce = [&](Value *v, std::vector<int64_t> axes, const char *kind) {
    outs.push_back(t.op("kiln.reduce", {v, t.b.i64s(axes)},
                        {{"kind", std::string(kind)}, {"keepdims", int64_t(0)}}));
  };
  for (const char *k : {"sum", "mean", "max", "min", "l1", "l2", "sum_square", "log_sum_exp"})
    reduce(x, {1}, k);
  reduce(x, {0, 1}, "sum");
  reduce(flat, {0}, "sum");
  reduce(flat, {0}, "max");
  reduce(h, {1}, "mean");
  reduce(h, {1}, "min");
  for (const char *k : {"sum", "max", "min", "l1", "sum_square"}) reduce(n, {1}, k);
  reduce(near1, {0}, "prod");
  reduce(nan, {1}, "max");
  reduce(nan, {1}, "min");
  reduce(huge, {0}, "sum");
  t.g->results = outs;
  std::mt19937 rng(11);
  std::vector<Tensor> in;
  for (Value *p : {x, flat, h, n}) in.push_back(random_tensor(p->type, rng));
  Tensor p1(DType::f32, {12000}), pn(DType::f32, {2, 9000});
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < p1.numel(); ++i) p1.set_f64(i, 1.0 + 1e-4 * u(rng));
  for (int64_t i = 0; i < pn.numel(); ++i) pn.set_f64(i, u(rng));
  pn.set_f64(4321, NAN); // row 0 only: NaN for max and min; row 1 stays finite
  in.push_back(p1);
  in.push_back(pn);
  in.push_back(random_tensor(huge->type, rng));
  CompileStats st;
  ASSERT_TRUE(compile_to_artifact(t.m, lavapipe(), {}, &st).is_ok());
  // Two kernels per reduction, log_sum_exp four (max, sum of exp), the 2M-element sum three.
  EXPECT_EQ(st.dispatches, 2 * static_cast<int>(outs.size()) + 3);
  expect_matches_reference(t.m, in);
}

// Softmax rows of 8192 or more elements run as split max and sum-of-exp reductions plus a
// kernel writing the row in chunks: last and strided axes, flatten_trailing, a row length that
// does not divide into the chunks, f16, and rows holding NaN, +inf and -inf.
// Rounding to float8 / float4 / e8m0 (a step-table search and an integer view of the input for
// its sign) and the requantisation of qlinear_matmul emit valid SPIR-V.
TEST(Compiler, NarrowFloatRoundingAndRequantisationValidate) {
  TestModule t;
  Value *x = t.param(DType::f32, {7}, "x");
  Value *h = t.param(DType::f16, {7}, "h");
  Value *zp = t.b.constant(Tensor(DType::f8e4m3fn, {}));
  Value *s = t.b.constant(Tensor::from_f32s({2.0f}, {}));
  std::vector<Value *> results = {
      t.op("kiln.cast", {x}, {{"to", DType::f8e4m3fn}}),
      t.op("kiln.cast", {h}, {{"to", DType::f8e5m2}, {"saturate", int64_t(0)}}),
      t.op("kiln.cast", {x}, {{"to", DType::f4e2m1}}),
      t.op("kiln.cast", {x}, {{"to", DType::f8e8m0}, {"round_mode", std::string("nearest")}}),
      t.op("kiln.quantize_linear", {x, s, zp})};
  Value *a = t.param(DType::u8, {2, 3}, "a");
  Value *b = t.param(DType::u8, {3, 4}, "b");
  Value *z = t.b.constant(Tensor(DType::u8, {}));
  results.push_back(t.op("kiln.qlinear_matmul", {a, s, z, b, s, z, s, z}));
  t.g->results = results;
  check_artifact(compile_ok(t.m));
}

TEST(CompilerE2E, LongSoftmaxRowsSplitAcrossInvocations) {
  TestModule t;
  Value *x = t.param(DType::f32, {3, 9000}, "x");
  Value *strided = t.param(DType::f32, {2, 8200, 2}, "strided");
  Value *cube = t.param(DType::f32, {2, 100, 100}, "cube");
  Value *h = t.param(DType::f16, {2, 10000}, "h");
  Value *odd = t.param(DType::f32, {4, 8192}, "odd");
  std::vector<Value *> outs;
  auto softmax = [&](Value *v, const char *kind, int64_t axis, int64_t flatten = 0) {
    outs.push_back(t.op("kiln.softmax", {v}, {{"kind", std::string(kind)}, {"axis", axis},
                                              {"flatten_trailing", flatten}}));
  };
  softmax(x, "softmax", 1);
  softmax(x, "log_softmax", -1);
  softmax(strided, "softmax", 1);
  softmax(cube, "log_softmax", 1, 1);
  softmax(h, "softmax", 1);
  softmax(odd, "softmax", 1);
  softmax(odd, "log_softmax", 1);
  t.g->results = outs;
  std::mt19937 rng(5);
  std::vector<Tensor> in;
  for (Value *p : {x, strided, cube, h}) in.push_back(random_tensor(p->type, rng));
  Tensor o = random_tensor(odd->type, rng);
  o.set_f64(100, NAN);                                    // row 0: NaN
  o.set_f64(8192 + 7, INFINITY);                          // row 1: +inf
  for (int64_t i = 0; i < 8192; ++i) o.set_f64(2 * 8192 + i, -INFINITY); // row 2: all -inf
  in.push_back(o);
  CompileStats st;
  ASSERT_TRUE(compile_to_artifact(t.m, lavapipe(), {}, &st).is_ok());
  EXPECT_EQ(st.dispatches, 5 * static_cast<int>(outs.size())); // max 2, sum of exp 2, write 1
  expect_matches_reference(t.m, in);
}

// Tensors larger than the storage buffer range are bound as several ranges of one buffer;
// a tiny range splits every tensor here into 2 to 4 chunks (loads, stores, constants,
// 1-, 4- and 8-byte elements, indirect indices).
// Elementwise epilogues are fused into their producer's kernel: one dispatch per chain, and
// the same results as the reference.
TEST(CompilerE2E, FusedEpilogues) {
  {
    TestModule t; // conv + bias add + relu
    Value *x = t.param(DType::f32, {1, 3, 7, 6}, "x");
    Value *w = t.param(DType::f32, {4, 3, 3, 3}, "w");
    Value *bias = t.b.constant(Tensor::from_f32s({0.5f, -0.25f, 1.0f, -2.0f}, {4, 1, 1}));
    Value *c = t.op("kiln.conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    t.g->results = {t.op("kiln.relu", {t.op("kiln.add", {c, bias})})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 1);
    EXPECT_EQ(st.arena_bytes, 0u); // the conv's and the add's values get no buffer
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // matmul + bias add + gelu-like chain + residual add of a computed value
    Value *a = t.param(DType::f32, {2, 3, 8}, "a");
    Value *b = t.param(DType::f32, {8, 8}, "b");
    Value *bias = t.param(DType::f32, {8}, "bias");
    Value *mm = t.op("kiln.add", {t.op("kiln.matmul", {a, b}), bias});
    Value *g = t.op("kiln.mul", {t.op("kiln.tanh", {t.op("kiln.gelu", {mm})}),
                                 t.b.scalar_f(DType::f32, 1.5)});
    t.g->results = {t.op("kiln.add", {g, a})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 1);
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // a value used twice, or a graph result, keeps its own kernel
    Value *x = t.param(DType::f32, {4, 5}, "x");
    Value *e = t.op("kiln.exp", {x});
    Value *r = t.op("kiln.relu", {e});
    Value *s = t.op("kiln.sigmoid", {t.op("kiln.neg", {r})});
    Value *y = t.op("kiln.mul", {s, t.op("kiln.abs", {x})}); // abs is computed after neg's producer
    t.g->results = {y, e};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 3); // exp | relu, neg, sigmoid | abs, mul
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // the producers of a concat's operands store into its result in place
    Value *x = t.param(DType::f32, {1, 3, 5, 4}, "x");
    Value *w1 = t.param(DType::f32, {2, 3, 1, 1}, "w1");
    Value *w2 = t.param(DType::f32, {3, 3, 3, 3}, "w2");
    Value *a = t.op("kiln.relu", {t.op("kiln.conv", {x, w1})});
    Value *b = t.op("kiln.conv", {x, w2}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Value *cat = t.op("kiln.concat", {a, b, t.op("kiln.sigmoid", {x})}, {{"axis", int64_t(1)}});
    Value *cat2 = t.op("kiln.concat", {x, t.op("kiln.neg", {x})}, {{"axis", int64_t(-1)}});
    t.g->results = {cat, cat2};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 5); // conv+relu, conv, sigmoid | neg, concat (x has no producer)
    expect_matches_reference(t.m);
  }
}

// A contraction stores straight into the layout of the reshape / transpose chain after it
// when each value of the chain has no other use; otherwise the transpose keeps its kernel.
TEST(CompilerE2E, TransposesAbsorbedIntoContractions) {
  auto perm = [](std::vector<int64_t> p) { return AttrMap{{"perm", std::move(p)}}; };
  {
    TestModule t; // matmul + bias -> reshape -> transpose, and its transpose(reshape) back
    Value *x = t.param(DType::f32, {2, 3, 8}, "x");
    Value *w = t.param(DType::f32, {8, 8}, "w");
    Value *bias = t.param(DType::f32, {8}, "bias");
    Value *y = t.op("kiln.add", {t.op("kiln.matmul", {x, w}), bias});
    Value *h = t.op("kiln.transpose", {t.op("kiln.reshape", {y, t.b.i64s({2, 3, 2, 4})})},
                    perm({0, 2, 1, 3}));
    Value *back = t.op("kiln.transpose", {t.op("kiln.matmul", {h, t.param(DType::f32, {4, 4}, "v")})},
                       perm({0, 2, 1, 3}));
    t.g->results = {t.op("kiln.relu", {t.op("kiln.reshape", {back, t.b.i64s({2, 3, 8})})})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 3); // matmul+add+reshape+transpose | matmul+transpose | relu
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // transposed values written in place into their concat
    Value *x = t.param(DType::f32, {2, 3, 8}, "x");
    Value *a = t.op("kiln.transpose", {t.op("kiln.matmul", {x, t.param(DType::f32, {8, 4}, "w")})},
                    perm({0, 2, 1}));
    Value *b = t.op("kiln.transpose", {t.op("kiln.matmul", {x, t.param(DType::f32, {8, 5}, "u")})},
                    perm({0, 2, 1}));
    t.g->results = {t.op("kiln.concat", {a, b}, {{"axis", int64_t(1)}})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 2);
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // must not fire: the matmul's value is also a graph result
    Value *x = t.param(DType::f32, {4, 6}, "x");
    Value *m = t.op("kiln.matmul", {x, t.param(DType::f32, {6, 5}, "w")});
    t.g->results = {m, t.op("kiln.transpose", {m}, perm({1, 0}))};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 2);
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // must not fire: the reshaped value has a second consumer
    Value *x = t.param(DType::f32, {4, 6}, "x");
    Value *m = t.op("kiln.matmul", {x, t.param(DType::f32, {6, 10}, "w")});
    Value *r = t.op("kiln.reshape", {m, t.b.i64s({4, 2, 5})});
    t.g->results = {t.op("kiln.transpose", {r}, perm({2, 0, 1})), t.op("kiln.neg", {r})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 3); // matmul | transpose | neg
    expect_matches_reference(t.m);
  }
  {
    TestModule t; // a reshape alone is no reason to absorb anything: it stays an alias
    Value *x = t.param(DType::f32, {4, 6}, "x");
    Value *m = t.op("kiln.matmul", {x, t.param(DType::f32, {6, 10}, "w")});
    t.g->results = {t.op("kiln.reshape", {m, t.b.i64s({40})})};
    CompileStats st;
    check_artifact(compile_ok(t.m, &st));
    EXPECT_EQ(st.dispatches, 1);
    EXPECT_EQ(st.aliased_ops, 1);
    expect_matches_reference(t.m);
  }
}

TEST(CompilerE2E, LargeTensorsSplitIntoSeveralBindings) {
  kir::TargetDesc tiny = lavapipe();
  tiny.max_storage_buffer_range = 4096;
  TestModule t;
  std::mt19937 rng(11);
  Value *x = t.param(DType::f32, {8, 300}, "x");   // 9600 bytes: 3 chunks
  Value *y = t.param(DType::f32, {300}, "y");
  Value *ix = t.param(DType::i64, {700}, "ix");    // 5600 bytes: 2 chunks
  Value *w = t.b.constant(random_tensor(TensorType{DType::f32, {300, 40}, true}, rng)); // 48000
  Value *sum = t.op("kiln.add", {x, y});
  Value *pos = t.op("kiln.greater", {sum, t.b.scalar_f(DType::f32, 0)}); // 2400 bools
  Value *big = t.op("kiln.tile", {pos, t.b.i64s({2, 2})});              // 9600 bools: 3 chunks
  Value *flat = t.op("kiln.reshape", {sum, t.b.i64s({2400})});
  t.g->results = {sum, big, t.op("kiln.matmul", {x, w}),
                  t.op("kiln.gather", {flat, ix}, {{"axis", int64_t(0)}}),
                  t.op("kiln.cast", {ix}, {{"to", DType::f64}})};
  Tensor idx(DType::i64, {700});
  for (int64_t i = 0; i < 700; ++i) idx.set_i64(i, (i * 977) % 2400);
  auto bytes = compile_to_artifact(t.m, tiny, {});
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().message();
  const fb::Model *m = check_artifact(*bytes);
  int split = 0;
  for (const fb::CommandEntry *c : *m->commands())
    if (const fb::Dispatch *d = c->command_as_Dispatch())
      for (const fb::BufferRef *r : *d->bindings()) {
        EXPECT_LE(r->size(), 4096u);
        EXPECT_EQ(r->offset() % 64, 0u);
        if (r->kind() != fb::BufferKind::transient) split += r->offset() > 0; // a later chunk
      }
  EXPECT_GT(split, 0);
  std::mt19937 rng2(5);
  expect_matches_reference(
      t.m, {random_tensor(x->type, rng2), random_tensor(y->type, rng2), idx}, 1e-4, 1e-5, tiny);
}

TEST(CompilerE2E, Squeezenet) {
  fs::path p = find_model("squeezenet1_1.onnx");
  if (p.empty()) GTEST_SKIP() << "squeezenet1_1.onnx not present";
  auto mod = onnx_fe::import_file(p.string());
  ASSERT_TRUE(mod.is_ok()) << mod.status().message();
  expect_matches_reference(*mod.value(), {}, 1e-4, 1e-5);
}

} // namespace
} // namespace kiln
