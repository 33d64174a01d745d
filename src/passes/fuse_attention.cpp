// fuse-attention: finds scaled dot-product attention written out as PyTorch and JAX export it
// and replaces it by one kiln.sdpa (ops/misc_sdpa.cpp), which the compiler runs as one fused
// kernel that never stores the score matrix. The pattern, rooted at the last matmul:
//
//   s = matmul(q [* c1], kt [* c2])           kt = k^T: [..., D, Skv]
//   t = s * c | c * s | s / c                 (optional; c, c1, c2 scalar constants)
//   u = t + mask | mask + t                   (optional; mask broadcast into t's shape)
//   p = softmax(u) over the last axis
//   p = where(isnan(p), 0, p)                 (optional: zero_nan_rows = 1)
//   y = matmul(p, v)
//
// becomes y = kiln.sdpa(q, k, v [, mask]) {scale = c * c1 * c2}. k is kt's operand when kt is
// a transpose of it that swaps the last two axes after some permutation of the others (bert's
// transpose{0, 2, 3, 1} of [B, S, H, D] gives k = transpose{0, 2, 1, 3}, a head split the
// producing matmul's store absorbs), else a new transpose of kt. Only where every shape is
// static, q, k, v have one rank >= 2, one dtype (f32 or f16) and equal leading dims (no
// broadcast batch), the mask does not grow the scores' shape, and every intermediate value
// (s, t, u, p; q * c1 and kt * c2 are absorbed only when used once, else they are q and kt)
// is used only by the next op of the chain. Ops made dead are left for dce.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/pattern.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <numeric>
#include <optional>

