// fuse-composites: recognises composite ops that exporters emit as chains of primitives and
// replaces each chain by one core op. Patterns (the root is the last op of the chain):
//   LayerNorm  d = x - mean(x); v = mean(d*d | d^2); n = d / sqrt(v + eps) [* gamma [+ beta]]
//              -> kiln.normalize{kind standard}(x, gamma?, beta?)
//   RMSNorm    v = mean(x*x | x^2); n = x / sqrt(v + eps) | x * reciprocal(sqrt(v + eps))
//              [* gamma] -> kiln.normalize{kind rms}(x, gamma?)
//   GELU       x * 0.5 * (1 + erf(x / sqrt(2) | x * (1/sqrt(2)))), any grouping of the product
//              -> kiln.gelu
//   SiLU       x * sigmoid(x) -> kiln.swish{alpha 1}
//   HardSwish  x * hard_sigmoid{alpha 1/6, beta 1/2}(x) -> kiln.hard_swish
//   Softmax    e = exp(x [- max(x, a)]); e / sum(e, a) over one axis a -> kiln.softmax
// The means run over trailing axes with keepdims; constants are scalars matched exactly (1/sqrt(2),
// sqrt(2) and 1/6 within 1e-6); every elementwise op of a chain keeps x's type (no broadcast
// growth); and every intermediate value is used only inside its chain. Ops made dead are left
// for dce.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/pattern.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace kiln {

namespace {

using pattern::count_uses;
using pattern::UseCounts;

using pattern::scalar_const;

bool is_const(const Value *v, double want, double tol = 0) {
  auto c = scalar_const(v);
  return c && std::fabs(*c - want) <= tol;
}

// The ops of a chain being matched; `take` records an op if `v` is produced by `name`.
struct Chain {
  std::vector<Op *> ops;
  Op *take(Value *v, std::string_view name) {
    if (!v || !v->def || v->def->name() != name || v->def->results.size() != 1)
      return nullptr;
    ops.push_back(v->def);
    return v->def;
  }
};

bool same_type(const Value *a, const Value *b) { return a && b && a->type == b->type; }

// The operands of binary `op` as (a, b) where `pred(a)` holds, trying both orders.
template <class Pred> bool split(Op &op, Pred pred, Value *&a, Value *&b) {
  if (op.operands.size() != 2)
    return false;
  for (int i = 0; i < 2; ++i) {
    Value *p = op.operands[static_cast<size_t>(i)], *q = op.operands[static_cast<size_t>(1 - i)];
    if (pred(p, q)) {
      a = p;
      b = q;
      return true;
    }
  }
  return false;
}

// Op `v` = kiln.reduce{kind, keepdims} over constant axes of its operand; returns the operand
// and the sorted, non-negative axes.
Value *reduce_of(Chain &c, Value *v, std::string_view kind, std::vector<int64_t> &axes) {
  Op *r = c.take(v, "kiln.reduce");
  if (!r || r->attr_str("kind", "") != kind || r->attr_int("keepdims", 1) != 1 ||
      r->operands.size() != 2 || !r->operands[0] || !r->operands[1])
    return nullptr;
  const Value *x = r->operands[0];
  const Value *a = r->operands[1];
  if (!x->type.ranked || !a->def || a->def->name() != "kiln.constant")
    return nullptr;
  const Tensor *t = a->def->attr_tensor("value");
  if (!t || t->numel() == 0 || t->rank() > 1)
    return nullptr;
  const int64_t rank = x->type.rank();
  axes.clear();
  for (int64_t ax : t->to_i64s()) {
    if (ax < -rank || ax >= rank)
      return nullptr;
    axes.push_back(ax < 0 ? ax + rank : ax);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    return nullptr;
  return r->operands[0];
}

bool trailing(const std::vector<int64_t> &axes, int64_t rank) {
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[axes.size() - 1 - i] != rank - 1 - static_cast<int64_t>(i))
      return false;
  return !axes.empty();
}

// `v` = d*d or d^2; returns d.
Value *square_of(Chain &c, Value *v) {
  if (Op *p = c.take(v, "kiln.pow")) {
    if (p->operands.size() == 2 && is_const(p->operands[1], 2.0) && same_type(v, p->operands[0]))
      return p->operands[0];
    return nullptr;
  }
  if (Op *m = c.take(v, "kiln.mul"))
    if (m->operands.size() == 2 && m->operands[0] == m->operands[1] && same_type(v, m->operands[0]))
      return m->operands[0];
  return nullptr;
}

// `s` = sqrt(mean(square(d)) + eps) over trailing axes, with d of `d`'s shape. Returns the
// value d and sets the epsilon and axes.
Value *inv_std(Chain &c, Value *s, double &eps, std::vector<int64_t> &axes) {
  Op *sq = c.take(s, "kiln.sqrt");
  if (!sq || !sq->operands[0])
    return nullptr;
  Value *e = sq->operands[0];
  Op *add = c.take(e, "kiln.add");
  Value *var = nullptr, *ec = nullptr;
  if (!add || !same_type(s, e) ||
      !split(
          *add, [](Value *p, Value *q) { return !scalar_const(p) && scalar_const(q); }, var, ec) ||
      !same_type(var, e))
    return nullptr;
  eps = *scalar_const(ec);
  Value *p = reduce_of(c, var, "mean", axes);
  if (!p)
    return nullptr;
  Value *d = square_of(c, p);
  if (!d || !trailing(axes, d->type.rank()))
    return nullptr;
  return d;
}

// `n` = d / sqrt(..) or d * reciprocal(sqrt(..)); returns d (and the sqrt chain's data).
Value *normalized(Chain &c, Value *n, double &eps, std::vector<int64_t> &axes) {
  if (Op *dv = c.take(n, "kiln.div")) {
    if (dv->operands.size() != 2 || !same_type(n, dv->operands[0]))
      return nullptr;
    Value *d = inv_std(c, dv->operands[1], eps, axes);
    return d == dv->operands[0] ? d : nullptr;
  }
  Op *m = c.take(n, "kiln.mul");
  if (!m || m->operands.size() != 2)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    size_t mark = c.ops.size();
    Value *d = m->operands[static_cast<size_t>(i)], *r = m->operands[static_cast<size_t>(1 - i)];
    Op *rc = c.take(r, "kiln.reciprocal");
    if (rc && same_type(n, d) && inv_std(c, rc->operands[0], eps, axes) == d)
      return d;
    c.ops.resize(mark);
  }
  return nullptr;
}

