// The Vulkan compiler: graph IR -> kernels -> SPIR-V -> artifact. Checks artifact structure
// (FlatBuffers verification, dispatch counts, memory plan), SPIR-V validity (SPIRV-Tools, when
// available) and that real models compile.
#include "compiler/compiler.h"
#include "frontend/onnx/importer.h"
#include "ir/builder.h"
#include "ops/ops.h"

#include "kiln/artifact/kiln_generated.h"

#ifdef KILN_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.hpp>
#endif

#include <filesystem>
#include <gtest/gtest.h>

namespace kiln {
namespace {

namespace fs = std::filesystem;

// A module under construction: main(params...) -> results.
struct TestModule {
  Module m;
  Graph *g;
  Builder b;
  TestModule() : g(nullptr), b(core_ops(), dummy) {
    auto f = std::make_unique<Function>();
    f->name = "main";
    g = &f->body;
    m.functions.push_back(std::move(f));
    b.set_graph(*g);
  }
  Value *param(DType t, Shape s, std::string name) {
    return g->add_param(TensorType{t, std::move(s), true}, std::move(name));
  }
  Value *op(std::string_view name, std::vector<Value *> in, AttrMap attrs = {}) {
    auto r = b.create1(name, std::move(in), std::move(attrs));
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? r.value() : nullptr;
  }
  Graph dummy;
};

const kir::TargetDesc &lavapipe() {
  const kir::TargetDesc *t = kir::find_target("vulkan-lavapipe");
  EXPECT_NE(t, nullptr);
  return *t;
}

// Verifies the buffer as a KLN1 artifact and validates every executable's SPIR-V.
const fb::Model *check_artifact(const std::vector<uint8_t> &bytes) {
  flatbuffers::Verifier v(bytes.data(), bytes.size());
  EXPECT_TRUE(fb::VerifyModelBuffer(v));
  EXPECT_TRUE(fb::ModelBufferHasIdentifier(bytes.data()));
  const fb::Model *m = fb::GetModel(bytes.data());
  EXPECT_EQ(m->schema_version(), 1u);
  EXPECT_EQ(m->producer()->str(), "kiln 0.1");
#ifdef KILN_HAVE_SPIRV_TOOLS
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string diag;
  tools.SetMessageConsumer([&](spv_message_level_t, const char *, const spv_position_t &,
                               const char *msg) { diag += std::string(msg) + "\n"; });
  spvtools::ValidatorOptions opts;
  opts.SetScalarBlockLayout(true);
  for (const fb::Executable *e : *m->executables()) {
    std::vector<uint32_t> words(e->spirv()->begin(), e->spirv()->end());
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
  EXPECT_EQ(count_dispatches(m), 2);
  EXPECT_EQ(m->arena_bytes(), 64u); // the 24-byte sum, aligned
  ASSERT_EQ(m->inputs()->size(), 2u);
  EXPECT_EQ(m->inputs()->Get(0)->name()->str(), "x");
  ASSERT_EQ(m->outputs()->size(), 1u);
  // The relu writes the output buffer directly.
  const fb::Dispatch *last = m->commands()->Get(1)->command_as_Dispatch();
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->bindings()->Get(1)->kind(), fb::BufferKind::output);
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
  EXPECT_EQ(count_dispatches(m), 4); // conv, relu, max_pool, global_pool; reshape aliases
  EXPECT_EQ(st.aliased_ops, 1);
  EXPECT_EQ(m->outputs()->Get(0)->shape()->size(), 2u);
}

TEST(Compiler, ArenaReusesDeadBuffers) {
  TestModule t;
  Value *v = t.param(DType::f32, {1024}, "x");
  for (int i = 0; i < 5; ++i) v = t.op(i % 2 ? "kiln.relu" : "kiln.neg", {v});
  t.g->results = {v};
  auto bytes = compile_ok(t.m);
  const fb::Model *m = check_artifact(bytes);
  EXPECT_EQ(count_dispatches(m), 5);
  EXPECT_EQ(m->arena_bytes(), 2u * 4096u); // ping-pong between two slots
  EXPECT_LE(m->executables()->size(), 2u); // neg and relu, deduplicated
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
  Value *x = t.param(DType::f32, {4}, "x");
  t.b.set_loc("my_cumsum");
  Value *c = t.op("kiln.cumulative", {x, t.b.scalar_i(DType::i64, 0)}, {{"kind", std::string("sum")}});
  t.g->results = {c};
  auto r = compile_to_artifact(t.m, lavapipe(), {});
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("kiln.cumulative"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("my_cumsum"), std::string::npos) << r.status().message();
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
