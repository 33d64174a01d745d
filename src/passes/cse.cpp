// cse: common-subexpression elimination within each graph and region. Two pure ops (foldable,
// without regions) with the same name, the same operands (the same values, in order), equal
// attributes and equal result types compute the same results: uses of the later op's results
// are redirected to the earlier op's, and the later op is erased. Constants are such ops with
// no operands, so two kiln.constant ops holding identical bytes (same dtype and shape) merge
// too. Floating-point attributes compare by value (a NaN attribute never matches).
#include "ir/op_registry.h"
#include "passes/pass.h"

#include <cstring>
#include <functional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace kiln {

namespace {

bool same_tensor(const Tensor &a, const Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

bool same_attr(const AttrValue &a, const AttrValue &b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) return same_tensor(x, std::get<Tensor>(b));
        else return x == std::get<T>(b);
      },
      a);
}

bool same_attrs(const AttrMap &a, const AttrMap &b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !same_attr(ia->second, ib->second)) return false;
  return true;
}

bool equivalent(const Op &a, const Op &b) {
  if (a.def != b.def || a.operands != b.operands || a.results.size() != b.results.size())
    return false;
  for (size_t i = 0; i < a.results.size(); ++i)
    if (a.results[i]->type != b.results[i]->type) return false;
  return same_attrs(a.attrs, b.attrs);
}

void hash_mix(size_t &h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

// Hash over what `equivalent` compares (tensor attributes by their bytes).
size_t op_hash(const Op &op) {
  size_t h = std::hash<std::string_view>{}(op.name());
  for (const Value *v : op.operands) hash_mix(h, std::hash<const Value *>{}(v));
  for (const auto &[key, value] : op.attrs) {
    hash_mix(h, std::hash<std::string>{}(key));
    hash_mix(h, value.index());
    if (auto *t = std::get_if<Tensor>(&value); t && t->nbytes())
      hash_mix(h, std::hash<std::string_view>{}(std::string_view(
                      reinterpret_cast<const char *>(t->raw()), t->nbytes())));
  }
  return h;
}

bool eligible(const Op &op) {
  return op.def && op.def->foldable && op.regions.empty() && !op.results.empty();
}

void cse_graph(Graph &g) {
  std::unordered_multimap<size_t, Op *> seen;
  std::unordered_set<const Op *> erased;
  for (auto &op : g.ops) {
    for (auto &r : op->regions) cse_graph(*r);
    if (!eligible(*op)) continue;
    size_t h = op_hash(*op);
    Op *match = nullptr;
    for (auto [it, end] = seen.equal_range(h); it != end && !match; ++it)
      if (equivalent(*it->second, *op)) match = it->second;
    if (!match) {
      seen.emplace(h, op.get());
      continue;
    }
    for (size_t i = 0; i < op->results.size(); ++i)
      g.replace_uses(op->results[i], match->results[i]);
    erased.insert(op.get());
  }
  if (erased.empty()) return;
  g.erase_ops_if([&](const Op &op) { return erased.count(&op) != 0; });
}

} // namespace

Status run_cse(Module &m) {
  for (auto &f : m.functions) cse_graph(f->body);
  return Status::ok();
}

} // namespace kiln