namespace kiln {

namespace {

using pattern::count_uses;
using pattern::UseCounts;

// `v`'s defining op when it is `name` with one result.
Op *def_of(Value *v, std::string_view name) {
  if (!v || !v->def || v->def->name() != name || v->def->results.size() != 1)
    return nullptr;
  return v->def;
}

std::optional<double> scalar_const(const Value *v) { return pattern::scalar_const(v, true); }

bool is_static(const Value *v) { return v && v->type.ranked && v->type.is_static(); }

// `v` = x * c or c * x (c a scalar constant, x of v's type): returns x and multiplies `scale`.
Value *scaled_by_const(Value *v, double &scale) {
  Op *m = def_of(v, "kiln.mul");
  if (!m || m->operands.size() != 2)
    return nullptr;
  for (int i = 0; i < 2; ++i) {
    Value *x = m->operands[static_cast<size_t>(i)];
    auto c = scalar_const(m->operands[static_cast<size_t>(1 - i)]);
    if (c && x && x->type == v->type) {
      scale *= *c;
      return x;
    }
  }
  return nullptr;
}

struct Match {
  std::vector<Op *> chain; // ops whose results must have no users outside the chain
  Value *q = nullptr, *kt = nullptr, *v = nullptr, *mask = nullptr;
  double scale = 1.0;
  bool zero_nan = false;
};

// p = where(isnan(x), 0, x): returns x.
Value *nan_guard(Match &m, Value *p) {
  Op *w = def_of(p, "kiln.where");
  if (!w || w->operands.size() != 3)
    return nullptr;
  Value *x = w->operands[2];
  Op *isnan = def_of(w->operands[0], "kiln.isnan");
  auto zero = scalar_const(w->operands[1]);
  if (!isnan || isnan->operands[0] != x || !zero || *zero != 0.0 || !x || x->type != p->type)
    return nullptr;
  m.chain.push_back(w);
  m.chain.push_back(isnan);
  return x;
}

// u = softmax(x) over the last axis: returns x.
Value *softmax_last(Match &m, Value *u) {
  Op *s = def_of(u, "kiln.softmax");
  if (!s || s->operands.size() != 1 || s->attr_str("kind", "") != "softmax")
    return nullptr;
  Value *x = s->operands[0];
  const int64_t rank = u->type.rank();
  int64_t axis = s->attr_int("axis", -1);
  if (axis < 0)
    axis += rank;
  if (!x || axis != rank - 1)
    return nullptr; // flatten_trailing over the last axis alone too
  m.chain.push_back(s);
  return x;
}

// t = s * c | c * s | s / c (or s itself): returns s.
Value *unscaled(Match &m, Value *t) {
  if (Op *d = def_of(t, "kiln.div")) {
    auto c = d->operands.size() == 2 ? scalar_const(d->operands[1]) : std::nullopt;
    if (c && *c != 0.0 && d->operands[0] && d->operands[0]->type == t->type) {
      m.scale /= *c;
      m.chain.push_back(d);
      return d->operands[0];
    }
    return nullptr;
  }
  if (Value *s = scaled_by_const(t, m.scale)) {
    m.chain.push_back(t->def);
    return s;
  }
  return t;
}

// s = matmul(q [* c1], kt [* c2]) with q [..., Sq, D] and kt [..., D, Skv] of one rank.
bool scores(Match &m, Value *s, const UseCounts &uses) {
  Op *mm = def_of(s, "kiln.matmul");
  if (!mm || mm->operands.size() != 2)
    return false;
  m.chain.push_back(mm);
  for (int i = 0; i < 2; ++i) {
    Value *x = mm->operands[static_cast<size_t>(i)];
    auto it = uses.find(x);
    double c = 1.0;
    Value *y = it != uses.end() && it->second == 1 ? scaled_by_const(x, c) : nullptr;
    if (y)
      m.chain.push_back(x->def);
    (i == 0 ? m.q : m.kt) = y ? y : x;
    m.scale *= c;
  }
  return m.q && m.kt;
}

// Shapes and dtypes the kernel takes: q [..., Sq, D], kt [..., D, Skv], v [..., Skv, Dv].
bool compatible(const Match &m, const Value *y) {
  for (const Value *x : std::initializer_list<const Value *>{m.q, m.kt, m.v, y})
    if (!is_static(x) || shape_numel(x->type.dims) == 0)
      return false;
  const DType dt = m.q->type.dtype;
  if ((dt != DType::f32 && dt != DType::f16) || m.kt->type.dtype != dt || m.v->type.dtype != dt ||
      y->type.dtype != dt)
    return false;
  const Shape &q = m.q->type.dims, &kt = m.kt->type.dims, &v = m.v->type.dims;
  const size_t r = q.size();
  if (r < 2 || kt.size() != r || v.size() != r)
    return false;
  if (!std::equal(q.begin(), q.end() - 2, kt.begin()) ||
      !std::equal(q.begin(), q.end() - 2, v.begin()))
    return false;
  if (kt[r - 2] != q[r - 1] || v[r - 2] != kt[r - 1])
    return false;
  if (m.mask && (!is_static(m.mask) || !is_float(m.mask->type.dtype)))
    return false;
  return true;
}

// Every chain op's result is used only by chain ops (the root excepted).
bool closed(const Match &m, const Op &root, const UseCounts &uses) {
  std::map<const Value *, int> inner;
  for (const Op *op : m.chain)
    for (const Value *v : op->operands)
      if (v)
        ++inner[v];
  for (const Op *op : m.chain) {
    if (op == &root)
      continue;
    auto it = uses.find(op->results[0]);
    if (it == uses.end() || it->second != inner[op->results[0]])
      return false;
  }
  return true;
}

std::optional<Match> match(Op &root, const UseCounts &uses) {
  if (root.name() != "kiln.matmul" || root.operands.size() != 2 || root.results.size() != 1)
    return std::nullopt;
  Match m;
  m.chain.push_back(&root);
  m.v = root.operands[1];
  Value *p = root.operands[0];
  if (Value *x = nan_guard(m, p)) {
    m.zero_nan = true;
    p = x;
  }
  Value *u = softmax_last(m, p);
  if (!u)
    return std::nullopt;
  Value *t = u;
  if (Op *add = def_of(u, "kiln.add"); add && add->operands.size() == 2) {
    // The scores are the operand of the add's type whose chain matches; the other is the mask.
    for (int i = 0; i < 2 && t == u; ++i) {
      Value *a = add->operands[static_cast<size_t>(i)];
      Value *b = add->operands[static_cast<size_t>(1 - i)];
      if (!a || !b || a->type != u->type)
        continue;
      Match trial = m;
      trial.chain.push_back(add);
      trial.mask = b;
      if (scores(trial, unscaled(trial, a), uses)) {
        m = trial;
        t = a;
      }
    }
    if (t == u && !scores(m, unscaled(m, u), uses))
      return std::nullopt;
  } else if (!scores(m, unscaled(m, u), uses)) {
    return std::nullopt;
  }
  if (!compatible(m, root.results[0]) || !closed(m, root, uses))
    return std::nullopt;
  return m;
}

// k for kt = k^T: the operand of a transpose of it, or a new transpose (inserted at `at`).
Value *key_of(Graph &g, size_t &at, Value *kt, const std::string &loc) {
  const size_t r = kt->type.dims.size();
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  Value *x = kt;
  if (Op *t = def_of(kt, "kiln.transpose"); t && t->operands[0] && is_static(t->operands[0])) {
    std::vector<int64_t> p = t->attr_ints("perm");
    if (p.empty())
      for (int64_t d = static_cast<int64_t>(r) - 1; d >= 0; --d)
        p.push_back(d);
    if (p.size() == r) {
      perm = p;
      x = t->operands[0];
    }
  }
  std::swap(perm[r - 2], perm[r - 1]); // k = transpose(x, perm) when kt = transpose(x, p)
  bool identity = true;
  for (size_t d = 0; d < r; ++d)
    identity = identity && perm[d] == static_cast<int64_t>(d);
  if (identity)
    return x;
  Shape dims;
  for (int64_t d : perm)
    dims.push_back(x->type.dims[static_cast<size_t>(d)]);
  auto op = std::make_unique<Op>();
  op->def = core_ops().find("kiln.transpose");
  op->loc = loc;
  op->operands = {x};
  op->attrs["perm"] = perm;
  Value *k = g.new_value(TensorType{x->type.dtype, dims, true}, "");
  k->def = op.get();
  op->results.push_back(k);
  g.ops.insert(g.ops.begin() + static_cast<long>(at++), std::move(op));
  return k;
}

// Matches at g.ops[k]; on a match inserts the new ops before it (the ops before them are still
// to be visited) and redirects its uses.
bool fuse_at(Graph &g, size_t k, UseCounts &uses) {
  Op &root = *g.ops[k];
  auto m = match(root, uses);
  if (!m)
    return false;
  size_t at = k;
  Value *key = key_of(g, at, m->kt, root.loc);
  auto op = std::make_unique<Op>();
  op->def = core_ops().find("kiln.sdpa");
  op->loc = root.loc;
  op->operands = {m->q, key, m->v};
  if (m->mask)
    op->operands.push_back(m->mask);
  op->attrs["scale"] = m->scale;
  if (m->zero_nan)
    op->attrs["zero_nan_rows"] = int64_t(1);
  pattern::adopt_result(g, root, *op, m->chain, uses); // the chain is dead now
  if (at != k)
    ++uses[key->def->operands[0]]; // a new transpose
  g.ops.insert(g.ops.begin() + static_cast<long>(at), std::move(op));
  return true;
}

void fuse_graph(Graph &g, UseCounts &uses) {
  for (size_t k = g.ops.size(); k-- > 0;) {
    for (auto &r : g.ops[k]->regions)
      fuse_graph(*r, uses);
    fuse_at(g, k, uses);
  }
}

} // namespace

Status run_fuse_attention(Module &m) {
  for (auto &f : m.functions) {
    UseCounts uses;
    count_uses(f->body, uses);
    fuse_graph(f->body, uses);
  }
  return Status::ok();
}

} // namespace kiln
