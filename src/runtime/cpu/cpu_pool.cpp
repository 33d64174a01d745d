#include "runtime/cpu/cpu_pool.h"

#include <sched.h>

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

Pool::Pool(unsigned threads) : cursors_(new Cursor[threads < 1 ? 1 : threads]) {
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    published_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &t : workers_) t.join();
}

uint32_t Pool::slice_end(const Job &job, unsigned t) const {
  return static_cast<uint32_t>(uint64_t(job.n) * (t + 1) / threads());
}

void Pool::take_chunks(const Job &job, unsigned self) {
  const uint64_t tag = uint64_t(job.id) << 32;
  const unsigned count = threads();
  for (unsigned k = 0; k < count; ++k) {
    const unsigned t = (self + k) % count;
    const uint32_t end = slice_end(job, t);
    std::atomic<uint64_t> &cursor = cursors_[t].next;
    uint64_t v = cursor.load(std::memory_order_acquire);
    for (;;) {
      if ((v & ~uint64_t(0xffffffff)) != tag) return; // another job by now
      const uint32_t b = static_cast<uint32_t>(v);
      if (b >= end) break;
      const uint32_t e = end - b < job.chunk ? end : b + job.chunk;
      if (!cursor.compare_exchange_weak(v, tag | e, std::memory_order_acq_rel,
                                        std::memory_order_acquire))
        continue;
      job.fn(job.ctx, b, e);
      done_.fetch_add(e - b, std::memory_order_acq_rel);
      v = cursor.load(std::memory_order_acquire);
    }
  }
}

void Pool::run(uint32_t n, uint32_t chunk, Fn fn, void *ctx) {
  if (n == 0) return;
  if (workers_.empty() || n <= chunk) {
    fn(ctx, 0, n);
    return;
  }
  Job job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job = Job{fn, ctx, n, chunk, job_.id + 1};
    job_ = job;
    done_.store(0, std::memory_order_relaxed);
    for (unsigned t = 0; t < threads(); ++t)
      cursors_[t].next.store(uint64_t(job.id) << 32 | (t ? slice_end(job, t - 1) : 0),
                             std::memory_order_release);
    published_.store(job.id, std::memory_order_release);
  }
  wake_.notify_all();
  take_chunks(job, 0);
  // Chunks other threads claimed may still be running: wait for them, yielding the core to
  // them after a short spin (on a busy machine a worker may be waiting for it).
  for (int spins = 0; done_.load(std::memory_order_acquire) != n; ++spins) {
    if (spins < 2000) pause();
    else sched_yield();
  }
}

void Pool::worker(unsigned self) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t id = published_.load(std::memory_order_acquire);
    for (int i = 0; id == seen && i < kSpins; ++i) {
      pause();
      id = published_.load(std::memory_order_acquire);
    }
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || job_.id != seen; });
      if (stop_) return;
      job = job_;
    }
    seen = job.id;
    take_chunks(job, self);
  }
}

} // namespace kiln::rt::cpu
