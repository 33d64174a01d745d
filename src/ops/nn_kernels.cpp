#include "ops/nn_kernels.h"

#include "ops/op_util.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace kiln::nn {

CType compute_type(DType t) {
  if (t == DType::f32) return CType::f32;
  if (is_float(t)) return CType::f64;
  return CType::u64;
}

template <> View<float>::View(const Tensor &t) {
  if (t.dtype() == DType::f32) {
    ptr_ = t.data<float>();
    return;
  }
  buf_.resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) buf_[i] = static_cast<float>(t.get_f64(i));
  ptr_ = buf_.data();
}

template <> View<double>::View(const Tensor &t) {
  if (t.dtype() == DType::f64) {
    ptr_ = t.data<double>();
    return;
  }
  buf_.resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) buf_[i] = t.get_f64(i);
  ptr_ = buf_.data();
}

template <> View<uint64_t>::View(const Tensor &t) {
  if (t.dtype() == DType::i64 || t.dtype() == DType::u64) {
    ptr_ = t.data<uint64_t>();
    return;
  }
  buf_.resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) buf_[i] = static_cast<uint64_t>(t.get_i64(i));
  ptr_ = buf_.data();
}

namespace {
template <class T> DType native_dtype() {
  if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else return DType::i64;
}
} // namespace

template <class T> Tensor store(const std::vector<T> &v, DType dt, const Shape &shape) {
  Tensor t(native_dtype<T>(), shape);
  if (!v.empty()) std::memcpy(t.raw_mut(), v.data(), v.size() * sizeof(T));
  return dt == t.dtype() ? t : t.cast(dt);
}
template Tensor store<float>(const std::vector<float> &, DType, const Shape &);
template Tensor store<double>(const std::vector<double> &, DType, const Shape &);
template Tensor store<uint64_t>(const std::vector<uint64_t> &, DType, const Shape &);

// ---- GEMM ----------------------------------------------------------------------------------

namespace {

constexpr int64_t kNB = 256; // columns of C per tile
constexpr int64_t kKB = 256; // depth per pass over a tile
constexpr int64_t kMR = 4;   // rows of C per micro-kernel

// acc[r][0..jn) += sum_k A[r][k] * B[k][0..jn) for `rows` rows (1..kMR).
template <class T, int R>
void micro(int64_t jn, int64_t kn, const T *A, int64_t lda, const T *B, int64_t ldb,
           T (&acc)[kMR][kNB]) {
  for (int64_t k = 0; k < kn; ++k) {
    const T *b = B + k * ldb;
    T a[R];
    for (int r = 0; r < R; ++r) a[r] = A[r * lda + k];
    for (int64_t j = 0; j < jn; ++j) {
      const T bj = b[j];
      for (int r = 0; r < R; ++r) acc[r][j] += a[r] * bj;
    }
  }
}

template <class T>
void tile(int64_t rows, int64_t jn, int64_t kn, const T *A, int64_t lda, const T *B, int64_t ldb,
          T *C, int64_t ldc, bool load) {
  alignas(64) T acc[kMR][kNB];
  for (int64_t r = 0; r < rows; ++r) {
    if (load) std::copy(C + r * ldc, C + r * ldc + jn, acc[r]);
    else std::fill(acc[r], acc[r] + jn, T(0));
  }
  switch (rows) {
  case 4: micro<T, 4>(jn, kn, A, lda, B, ldb, acc); break;
  case 3: micro<T, 3>(jn, kn, A, lda, B, ldb, acc); break;
  case 2: micro<T, 2>(jn, kn, A, lda, B, ldb, acc); break;
  default: micro<T, 1>(jn, kn, A, lda, B, ldb, acc); break;
  }
  for (int64_t r = 0; r < rows; ++r) std::copy(acc[r], acc[r] + jn, C + r * ldc);
}

template <class T> T dot(int64_t K, const T *a, const T *b) {
  T s[8] = {};
  int64_t k = 0;
  for (; k + 8 <= K; k += 8)
    for (int l = 0; l < 8; ++l) s[l] += a[k + l] * b[k + l];
  T t = T(0);
  for (; k < K; ++k) t += a[k] * b[k];
  return t + ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

} // namespace

template <class T>
void gemm(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *B, int64_t ldb,
          T *C, int64_t ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, T(0));
    return;
  }
  for (int64_t j0 = 0; j0 < N; j0 += kNB) {
    const int64_t jn = std::min(kNB, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKB) {
      const int64_t kn = std::min(kKB, K - k0);
      const bool load = accumulate || k0 > 0;
      for (int64_t i = 0; i < M; i += kMR) {
        const int64_t rows = std::min(kMR, M - i);
        tile<T>(rows, jn, kn, A + i * lda + k0, lda, B + k0 * ldb + j0, ldb, C + i * ldc + j0, ldc,
                load);
      }
    }
  }
}

