// kiln.rnn: the ONNX recurrent networks (cell = "rnn", "gru" or "lstm") as one core op with a
// double-precision reference. Operands: X, W, R, B, sequence_lens, initial_h, initial_c, P
// (the last two only for LSTM); results Y, Y_h (and Y_c for LSTM).
#include "ops/misc_internal.h"

#include <algorithm>
#include <cctype>
#include <functional>

namespace kiln::misc {
namespace {

enum class Cell { rnn, gru, lstm };

Result<Cell> cell_of(const Op &op) {
  std::string c = op.attr_str("cell", "");
  if (c == "rnn") return Cell::rnn;
  if (c == "gru") return Cell::gru;
  if (c == "lstm") return Cell::lstm;
  return Status::error(fmt::format("{}: unknown cell '{}'", op.describe(), c));
}
int gates_of(Cell c) { return c == Cell::rnn ? 1 : c == Cell::gru ? 3 : 4; }
int num_funcs(Cell c) { return c == Cell::rnn ? 1 : c == Cell::gru ? 2 : 3; }

Result<int64_t> num_dirs(const Op &op) {
  std::string d = op.attr_str("direction", "forward");
  if (d == "forward" || d == "reverse") return 1;
  if (d == "bidirectional") return 2;
  return Status::error(fmt::format("{}: unknown direction '{}'", op.describe(), d));
}

using Act = std::function<double(double)>;

std::string lower(std::string s) {
  for (auto &ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Builds the activation functions (per direction: f[, g[, h]]), consuming alpha/beta values
// in order for the functions that take them.
Result<std::vector<Act>> make_acts(const Op &op, Cell cell, int64_t dirs) {
  std::vector<std::string> names;
  if (auto it = op.attrs.find("activations"); it != op.attrs.end()) {
    const auto *v = std::get_if<std::vector<std::string>>(&it->second);
    if (!v) return Status::error(op.describe() + ": 'activations' must be a list of strings");
    names = *v;
  }
  const size_t nf = static_cast<size_t>(num_funcs(cell));
  if (names.empty()) {
    std::vector<std::string> dflt = cell == Cell::rnn   ? std::vector<std::string>{"Tanh"}
                                    : cell == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                        : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), dflt.begin(), dflt.end());
  }
  if (names.size() == nf && dirs == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != nf * static_cast<size_t>(dirs))
    return Status::error(fmt::format("{}: expected {} activations, got {}", op.describe(),
                                     nf * dirs, names.size()));
  std::vector<double> alphas = op.attr_floats("activation_alpha");
  std::vector<double> betas = op.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  auto alpha = [&](double d) { return ai < alphas.size() ? alphas[ai++] : d; };
  auto beta = [&](double d) { return bi < betas.size() ? betas[bi++] : d; };
  std::vector<Act> acts;
  for (const auto &n0 : names) {
    std::string n = lower(n0);
    if (n == "tanh") acts.push_back([](double x) { return std::tanh(x); });
    else if (n == "sigmoid") acts.push_back([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    else if (n == "relu") acts.push_back([](double x) { return x > 0 ? x : 0.0; });
    else if (n == "softsign") acts.push_back([](double x) { return x / (1 + std::abs(x)); });
    else if (n == "softplus") acts.push_back([](double x) { return std::log1p(std::exp(x)); });
    else if (n == "affine") {
      double a = alpha(1.0), b = beta(0.0);
      acts.push_back([a, b](double x) { return a * x + b; });
    } else if (n == "leakyrelu") {
      double a = alpha(0.01);
      acts.push_back([a](double x) { return x >= 0 ? x : a * x; });
    } else if (n == "thresholdedrelu") {
      double a = alpha(1.0);
      acts.push_back([a](double x) { return x > a ? x : 0.0; });
    } else if (n == "scaledtanh") {
      double a = alpha(1.0), b = beta(1.0);
      acts.push_back([a, b](double x) { return a * std::tanh(b * x); });
    } else if (n == "hardsigmoid") {
      double a = alpha(0.2), b = beta(0.5);
      acts.push_back([a, b](double x) { return std::clamp(a * x + b, 0.0, 1.0); });
    } else if (n == "elu") {
      double a = alpha(1.0);
      acts.push_back([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); });
    } else {
      return Status::error(fmt::format("{}: activation '{}' is not supported", op.describe(), n0));
    }
  }
  return acts;
}

Status verify_rnn(const Op &op) {
  KILN_ASSIGN(Cell cell, cell_of(op));
  KILN_ASSIGN(int64_t dirs, num_dirs(op));
  KILN_TRY(make_acts(op, cell, dirs).status());
  if (op.attr_int("hidden_size", 0) <= 0)
    return Status::error(op.describe() + ": hidden_size must be > 0");
  if (op.attr_int("layout", 0) != 0 && op.attr_int("layout", 0) != 1)
    return Status::error(op.describe() + ": layout must be 0 or 1");
  return Status::ok();
}

Status infer_rnn(InferCtx &ctx) {
  KILN_ASSIGN(Cell cell, cell_of(ctx.op));
  KILN_ASSIGN(int64_t D, num_dirs(ctx.op));
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "X", x.dtype));
  KILN_TRY(expect_rank(ctx.op, "X", x, {3}));
  const int64_t H = ctx.op.attr_int("hidden_size", 0);
  const bool bm = ctx.op.attr_int("layout", 0) == 1;
  const int64_t S = bm ? x.dims[1] : x.dims[0], B = bm ? x.dims[0] : x.dims[1];
  Shape y = bm ? Shape{B, S, D, H} : Shape{S, D, B, H};
  Shape yh = bm ? Shape{B, D, H} : Shape{D, B, H};
  ctx.out = {TensorType{x.dtype, y, true}, TensorType{x.dtype, yh, true}};
  if (cell == Cell::lstm) ctx.out.push_back(TensorType{x.dtype, yh, true});
  return Status::ok();
}

// Everything one evaluation needs, in canonical (layout 0) order, as doubles.
struct RnnRun {
  Cell cell;
  int64_t S, B, I, H, D;
  int G;
  double clip = 0; // 0: none
  bool lbr = false, input_forget = false;
  std::vector<Act> acts;
  std::vector<double> x, w, r, bias, p, h0, c0;
  std::vector<int64_t> lens;
  std::vector<double> y, yh, yc;

