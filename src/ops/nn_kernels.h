// Kernels and helpers shared by the nn op family (src/ops/nn*.cpp): a cache-blocked GEMM,
// typed views of tensors in a compute type, and the window geometry of conv/pool ops.
#pragma once

#include "ir/op_registry.h"

#include <string>
#include <vector>

namespace kiln::nn {

// Compute types: f32 runs in float (fast path); f64/f16/bf16 in double; integers in uint64
// (two's complement wrap-around, the bit pattern of int64 results).
enum class CType { f32, f64, u64 };
CType compute_type(DType t);

// The elements of a tensor as a contiguous array of T (no copy when the dtype is native).
template <class T> class View {
public:
  explicit View(const Tensor &t);
  const T *data() const { return ptr_; }
  T operator[](int64_t i) const { return ptr_[i]; }

private:
  std::vector<T> buf_;
  const T *ptr_ = nullptr;
};

// Stores `v` (numel elements of T) into a new tensor of `dt` and `shape`.
template <class T> Tensor store(const std::vector<T> &v, DType dt, const Shape &shape);

// C[M][N] (+)= A[M][K] * B[K][N]; row-major, leading dims lda/ldb/ldc. Overwrites C unless
// `accumulate`. T is float, double or uint64_t.
template <class T>
void gemm(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *B, int64_t ldb,
          T *C, int64_t ldc, bool accumulate);
// Same with B given transposed: Bt[N][K].
template <class T>
void gemm_bt(int64_t M, int64_t N, int64_t K, const T *A, int64_t lda, const T *Bt, int64_t ldbt,
             T *C, int64_t ldc, bool accumulate);

// The sliding-window geometry of conv and pool ops over `r` spatial dims.
struct Window {
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> pad_begin, pad_end;
  std::vector<int64_t> in, out; // spatial input / output dims
  int64_t rank() const { return static_cast<int64_t>(kernel.size()); }
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// Reads strides, dilations, pads, auto_pad and ceil_mode from `op` and computes pads and
// output dims for spatial input dims `in` (kDynamic dims give kDynamic output dims).
Result<Window> make_window(const Op &op, std::vector<int64_t> kernel, const Shape &in,
                           bool allow_ceil);

// Refuses results too large to compute in memory (a clear error instead of a failed
// allocation); `shape` may contain dims from a malformed model.
Status check_result_size(const Op &op, const Shape &shape);

// Reads an int-list attribute of length n (default `dflt` repeated); error when the length
// differs or a value is below `min`.
Result<std::vector<int64_t>> attr_list(const Op &op, const char *name, size_t n, int64_t dflt,
                                       int64_t min);

} // namespace kiln::nn

namespace kiln::nn {

// Unfolds the output positions of lines [line0, line0 + nlines) of `w` (a line is a run of
// the last output dim) from image X [C][prod(w.in)] into col [C * prod(kernel)][nlines * OW];
// positions outside the image are 0.
template <class T>
void im2col(const T *X, int64_t C, const Window &w, int64_t line0, int64_t nlines, T *col);
// The adjoint: adds col [C * prod(kernel)][prod(w.out)] into image img [C][prod(w.in)].
template <class T> void col2im_add(const T *col, int64_t C, const Window &w, T *img);

} // namespace kiln::nn
