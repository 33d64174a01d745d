// Structural hashing and equality of kernel IR, used to find duplicate kernels without
// serialising them for a backend.
//
// A kernel is flattened into a canonical token stream (a prefix encoding: each node's kind,
// type and attributes, then its children, with counts for lists and a marker for undefined
// children), so two streams are equal exactly when the trees are. Names play no part: the
// kernel's, its buffers' and shared arrays' names are skipped, and each variable name becomes
// the order of its first appearance, so kernels that differ only by a consistent renaming of
// variables compare equal (no backend gives names a meaning).
#include "kir/kir.h"

#include <bit>
#include <type_traits>
#include <unordered_map>

namespace kiln::kir {
namespace {

constexpr uint64_t kUndefined = ~uint64_t(0);

class Canon {
public:
  std::vector<uint64_t> tokens;

  void put(uint64_t v) { tokens.push_back(v); }

  void expr(const Expr &e) {
    if (!e.defined()) return put(kUndefined);
    put(uint64_t(e.kind()));
    value_type(e.value_type());
    switch (e.kind()) {
#define KILN_KIR_CANON(K)                                                                      \
  case ExprKind::K: return node(e.as<K>());
      KILN_KIR_EXPR_KINDS(KILN_KIR_CANON)
#undef KILN_KIR_CANON
    }
  }

  void stmt(const Stmt &s) {
    if (!s.defined()) return put(kUndefined);
    put(0x100 + uint64_t(s.kind()));
    switch (s.kind()) {
#define KILN_KIR_CANON(K)                                                                      \
  case StmtKind::K: return node(s.as<K>());
      KILN_KIR_STMT_KINDS(KILN_KIR_CANON)
#undef KILN_KIR_CANON
    }
  }

private:
  std::unordered_map<std::string, uint64_t> var_ids_;

  void name(const std::string &n) {
    auto [it, inserted] = var_ids_.emplace(n, var_ids_.size());
    put(it->second);
  }

  void value_type(const ValueType &t) {
    put(uint64_t(t.elem));
    put(t.lanes);
    put(t.matrix.rows);
    put(t.matrix.cols);
    put(uint64_t(t.matrix.use));
  }

  // ---- expressions ----
  void node(const IntImm *n) { put(uint64_t(n->value)); }
  void node(const FloatImm *n) { put(std::bit_cast<uint64_t>(n->value)); }
  void node(const Var *n) { name(n->name); }
  void node(const Binary *n) {
    put(uint64_t(n->op));
    expr(n->a);
    expr(n->b);
  }
  void node(const Cmp *n) {
    put(uint64_t(n->op));
    expr(n->a);
    expr(n->b);
  }
  void node(const And *n) {
    expr(n->a);
    expr(n->b);
  }
  void node(const Or *n) {
    expr(n->a);
    expr(n->b);
  }
  void node(const Not *n) { expr(n->a); }
  void node(const Select *n) {
    expr(n->cond);
    expr(n->t);
    expr(n->f);
  }
  void node(const Cast *n) { expr(n->value); }
  void node(const Call *n) {
    put(uint64_t(n->fn));
    put(n->args.size());
    for (const Expr &a : n->args) expr(a);
  }
  void node(const Load *n) {
    put(uint64_t(int64_t(n->buffer)));
    expr(n->index);
  }
  void node(const Builtin *n) { put(uint64_t(n->builtin)); }
  void node(const PushConst *n) { put(uint64_t(int64_t(n->slot))); }
  void node(const LoadShared *n) {
    put(uint64_t(int64_t(n->array)));
    expr(n->index);
  }