  // Activation k of direction d; clip bounds the gate inputs (not the LSTM cell state fed to h).
  double act(int64_t d, int k, double v, bool clipped = true) const {
    if (clip > 0 && clipped) v = std::clamp(v, -clip, clip);
    return acts[static_cast<size_t>(d * num_funcs(cell) + k)](v);
  }
  // sum_i a[i] * m[row, i] for a row-major matrix m with n columns.
  static double dot(const double *a, const double *m, int64_t row, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * m[row * n + i];
    return s;
  }
};

// One time step of direction d for batch b: updates h (and c).
void rnn_step(const RnnRun &R, int64_t d, const double *xt, std::vector<double> &h,
              std::vector<double> &c) {
  const int64_t H = R.H, GH = R.G * H;
  const double *W = &R.w[d * GH * R.I], *Rm = &R.r[d * GH * H];
  const double *Wb = &R.bias[d * 2 * GH], *Rb = Wb + GH;
  std::vector<double> pre(GH), hr(GH);
  for (int64_t k = 0; k < GH; ++k) {
    pre[k] = RnnRun::dot(xt, W, k, R.I) + Wb[k];
    hr[k] = RnnRun::dot(h.data(), Rm, k, H) + Rb[k];
  }
  std::vector<double> nh(H);
  if (R.cell == Cell::rnn) {
    for (int64_t k = 0; k < H; ++k) nh[k] = R.act(d, 0, pre[k] + hr[k]);
  } else if (R.cell == Cell::gru) {
    std::vector<double> rh(H);
    std::vector<double> z(H), rg(H);
    for (int64_t k = 0; k < H; ++k) {
      z[k] = R.act(d, 0, pre[k] + hr[k]);
      rg[k] = R.act(d, 0, pre[H + k] + hr[H + k]);
      rh[k] = rg[k] * h[k];
    }
    for (int64_t k = 0; k < H; ++k) {
      double hh = R.lbr ? pre[2 * H + k] + rg[k] * hr[2 * H + k]
                        : pre[2 * H + k] + RnnRun::dot(rh.data(), Rm, 2 * H + k, H) + Rb[2 * H + k];
      double ht = R.act(d, 1, hh);
      nh[k] = (1 - z[k]) * ht + z[k] * h[k];
    }
  } else {
    const double *P = &R.p[d * 3 * H];
    std::vector<double> nc(H);
    for (int64_t k = 0; k < H; ++k) {
      double ig = R.act(d, 0, pre[k] + hr[k] + P[k] * c[k]);
      double fg = R.input_forget ? 1 - ig : R.act(d, 0, pre[2 * H + k] + hr[2 * H + k] + P[2 * H + k] * c[k]);
      double cg = R.act(d, 1, pre[3 * H + k] + hr[3 * H + k]);
      nc[k] = fg * c[k] + ig * cg;
      double og = R.act(d, 0, pre[H + k] + hr[H + k] + P[H + k] * nc[k]);
      nh[k] = og * R.act(d, 2, nc[k], false);
    }
    c = nc;
  }
  h = nh;
}

void run_rnn(RnnRun &R, bool reverse_only) {
  const int64_t S = R.S, B = R.B, H = R.H, D = R.D;
  R.y.assign(static_cast<size_t>(S * D * B * H), 0.0);
  R.yh.assign(static_cast<size_t>(D * B * H), 0.0);
  R.yc.assign(R.yh.size(), 0.0);
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = reverse_only || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(R.h0.begin() + (d * B + b) * H, R.h0.begin() + (d * B + b + 1) * H);
      std::vector<double> c(R.c0.begin() + (d * B + b) * H, R.c0.begin() + (d * B + b + 1) * H);
      const int64_t len = R.lens.empty() ? S : R.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        rnn_step(R, d, &R.x[(t * B + b) * R.I], h, c);
        std::copy(h.begin(), h.end(), R.y.begin() + ((t * D + d) * B + b) * H);
      }
      std::copy(h.begin(), h.end(), R.yh.begin() + (d * B + b) * H);
      std::copy(c.begin(), c.end(), R.yc.begin() + (d * B + b) * H);
    }
  }
}

