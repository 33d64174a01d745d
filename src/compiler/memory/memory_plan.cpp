// Memory plan: static liveness-based placement of transient buffers in one arena.
#include "compiler/artifact/program.h"

#include <algorithm>
#include <numeric>

namespace kiln::compiler {

namespace {

struct Interval {
  int first = -1, last = -1; // steps (inclusive) where the buffer is bound
};

// Steps are the runs of commands between barriers (Program::waits); commands of one step run
// together, so a buffer bound by any of them is live for the whole step.
std::vector<Interval> liveness(const Program &p) {
  std::vector<Interval> live(p.buffers.size());
  auto touch = [&](int b, int step) {
    Interval &iv = live[static_cast<size_t>(b)];
    if (iv.first < 0) iv.first = step;
    iv.last = step;
  };
  int step = -1;
  for (size_t c = 0; c < p.commands.size(); ++c) {
    if (p.waits.empty() || c == 0 || p.waits[c]) ++step;
    const int ci = step;
    if (const auto *d = std::get_if<Dispatch>(&p.commands[c])) {
      for (int b : d->buffers) touch(b, ci);
    } else {
      const auto &cp = std::get<Copy>(p.commands[c]);
      touch(cp.src, ci);
      touch(cp.dst, ci);
    }
  }
  return live;
}

struct Placed {
  uint64_t offset, end;
  Interval live;
};

bool overlaps(const Interval &a, const Interval &b) {
  return a.first <= b.last && b.first <= a.last;
}

// Lowest 64-aligned offset where `size` bytes fit between the placed buffers that are live at
// the same time.
uint64_t first_fit(const std::vector<Placed> &placed, const Interval &live, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  for (const Placed &q : placed)
    if (overlaps(q.live, live)) busy.emplace_back(q.offset, q.end);
  std::sort(busy.begin(), busy.end());
  uint64_t off = 0;
  for (const auto &[b, e] : busy) {
    if (off + size <= b) break;
    off = std::max(off, align_up(e));
  }
  return off;
}

} // namespace

void plan_memory(Program &p) {
  const std::vector<Interval> live = liveness(p);
  std::vector<size_t> order;
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].kind == BufKind::transient && p.buffers[b].size > 0 && live[b].first >= 0)
      order.push_back(b);
  // Largest first, then earliest definition: a classic greedy heuristic for offset packing.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (p.buffers[a].size != p.buffers[b].size) return p.buffers[a].size > p.buffers[b].size;
    return live[a].first < live[b].first;
  });
  std::vector<Placed> placed;
  uint64_t arena = 0;
  for (size_t b : order) {
    Buffer &buf = p.buffers[b];
    buf.offset = first_fit(placed, live[b], buf.size);
    placed.push_back({buf.offset, buf.offset + buf.size, live[b]});
    arena = std::max(arena, align_up(buf.offset + buf.size));
  }
  p.arena_bytes = arena;
}

} // namespace kiln::compiler
