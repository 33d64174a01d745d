// Splitting of bindings larger than the target's storage buffer range.
//
// A storage buffer descriptor may cover at most TargetDesc::max_storage_buffer_range bytes
// (128 MiB on lavapipe), while a tensor (a large weight, say) may be bigger. Such a binding
// becomes several bindings over consecutive byte ranges ("chunks") of the same buffer, each
// within the range and starting at a multiple of the storage buffer offset alignment. The
// kernel is rewritten so that every access of element i goes through the chunk holding it:
// - a load becomes a select chain over the chunks; every load in the chain runs (select
//   evaluates both sides), so each one's in-chunk index is clamped into its chunk;
// - a store becomes an if chain over the chunks (only the chunk holding i is written).
// Chunk 0 keeps the binding's slot; the other chunks are appended after the last binding.
#include "compiler/lowering/lower.h"

#include <fmt/format.h>

#include <limits>
#include <numeric>

namespace kiln::compiler {

using namespace kir;

namespace {

// The runtime accepts at most this many bindings per executable (schema validation).
constexpr size_t kMaxBindings = 64;

// One split binding: the kernel buffer slot of each chunk and the first element of each chunk
// (starts[0] = 0, starts.back() = the element count).
struct Chunks {
  std::vector<int> slots;
  std::vector<int64_t> starts;
};

class SplitAccesses : public Mutator {
public:
  explicit SplitAccesses(const std::map<int, Chunks> &split) : split_(split) {}

protected:
  using Mutator::visit;

  Expr visit(const Load *n, const Expr &self) override {
    Expr idx = mutate(n->index);
    auto it = split_.find(n->buffer);
    if (it == split_.end()) return idx.same_as(n->index) ? self : load(n->buffer, n->type, idx);
    const Chunks &c = it->second;
    const size_t last = c.slots.size() - 1;
    Expr r = load(c.slots[last], n->type, clamped(idx, c, last));
    for (size_t k = last; k-- > 0;)
      r = select(idx < c.starts[k + 1], load(c.slots[k], n->type, clamped(idx, c, k)), r);
    return r;
  }

  Stmt visit(const Store *n, const Stmt &self) override {
    Expr idx = mutate(n->index), val = mutate(n->value);
    auto it = split_.find(n->buffer);
    if (it == split_.end())
      return idx.same_as(n->index) && val.same_as(n->value) ? self : store(n->buffer, idx, val);
    const Chunks &c = it->second;
    Expr iv = var(fmt::format("split_i{}", next_), idx.type());
    Expr vv = var(fmt::format("split_v{}", next_++), val.type());
    const size_t last = c.slots.size() - 1;
    Stmt s = store(c.slots[last], iv - c.starts[last], vv);
    for (size_t k = last; k-- > 0;)
      s = if_then(iv < c.starts[k + 1], store(c.slots[k], iv - c.starts[k], vv), s);
    return let(iv, idx, let(vv, val, s));
  }

private:
  // The index of element `idx` in chunk k, clamped into the chunk (loads that the select
  // chain discards must still stay in bounds).
  static Expr clamped(const Expr &idx, const Chunks &c, size_t k) {
    Expr local = c.starts[k] == 0 ? idx : idx - c.starts[k];
    return min(max(local, make_const(idx.type(), 0)),
               make_const(idx.type(), static_cast<double>(c.starts[k + 1] - c.starts[k] - 1)));
  }

  const std::map<int, Chunks> &split_;
  int next_ = 0;
};

} // namespace

Result<std::vector<ByteRange>> split_large_bindings(const Op &op, Kernel &k,
                                                    std::vector<int> &buffers,
                                                    const std::vector<uint64_t> &sizes,
                                                    const TargetDesc &t) {
  const uint64_t align = std::lcm<uint64_t>(kAlign, std::max<uint32_t>(
                                                        1, t.min_storage_buffer_offset_alignment));
  const uint64_t chunk_bytes = t.max_storage_buffer_range / align * align;
  std::vector<ByteRange> ranges(buffers.size());
  std::map<int, Chunks> split;
  const size_t n = buffers.size();
  for (size_t j = 0; j < n; ++j) {
    ranges[j] = {0, sizes[j]};
    if (sizes[j] <= t.max_storage_buffer_range) continue;
    if (chunk_bytes == 0)
      return Status::error(fmt::format(
          "{}: the target's storage buffer range of {} bytes is below its offset alignment of "
          "{} bytes, so a tensor of {} bytes cannot be split",
          op.describe(), t.max_storage_buffer_range, align, sizes[j]));
    const BufferParam param = k.buffers[j];
    const uint64_t elem = static_cast<uint64_t>(storage_bytes(param.elem));
    if (sizes[j] / elem > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      return Status::error(fmt::format("{}: a tensor of {} elements exceeds the 32-bit index "
                                       "range of kernels",
                                       op.describe(), sizes[j] / elem));
    Chunks c;
    for (uint64_t off = 0; off < sizes[j]; off += chunk_bytes) {
      const ByteRange r{off, std::min(chunk_bytes, sizes[j] - off)};
      if (off == 0) {
        ranges[j] = r;
        c.slots.push_back(static_cast<int>(j));
      } else {
        c.slots.push_back(static_cast<int>(k.buffers.size()));
        k.add_buffer(fmt::format("{}_c{}", param.name, c.slots.size() - 1), param.elem,
                     param.readonly, param.writeonly);
        buffers.push_back(buffers[j]);
        ranges.push_back(r);
      }
      c.starts.push_back(static_cast<int64_t>(off / elem));
    }
    c.starts.push_back(static_cast<int64_t>(sizes[j] / elem));
    split.emplace(static_cast<int>(j), std::move(c));
  }
  if (split.empty()) return ranges;
  if (buffers.size() > kMaxBindings)
    return Status::error(fmt::format(
        "{}: splitting tensors larger than the target's storage buffer range of {} bytes needs "
        "{} bindings in one kernel (at most {})",
        op.describe(), t.max_storage_buffer_range, buffers.size(), kMaxBindings));
  SplitAccesses m(split);
  k.body = m.mutate(k.body);
  return ranges;
}

} // namespace kiln::compiler
