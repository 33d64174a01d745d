// Signal processing: kiln.dft, kiln.stft, kiln.window (hann/hamming/blackman) and
// kiln.mel_weight_matrix. Transforms are direct O(n^2) sums in double (a reference, exact
// for any length).
#include "ops/misc_internal.h"

#include <complex>
#include <numbers>

namespace kiln::misc {
namespace {

using cplx = std::complex<double>;
constexpr double kPi = std::numbers::pi;

// ---- DFT ----

struct DftPlan {
  int64_t axis = 0, n = 0, in_len = 0, out_len = 0;
  bool inverse = false, onesided = false, real_out = false;
};

// Axis from the operand (when present) or the attribute, normalised against X's rank; the
// last axis (real/imaginary) is not a signal axis.
bool dft_axis(const Op &op, const Tensor *axis_t, bool axis_operand, int64_t rank, int64_t &axis) {
  int64_t a = op.attr_int("axis", 1);
  if (axis_operand) {
    if (!axis_t || axis_t->numel() != 1) return false;
    a = axis_t->get_i64(0);
  }
  if (a < 0) a += rank;
  axis = a;
  return true;
}

Status check_dft_axis(const Op &op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank - 1)
    return Status::error(fmt::format("{}: axis {} is out of range for rank {} (the last axis "
                                     "holds real/imaginary parts)", op.describe(), axis, rank));
  return Status::ok();
}

int64_t dft_out_len(bool inverse, bool onesided, int64_t n) {
  return (!inverse && onesided) ? n / 2 + 1 : n;
}

Status infer_dft(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "input", x.dtype));
  if (!x.ranked || x.rank() < 2) return ctx.error("input must have rank >= 2");
  if (x.dims.back() >= 0 && x.dims.back() != 1 && x.dims.back() != 2)
    return ctx.error("the last dim must be 1 (real) or 2 (complex)");
  const bool inverse = ctx.op.attr_int("inverse", 0) != 0;
  const bool onesided = ctx.op.attr_int("onesided", 0) != 0;
  Shape out = x.dims;
  out.back() = inverse && onesided ? 1 : 2;
  int64_t axis = 0;
  if (!dft_axis(ctx.op, const_operand(ctx, 2), ctx.present(2), x.rank(), axis)) {
    for (size_t i = 0; i + 1 < out.size(); ++i) out[i] = kDynamic;
    ctx.out = {TensorType{x.dtype, out, true}};
    return Status::ok();
  }
  KILN_TRY(check_dft_axis(ctx.op, axis, x.rank()));
  int64_t n = x.dims[axis];
  if (inverse && onesided && n >= 0) {
    // The full length of a one-sided spectrum: 2 * (n - 1), checked (hostile dims).
    const std::optional<int64_t> full = checked_mul(n - 1, 2);
    if (!full) return overflow_error(ctx.op, fmt::format("the signal length 2 x ({} - 1)", n));
    n = *full;
  }
  if (ctx.present(1) && !const_scalar_i64(ctx, 1, n)) n = kDynamic;
  out[axis] = n < 0 ? kDynamic : dft_out_len(inverse, onesided, n);
  ctx.out = {TensorType{x.dtype, out, true}};
  return Status::ok();
}

// Transforms one line: in (complex, length in_len) -> out (length out_len).
void dft_line(const DftPlan &p, const std::vector<cplx> &in, std::vector<cplx> &out) {
  const int64_t n = p.n;
  std::vector<cplx> src(static_cast<size_t>(n));
  if (p.inverse && p.onesided) {
    // Hermitian extension of the one-sided spectrum (numpy irfft semantics).
    const int64_t m = n / 2 + 1;
    for (int64_t k = 0; k < m && k < p.in_len; ++k) src[k] = in[k];
    for (int64_t k = m; k < n; ++k) src[k] = std::conj(src[n - k]);
  } else {
    for (int64_t k = 0; k < n && k < p.in_len; ++k) src[k] = in[k];
  }
  const double sign = p.inverse ? 1.0 : -1.0;
  for (int64_t f = 0; f < p.out_len; ++f) {
    cplx s = 0;
    for (int64_t t = 0; t < n; ++t) {
      // f * t may pass INT64_MAX for a long transform: reduced in 128 bits.
      const int64_t ft = static_cast<int64_t>(static_cast<__int128>(f) * t % n);
      const double ang = sign * 2 * kPi * static_cast<double>(ft) / static_cast<double>(n);
      s += src[t] * cplx(std::cos(ang), std::sin(ang));
    }
    out[f] = p.inverse ? s / static_cast<double>(n) : s;
  }
}

