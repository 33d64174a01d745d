#include "compiler/lowering/float_math.h"

namespace kiln::compiler {

using namespace kir;

namespace {
Expr c(const Expr &like, double v) { return make_const(like.type(), v); }
} // namespace

Expr tanh_expr(const Expr &x) { return call(Intrinsic::tanh, {x}); }

Expr sigmoid_expr(const Expr &x) { return c(x, 1) / (c(x, 1) + call(Intrinsic::exp, {-x})); }

// log1p(u) = 2 atanh(s) with s = u / (2 + u), by atanh's odd series through s^13 for |u| < 0.5
// (|s| <= 1/3: truncation below 2e-8 relative); log(1 + u) above, where log's absolute error is
// small against the result. Drivers' log near 1 may carry an absolute error of 2^-21 (1e-2
// relative at u = 5e-5 on NVIDIA), so log is never evaluated there.
Expr log1p_expr(const Expr &u) {
  Expr s = u / (c(u, 2) + u), s2 = s * s;
  Expr poly = c(u, 1.0 / 13);
  for (int d = 11; d >= 1; d -= 2)
    poly = c(u, 1.0 / d) + s2 * poly;
  return select(call(Intrinsic::abs, {u}) < c(u, 0.5), c(u, 2) * s * poly,
                call(Intrinsic::log, {c(u, 1) + u}));
}

Expr softplus_expr(const Expr &x) {
  return log1p_expr(call(Intrinsic::exp, {-call(Intrinsic::abs, {x})})) + max(x, c(x, 0));
}

} // namespace kiln::compiler