template <class T>
void gemm_bt(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *Bt, int64_t ldbt,
             T *C, int64_t ldc, bool accumulate) {
  if (M >= 8) {
    std::vector<T> B(static_cast<size_t>(K * N));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) B[k * N + n] = Bt[n * ldbt + k];
    gemm<T>(M, N, K, A, lda, B.data(), N, C, ldc, accumulate);
    return;
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t n = 0; n < N; ++n) {
      T v = dot<T>(K, A + i * lda, Bt + n * ldbt);
      C[i * ldc + n] = accumulate ? C[i * ldc + n] + v : v;
    }
}

#define KILN_GEMM_INST(T)                                                                          \
  template void gemm<T>(int64_t, int64_t, int64_t, const T *, int64_t, const T *, int64_t, T *,    \
                        int64_t, bool);                                                            \
  template void gemm_bt<T>(int64_t, int64_t, int64_t, const T *, int64_t, const T *, int64_t, T *, \
                           int64_t, bool);
KILN_GEMM_INST(float)
KILN_GEMM_INST(double)
KILN_GEMM_INST(uint64_t)
#undef KILN_GEMM_INST

// ---- Window geometry -------------------------------------------------------------------------

int64_t Window::in_size() const { return shape_numel(in); }
int64_t Window::out_size() const { return shape_numel(out); }
int64_t Window::kernel_size() const { return shape_numel(kernel); }

Status check_result_size(const Op &op, const Shape &shape) {
  constexpr int64_t kMax = int64_t(1) << 31; // elements (computed in up to 8-byte types)
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status::error(fmt::format("{}: negative result dim", op.describe()));
    if (d > 0 && n > kMax / d)
      return Status::error(fmt::format("{}: result [{}] is too large", op.describe(), shape_str(shape)));
    n *= d;
  }
  return Status::ok();
}

Result<std::vector<int64_t>> attr_list(const Op &op, const char *name, size_t n, int64_t dflt,
                                       int64_t min) {
  std::vector<int64_t> v = op.attr_ints(name, std::vector<int64_t>(n, dflt));
  if (v.empty() && n > 0) v.assign(n, dflt);
  if (v.size() != n)
    return Status::error(fmt::format("{}: attribute '{}' has {} values, expected {}",
                                     op.describe(), name, v.size(), n));
  for (int64_t x : v)
    if (x < min)
      return Status::error(fmt::format("{}: attribute '{}' has value {} (must be >= {})",
                                       op.describe(), name, x, min));
  return v;
}

