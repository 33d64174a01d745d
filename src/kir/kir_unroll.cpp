// Loop unrolling for long innermost loops, and the per-invocation loop iteration count.
//
// Why: llvmpipe (Mesa's lavapipe) caps the loop iterations one shader invocation may run at
// 65,535 in total (gallivm's loop limiter counts every loop's back-edges per invocation) and
// then leaves the loop without an error, so a longer loop silently computes a partial result.
// Unrolling the innermost loops divides their back-edges by the factor; the count lets the
// compiler and runtime refuse kernels that still exceed a driver's cap.
#include "kir/kir.h"

#include <algorithm>

namespace kiln::kir {
namespace {

bool unrollable_body(const Stmt &s) {
  switch (s.kind()) {
  case StmtKind::For:
  case StmtKind::DeclareVar: // a copy per unrolled iteration would redeclare it in one scope
  case StmtKind::Barrier:
    return false;
  case StmtKind::If: {
    const auto *n = s.as<If>();
    return unrollable_body(n->then_case) &&
           (!n->else_case.defined() || unrollable_body(n->else_case));
  }
  case StmtKind::Let: return unrollable_body(s.as<Let>()->body);
  case StmtKind::Block:
    for (const Stmt &c : s.as<Block>()->stmts)
      if (!unrollable_body(c)) return false;
    return true;
  case StmtKind::Store:
  case StmtKind::Assign:
  case StmtKind::StoreShared:
  case StmtKind::VectorStore:
  case StmtKind::MatrixStore: return true;
  }
  return true;
}

Stmt unroll(const Stmt &s, int64_t min_extent, int factor) {
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *n = s.as<For>();
    Stmt body = unroll(n->body, min_extent, factor);
    const auto *extent = n->extent.as<IntImm>();
    if (!extent || extent->value < min_extent || !unrollable_body(body))
      return body.same_as(n->body) ? s : for_loop(n->var, n->begin, n->extent, body);
    const ScalarType t = n->var.type();
    const int64_t e = extent->value, whole = e / factor;
    Expr j = var(n->var.as<Var>()->name + ".unrolled", t);
    std::vector<Stmt> copies;
    for (int k = 0; k < factor; ++k)
      copies.push_back(let(n->var, n->begin + j * factor + k, body));
    std::vector<Stmt> out{for_loop(j, imm(t, 0), imm(t, whole), block(std::move(copies)))};
    for (int64_t r = whole * factor; r < e; ++r) out.push_back(let(n->var, n->begin + r, body));
    return block(std::move(out));
  }
  case StmtKind::If: {
    const auto *n = s.as<If>();
    Stmt t = unroll(n->then_case, min_extent, factor);
    Stmt f = n->else_case.defined() ? unroll(n->else_case, min_extent, factor) : Stmt();
    return if_then(n->cond, t, f);
  }
  case StmtKind::Let: {
    const auto *n = s.as<Let>();
    return let(n->var, n->value, unroll(n->body, min_extent, factor));
  }
  case StmtKind::Block: {
    std::vector<Stmt> out;
    for (const Stmt &c : s.as<Block>()->stmts) out.push_back(unroll(c, min_extent, factor));
    return block(std::move(out));
  }
  case StmtKind::Store:
  case StmtKind::DeclareVar:
  case StmtKind::Assign:
  case StmtKind::Barrier:
  case StmtKind::StoreShared:
  case StmtKind::VectorStore:
  case StmtKind::MatrixStore: return s;
  }
  return s;
}

} // namespace

int64_t loop_iterations(const Stmt &s) {
  constexpr int64_t kCap = int64_t(1) << 40; // saturate instead of overflowing
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *n = s.as<For>();
    const auto *extent = n->extent.as<IntImm>();
    const int64_t inner = loop_iterations(n->body);
    if (!extent || inner < 0) return -1;
    if (extent->value <= 0) return 0;
    return std::min(kCap, extent->value * (1 + std::min(inner, kCap / extent->value)));
  }
  case StmtKind::If: {
    const auto *n = s.as<If>();
    const int64_t a = loop_iterations(n->then_case);
    const int64_t b = n->else_case.defined() ? loop_iterations(n->else_case) : 0;
    return a < 0 || b < 0 ? -1 : std::max(a, b);
  }
  case StmtKind::Let: return loop_iterations(s.as<Let>()->body);
  case StmtKind::Block: {
    int64_t total = 0;
    for (const Stmt &c : s.as<Block>()->stmts) {
      const int64_t n = loop_iterations(c);
      if (n < 0) return -1;
      total = std::min(kCap, total + n);
    }
    return total;
  }
  case StmtKind::Store:
  case StmtKind::DeclareVar:
  case StmtKind::Assign:
  case StmtKind::Barrier:
  case StmtKind::StoreShared:
  case StmtKind::VectorStore:
  case StmtKind::MatrixStore: return 0;
  }
  return 0;
}

Kernel unroll_long_loops(const Kernel &k, int64_t min_extent, int factor) {
  Kernel out = k;
  out.body = unroll(k.body, min_extent, factor);
  return out;
}

} // namespace kiln::kir