// Every result of the chain's ops except the root's is used only by ops of the chain.
bool closed(const Chain &c, const Op &root, const UseCounts &uses,
            const std::set<const Op *> &consumed) {
  std::set<const Op *> seen(c.ops.begin(), c.ops.end());
  std::map<const Value *, int> inner;
  for (const Op *op : seen) {
    if (consumed.count(op))
      return false;
    for (const Value *v : op->operands)
      if (v)
        ++inner[v];
  }
  for (const Op *op : seen) {
    if (op == &root)
      continue;
    const Value *r = op->results[0];
    auto it = uses.find(r);
    if (it == uses.end() || it->second != inner[r])
      return false;
  }
  return true;
}

struct Fused {
  std::string op;
  std::vector<Value *> operands;
  AttrMap attrs;
};

std::optional<Fused> norm_fused(Value *x, const std::string &kind, double eps,
                                const std::vector<int64_t> &axes, Value *gamma, Value *beta) {
  Fused f{"kiln.normalize", {x}, {}};
  if (gamma)
    f.operands.push_back(gamma);
  if (beta)
    f.operands.push_back(beta);
  f.attrs["kind"] = kind;
  f.attrs["axes"] = axes;
  f.attrs["epsilon"] = eps;
  return f;
}

// A standard or rms normalisation ending at `n` (no affine part).
std::optional<Fused> match_norm_core(Chain &c, Value *n, Value *gamma, Value *beta) {
  double eps = 0;
  std::vector<int64_t> axes;
  size_t mark = c.ops.size();
  if (Value *d = normalized(c, n, eps, axes)) {
    std::vector<int64_t> maxes;
    size_t mark2 = c.ops.size();
    Op *sub = c.take(d, "kiln.sub");
    if (sub && sub->operands.size() == 2 && same_type(d, sub->operands[0])) {
      Value *x = sub->operands[0];
      if (reduce_of(c, sub->operands[1], "mean", maxes) == x && maxes == axes)
        return norm_fused(x, "standard", eps, axes, gamma, beta);
    }
    c.ops.resize(mark2);
    if (!beta)
      return norm_fused(d, "rms", eps, axes, gamma, nullptr);
  }
  c.ops.resize(mark);
  return std::nullopt;
}

