// The C backend's prelude, translation units, the system C compiler run and the backend object.
#include "target/c/c.h"

#include "kiln/artifact/cpu_abi.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kiln::cgen {

namespace {

// Helper functions by type. Integer division and remainder by zero give 0 and INT_MIN / -1
// wraps (C would trap); shift counts are taken modulo the width; f16 math goes through float.
constexpr const char *kPrelude = R"(
#include <math.h>
#include <stdint.h>

#define KILN_VEC(T, S) \
  typedef struct { T v[2]; } kv_##S##x2; \
  typedef struct { T v[3]; } kv_##S##x3; \
  typedef struct { T v[4]; } kv_##S##x4;
KILN_VEC(_Bool, b) KILN_VEC(int8_t, i8) KILN_VEC(uint8_t, u8) KILN_VEC(int16_t, i16)
KILN_VEC(uint16_t, u16) KILN_VEC(int32_t, i32) KILN_VEC(uint32_t, u32) KILN_VEC(int64_t, i64)
KILN_VEC(uint64_t, u64) KILN_VEC(_Float16, f16) KILN_VEC(float, f32) KILN_VEC(double, f64)

#define KILN_MINMAX(T, S) \
  static inline T kiln_min_##S(T a, T b) { return b < a ? b : a; } \
  static inline T kiln_max_##S(T a, T b) { return a < b ? b : a; }
#define KILN_SIGNED(T, UT, S, BITS) KILN_MINMAX(T, S) \
  static inline T kiln_div_##S(T a, T b) { \
    return b == 0 ? (T)0 : b == -1 ? (T)(0u - (UT)a) : (T)(a / b); } \
  static inline T kiln_mod_##S(T a, T b) { return b == 0 || b == -1 ? (T)0 : (T)(a % b); } \
  static inline T kiln_abs_##S(T a) { return a < 0 ? (T)(0u - (UT)a) : a; } \
  static inline T kiln_sign_##S(T a) { return (T)((a > 0) - (a < 0)); } \
  static inline T kiln_shl_##S(T a, T b) { return (T)((UT)a << ((UT)b & (BITS - 1))); } \
  static inline T kiln_shr_##S(T a, T b) { return (T)(a >> ((UT)b & (BITS - 1))); }
#define KILN_UNSIGNED(T, S, BITS) KILN_MINMAX(T, S) \
  static inline T kiln_div_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a / b); } \
  static inline T kiln_mod_##S(T a, T b) { return b == 0 ? (T)0 : (T)(a % b); } \
  static inline T kiln_abs_##S(T a) { return a; } \
  static inline T kiln_sign_##S(T a) { return (T)(a > 0); } \
  static inline T kiln_shl_##S(T a, T b) { return (T)(a << (b & (BITS - 1))); } \
  static inline T kiln_shr_##S(T a, T b) { return (T)(a >> (b & (BITS - 1))); }
KILN_SIGNED(int8_t, uint8_t, i8, 8) KILN_SIGNED(int16_t, uint16_t, i16, 16)
KILN_SIGNED(int32_t, uint32_t, i32, 32) KILN_SIGNED(int64_t, uint64_t, i64, 64)
KILN_UNSIGNED(uint8_t, u8, 8) KILN_UNSIGNED(uint16_t, u16, 16) KILN_UNSIGNED(uint32_t, u32, 32)
KILN_UNSIGNED(uint64_t, u64, 64)

