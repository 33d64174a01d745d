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
  void worker();
  void take_chunks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<uint64_t> generation_{0};
  // The current job.
  Fn fn_ = nullptr;
  void *ctx_ = nullptr;
  uint32_t n_ = 0, chunk_ = 1;
  std::atomic<uint32_t> next_{0};
  std::atomic<uint32_t> busy_{0}; // workers still inside the current job
};

} // namespace kiln::rt::cpu