Status eval_dft(EvalCtx &ctx) {
  const Tensor &X = ctx.input(0);
  const int64_t rank = X.rank();
  if (rank < 2 || (X.shape().back() != 1 && X.shape().back() != 2))
    return ctx.error("input must have rank >= 2 and a last dim of 1 or 2");
  DftPlan p;
  p.inverse = ctx.op.attr_int("inverse", 0) != 0;
  p.onesided = ctx.op.attr_int("onesided", 0) != 0;
  const Tensor *axis_t = ctx.present(2) ? &ctx.input(2) : nullptr;
  if (!dft_axis(ctx.op, axis_t, ctx.present(2), rank, p.axis)) return ctx.error("axis must be a scalar");
  KILN_TRY(check_dft_axis(ctx.op, p.axis, rank));
  p.in_len = X.shape()[p.axis];
  if (p.inverse && p.onesided) {
    const std::optional<int64_t> full = checked_mul(p.in_len - 1, 2);
    if (!full) return overflow_error(ctx.op, fmt::format("the signal length 2 x ({} - 1)", p.in_len));
    p.n = *full;
  } else {
    p.n = p.in_len;
  }
  if (ctx.present(1)) {
    KILN_ASSIGN(p.n, scalar_i64(ctx, 1, "dft_length"));
  }
  if (p.n <= 0) return ctx.error(fmt::format("dft_length {} must be positive", p.n));
  p.out_len = dft_out_len(p.inverse, p.onesided, p.n);
  p.real_out = p.inverse && p.onesided;
  const int64_t cin = X.shape().back(), cout = p.real_out ? 1 : 2;
  Shape os = X.shape();
  os[p.axis] = p.out_len;
  os.back() = cout;
  if (X.numel() == 0 || shape_numel(os) == 0) {
    // Nothing to transform: no line buffers of a (possibly huge) dft_length.
    KILN_ASSIGN(Tensor empty, Tensor::allocate(X.dtype(), os));
    ctx.out = {std::move(empty)};
    return Status::ok();
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < p.axis; ++i) outer *= X.shape()[i];
  for (int64_t i = p.axis + 1; i + 1 < rank; ++i) inner *= X.shape()[i];
  std::vector<double> x = X.to_f64s();
  std::vector<double> y(static_cast<size_t>(shape_numel(os)));
  std::vector<cplx> line(static_cast<size_t>(p.in_len)), res(static_cast<size_t>(p.out_len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      for (int64_t k = 0; k < p.in_len; ++k) {
        const int64_t off = ((o * p.in_len + k) * inner + i) * cin;
        line[k] = cplx(x[off], cin == 2 ? x[off + 1] : 0.0);
      }
      dft_line(p, line, res);
      for (int64_t k = 0; k < p.out_len; ++k) {
        const int64_t off = ((o * p.out_len + k) * inner + i) * cout;
        y[off] = res[k].real();
        if (cout == 2) y[off + 1] = res[k].imag();
      }
    }
  ctx.out = {tensor_from_f64(y, os, X.dtype())};
  return Status::ok();
}

// ---- STFT ----

Status infer_stft(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_TRY(expect_float(ctx.op, "signal", x.dtype));
  KILN_TRY(expect_rank(ctx.op, "signal", x, {3}));
  int64_t step = 0, fl = kDynamic;
  if (ctx.present(2) && ctx.type(2).ranked && ctx.type(2).rank() == 1) fl = ctx.type(2).dims[0];
  if (ctx.present(3) && !const_scalar_i64(ctx, 3, fl)) fl = kDynamic;
  if (!ctx.present(2) && !ctx.present(3)) fl = x.dims[1];
  int64_t frames = kDynamic, bins = kDynamic;
  if (const_scalar_i64(ctx, 1, step) && step > 0 && fl > 0 && x.dims[1] >= fl)
    frames = 1 + (x.dims[1] - fl) / step;
  if (fl > 0) bins = ctx.op.attr_int("onesided", 1) ? fl / 2 + 1 : fl;
  ctx.out = {TensorType{x.dtype, {x.dims[0], frames, bins, 2}, true}};
  return Status::ok();
}

Status eval_stft(EvalCtx &ctx) {
  const Tensor &X = ctx.input(0);
  if (X.rank() != 3 || (X.shape()[2] != 1 && X.shape()[2] != 2))
    return ctx.error("signal must be [batch, length, 1 or 2]");
  const int64_t B = X.shape()[0], L = X.shape()[1], C = X.shape()[2];
  KILN_ASSIGN(int64_t step, scalar_i64(ctx, 1, "frame_step"));
  int64_t fl = ctx.present(2) ? ctx.input(2).numel() : L;
  if (ctx.present(3)) {
    KILN_ASSIGN(fl, scalar_i64(ctx, 3, "frame_length"));
  }
  if (ctx.present(2) && (ctx.input(2).rank() != 1 || ctx.input(2).numel() != fl))
    return ctx.error("window must be 1-D with frame_length elements");
  if (step <= 0 || fl <= 0 || fl > L)
    return ctx.error(fmt::format("invalid frame_step {} / frame_length {} for signal length {}",
                                 step, fl, L));
  const int64_t frames = 1 + (L - fl) / step;
  DftPlan p;
  p.n = p.in_len = fl;
  p.out_len = ctx.op.attr_int("onesided", 1) ? fl / 2 + 1 : fl;
  if (B == 0) {
    // An empty batch may declare any signal length: no frame buffers of that size.
    KILN_ASSIGN(Tensor empty, Tensor::allocate(X.dtype(), {0, frames, p.out_len, 2}));
    ctx.out = {std::move(empty)};
    return Status::ok();
  }
  std::vector<double> win = ctx.present(2) ? ctx.input(2).to_f64s() : std::vector<double>(fl, 1.0);
  std::vector<double> x = X.to_f64s();
  std::vector<double> y(static_cast<size_t>(B * frames * p.out_len * 2));
  std::vector<cplx> line(fl), res(p.out_len);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t t = 0; t < fl; ++t) {
        const int64_t off = (b * L + f * step + t) * C;
        line[t] = cplx(x[off], C == 2 ? x[off + 1] : 0.0) * win[t];
      }
      dft_line(p, line, res);
      for (int64_t k = 0; k < p.out_len; ++k) {
        const int64_t off = ((b * frames + f) * p.out_len + k) * 2;
        y[off] = res[k].real();
        y[off + 1] = res[k].imag();
      }
    }
  ctx.out = {tensor_from_f64(y, {B, frames, p.out_len, 2}, X.dtype())};
  return Status::ok();
}