namespace {

Status window_dim(const Op &op, Window &w, size_t i, const std::string &auto_pad, bool ceil) {
  const int64_t in = w.in[i], s = w.strides[i];
  if (in == kDynamic) {
    w.out[i] = kDynamic;
    return Status::ok();
  }
  // Kernel, strides and dilations are >= 1 and pads >= 0 (attr_list); each sum or product
  // of them with the input dim is checked: hostile models set them near INT64_MAX.
  std::optional<int64_t> ek = checked_mul(w.kernel[i] - 1, w.dilations[i]);
  if (ek) ek = checked_add(*ek, 1);
  if (!ek)
    return overflow_error(op, fmt::format("the dilated window of spatial dim {} (kernel {}, "
                                          "dilation {})",
                                          i, w.kernel[i], w.dilations[i]));
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    w.out[i] = in / s + (in % s != 0 ? 1 : 0);
    // (out - 1) * s lies in [-s, in), so only the sum with the window can be large.
    const int64_t total = std::max<int64_t>(0, ((w.out[i] - 1) * s - in) + *ek);
    w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    w.pad_end[i] = total - w.pad_begin[i];
    return Status::ok();
  }
  if (auto_pad == "VALID") w.pad_begin[i] = w.pad_end[i] = 0;
  std::optional<int64_t> padded = checked_add(in, w.pad_begin[i]);
  if (padded) padded = checked_add(*padded, w.pad_end[i]);
  if (!padded)
    return overflow_error(op, fmt::format("the padded input of spatial dim {} ({} + pads {} + {})",
                                          i, in, w.pad_begin[i], w.pad_end[i]));
  const int64_t len = *padded - *ek;
  if (len < 0)
    return Status::error(fmt::format("{}: the window ({} with dilation {}) is larger than the "
                                     "padded input ({}) in spatial dim {}",
                                     op.describe(), w.kernel[i], w.dilations[i], *padded, i));
  if (!ceil) {
    w.out[i] = len / s + 1;
  } else {
    w.out[i] = len / s + (len % s != 0 ? 1 : 0) + 1;
    // The last window must start inside the input or its left padding (in + pad_begin fits:
    // it is at most the padded size).
    std::optional<int64_t> last = checked_mul(w.out[i] - 1, s);
    if (!last || *last >= in + w.pad_begin[i]) --w.out[i];
  }
  return Status::ok();
}

} // namespace

Result<Window> make_window(const Op &op, std::vector<int64_t> kernel, const Shape &in,
                           bool allow_ceil) {
  const size_t r = kernel.size();
  if (in.size() != r)
    return Status::error(fmt::format("{}: kernel has {} spatial dims but the input has {}",
                                     op.describe(), r, in.size()));
  Window w;
  w.kernel = std::move(kernel);
  for (int64_t k : w.kernel)
    if (k < 1) return Status::error(op.describe() + ": kernel dims must be >= 1");
  KILN_ASSIGN(w.strides, attr_list(op, "strides", r, 1, 1));
  KILN_ASSIGN(w.dilations, attr_list(op, "dilations", r, 1, 1));
  KILN_ASSIGN(std::vector<int64_t> pads, attr_list(op, "pads", 2 * r, 0, 0));
  w.pad_begin.assign(pads.begin(), pads.begin() + r);
  w.pad_end.assign(pads.begin() + r, pads.end());
  w.in = in;
  w.out.assign(r, 0);
  const std::string auto_pad = op.attr_str("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    return Status::error(fmt::format("{}: auto_pad '{}' is not supported", op.describe(), auto_pad));
  const bool ceil = allow_ceil && op.attr_int("ceil_mode", 0) != 0;
  for (size_t i = 0; i < r; ++i) KILN_TRY(window_dim(op, w, i, auto_pad, ceil));
  return w;
}

} // namespace kiln::nn

// ---- im2col / col2im -------------------------------------------------------------------------

