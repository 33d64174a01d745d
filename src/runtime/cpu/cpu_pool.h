// The CPU driver's worker threads: runs one parallel loop at a time over a range of
// workgroups, split into chunks taken by every worker and the calling thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt::cpu {

class Pool {
public:
  using Fn = void (*)(void *ctx, uint32_t begin, uint32_t end);

  // `threads` in total, the caller of run() included (1: no worker threads).
  explicit Pool(unsigned threads);
  ~Pool();
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls fn(ctx, b, e) for chunks [b, e) covering [0, n), `chunk` items each, and returns
  // when all have run. One run at a time (callers serialise).
  void run(uint32_t n, uint32_t chunk, Fn fn, void *ctx);

private:
  struct Job {
    Fn fn = nullptr;
    void *ctx = nullptr;
    uint32_t n = 0, chunk = 1, id = 0;
  };
  void worker();
  // Takes chunks of `job` while its id is still the current one; false when none were left.
  void take_chunks(const Job &job);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  Job job_; // the current job, written under mu_
  // (job id << 32) | next unclaimed item: a thread that wakes late, after its job finished,
  // sees another id and claims nothing of a job that is gone.
  std::atomic<uint64_t> next_{0};
  std::atomic<uint32_t> done_{0}; // items of the current job finished
  std::atomic<uint32_t> published_{0}; // the current job's id, read without the lock
};

} // namespace kiln::rt::cpu
