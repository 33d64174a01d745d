// Command order and barriers: commands that touch no common bytes (or only read them) may run
// together. Each command gets a level one above the highest level of the earlier commands it
// conflicts with (it reads what one of them writes, or writes what one of them reads or
// writes, in the same bytes of the same buffer); commands are stably sorted by level and only
// the first command of a level waits for the ones before it. This runs before the memory plan,
// on buffers as the lowering made them (every transient its own memory); the plan then keeps
// the buffers of one level apart (memory_plan.cpp: liveness by step).
#include "compiler/artifact/program.h"

#include <algorithm>
#include <numeric>

namespace kiln::compiler {

namespace {

// Bytes [begin, end) of one memory: a transient buffer (by id: not placed yet), one model
// input or one output.
struct Access {
  BufKind kind = BufKind::transient;
  uint32_t index = 0; // buffer id of a transient, input / output index otherwise
  uint64_t begin = 0, end = 0;
  bool write = false;
};

// Constants are never written, so reads of them never conflict and are left out.
void add_access(const Program &p, int id, ByteRange r, bool write, std::vector<Access> &out) {
  const Buffer &b = p.buffers[static_cast<size_t>(id)];
  if (b.kind == BufKind::constant) return;
  const uint64_t size = r.size ? r.size : b.size;
  out.push_back({b.kind, b.kind == BufKind::transient ? static_cast<uint32_t>(id) : b.index,
                 r.offset, r.offset + size, write});
}

std::vector<Access> accesses(const Program &p, const Command &c) {
  std::vector<Access> out;
  if (const auto *d = std::get_if<Dispatch>(&c)) {
    const Executable &e = p.executables[d->executable];
    for (size_t j = 0; j < d->buffers.size(); ++j)
      add_access(p, d->buffers[j], j < d->ranges.size() ? d->ranges[j] : ByteRange{},
                 j >= e.binding_writes.size() || e.binding_writes[j], out);
  } else {
    const auto &cp = std::get<Copy>(c);
    add_access(p, cp.src, {}, false, out);
    add_access(p, cp.dst, {}, true, out);
  }
  return out;
}

bool conflict(const std::vector<Access> &a, const std::vector<Access> &b) {
  for (const Access &x : a)
    for (const Access &y : b)
      if ((x.write || y.write) && x.kind == y.kind && x.index == y.index && x.begin < y.end &&
          y.begin < x.end)
        return true;
  return false;
}

} // namespace

void schedule_barriers(Program &p) {
  const size_t n = p.commands.size();
  std::vector<std::vector<Access>> acc(n);
  for (size_t i = 0; i < n; ++i) acc[i] = accesses(p, p.commands[i]);
  std::vector<int> level(n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < i; ++j)
      if (level[j] >= level[i] && conflict(acc[i], acc[j])) level[i] = level[j] + 1;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return level[a] < level[b]; });
  std::vector<Command> sorted;
  sorted.reserve(n);
  p.waits.assign(n, 1);
  for (size_t k = 0; k < n; ++k) {
    sorted.push_back(std::move(p.commands[order[k]]));
    if (k > 0 && level[order[k]] == level[order[k - 1]]) p.waits[k] = 0;
  }
  p.commands = std::move(sorted);
}

} // namespace kiln::compiler