namespace kiln::nn {

namespace {

// Walks every (channel, kernel offset, output line) of a window and calls
// f(row, line, in_line_offset or -1 when the line lies in padding, iw0) where the input
// element of output column ow is at in_line_offset + iw0 + ow * stride (when in range).
template <class F> void for_each_line(int64_t C, const Window &w, int64_t line0, int64_t nlines, F &&f) {
  const int64_t r = w.rank();
  const int64_t ks = w.kernel_size();
  std::vector<int64_t> kk(r, 0), oc(r > 1 ? r - 1 : 0, 0);
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t kidx = 0; kidx < ks; ++kidx) {
      for (int64_t d = r - 1, t = kidx; d >= 0; --d) {
        kk[d] = t % w.kernel[d];
        t /= w.kernel[d];
      }
      const int64_t row = c * ks + kidx;
      const int64_t iw0 = kk[r - 1] * w.dilations[r - 1] - w.pad_begin[r - 1];
      for (int64_t l = 0; l < nlines; ++l) {
        int64_t t = line0 + l, off = 0;
        bool valid = true;
        for (int64_t d = r - 2; d >= 0; --d) {
          oc[d] = t % w.out[d];
          t /= w.out[d];
        }
        for (int64_t d = 0; d + 1 < r; ++d) {
          const int64_t ih = oc[d] * w.strides[d] - w.pad_begin[d] + kk[d] * w.dilations[d];
          valid = valid && ih >= 0 && ih < w.in[d];
          off = off * w.in[d] + ih;
        }
        f(row, l, valid ? (c * w.in_size() + off * w.in[r - 1]) : int64_t(-1), iw0);
      }
    }
  }
}

// Range [lo, hi) of output columns whose input column iw0 + ow * s lies in [0, W).
// ceil(a / s) without a + s - 1 (strides of hostile models reach INT64_MAX); a >= 0, s >= 1.
inline int64_t ceil_div(int64_t a, int64_t s) { return a / s + (a % s != 0 ? 1 : 0); }

inline void valid_cols(int64_t iw0, int64_t s, int64_t W, int64_t OW, int64_t &lo, int64_t &hi) {
  lo = std::min(OW, iw0 >= 0 ? 0 : ceil_div(-iw0, s));
  hi = iw0 >= W ? 0 : std::min(OW, ceil_div(W - iw0, s));
  hi = std::max(hi, lo);
}

} // namespace

template <class T>
void im2col(const T *X, int64_t C, const Window &w, int64_t line0, int64_t nlines, T *col) {
  const int64_t r = w.rank(), OW = w.out[r - 1], W = w.in[r - 1], s = w.strides[r - 1];
  const int64_t cp = nlines * OW;
  for_each_line(C, w, line0, nlines, [&](int64_t row, int64_t l, int64_t off, int64_t iw0) {
    T *dst = col + row * cp + l * OW;
    if (off < 0) {
      std::fill(dst, dst + OW, T(0));
      return;
    }
    int64_t lo, hi;
    valid_cols(iw0, s, W, OW, lo, hi);
    std::fill(dst, dst + lo, T(0));
    const int64_t base = off + iw0;
    if (s == 1) std::copy(X + base + lo, X + base + hi, dst + lo);
    else
      for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = X[base + ow * s];
    std::fill(dst + hi, dst + OW, T(0));
  });
}

template <class T> void col2im_add(const T *col, int64_t C, const Window &w, T *img) {
  const int64_t r = w.rank(), OW = w.out[r - 1], W = w.in[r - 1], s = w.strides[r - 1];
  const int64_t P = w.out_size();
  if (OW == 0) return;
  for_each_line(C, w, 0, P / OW, [&](int64_t row, int64_t l, int64_t off, int64_t iw0) {
    if (off < 0) return;
    const T *src = col + row * P + l * OW;
    int64_t lo, hi;
    valid_cols(iw0, s, W, OW, lo, hi);
    const int64_t base = off + iw0;
    for (int64_t ow = lo; ow < hi; ++ow) img[base + ow * s] += src[ow];
  });
}

#define KILN_IM2COL_INST(T)                                                                        \
  template void im2col<T>(const T *, int64_t, const Window &, int64_t, int64_t, T *);              \
  template void col2im_add<T>(const T *, int64_t, const Window &, T *);
KILN_IM2COL_INST(float)
KILN_IM2COL_INST(double)
KILN_IM2COL_INST(uint64_t)
#undef KILN_IM2COL_INST

} // namespace kiln::nn
