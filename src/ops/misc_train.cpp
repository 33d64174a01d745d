// Training optimisers (ai.onnx.preview.training): kiln.adagrad, kiln.adam, kiln.momentum.
// Operands: R (learning rate), T (step count), then per-tensor groups laid out as in ONNX
// (X1..Xn, G1..Gn, and the optimiser state tensors). Results: the updated tensors in the
// ONNX order.
//
// kiln.dropout(x, ratio f-scalar, training_mode bool-scalar) -> (y, mask bool): ONNX Dropout
// whose training_mode (or ratio) is only known when the graph runs. Outside training, or with
// ratio 0, y = x and the mask is all true; training with a ratio above 0 draws random numbers,
// which kiln does not do: that is an error when it runs, never a made-up mask.
#include "ops/misc_internal.h"

#include <cstring>

namespace kiln::misc {
namespace {

int per_group(std::string_view name) { return name == "kiln.adam" ? 4 : 3; }

Result<int64_t> groups(const Op &op, size_t n_operands) {
  const int k = per_group(op.name());
  if (n_operands < 2 + static_cast<size_t>(k) || (n_operands - 2) % k != 0)
    return Status::error(fmt::format("{}: expected R, T and groups of {} tensors, got {} operands",
                                     op.describe(), k, n_operands));
  return static_cast<int64_t>((n_operands - 2) / k);
}

Status infer_train(InferCtx &ctx) {
  KILN_ASSIGN(int64_t n, groups(ctx.op, ctx.in.size()));
  const int k = per_group(ctx.op.name());
  ctx.out.clear();
  // Results: X_new for every group, then each state tensor kind for every group.
  for (int s = 0; s < k - 1; ++s)
    for (int64_t i = 0; i < n; ++i) {
      const size_t src = static_cast<size_t>(2 + (s == 0 ? 0 : s + 1) * n + i);
      if (!ctx.present(src)) return ctx.error("optimiser operands must all be present");
      KILN_TRY(expect_float(ctx.op, "optimised tensor", ctx.type(src).dtype));
      ctx.out.push_back(ctx.type(src));
    }
  return Status::ok();
}

Status verify_momentum(const Op &op) {
  std::string m = op.attr_str("mode", "standard");
  if (m != "standard" && m != "nesterov")
    return Status::error(fmt::format("{}: unknown mode '{}'", op.describe(), m));
  return Status::ok();
}

struct Group {
  std::vector<double> x, g, s1, s2;
};

Status eval_train(EvalCtx &ctx) {
  const Op &op = ctx.op;
  KILN_ASSIGN(int64_t n, groups(op, ctx.in.size()));
  KILN_ASSIGN(double r, scalar_f64(ctx, 0, "R"));
  KILN_ASSIGN(int64_t t, scalar_i64(ctx, 1, "T"));
  const int k = per_group(op.name());
  std::vector<Tensor> xs, s1s, s2s;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor &X = ctx.input(2 + i);
    for (int s = 1; s < k; ++s)
      if (ctx.input(2 + s * n + i).shape() != X.shape())
        return ctx.error("gradient and state tensors must have the shape of X");
    std::vector<double> x = X.to_f64s(), g = ctx.input(2 + n + i).to_f64s();
    std::vector<double> a = ctx.input(2 + 2 * n + i).to_f64s();
    std::vector<double> b = k == 4 ? ctx.input(2 + 3 * n + i).to_f64s() : std::vector<double>{};
    const double norm = op.attr_float("norm_coefficient", 0.0);
    for (size_t e = 0; e < x.size(); ++e) {
      const double gr = norm * x[e] + g[e];
      if (op.name() == "kiln.adagrad") {
        const double lr = r / (1 + static_cast<double>(t) * op.attr_float("decay_factor", 0.0));
        a[e] += gr * gr;
        x[e] -= lr * gr / (std::sqrt(a[e]) + op.attr_float("epsilon", 0.0));
      } else if (op.name() == "kiln.momentum") {
        const double al = op.attr_float("alpha", 0.0), be = t > 0 ? op.attr_float("beta", 0.0) : 1.0;
        a[e] = al * a[e] + be * gr;
        x[e] -= op.attr_str("mode", "standard") == "nesterov" ? r * (gr + al * a[e]) : r * a[e];
      } else {
        const double al = op.attr_float("alpha", 0.9), be = op.attr_float("beta", 0.999);
        a[e] = al * a[e] + (1 - al) * gr;
        b[e] = be * b[e] + (1 - be) * gr * gr;
        const double td = static_cast<double>(t);
        const double lr = t > 0 ? r * std::sqrt(1 - std::pow(be, td)) / (1 - std::pow(al, td)) : r;
        x[e] -= lr * a[e] / (std::sqrt(b[e]) + op.attr_float("epsilon", 0.0));
        x[e] *= 1 - op.attr_float("norm_coefficient_post", 0.0);
      }
    }
    xs.push_back(tensor_from_f64(x, X.shape(), X.dtype()));
    s1s.push_back(tensor_from_f64(a, X.shape(), ctx.input(2 + 2 * n + i).dtype()));
    if (k == 4) s2s.push_back(tensor_from_f64(b, X.shape(), ctx.input(2 + 3 * n + i).dtype()));
  }
  ctx.out = xs;
  ctx.out.insert(ctx.out.end(), s1s.begin(), s1s.end());
  ctx.out.insert(ctx.out.end(), s2s.begin(), s2s.end());
  return Status::ok();
}

} // namespace

Status infer_dropout(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  KILN_TRY(expect_float(ctx.op, "ratio", ctx.type(1).dtype));
  if (ctx.type(2).dtype != DType::boolean)
    return ctx.error(fmt::format("training_mode must be bool, got {}",
                                 dtype_name(ctx.type(2).dtype)));
  ctx.out = {x, TensorType{DType::boolean, x.dims, x.ranked}};
  return Status::ok();
}

Status eval_dropout(EvalCtx &ctx) {
  KILN_ASSIGN(double ratio, scalar_f64(ctx, 1, "ratio"));
  KILN_ASSIGN(int64_t training, scalar_i64(ctx, 2, "training_mode"));
  if (training && ratio != 0.0)
    return ctx.error(fmt::format("training-mode Dropout with ratio {} draws random numbers, "
                                 "which kiln does not implement",
                                 ratio));
  const Tensor &x = ctx.input(0);
  Tensor mask(DType::boolean, x.shape());
  if (mask.nbytes()) std::memset(mask.raw_mut(), 1, mask.nbytes());
  ctx.out = {x, std::move(mask)};
  return Status::ok();
}

void register_train_ops(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.dropout", .min_operands = 3, .max_operands = 3, .min_results = 2,
              .max_results = 2, .infer = infer_dropout, .eval = eval_dropout,
              .foldable = false});
  for (const char *name : {"kiln.adagrad", "kiln.adam", "kiln.momentum"}) {
    r.add(OpDef{
        .name = name,
        .min_operands = 2,
        .max_operands = -1,
        .min_results = 1,
        .max_results = -1,
        .verify = std::string_view(name) == "kiln.momentum" ? verify_momentum
                                                             : std::function<Status(const Op &)>{},
        .infer = infer_train,
        .eval = eval_train,
        .foldable = false,
    });
  }
}

} // namespace kiln::misc