// root = [[n * gamma] + beta] over a normalisation n.
std::optional<Fused> match_norm(Chain &c, Op &root) {
  Value *out = root.results[0];
  if (root.name() == "kiln.add") {
    for (int i = 0; i < 2 && root.operands.size() == 2; ++i) {
      Value *a = root.operands[static_cast<size_t>(i)],
            *beta = root.operands[static_cast<size_t>(1 - i)];
      size_t mark = c.ops.size();
      Op *m = c.take(a, "kiln.mul");
      for (int j = 0; m && j < 2 && same_type(a, out); ++j) {
        Value *n = m->operands[static_cast<size_t>(j)],
              *gamma = m->operands[static_cast<size_t>(1 - j)];
        if (n && gamma && same_type(n, out))
          if (auto f = match_norm_core(c, n, gamma, beta))
            return f;
      }
      c.ops.resize(mark);
    }
    return std::nullopt;
  }
  if (root.name() == "kiln.mul" && root.operands.size() == 2) {
    for (int j = 0; j < 2; ++j) {
      Value *n = root.operands[static_cast<size_t>(j)],
            *gamma = root.operands[static_cast<size_t>(1 - j)];
      if (n && gamma && same_type(n, out))
        if (auto f = match_norm_core(c, n, gamma, nullptr))
          return f;
    }
  }
  return match_norm_core(c, out, nullptr, nullptr);
}

// `t` = 1 + erf(x / sqrt2 | x * (1/sqrt2)); returns x.
Value *gelu_gate(Chain &c, Value *t) {
  size_t mark = c.ops.size();
  Op *add = c.take(t, "kiln.add");
  Value *ev = nullptr, *one = nullptr;
  if (add &&
      split(
          *add, [](Value *, Value *q) { return is_const(q, 1.0); }, ev, one) &&
      same_type(t, ev))
    if (Op *erf = c.take(ev, "kiln.erf")) {
      Value *arg = erf->operands[0];
      Value *x = nullptr, *k = nullptr;
      if (Op *dv = c.take(arg, "kiln.div"))
        if (dv->operands.size() == 2 && is_const(dv->operands[1], std::sqrt(2.0), 1e-6) &&
            same_type(arg, dv->operands[0]) && same_type(arg, t))
          return dv->operands[0];
      c.ops.resize(mark + 2);
      if (Op *m = c.take(arg, "kiln.mul"))
        if (split(
                *m, [](Value *, Value *q) { return is_const(q, std::sqrt(0.5), 1e-6); }, x, k) &&
            same_type(arg, x) && same_type(arg, t))
          return x;
    }
  c.ops.resize(mark);
  return nullptr;
}

// x * 0.5 * gate(x), grouped as (x*0.5)*g, (x*g)*0.5 or x*(g*0.5), operands in any order.
std::optional<Fused> match_gelu(Chain &c, Op &root) {
  if (root.name() != "kiln.mul" || root.operands.size() != 2)
    return std::nullopt;
  Value *out = root.results[0];
  auto inner = [&](Value *v, auto leaf_ok) -> Value * { // v = mul(a, b) with leaf_ok(a, b)
    Op *m = c.take(v, "kiln.mul");
    Value *a = nullptr, *b = nullptr;
    if (m && same_type(v, out) && split(*m, leaf_ok, a, b))
      return a;
    return nullptr;
  };
  for (int i = 0; i < 2; ++i) {
    Value *p = root.operands[static_cast<size_t>(i)],
          *q = root.operands[static_cast<size_t>(1 - i)];
    size_t mark = c.ops.size();
    if (Value *x = gelu_gate(c, q)) { // (x * 0.5) * g
      if (inner(p, [&](Value *a, Value *b) { return a == x && is_const(b, 0.5); }) &&
          same_type(x, out))
        return Fused{"kiln.gelu", {x}, {}};
    }
    c.ops.resize(mark);
    if (is_const(q, 0.5)) { // (x * g) * 0.5
      Value *x = nullptr;
      if (inner(p,
                [&](Value *a, Value *b) {
                  size_t m2 = c.ops.size();
                  Value *gx = gelu_gate(c, b);
                  if (gx && gx == a)
                    return (x = a) != nullptr;
                  c.ops.resize(m2);
                  return false;
                }) &&
          same_type(x, out))
        return Fused{"kiln.gelu", {x}, {}};
    }
    c.ops.resize(mark);
    Value *gx = nullptr; // x * (g * 0.5)
    if (inner(p,
              [&](Value *a, Value *b) {
                size_t m2 = c.ops.size();
                if (is_const(b, 0.5) && (gx = gelu_gate(c, a)) == q)
                  return true;
                c.ops.resize(m2);
                return false;
              }) &&
        same_type(q, out))
      return Fused{"kiln.gelu", {q}, {}};
    c.ops.resize(mark);
  }
  return std::nullopt;
}

