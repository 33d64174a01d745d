// kir::simplify_index_ranges: the divisions it removes and the ones it must keep.
#include "kir/kir.h"
#include "kir/kir_parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace kiln::kir;

namespace {

// The body of `text` (a kernel) after the pass under `groups`, printed.
std::string ranged(const std::string &text, std::array<uint32_t, 3> groups) {
  auto r = parse_kernel(text, "r.kir");
  EXPECT_TRUE(r.is_ok()) << r.status().message();
  if (!r.is_ok()) return "";
  const Kernel out = simplify_index_ranges(r.value(), groups);
  EXPECT_TRUE(verify(out).is_ok());
  return print(out.body);
}

std::string kernel(const std::string &body) {
  return "kernel k workgroup(1, 1, 1) push_constants 1\n"
         "  buffer b0 in: f32 readonly\n"
         "  buffer b1 out: f32 writeonly\n{\n" + body + "}\n";
}

} // namespace

// A row of L = 56 * 56 elements: index / 3136 is the row, index % 56 and (index / 56) % 56 the
// position's coordinates; flattening them back gives u.
TEST(IndexRanges, RowCoordinatesAreExact) {
  const std::string out = ranged(kernel(R"(
  let o: i32 = i32(workgroup_id.x)
  for (u: i32, 0, 3136) {
    let i: i32 = ((o * 3136) + u)
    let c: i32 = ((i / 3136) % 64)
    let h: i32 = ((i / 56) % 56)
    let w: i32 = (i % 56)
    b1[i] = b0[((((c * 56) + h) * 56) + w)]
  }
)"), {64, 1, 1});
  // (lets are expanded where that proves something: o is workgroup_id.x)
  EXPECT_NE(out.find("let c: i32 = i32(workgroup_id.x)"), std::string::npos) << out;
  EXPECT_NE(out.find("let h: i32 = (u / 56)"), std::string::npos) << out;
  EXPECT_NE(out.find("let w: i32 = (u % 56)"), std::string::npos) << out;
  EXPECT_NE(out.find("b0[((i32(workgroup_id.x) * 3136) + u)]"), std::string::npos) << out;
}

// A grid larger than the row count: o may reach 64, so (i / 3136) % 64 stays a modulo.
TEST(IndexRanges, RangesComeFromTheGrid) {
  const std::string out = ranged(kernel(R"(
  let o: i32 = i32(workgroup_id.x)
  for (u: i32, 0, 3136) {
    let i: i32 = ((o * 3136) + u)
    b1[i] = b0[((i / 3136) % 64)]
  }
)"), {65, 1, 1});
  EXPECT_NE(out.find("(i32(workgroup_id.x) % 64)"), std::string::npos) << out;
}

// A condition bounds a variable in its branch only: n0 + 64 <= 784 makes (n0 + j) / 784 zero
// inside, not in the else branch.
TEST(IndexRanges, ConditionsBoundTheirBranch) {
  const std::string out = ranged(kernel(R"(
  let n0: i32 = (i32(workgroup_id.x) * 64)
  for (j: i32, 0, 64) {
    if (((n0 + 64) <= 784)) {
      b1[j] = b0[((n0 + j) / 784)]
    } else {
      b1[j] = b0[((n0 + j) / 784)]
    }
  }
)"), {13, 1, 1});
  EXPECT_NE(out.find("b1[j] = b0[0]"), std::string::npos) << out;
  EXPECT_NE(out.find("b1[j] = b0[((n0 + j) / 784)]"), std::string::npos) << out;
}

// Must not fire: a let reading an assignable variable is not expanded where that variable has
// changed; a dividend with an unknown range (a push constant) or a possibly negative one (C
// truncates toward zero) keeps its division.
TEST(IndexRanges, KeepsWhatItCannotProve) {
  const std::string assigned = ranged(kernel(R"(
  var m: i32 = 0
  let x: i32 = (m * 8)
  m = 5
  for (u: i32, 0, 8) {
    b1[u] = b0[(((x + u) / 8) + (((x + u) % 8) * 0))]
  }
)"), {1, 1, 1});
  EXPECT_EQ(assigned.find("m * 8"), assigned.rfind("m * 8")) << assigned; // not expanded
  EXPECT_NE(assigned.find("/ 8"), std::string::npos) << assigned;

  const std::string unknown = ranged(kernel(R"(
  for (u: i32, 0, 8) {
    b1[u] = b0[((u + i32(pc[0])) / 8)]
  }
)"), {1, 1, 1});
  EXPECT_NE(unknown.find("/ 8"), std::string::npos) << unknown; // a push constant: no range

  const std::string negative = ranged(kernel(R"(
  for (u: i32, 0, 8) {
    b1[u] = b0[((u + -4) / 4)]
  }
)"), {1, 1, 1});
  EXPECT_NE(negative.find("/ 4"), std::string::npos) << negative;
}

// x / c * c + x % c is x only for the same x: structural equality would match (a / 4) * 4 +
// (b % 4) after renaming, which is wrong.
TEST(IndexRanges, RecombinesOnlyTheSameValue) {
  const std::string out = ranged(kernel(R"(
  for (a: i32, 0, 100) {
    for (b: i32, 0, 100) {
      b1[a] = b0[(((a / 4) * 4) + (b % 4))]
      b1[b] = b0[(((a / 4) * 4) + (a % 4))]
    }
  }
)"), {1, 1, 1});
  EXPECT_NE(out.find("b1[a] = b0[(((a / 4) * 4) + (b % 4))]"), std::string::npos) << out;
  EXPECT_NE(out.find("b1[b] = b0[a]"), std::string::npos) << out;
}

// Unswitching: a loop-invariant condition is hoisted (two loops); one that reads an assignable
// variable (the body could change it) or memory is not.
TEST(IndexRanges, UnswitchesOnlyInvariantConditions) {
  const std::string hoisted = ranged(kernel(R"(
  let o: i32 = i32(workgroup_id.x)
  for (u: i32, 0, 16) {
    let c: i32 = (((o * 16) + u) / 16)
    if ((c < 3)) {
      b1[u] = b0[u]
    } else {
      b1[u] = 0.0f
    }
  }
)"), {8, 1, 1});
  EXPECT_LT(hoisted.find("if ("), hoisted.find("for (")) << hoisted; // the if outside
  EXPECT_NE(hoisted.find("for (", hoisted.find("} else {")), std::string::npos) << hoisted;
  EXPECT_NE(hoisted.find("if ((i32(workgroup_id.x) < 3))"), std::string::npos) << hoisted;

  const std::string assigned = ranged(kernel(R"(
  var f: i32 = 1
  for (u: i32, 0, 16) {
    if ((f > 0)) {
      f = 0
      b1[u] = b0[u]
    }
  }
)"), {1, 1, 1});
  EXPECT_LT(assigned.find("for ("), assigned.find("if (")) << assigned; // the loop stays outside

  const std::string loaded = ranged(kernel(R"(
  for (u: i32, 0, 16) {
    if ((b0[0] > 0.0f)) {
      b1[u] = b0[u]
    }
  }
)"), {1, 1, 1});
  EXPECT_LT(loaded.find("for ("), loaded.find("if (")) << loaded;
}
