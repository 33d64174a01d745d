// Load-time commands (program.h, hoist_init_commands): the commands whose inputs are all
// constants compute the same bytes on every call, so they run once, when the module is loaded,
// into derived constants. ONNX Runtime and IREE do the same at session creation / in module
// initializers; kiln's graph passes fold small constant expressions, but not large ones (a light
// model's 411 MB ConstantOfShape weight), which would otherwise be recomputed on every call.
#include "compiler/artifact/program.h"

#include <set>

namespace kiln::compiler {

namespace {

// The buffers a command reads and writes (a dispatch's bindings by the executable's
// binding_writes; a binding of unknown access counts as both).
void accesses(const Program &p, const Command &c, std::vector<int> &reads, std::vector<int> &writes) {
  reads.clear(), writes.clear();
  if (const auto *d = std::get_if<Dispatch>(&c)) {
    const std::vector<bool> &w = p.executables[d->executable].binding_writes;
    for (size_t i = 0; i < d->buffers.size(); ++i) {
      const bool unknown = i >= w.size();
      if (unknown || w[i]) writes.push_back(d->buffers[i]);
      if (unknown || !w[i]) reads.push_back(d->buffers[i]);
    }
  } else {
    const auto &cp = std::get<Copy>(c);
    reads.push_back(cp.src);
    writes.push_back(cp.dst);
  }
}

} // namespace

void hoist_init_commands(Program &p) {
  const size_t n = p.commands.size();
  std::vector<int> reads, writes;
  std::set<int> banned; // transients some remaining command writes
  std::vector<bool> init(n, false);
  for (;;) {
    std::set<int> produced;
    for (size_t i = 0; i < n; ++i) {
      accesses(p, p.commands[i], reads, writes);
      bool ok = !writes.empty();
      for (int b : reads) {
        const Buffer &buf = p.buffers[static_cast<size_t>(b)];
        ok = ok && (buf.kind == BufKind::constant || produced.count(b));
      }
      for (int b : writes)
        ok = ok && p.buffers[static_cast<size_t>(b)].kind == BufKind::transient && !banned.count(b);
      init[i] = ok;
      if (ok) produced.insert(writes.begin(), writes.end());
    }
    const size_t before = banned.size();
    for (size_t i = 0; i < n; ++i) {
      if (init[i]) continue;
      accesses(p, p.commands[i], reads, writes);
      for (int b : writes)
        if (produced.count(b)) banned.insert(b);
    }
    if (banned.size() == before) break;
  }
  if (std::find(init.begin(), init.end(), true) == init.end()) return;
  // Transients written by init commands become derived constants.
  uint32_t next_constant = 0;
  for (const Buffer &b : p.buffers)
    if (b.kind == BufKind::constant) next_constant = std::max(next_constant, b.index + 1);
  std::vector<Command> kept;
  std::vector<uint8_t> kept_waits;
  bool carry = false; // a barrier before a moved command goes to the next kept one
  for (size_t i = 0; i < n; ++i) {
    const bool waits = p.waits.empty() || p.waits[i];
    if (init[i]) {
      accesses(p, p.commands[i], reads, writes);
      for (int b : writes) {
        Buffer &buf = p.buffers[static_cast<size_t>(b)];
        if (buf.kind != BufKind::transient) continue;
        buf.kind = BufKind::constant;
        buf.derived = true;
        buf.index = next_constant++;
      }
      p.init_commands.push_back(std::move(p.commands[i]));
      carry = carry || waits;
      continue;
    }
    kept.push_back(std::move(p.commands[i]));
    kept_waits.push_back(static_cast<uint8_t>(waits || carry || kept.size() == 1));
    carry = false;
  }
  p.commands = std::move(kept);
  if (!p.waits.empty()) p.waits = std::move(kept_waits);
}

} // namespace kiln::compiler