/* T: the type, C: the type computed in, F: the libm suffix. */
#define KILN_FLOAT(T, S, C, F) KILN_MINMAX(T, S) \
  static inline T kiln_exp_##S(T x) { return (T)exp##F((C)x); } \
  static inline T kiln_log_##S(T x) { return (T)log##F((C)x); } \
  static inline T kiln_sqrt_##S(T x) { return (T)sqrt##F((C)x); } \
  static inline T kiln_rsqrt_##S(T x) { return (T)((C)1 / sqrt##F((C)x)); } \
  static inline T kiln_sin_##S(T x) { return (T)sin##F((C)x); } \
  static inline T kiln_cos_##S(T x) { return (T)cos##F((C)x); } \
  static inline T kiln_tan_##S(T x) { return (T)tan##F((C)x); } \
  static inline T kiln_asin_##S(T x) { return (T)asin##F((C)x); } \
  static inline T kiln_acos_##S(T x) { return (T)acos##F((C)x); } \
  static inline T kiln_atan_##S(T x) { return (T)atan##F((C)x); } \
  static inline T kiln_sinh_##S(T x) { return (T)sinh##F((C)x); } \
  static inline T kiln_cosh_##S(T x) { return (T)cosh##F((C)x); } \
  static inline T kiln_tanh_##S(T x) { return (T)tanh##F((C)x); } \
  static inline T kiln_asinh_##S(T x) { return (T)asinh##F((C)x); } \
  static inline T kiln_acosh_##S(T x) { return (T)acosh##F((C)x); } \
  static inline T kiln_atanh_##S(T x) { return (T)atanh##F((C)x); } \
  static inline T kiln_floor_##S(T x) { return (T)floor##F((C)x); } \
  static inline T kiln_ceil_##S(T x) { return (T)ceil##F((C)x); } \
  static inline T kiln_round_even_##S(T x) { return (T)rint##F((C)x); } \
  static inline T kiln_trunc_##S(T x) { return (T)trunc##F((C)x); } \
  static inline T kiln_erf_##S(T x) { return (T)erf##F((C)x); } \
  static inline T kiln_abs_##S(T x) { return (T)fabs##F((C)x); } \
  static inline T kiln_sign_##S(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x; } \
  static inline T kiln_mod_##S(T a, T b) { return (T)fmod##F((C)a, (C)b); } \
  static inline T kiln_pow_##S(T a, T b) { return (T)pow##F((C)a, (C)b); } \
  static inline T kiln_fma_##S(T a, T b, T c) { return (T)fma##F((C)a, (C)b, (C)c); }
KILN_FLOAT(float, f32, float, f) KILN_FLOAT(double, f64, double, ) KILN_FLOAT(_Float16, f16, float, f)

/* Cooperative matrices of f32 (one invocation per subgroup: a matrix is an array the
   invocation owns, row-major). The sizes are constants at every call, so after inlining each
   loop below has fixed bounds. kiln_mma_f32: c[M x N] += a[M x K] * b[K x N] (c = a * b when
   `zero`: the first product into an accumulator, which is never filled), a and b row-major
   with leading dimensions lda and ldb (kiln_mma_f32_acm: a column-major), register-blocked for the vector width of the ISA level
   the object is compiled for: KILN_RB rows x KILN_NV vectors of accumulators, one b row of
   KILN_NV vectors and one broadcast a element per k step. */
#if defined(__AVX512F__)
#define KILN_VW 16
#define KILN_NV 4
#elif defined(__AVX2__)
#define KILN_VW 8
#define KILN_NV 2
#else
#define KILN_VW 4
#define KILN_NV 2
#endif
#define KILN_RB 4
/* Keeps a loaded vector in a register: without it GCC folds the b row into every multiply-add
   as a memory operand, which reloads it once per accumulator row (20 loads per 16 FMAs, so the
   kernel was bound by loads: 131 GFLOP/s in L1 on a Zen 5 core, 190-200 with it). */
#define KILN_IN_REGISTER(x) __asm__("" : "+v"(x))
typedef float kiln_vf __attribute__((vector_size(KILN_VW * 4), aligned(4)));

/* Thin products (fewer than KILN_NV vectors of columns, e.g. a Winograd point's 16 tiles) take
   blocks of KILN_RB_THIN rows, 8 x nv independent accumulators instead of 4 x nv (four chains
   of multiply-adds leave half of the FMA pipes idle on their latency). */
#define KILN_RB_THIN 8
#if defined(__AVX512F__)
#define KILN_THIN_ACC 24
#else
#define KILN_THIN_ACC 8
#endif
/* c[rows x nv vectors] (+)= a * b over K, the accumulators in registers (rows, nv and K are
   constants at every full-block call, so the loops unroll completely). */
