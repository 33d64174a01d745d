// Float formulas several lowerings share, written so that their error stays within ONNX's
// tolerances on drivers with fast transcendentals (Vulkan's precision rules let exp/log/tanh
// carry absolute rather than relative error near 0 and 1). Every expression is in the float
// type of its argument. The Vulkan path's precision guarantees: docs/CONFORMANCE.md.
#pragma once

#include "kir/kir.h"

namespace kiln::compiler {

kir::Expr tanh_expr(const kir::Expr &x); // the tanh intrinsic (exact near 0 in every backend)
kir::Expr sigmoid_expr(const kir::Expr &x);
kir::Expr log1p_expr(const kir::Expr &u);    // log(1 + u), full relative precision for small u
kir::Expr softplus_expr(const kir::Expr &x); // log(1 + exp(x)), without overflow
} // namespace kiln::compiler
