// fold-batch-norm: folds per-output-channel affine ops that follow a kiln.conv with constant
// weights into the conv's weights and bias. The conv (weights a kiln.constant of dtype f32 or
// f64, bias absent or a constant [M]) must have its result used only by the folded op, which
// must be in the same graph. Rewrites (M output channels, k[m] the per-channel factor):
//   kiln.batch_norm (inference) of the conv: s = scale / sqrt(var + eps),
//       w' = w * s[m], b' = (b - mean) * s[m] + beta
//   kiln.mul of the conv by a constant broadcastable to [1, M, 1, ...]: w' = w * k[m], b' = b * k[m]
//   kiln.add of the conv and a constant broadcastable to [1, M, 1, ...]: b' = b + k[m]
// Arithmetic is in double, rounded once to the weight dtype. The new weights and bias are new
// constants placed before the conv; the folded op's uses read the conv; dce removes the rest.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/pattern.h"

#include <cmath>
#include <optional>
#include <unordered_map>

namespace kiln {

namespace {

using UseCounts = std::unordered_map<const Value *, int>;

void count_uses(const Graph &g, UseCounts &uses) {
  for (const auto &op : g.ops) {
    for (const Value *v : op->operands)
      if (v) ++uses[v];
    for (const auto &r : op->regions) count_uses(*r, uses);
  }
  for (const Value *v : g.results) ++uses[v];
}

// A conv whose weights (and bias, if any) can be rewritten, and its output channel count.
struct ConvSite {
  Op *conv = nullptr;
  const Tensor *w = nullptr;
  const Tensor *b = nullptr; // nullptr: no bias
  int64_t m = 0;
};

std::optional<ConvSite> foldable_conv(const Value *v, const Graph &g, const UseCounts &uses) {
  if (!v || !v->def || v->def->name() != "kiln.conv" || v->owner != &g) return std::nullopt;
  auto it = uses.find(v);
  if (it == uses.end() || it->second != 1) return std::nullopt;
  ConvSite s{v->def};
  s.w = pattern::constant_tensor(s.conv->operands.size() > 1 ? s.conv->operands[1] : nullptr);
  if (!s.w || (s.w->dtype() != DType::f32 && s.w->dtype() != DType::f64) || s.w->rank() < 1)
    return std::nullopt;
  s.m = s.w->shape()[0];
  const Value *bv = s.conv->operands.size() > 2 ? s.conv->operands[2] : nullptr;
  if (bv) {
    s.b = pattern::constant_tensor(bv);
    if (!s.b || s.b->rank() != 1 || s.b->numel() != s.m || s.b->dtype() != s.w->dtype())
      return std::nullopt;
  }
  if (!v->type.ranked || v->type.rank() < 2 || v->type.dims[1] != s.m) return std::nullopt;
  return s;
}

// The per-channel values of a constant broadcastable to [1, M, 1, ...] of rank `rank`.
std::optional<std::vector<double>> per_channel(const Tensor &c, int64_t rank, int64_t m) {
  if (c.rank() > rank) return std::nullopt;
  const int64_t chan_axis = 1 - (rank - c.rank()); // channel axis within c, may be < 0
  for (int64_t d = 0; d < c.rank(); ++d) {
    const int64_t n = c.shape()[d];
    if (n != 1 && !(d == chan_axis && n == m)) return std::nullopt;
  }
  std::vector<double> vals = c.to_f64s();
  if (vals.size() == 1) return std::vector<double>(static_cast<size_t>(m), vals[0]);
  if (static_cast<int64_t>(vals.size()) != m) return std::nullopt;
  return vals;
}

// Per-channel scale and shift: y = conv * scale[m] + shift[m].
struct Affine {
  std::vector<double> scale, shift;
};

std::optional<Affine> batch_norm_affine(const Op &bn, int64_t m) {
  if (bn.attr_int("training", 0) != 0 || bn.results.size() != 1) return std::nullopt;
  std::vector<std::vector<double>> p; // scale, beta, mean, var
  for (size_t i = 1; i <= 4; ++i) {
    const Tensor *t = pattern::constant_tensor(bn.operands[i]);
    if (!t || t->rank() != 1 || t->numel() != m) return std::nullopt;
    p.push_back(t->to_f64s());
  }
  const double eps = bn.attr_float("epsilon", 1e-5);
  Affine a;
  for (size_t c = 0; c < static_cast<size_t>(m); ++c) {
    const double s = p[0][c] / std::sqrt(p[3][c] + eps);
    a.scale.push_back(s);
    a.shift.push_back(p[1][c] - p[2][c] * s);
  }
  return a;
}

// The conv operand index and affine map of a mul/add by a per-channel constant.
std::optional<Affine> elementwise_affine(const Op &op, size_t conv_idx, int64_t m) {
  const Value *other = op.operands[1 - conv_idx];
  const Tensor *c = pattern::constant_tensor(other);
  const Value *out = op.results[0];
  if (!c || op.results.size() != 1 || out->type != op.operands[conv_idx]->type) return std::nullopt;
  auto k = per_channel(*c, out->type.rank(), m);
  if (!k) return std::nullopt;
  Affine a;
  if (op.name() == "kiln.mul") {
    a.scale = *k;
    a.shift.assign(k->size(), 0.0);
  } else {
    a.scale.assign(k->size(), 1.0);
    a.shift = *k;
  }
  return a;
}

// Matches `op` as an affine op on a foldable conv; returns the conv and the map.
std::optional<std::pair<ConvSite, Affine>> match(const Op &op, const Graph &g,
                                                 const UseCounts &uses) {
  std::string_view n = op.name();
  if (n == "kiln.batch_norm" && op.operands.size() == 5) {
    auto s = foldable_conv(op.operands[0], g, uses);
    if (!s) return std::nullopt;
    auto a = batch_norm_affine(op, s->m);
    if (!a) return std::nullopt;
    return std::make_pair(*s, *a);
  }
  if ((n == "kiln.mul" || n == "kiln.add") && op.operands.size() == 2 && op.operands[0] &&
      op.operands[1]) {
    for (size_t i = 0; i < 2; ++i) {
      auto s = foldable_conv(op.operands[i], g, uses);
      if (!s) continue;
      auto a = elementwise_affine(op, i, s->m);
      if (a) return std::make_pair(*s, *a);
    }
  }
  return std::nullopt;
}

// Rewrites the conv's weights and bias; returns the number of ops inserted before it.
size_t rewrite_conv(Graph &g, const ConvSite &s, const Affine &a) {
  Tensor w = s.w->clone();
  const int64_t per = s.m > 0 ? w.numel() / s.m : 0;
  for (int64_t i = 0; i < w.numel(); ++i)
    w.set_f64(i, w.get_f64(i) * a.scale[static_cast<size_t>(per > 0 ? i / per : 0)]);
  Tensor b(s.w->dtype(), {s.m});
  for (int64_t c = 0; c < s.m; ++c) {
    const double b0 = s.b ? s.b->get_f64(c) : 0.0;
    b.set_f64(c, b0 * a.scale[static_cast<size_t>(c)] + a.shift[static_cast<size_t>(c)]);
  }
  size_t at = 0;
  while (at < g.ops.size() && g.ops[at].get() != s.conv) ++at;
  auto wc = pattern::new_constant(g, std::move(w), s.conv->loc);
  auto bc = pattern::new_constant(g, std::move(b), s.conv->loc);
  s.conv->operands.resize(3, nullptr);
  s.conv->operands[1] = wc->results[0];
  s.conv->operands[2] = bc->results[0];
  g.ops.insert(g.ops.begin() + static_cast<long>(at), std::move(bc));
  g.ops.insert(g.ops.begin() + static_cast<long>(at), std::move(wc));
  return 2;
}

void fold_graph(Graph &g, UseCounts &uses) {
  for (size_t k = 0; k < g.ops.size(); ++k) {
    Op &op = *g.ops[k];
    for (auto &r : op.regions) fold_graph(*r, uses);
    auto m = match(op, g, uses);
    if (!m) continue;
    Value *conv_out = m->first.conv->results[0];
    Value *out = op.results[0];
    k += rewrite_conv(g, m->first, m->second);
    // The conv now computes what `out` was, so it takes its name: a graph output keeps its
    // name, and tools that look a node's output up by name (kiln validate --per-op) find the
    // folded conv for the batch norm's node, not for the conv's.
    // The dead op's value gives the name up, so that printed IR shows it on the conv.
    conv_out->name = std::move(out->name);
    out->name.clear();
    uses[conv_out] = uses[out];
    uses[out] = 0;
    g.replace_uses(out, conv_out);
  }
}

} // namespace

Status run_fold_batch_norm(Module &m) {
  for (auto &f : m.functions) {
    UseCounts uses;
    count_uses(f->body, uses);
    fold_graph(f->body, uses);
  }
  return Status::ok();
}

} // namespace kiln