static inline __attribute__((always_inline)) void kiln_mma_rows(
    float *restrict c, int ldc, const float *restrict a, uint32_t ars, uint32_t aks,
    const float *restrict b, uint32_t ldb, const int rows, const int nv, const int K,
    const int zero) {
  kiln_vf acc[KILN_RB_THIN][KILN_NV];
  #pragma GCC unroll 8
  for (int r = 0; r < rows; ++r)
    #pragma GCC unroll 4
    for (int v = 0; v < nv; ++v)
      acc[r][v] = zero ? (kiln_vf){0} : *(const kiln_vf *)&c[r * ldc + v * KILN_VW];
  for (int k = 0; k < K; ++k) {
    kiln_vf bv[KILN_NV];
    #pragma GCC unroll 4
    for (int v = 0; v < nv; ++v) {
      bv[v] = *(const kiln_vf *)&b[(uint32_t)k * ldb + v * KILN_VW];
      KILN_IN_REGISTER(bv[v]);
    }
    #pragma GCC unroll 8
    for (int r = 0; r < rows; ++r) {
      const float ar = a[(uint32_t)r * ars + (uint32_t)k * aks];
      #pragma GCC unroll 4
      for (int v = 0; v < nv; ++v) acc[r][v] += ar * bv[v];
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < rows; ++r)
    #pragma GCC unroll 4
    for (int v = 0; v < nv; ++v) *(kiln_vf *)&c[r * ldc + v * KILN_VW] = acc[r][v];
}

/* Packed A (a contiguous M x K column-major block per k step, the next step's right after it):
   prefetches rows [i, i + rows)'s share of the next block. The weights stream from memory once
   per tile; without it a 7x7 convolution ran 5-10% slower. */
static inline __attribute__((always_inline)) void kiln_prefetch_next_panel(
    const float *a, uint32_t ars, uint32_t aks, const int M, const int K, const int i,
    const int rows) {
  if (ars != 1 || aks != (uint32_t)M) return;
  const float *next = a + (uint32_t)K * aks + (uint32_t)i * (uint32_t)K;
  for (int l = 0; l < K * rows; l += 64 / (int)sizeof(float)) __builtin_prefetch(next + l);
}

/* a(r, k) at a[r * ars + k * aks]: row-major A (ars = lda, aks = 1) or column-major A (ars = 1,
   aks = lda: weights packed in panels, a k step of the panel one contiguous run). */
static inline __attribute__((always_inline)) void kiln_mma_f32_strided(
    float *restrict c, const float *restrict a, uint32_t ars, uint32_t aks,
    const float *restrict b, uint32_t ldb, const int M, const int N, const int K,
    const int zero) {
  const int cb = KILN_VW * KILN_NV, nfull = N / cb * cb, nvec = N / KILN_VW * KILN_VW;
  const int thin = nvec / KILN_VW;
  if (nfull == 0 && nvec == N && thin >= 1 && thin <= 3 &&
      thin * KILN_RB_THIN <= KILN_THIN_ACC && M % KILN_RB_THIN == 0) {
    for (int i = 0; i < M; i += KILN_RB_THIN) {
      kiln_prefetch_next_panel(a, ars, aks, M, K, i, KILN_RB_THIN);
      const float *ai = a + (uint32_t)i * ars;
      if (thin == 1) kiln_mma_rows(c + i * N, N, ai, ars, aks, b, ldb, KILN_RB_THIN, 1, K, zero);
      else if (thin == 2) kiln_mma_rows(c + i * N, N, ai, ars, aks, b, ldb, KILN_RB_THIN, 2, K, zero);
      else kiln_mma_rows(c + i * N, N, ai, ars, aks, b, ldb, KILN_RB_THIN, 3, K, zero);
    }
    return;
  }
  for (int i = 0; i < M; i += KILN_RB) {
    const int rows = M - i < KILN_RB ? M - i : KILN_RB;
    const float *ai = a + (uint32_t)i * ars;
    float *ci = c + i * N;
    kiln_prefetch_next_panel(a, ars, aks, M, K, i, KILN_RB);
    if (rows == KILN_RB) {
      for (int j = 0; j < nfull; j += cb) kiln_mma_rows(ci + j, N, ai, ars, aks, b + j, ldb, KILN_RB, KILN_NV, K, zero);
      for (int j = nfull; j < nvec; j += KILN_VW) kiln_mma_rows(ci + j, N, ai, ars, aks, b + j, ldb, KILN_RB, 1, K, zero);
    } else {
      /* Fewer rows (a matrix-vector product, a tile's last rows): still KILN_NV accumulators
         per row, so the multiply-adds are not one dependent chain per vector. */
      for (int j = 0; j < nfull; j += cb) kiln_mma_rows(ci + j, N, ai, ars, aks, b + j, ldb, rows, KILN_NV, K, zero);
      for (int j = nfull; j < nvec; j += KILN_VW) kiln_mma_rows(ci + j, N, ai, ars, aks, b + j, ldb, rows, 1, K, zero);
    }
    for (int r = 0; r < rows; ++r)
      for (int j = nvec; j < N; ++j) {
        float s = zero ? 0.0f : ci[r * N + j];
        for (int k = 0; k < K; ++k) s += ai[(uint32_t)r * ars + (uint32_t)k * aks] * b[(uint32_t)k * ldb + (uint32_t)j];
        ci[r * N + j] = s;
      }
  }
}
static inline __attribute__((always_inline)) void kiln_mma_f32(
    float *restrict c, const float *restrict a, uint32_t lda, const float *restrict b,
    uint32_t ldb, const int M, const int N, const int K, const int zero) {
  kiln_mma_f32_strided(c, a, lda, 1, b, ldb, M, N, K, zero);
}
static inline __attribute__((always_inline)) void kiln_mma_f32_acm(
    float *restrict c, const float *restrict a, uint32_t lda, const float *restrict b,
    uint32_t ldb, const int M, const int N, const int K, const int zero) {
  kiln_mma_f32_strided(c, a, 1, lda, b, ldb, M, N, K, zero);
}

/* kiln_mma_f32_bt: the same product with b stored transposed, b(k, n) at bt[n * ldb + k] (a
   weight matrix of a fully connected layer): dot products along k, vectorised over k, for
   blocks of 4 rows x 4 columns (16 vector accumulators), each reduced across its lanes once. */
static inline __attribute__((always_inline)) void kiln_mma_bt_block(
    float *restrict c, int ldc, const float *restrict a, uint32_t lda, const float *restrict bt,
    uint32_t ldb, const int rows, const int cols, const int K, const int zero) {
  const int kv = K / KILN_VW * KILN_VW;
  kiln_vf acc[4][4];
  #pragma GCC unroll 4
  for (int r = 0; r < rows; ++r)
    #pragma GCC unroll 4
    for (int q = 0; q < cols; ++q) acc[r][q] = (kiln_vf){0};
  for (int k = 0; k < kv; k += KILN_VW) {
    kiln_vf av[4], bv[4];
    #pragma GCC unroll 4
    for (int r = 0; r < rows; ++r) av[r] = *(const kiln_vf *)&a[(uint32_t)r * lda + (uint32_t)k];
    #pragma GCC unroll 4
    for (int q = 0; q < cols; ++q) bv[q] = *(const kiln_vf *)&bt[(uint32_t)q * ldb + (uint32_t)k];
    #pragma GCC unroll 4
    for (int r = 0; r < rows; ++r)
      #pragma GCC unroll 4
      for (int q = 0; q < cols; ++q) acc[r][q] += av[r] * bv[q];
  }
  for (int r = 0; r < rows; ++r)
    for (int q = 0; q < cols; ++q) {
      float s = 0;
      for (int l = 0; l < KILN_VW; ++l) s += acc[r][q][l];
      for (int k = kv; k < K; ++k) s += a[(uint32_t)r * lda + (uint32_t)k] * bt[(uint32_t)q * ldb + (uint32_t)k];
      c[r * ldc + q] = zero ? s : c[r * ldc + q] + s;
    }
}

static inline __attribute__((always_inline)) void kiln_mma_f32_bt(
    float *restrict c, const float *restrict a, uint32_t lda, const float *restrict bt,
    uint32_t ldb, const int M, const int N, const int K, const int zero) {
  for (int i = 0; i < M; i += 4) {
    const int rows = M - i < 4 ? M - i : 4;
    for (int j = 0; j < N; j += 4) {
      const int cols = N - j < 4 ? N - j : 4;
      const float *ai = a + (uint32_t)i * lda, *bj = bt + (uint32_t)j * ldb;
      if (rows == 4 && cols == 4) kiln_mma_bt_block(c + i * N + j, N, ai, lda, bj, ldb, 4, 4, K, zero);
      else kiln_mma_bt_block(c + i * N + j, N, ai, lda, bj, ldb, rows, cols, K, zero);
    }
  }
}

/* Matrix load / store between an R x C matrix (row-major array m) and memory at p: element
   (r, c) at p[r * stride + c] (row-major) or p[c * stride + r] (column-major). */
static inline __attribute__((always_inline)) void kiln_mload_f32(
    float *restrict m, const float *restrict p, uint32_t stride, const int R, const int C,
    const int col_major) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      m[r * C + c] = col_major ? p[(uint32_t)c * stride + (uint32_t)r] : p[(uint32_t)r * stride + (uint32_t)c];
}
static inline __attribute__((always_inline)) void kiln_mload_f16(
    float *restrict m, const _Float16 *restrict p, uint32_t stride, const int R, const int C,
    const int col_major) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c)
      m[r * C + c] = (float)(col_major ? p[(uint32_t)c * stride + (uint32_t)r] : p[(uint32_t)r * stride + (uint32_t)c]);
}
static inline __attribute__((always_inline)) void kiln_mstore_f16(
    _Float16 *restrict p, uint32_t stride, const float *restrict m, const int R, const int C,
    const int col_major) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      if (col_major) p[(uint32_t)c * stride + (uint32_t)r] = (_Float16)m[r * C + c];
      else p[(uint32_t)r * stride + (uint32_t)c] = (_Float16)m[r * C + c];
    }
}
static inline __attribute__((always_inline)) void kiln_mstore_f32(
    float *restrict p, uint32_t stride, const float *restrict m, const int R, const int C,
    const int col_major) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      if (col_major) p[(uint32_t)c * stride + (uint32_t)r] = m[r * C + c];
      else p[(uint32_t)r * stride + (uint32_t)c] = m[r * C + c];
    }
}
)";

