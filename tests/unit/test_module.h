// Graph-IR modules under construction for unit tests (compiler_test.cpp, concurrency_test.cpp,
// shape_overflow_test.cpp): main(params...) -> results, with ops created through the builder,
// which runs each op's verifier and shape function. TestModule makes a refused op a test failure.
#pragma once

#include "ir/builder.h"
#include "ops/ops.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::test {

// main(params...) -> results with an empty body; ops are created through the builder `b`.
struct ModuleBuilder {
  Module m;
  Graph *g;
  Builder b;
  ModuleBuilder() : g(nullptr), b(core_ops(), dummy) {
    auto f = std::make_unique<Function>();
    f->name = "main";
    g = &f->body;
    m.functions.push_back(std::move(f));
    b.set_graph(*g);
  }
  Graph dummy;
};

// A module under construction: main(params...) -> results.
struct TestModule : ModuleBuilder {
  Value *param(DType t, Shape s, std::string name) {
    return g->add_param(TensorType{t, std::move(s), true}, std::move(name));
  }
  Value *op(std::string_view name, std::vector<Value *> in, AttrMap attrs = {}) {
    auto r = b.create1(name, std::move(in), std::move(attrs));
    EXPECT_TRUE(r.is_ok()) << r.status().message();
    return r.is_ok() ? r.value() : nullptr;
  }
};

} // namespace kiln::test
