// Command levels and barriers (compiler/memory/barriers.cpp) and the memory plan's liveness by
// step: independent commands run together, conflicting ones keep their order.
#include "compiler/artifact/program.h"

#include <gtest/gtest.h>

namespace kiln::compiler {
namespace {

constexpr uint64_t kSize = 256;

// A program over one input, `transients` transient buffers and two outputs (buffer ids: input
// 0, transients 1.., outputs after them), with one executable of two bindings: read, write.
struct Builder {
  Program p;
  explicit Builder(int transients) {
    p.buffers.push_back({BufKind::input, 0, kSize});
    for (int i = 0; i < transients; ++i) p.buffers.push_back({BufKind::transient, 0, kSize});
    p.buffers.push_back({BufKind::output, 0, kSize});
    p.buffers.push_back({BufKind::output, 1, kSize});
    Executable e;
    e.num_bindings = 2;
    e.binding_writes = {false, true};
    p.executables.push_back(e);
  }
  int output(int i) const { return static_cast<int>(p.buffers.size()) - 2 + i; }
  // A dispatch reading `src` and writing `dst`; push constant = its original position.
  void dispatch(int src, int dst) {
    Dispatch d;
    d.buffers = {src, dst};
    d.push_constants = {static_cast<uint32_t>(p.commands.size())};
    p.commands.push_back(d);
  }
  std::vector<uint32_t> order() const {
    std::vector<uint32_t> o;
    for (const Command &c : p.commands) o.push_back(std::get<Dispatch>(c).push_constants[0]);
    return o;
  }
};

TEST(Barriers, IndependentCommandsRunTogether) {
  Builder b(3);
  b.dispatch(0, 1); // T1 = f(x)
  b.dispatch(0, 2); // T2 = f(x): independent of the first
  b.dispatch(1, 3); // T3 = f(T1): after the first
  b.dispatch(0, 1); // T1 = f(x) again: after the third read T1 (write after read)
  b.dispatch(3, b.output(0)); // after the third (read after write), beside the fourth
  schedule_barriers(b.p);
  EXPECT_EQ(b.order(), (std::vector<uint32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(b.p.waits, (std::vector<uint8_t>{1, 0, 1, 1, 0}));
}

TEST(Barriers, LaterIndependentCommandsMoveUp) {
  Builder b(2);
  b.dispatch(0, 1);           // T1 = f(x)
  b.dispatch(1, b.output(0)); // y = f(T1)
  b.dispatch(0, 2);           // T2 = f(x): runs with the first
  b.dispatch(2, b.output(1)); // z = f(T2): runs with the second
  schedule_barriers(b.p);
  EXPECT_EQ(b.order(), (std::vector<uint32_t>{0, 2, 1, 3}));
  EXPECT_EQ(b.p.waits, (std::vector<uint8_t>{1, 0, 1, 0}));
  // T1 and T2 are live in the same two steps: the plan keeps them apart. In the original,
  // sequential order they were never live together and shared their bytes.
  plan_memory(b.p);
  EXPECT_NE(b.p.buffers[1].offset, b.p.buffers[2].offset);
  EXPECT_EQ(b.p.arena_bytes, 2 * kSize);
  Builder seq(2);
  seq.dispatch(0, 1);
  seq.dispatch(1, seq.output(0));
  seq.dispatch(0, 2);
  seq.dispatch(2, seq.output(1));
  plan_memory(seq.p);
  EXPECT_EQ(seq.p.buffers[1].offset, seq.p.buffers[2].offset);
  EXPECT_EQ(seq.p.arena_bytes, kSize);
}

TEST(Barriers, SameBufferDifferentBytesAndCopies) {
  Builder b(1);
  // Two dispatches writing the two halves of T1, then a copy of T1 into an output.
  for (uint64_t half = 0; half < 2; ++half) {
    Dispatch d;
    d.buffers = {0, 1};
    d.ranges = {{0, 0}, {half * kSize / 2, kSize / 2}};
    d.push_constants = {static_cast<uint32_t>(half)};
    b.p.commands.push_back(d);
  }
  b.p.commands.push_back(Copy{1, b.output(0)});
  schedule_barriers(b.p);
  EXPECT_EQ(b.p.waits, (std::vector<uint8_t>{1, 0, 1}));
  // Overlapping writes of the same bytes keep their order.
  Builder w(1);
  w.dispatch(0, 1);
  w.dispatch(0, 1);
  schedule_barriers(w.p);
  EXPECT_EQ(w.p.waits, (std::vector<uint8_t>{1, 1}));
}

} // namespace
} // namespace kiln::compiler
