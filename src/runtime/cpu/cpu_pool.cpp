#include "runtime/cpu/cpu_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln::rt::cpu {

namespace {

inline void pause() {
#if defined(__x86_64__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// How long a worker polls for the next job before it sleeps: dispatches of a model follow
// each other within microseconds, and waking a sleeping thread costs more than that.
constexpr int kSpins = 20000;

} // namespace

Pool::Pool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker(); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &t : workers_) t.join();
}

void Pool::take_chunks() {
  for (;;) {
    const uint32_t b = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (b >= n_) return;
    const uint32_t e = n_ - b < chunk_ ? n_ : b + chunk_;
    fn_(ctx_, b, e);
  }
}

void Pool::run(uint32_t n, uint32_t chunk, Fn fn, void *ctx) {
  if (n == 0) return;
  if (workers_.empty() || n <= chunk) {
    fn(ctx, 0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    ctx_ = ctx;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    busy_.store(static_cast<uint32_t>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  take_chunks();
  while (busy_.load(std::memory_order_acquire) != 0) pause();
}

void Pool::worker() {
  uint64_t seen = 0;
  for (;;) {
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; g == seen && i < kSpins; ++i) {
      pause();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    {
      std::lock_guard<std::mutex> lock(mu_); // the job's fields were written under it
      if (stop_) return;
    }
    take_chunks();
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

} // namespace kiln::rt::cpu