// ---- windows ----

Status verify_window(const Op &op) {
  std::string k = op.attr_str("kind", "");
  if (k != "hann" && k != "hamming" && k != "blackman")
    return Status::error(fmt::format("{}: unknown window kind '{}'", op.describe(), k));
  return Status::ok();
}

Status infer_window(InferCtx &ctx) {
  int64_t n = kDynamic;
  if (!const_scalar_i64(ctx, 0, n)) n = kDynamic;
  ctx.out = {TensorType{ctx.op.attr_dtype("dtype", DType::f32), {n < 0 ? kDynamic : n}, true}};
  return Status::ok();
}

Status eval_window(EvalCtx &ctx) {
  KILN_ASSIGN(int64_t size, scalar_i64(ctx, 0, "size"));
  if (size < 0) return ctx.error(fmt::format("window size {} is negative", size));
  const std::string kind = ctx.op.attr_str("kind", "");
  const double N = static_cast<double>(ctx.op.attr_int("periodic", 1) ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    const double x = 2 * kPi * static_cast<double>(i) / N;
    if (kind == "hann") w[i] = std::pow(std::sin(kPi * static_cast<double>(i) / N), 2);
    else if (kind == "hamming") w[i] = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(x);
    else w[i] = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x);
  }
  ctx.out = {tensor_from_f64(w, {size}, ctx.op.attr_dtype("dtype", DType::f32))};
  return Status::ok();
}