// x * sigmoid(x) and x * hard_sigmoid{1/6, 1/2}(x).
std::optional<Fused> match_gated(Chain &c, Op &root) {
  if (root.name() != "kiln.mul" || root.operands.size() != 2)
    return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Value *x = root.operands[static_cast<size_t>(i)],
          *g = root.operands[static_cast<size_t>(1 - i)];
    if (!same_type(x, root.results[0]) || !same_type(g, x))
      continue;
    size_t mark = c.ops.size();
    if (Op *s = c.take(g, "kiln.sigmoid"); s && s->operands[0] == x) {
      AttrMap a;
      a["alpha"] = 1.0;
      return Fused{"kiln.swish", {x}, a};
    }
    if (Op *h = c.take(g, "kiln.hard_sigmoid");
        h && h->operands[0] == x && std::fabs(h->attr_float("alpha", 0.2) - 1.0 / 6) <= 1e-6 &&
        h->attr_float("beta", 0.5) == 0.5)
      return Fused{"kiln.hard_swish", {x}, {}};
    c.ops.resize(mark);
  }
  return std::nullopt;
}

// exp(x [- max(x, a)]) / sum(that, a) over one axis.
std::optional<Fused> match_softmax(Chain &c, Op &root) {
  if (root.name() != "kiln.div" || root.operands.size() != 2)
    return std::nullopt;
  Value *e = root.operands[0];
  std::vector<int64_t> axes, maxes;
  if (!same_type(e, root.results[0]) || reduce_of(c, root.operands[1], "sum", axes) != e ||
      axes.size() != 1)
    return std::nullopt;
  Op *ex = c.take(e, "kiln.exp");
  if (!ex || !ex->operands[0] || !same_type(e, ex->operands[0]))
    return std::nullopt;
  Value *x = ex->operands[0];
  size_t mark = c.ops.size();
  if (Op *sub = c.take(x, "kiln.sub");
      sub && sub->operands.size() == 2 && same_type(x, sub->operands[0])) {
    if (reduce_of(c, sub->operands[1], "max", maxes) == sub->operands[0] && maxes == axes)
      x = sub->operands[0];
    else
      c.ops.resize(mark);
  } else {
    c.ops.resize(mark);
  }
  AttrMap a;
  a["kind"] = std::string("softmax");
  a["axis"] = axes[0];
  a["flatten_trailing"] = int64_t(0);
  return Fused{"kiln.softmax", {x}, a};
}

using Matcher = std::optional<Fused> (*)(Chain &, Op &);

// Tries every pattern with g.ops[k] as its root; on a match inserts the fused op before it and
// redirects the root's uses.
bool fuse_at(Graph &g, size_t k, UseCounts &uses, std::set<const Op *> &consumed) {
  Op &root = *g.ops[k];
  if (root.results.size() != 1 || consumed.count(&root) || !root.results[0]->type.ranked)
    return false;
  static const Matcher matchers[] = {match_norm, match_gelu, match_gated, match_softmax};
  for (Matcher m : matchers) {
    Chain c;
    c.ops.push_back(&root);
    auto f = m(c, root);
    if (!f || !closed(c, root, uses, consumed))
      continue;
    const OpDef *def = core_ops().find(f->op);
    if (!def)
      continue;
    auto op = std::make_unique<Op>();
    op->def = def;
    op->loc = root.loc;
    op->operands = f->operands;
    op->attrs = std::move(f->attrs);
    pattern::adopt_result(g, root, *op, c.ops, uses); // the chain's ops are dead now
    consumed.insert(c.ops.begin(), c.ops.end());
    g.ops.insert(g.ops.begin() + static_cast<long>(k), std::move(op));
    return true;
  }
  return false;
}

// Walks backwards so that the largest chain (ending at the last op) matches first.
void fuse_graph(Graph &g, UseCounts &uses, std::set<const Op *> &consumed) {
  for (size_t k = g.ops.size(); k-- > 0;) {
    for (auto &r : g.ops[k]->regions)
      fuse_graph(*r, uses, consumed);
    fuse_at(g, k, uses, consumed);
  }
}

} // namespace

Status run_fuse_composites(Module &m) {
  for (auto &f : m.functions) {
    UseCounts uses;
    count_uses(f->body, uses);
    std::set<const Op *> consumed;
    fuse_graph(f->body, uses, consumed);
  }
  return Status::ok();
}

} // namespace kiln