// Runs argv[0] (looked up in PATH) with `argv`, stdout and stderr to `log`; its exit status.
Result<int> run_process(const std::vector<std::string> &argv, const std::string &log) {
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return Status::error(fmt::format("cannot run the C compiler '{}': {} (set KILN_CC to one)",
                                     argv[0], std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return Status::error("waitpid failed for the C compiler");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_text(const std::filesystem::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A private temporary folder, removed with everything in it when the object goes.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/kiln-cc-XXXXXX";
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

} // namespace

std::string c_prelude() {
  return std::string("/* generated by kiln's C backend */\n#include <stdint.h>\n") +
         KILN_CPU_ABI_TEXT + "\n" + kPrelude;
}

std::string c_translation_unit(const std::vector<std::string> &kernels) {
  return c_translation_unit_part(kernels, 0, kernels.size(), true);
}

std::string c_translation_unit_part(const std::vector<std::string> &kernels, size_t begin,
                                    size_t end, bool with_version) {
  std::string s = c_prelude();
  if (with_version)
    s += fmt::format("__attribute__((visibility(\"default\"))) const int kiln_cpu_abi_version = "
                     "{};\n",
                     KILN_CPU_ABI_VERSION);
  for (size_t i = begin; i < end; ++i)
    s += fmt::format("\n#define KILN_FN kiln_exe_{}\n{}#undef KILN_FN\n", i, kernels[i]);
  return s;
}

Result<std::vector<uint8_t>> build_shared_object(const std::vector<std::string> &kernels,
                                                 const std::string &march, int jobs) {
  TempDir dir;
  if (dir.path.empty())
    return Status::error(fmt::format("cannot create a temporary folder for the C compiler: {}",
                                     std::strerror(errno)));
  const char *env_cc = std::getenv("KILN_CC");
  const std::string cc = env_cc && *env_cc ? env_cc : "cc";
  const size_t parts = std::max<size_t>(1, std::min<size_t>(size_t(std::max(jobs, 1)),
                                                            (kernels.size() + 7) / 8));
  std::vector<std::string> objects;
  std::vector<pid_t> pids;
  const std::string log = (dir.path / "cc.log").string();
  // Compile the parts concurrently, then link.
  std::vector<std::vector<std::string>> commands;
  for (size_t p = 0; p < parts; ++p) {
    const size_t b = kernels.size() * p / parts, e = kernels.size() * (p + 1) / parts;
    const auto src = dir.path / fmt::format("part{}.c", p);
    const auto obj = dir.path / fmt::format("part{}.o", p);
    const std::string text = c_translation_unit_part(kernels, b, e, p == 0);
    std::ofstream(src, std::ios::binary) << text;
    // KILN_SAVE_C=FOLDER keeps a copy of the generated sources (for reading them).
    if (const char *keep = std::getenv("KILN_SAVE_C"); keep && *keep)
      std::ofstream(std::filesystem::path(keep) / src.filename(), std::ios::binary) << text;
    commands.push_back({cc, "-std=gnu11", "-O2", "-fvect-cost-model=dynamic", "-march=" + march, "-fPIC",
                        "-fno-math-errno", "-fvisibility=hidden", "-w", "-c", src.string(), "-o",
                        obj.string()});
    objects.push_back(obj.string());
  }
  // posix_spawn each compile, then wait for all.
  std::vector<std::pair<pid_t, size_t>> running;
  for (size_t p = 0; p < commands.size(); ++p) {
    std::vector<char *> args;
    for (std::string &a : commands[p]) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      for (auto &r : running) waitpid(r.first, nullptr, 0);
      return Status::error(fmt::format("cannot run the C compiler '{}': {} (set KILN_CC to one)",
                                       cc, std::strerror(rc)));
    }
    running.emplace_back(pid, p);
  }
  bool failed = false;
  for (auto &r : running) {
    int status = 0;
    while (waitpid(r.first, &status, 0) < 0 && errno == EINTR) {
    }
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed)
    return Status::error(fmt::format("the C compiler '{}' failed on the generated code:\n{}", cc,
                                     read_text(log)));
  const auto so = dir.path / "kernels.so";
  std::vector<std::string> link = {cc, "-shared", "-o", so.string()};
  link.insert(link.end(), objects.begin(), objects.end());
  link.push_back("-lm");
  KILN_ASSIGN(int rc, run_process(link, log));
  if (rc != 0)
    return Status::error(fmt::format("linking the generated code with '{}' failed:\n{}", cc,
                                     read_text(log)));
  const std::string bytes = read_text(so);
  if (bytes.empty()) return Status::error("the C compiler produced an empty shared object");
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

namespace {

class CBackend final : public target::Backend {
public:
  explicit CBackend(const kir::TargetDesc &t) : target_(t) {}
  std::string_view name() const override { return "c"; }
  Result<target::Payload> serialize(const kir::Kernel &k, kir::Requirements *used) const override {
    KILN_ASSIGN(std::string text, emit_c(k, target_, used));
    return target::Payload(
        target::NativePayload{"c-source", std::vector<uint8_t>(text.begin(), text.end())});
  }
  Result<std::optional<target::NativeLibrary>>
  link(std::vector<target::Payload *> &payloads) const override {
    std::vector<std::string> sources;
    for (target::Payload *p : payloads) {
      const auto *n = std::get_if<target::NativePayload>(p);
      if (!n || n->format != "c-source")
        return Status::error("the c backend links only kernels it serialised");
      sources.emplace_back(n->bytes.begin(), n->bytes.end());
    }
    if (sources.empty()) return std::optional<target::NativeLibrary>(); // nothing to run
    target::NativeLibrary lib;
    lib.format = "elf-x86_64-so";
    lib.isa = target_.cpu_isa;
    lib.cpu_features = target_.cpu_features;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    KILN_ASSIGN(lib.bytes, build_shared_object(sources, target_.cpu_isa,
                                               static_cast<int>(std::max(1L, cores))));
    for (size_t i = 0; i < payloads.size(); ++i) {
      const std::string sym = fmt::format("kiln_exe_{}", i);
      *payloads[i] = target::NativePayload{"symbol", std::vector<uint8_t>(sym.begin(), sym.end())};
    }
    return std::optional<target::NativeLibrary>(std::move(lib));
  }

private:
  kir::TargetDesc target_;
};

std::unique_ptr<target::Backend> create(const kir::TargetDesc &t) {
  return std::make_unique<CBackend>(t);
}

} // namespace

const target::BackendInfo &backend_info() {
  static const target::BackendInfo info{"c", create};
  return info;
}

} // namespace kiln::cgen