// ---- mel weight matrix ----

Status infer_mel(InferCtx &ctx) {
  int64_t mel = 0, dft = 0;
  Shape s{kDynamic, kDynamic};
  if (const_scalar_i64(ctx, 1, dft)) s[0] = dft / 2 + 1;
  if (const_scalar_i64(ctx, 0, mel)) s[1] = mel;
  if ((s[0] != kDynamic && dft <= 0) || (s[1] != kDynamic && mel <= 0))
    return ctx.error("num_mel_bins and dft_length must be positive");
  ctx.out = {TensorType{ctx.op.attr_dtype("dtype", DType::f32), s, true}};
  return Status::ok();
}

Status eval_mel(EvalCtx &ctx) {
  KILN_ASSIGN(int64_t mel, scalar_i64(ctx, 0, "num_mel_bins"));
  KILN_ASSIGN(int64_t dft, scalar_i64(ctx, 1, "dft_length"));
  KILN_ASSIGN(int64_t rate, scalar_i64(ctx, 2, "sample_rate"));
  KILN_ASSIGN(double lo, scalar_f64(ctx, 3, "lower_edge_hertz"));
  KILN_ASSIGN(double hi, scalar_f64(ctx, 4, "upper_edge_hertz"));
  if (mel <= 0 || dft <= 0 || rate <= 0)
    return ctx.error("num_mel_bins, dft_length and sample_rate must be positive");
  const int64_t bins = dft / 2 + 1;
  const double lo_mel = 2595 * std::log10(1 + lo / 700), hi_mel = 2595 * std::log10(1 + hi / 700);
  const double step = (hi_mel - lo_mel) / static_cast<double>(mel + 2);
  std::vector<int64_t> fb(static_cast<size_t>(mel + 2));
  for (int64_t i = 0; i < mel + 2; ++i) {
    double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + lo_mel) / 2595) - 1);
    fb[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> out(static_cast<size_t>(bins * mel), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) -> Status {
    if (j < 0 || j >= bins) return ctx.error("mel band edge is outside the spectrogram bins");
    out[j * mel + i] = v;
    return Status::ok();
  };
  for (int64_t i = 0; i < mel; ++i) {
    const int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
    if (c == l) KILN_TRY(set(c, i, 1.0));
    else
      for (int64_t j = l; j <= c; ++j) KILN_TRY(set(j, i, double(j - l) / double(c - l)));
    if (h > c)
      for (int64_t j = c; j < h; ++j) KILN_TRY(set(j, i, double(h - j) / double(h - c)));
  }
  ctx.out = {tensor_from_f64(out, {bins, mel}, ctx.op.attr_dtype("dtype", DType::f32))};
  return Status::ok();
}

} // namespace

void register_signal_ops(OpRegistry &r) {
  r.add(OpDef{.name = "kiln.dft", .min_operands = 1, .max_operands = 3, .infer = infer_dft, .eval = eval_dft});
  r.add(OpDef{.name = "kiln.stft", .min_operands = 2, .max_operands = 4, .infer = infer_stft,
              .eval = eval_stft});
  r.add(OpDef{.name = "kiln.window", .min_operands = 1, .max_operands = 1,
              .verify = verify_window, .infer = infer_window, .eval = eval_window});
  r.add(OpDef{.name = "kiln.mel_weight_matrix", .min_operands = 5, .max_operands = 5,
              .infer = infer_mel, .eval = eval_mel});
}

} // namespace kiln::misc