// Swaps the first two axes of a 3-D array [a, b, n].
std::vector<double> swap01(const std::vector<double> &v, int64_t a, int64_t b, int64_t n) {
  std::vector<double> o(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      std::copy_n(v.begin() + (i * b + j) * n, n, o.begin() + (j * a + i) * n);
  return o;
}

// Reads an optional operand of the expected shape (zeros when absent).
Result<std::vector<double>> opt_input(const EvalCtx &ctx, size_t i, const Shape &want,
                                      const char *what) {
  if (!ctx.present(i)) return std::vector<double>(static_cast<size_t>(shape_numel(want)), 0.0);
  if (ctx.input(i).shape() != want)
    return ctx.error(fmt::format("{} has shape [{}], expected [{}]", what,
                                 shape_str(ctx.input(i).shape()), shape_str(want)));
  return ctx.input(i).to_f64s();
}

Status load_rnn(const EvalCtx &ctx, RnnRun &R, bool bm) {
  const Tensor &X = ctx.input(0);
  if (X.rank() != 3) return ctx.error("X must be 3-D");
  R.S = bm ? X.shape()[1] : X.shape()[0];
  R.B = bm ? X.shape()[0] : X.shape()[1];
  R.I = X.shape()[2];
  // hidden_size is an attribute: the gate widths derived from it must fit int64 (a
  // zero-length sequence reaches here with any hidden_size).
  const std::optional<int64_t> gh = checked_mul(R.G, R.H), gh2 = checked_mul(2 * R.G, R.H);
  if (!gh || !gh2 || !checked_mul(3, R.H))
    return overflow_error(ctx.op, fmt::format("the gate width for hidden_size {}", R.H));
  const int64_t GH = *gh;
  R.x = X.to_f64s();
  if (bm) R.x = swap01(R.x, R.B, R.S, R.I);
  KILN_ASSIGN(R.w, opt_input(ctx, 1, {R.D, GH, R.I}, "W"));
  KILN_ASSIGN(R.r, opt_input(ctx, 2, {R.D, GH, R.H}, "R"));
  KILN_ASSIGN(R.bias, opt_input(ctx, 3, {R.D, 2 * GH}, "B"));
  const Shape hs = bm ? Shape{R.B, R.D, R.H} : Shape{R.D, R.B, R.H};
  KILN_ASSIGN(R.h0, opt_input(ctx, 5, hs, "initial_h"));
  if (bm) R.h0 = swap01(R.h0, R.B, R.D, R.H);
  if (R.cell == Cell::lstm) {
    KILN_ASSIGN(R.c0, opt_input(ctx, 6, hs, "initial_c"));
    if (bm) R.c0 = swap01(R.c0, R.B, R.D, R.H);
    KILN_ASSIGN(R.p, opt_input(ctx, 7, {R.D, 3 * R.H}, "P"));
  } else {
    R.c0.assign(R.h0.size(), 0.0);
  }
  if (ctx.present(4)) {
    R.lens = ctx.input(4).to_i64s();
    if (static_cast<int64_t>(R.lens.size()) != R.B)
      return ctx.error("sequence_lens must have one entry per batch");
    for (int64_t l : R.lens)
      if (l < 0 || l > R.S) return ctx.error(fmt::format("sequence length {} is out of range", l));
  }
  return Status::ok();
}

Status eval_rnn(EvalCtx &ctx) {
  const Op &op = ctx.op;
  RnnRun R{};
  KILN_ASSIGN(R.cell, cell_of(op));
  KILN_ASSIGN(R.D, num_dirs(op));
  KILN_ASSIGN(R.acts, make_acts(op, R.cell, R.D));
  R.G = gates_of(R.cell);
  R.H = op.attr_int("hidden_size", 0);
  R.clip = op.has_attr("clip") ? op.attr_float("clip", 0.0) : 0.0;
  R.lbr = op.attr_int("linear_before_reset", 0) != 0;
  R.input_forget = op.attr_int("input_forget", 0) != 0;
  const bool bm = op.attr_int("layout", 0) == 1;
  KILN_TRY(load_rnn(ctx, R, bm));
  run_rnn(R, op.attr_str("direction", "forward") == "reverse");
  const DType dt = ctx.input(0).dtype();
  const int64_t S = R.S, B = R.B, D = R.D, H = R.H;
  if (bm) {
    // [S, D, B, H] -> [B, S, D, H]
    std::vector<double> y(R.y.size());
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t b = 0; b < B; ++b)
          std::copy_n(R.y.begin() + ((s * D + d) * B + b) * H, H,
                      y.begin() + ((b * S + s) * D + d) * H);
    ctx.out = {tensor_from_f64(y, {B, S, D, H}, dt),
               tensor_from_f64(swap01(R.yh, D, B, H), {B, D, H}, dt)};
    if (R.cell == Cell::lstm) ctx.out.push_back(tensor_from_f64(swap01(R.yc, D, B, H), {B, D, H}, dt));
  } else {
    ctx.out = {tensor_from_f64(R.y, {S, D, B, H}, dt), tensor_from_f64(R.yh, {D, B, H}, dt)};
    if (R.cell == Cell::lstm) ctx.out.push_back(tensor_from_f64(R.yc, {D, B, H}, dt));
  }
  return Status::ok();
}

} // namespace

void register_rnn_ops(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.rnn",
      .min_operands = 3,
      .max_operands = 8,
      .min_results = 2,
      .max_results = 3,
      .verify = verify_rnn,
      .infer = infer_rnn,
      .eval = eval_rnn,
  });
}

} // namespace kiln::misc