  void node(const VectorLoad *n) {
    put(uint64_t(int64_t(n->buffer)));
    expr(n->index);
  }
  void node(const Broadcast *n) { expr(n->value); }
  void node(const ExtractLane *n) {
    put(uint64_t(int64_t(n->lane)));
    expr(n->vector);
  }
  void node(const MakeVector *n) {
    put(n->elems.size());
    for (const Expr &e : n->elems) expr(e);
  }
  void node(const SubgroupReduce *n) {
    put(uint64_t(n->op));
    expr(n->value);
  }
  void node(const SubgroupBroadcast *n) {
    expr(n->value);
    expr(n->lane);
  }
  void node(const SubgroupShuffle *n) {
    put(uint64_t(n->mode));
    expr(n->value);
    expr(n->lane);
  }
  void matrix_access(MemSpace space, int target, const Expr &offset, const Expr &stride,
                     MatrixLayout layout) {
    put(uint64_t(space));
    put(uint64_t(int64_t(target)));
    expr(offset);
    expr(stride);
    put(uint64_t(layout));
  }
  void node(const MatrixLoad *n) {
    matrix_access(n->space, n->target, n->offset, n->stride, n->layout);
  }
  void node(const MatrixMulAdd *n) {
    expr(n->a);
    expr(n->b);
    expr(n->c);
  }
  void node(const MatrixFill *n) { expr(n->value); }
  void node(const MatrixScale *n) {
    expr(n->value);
    expr(n->scale);
  }
  void node(const MatrixLength *n) { value_type(n->of); }

  // ---- statements ----
  void node(const Store *n) {
    put(uint64_t(int64_t(n->buffer)));
    expr(n->index);
    expr(n->value);
  }
  void node(const For *n) {
    expr(n->var);
    expr(n->begin);
    expr(n->extent);
    stmt(n->body);
  }
  void node(const If *n) {
    expr(n->cond);
    stmt(n->then_case);
    stmt(n->else_case);
  }
  void node(const Let *n) {
    expr(n->var);
    expr(n->value);
    stmt(n->body);
  }
  void node(const DeclareVar *n) {
    expr(n->var);
    expr(n->init);
  }
  void node(const Assign *n) {
    expr(n->var);
    expr(n->value);
  }
  void node(const Block *n) {
    put(n->stmts.size());
    for (const Stmt &s : n->stmts) stmt(s);
  }
  void node(const Barrier *) {}
  void node(const VectorStore *n) {
    put(uint64_t(int64_t(n->buffer)));
    expr(n->index);
    expr(n->value);
  }
  void node(const MatrixStore *n) {
    matrix_access(n->space, n->target, n->offset, n->stride, n->layout);
    expr(n->value);
  }
  void node(const StoreShared *n) {
    put(uint64_t(int64_t(n->array)));
    expr(n->index);
    expr(n->value);
  }
};

std::vector<uint64_t> canon(const Kernel &k) {
  Canon c;
  c.put(k.buffers.size());
  for (const BufferParam &b : k.buffers) {
    c.put(uint64_t(b.elem));
    c.put(uint64_t(b.readonly) | uint64_t(b.writeonly) << 1);
  }
  for (uint32_t w : k.workgroup_size) c.put(w);
  c.put(k.push_constant_count);
  c.put(k.shared.size());
  for (const SharedArray &s : k.shared) {
    c.put(uint64_t(s.elem));
    c.put(s.count);
    c.put(uint64_t(s.lanes));
  }
  c.stmt(k.body);
  return std::move(c.tokens);
}

// FNV-1a over the tokens' bytes, then a final avalanche (splitmix64's finaliser).
uint64_t hash_tokens(const std::vector<uint64_t> &tokens) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint64_t t : tokens)
    for (int i = 0; i < 8; ++i) {
      h ^= (t >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

template <class T> std::vector<uint64_t> canon_of(const T &x) {
  Canon c;
  if constexpr (std::is_same_v<T, Expr>)
    c.expr(x);
  else
    c.stmt(x);
  return std::move(c.tokens);
}

} // namespace

uint64_t structural_hash(const Expr &e) { return hash_tokens(canon_of(e)); }
uint64_t structural_hash(const Stmt &s) { return hash_tokens(canon_of(s)); }
uint64_t structural_hash(const Kernel &k) { return hash_tokens(canon(k)); }

bool structural_equal(const Expr &a, const Expr &b) { return canon_of(a) == canon_of(b); }
bool structural_equal(const Stmt &a, const Stmt &b) { return canon_of(a) == canon_of(b); }
bool structural_equal(const Kernel &a, const Kernel &b) { return canon(a) == canon(b); }

} // namespace kiln::kir
