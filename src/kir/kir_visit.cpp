// Kernel IR traversal: Visitor walks children, Mutator rebuilds only what changed.
#include "kir/kir.h"

namespace kiln::kir {

// ---- Visitor ----

void Visitor::visit(const Expr &e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case ExprKind::K: visit(e.as<K>()); return;
    KILN_KIR_EXPR_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
  }
}

void Visitor::visit(const Stmt &s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case StmtKind::K: visit(s.as<K>()); return;
    KILN_KIR_STMT_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
  }
}

void Visitor::visit(const IntImm *) {}
void Visitor::visit(const FloatImm *) {}
void Visitor::visit(const Var *) {}
void Visitor::visit(const Binary *n) {
  visit(n->a);
  visit(n->b);
}
void Visitor::visit(const Cmp *n) {
  visit(n->a);
  visit(n->b);
}
void Visitor::visit(const And *n) {
  visit(n->a);
  visit(n->b);
}
void Visitor::visit(const Or *n) {
  visit(n->a);
  visit(n->b);
}
void Visitor::visit(const Not *n) { visit(n->a); }
void Visitor::visit(const Select *n) {
  visit(n->cond);
  visit(n->t);
  visit(n->f);
}
void Visitor::visit(const Cast *n) { visit(n->value); }
void Visitor::visit(const Call *n) {
  for (const Expr &a : n->args) visit(a);
}
void Visitor::visit(const Load *n) { visit(n->index); }
void Visitor::visit(const Builtin *) {}
void Visitor::visit(const PushConst *) {}
void Visitor::visit(const LoadShared *n) { visit(n->index); }
void Visitor::visit(const VectorLoad *n) { visit(n->index); }
void Visitor::visit(const Broadcast *n) { visit(n->value); }
void Visitor::visit(const ExtractLane *n) { visit(n->vector); }
void Visitor::visit(const MakeVector *n) {
  for (const Expr &e : n->elems) visit(e);
}
void Visitor::visit(const SubgroupReduce *n) { visit(n->value); }
void Visitor::visit(const SubgroupBroadcast *n) {
  visit(n->value);
  visit(n->lane);
}
void Visitor::visit(const SubgroupShuffle *n) {
  visit(n->value);
  visit(n->lane);
}
void Visitor::visit(const MatrixLoad *n) {
  visit(n->offset);
  visit(n->stride);
}
void Visitor::visit(const MatrixMulAdd *n) {
  visit(n->a);
  visit(n->b);
  visit(n->c);
}
void Visitor::visit(const MatrixFill *n) { visit(n->value); }
void Visitor::visit(const MatrixScale *n) {
  visit(n->value);
  visit(n->scale);
}
void Visitor::visit(const MatrixLength *) {}

void Visitor::visit(const Store *n) {
  visit(n->index);
  visit(n->value);
}
void Visitor::visit(const For *n) {
  visit(n->var);
  visit(n->begin);
  visit(n->extent);
  visit(n->body);
}
void Visitor::visit(const If *n) {
  visit(n->cond);
  visit(n->then_case);
  visit(n->else_case);
}
void Visitor::visit(const Let *n) {
  visit(n->var);
  visit(n->value);
  visit(n->body);
}
void Visitor::visit(const DeclareVar *n) {
  visit(n->var);
  visit(n->init);
}
void Visitor::visit(const Assign *n) {
  visit(n->var);
  visit(n->value);
}
void Visitor::visit(const Block *n) {
  for (const Stmt &s : n->stmts) visit(s);
}
void Visitor::visit(const Barrier *) {}
void Visitor::visit(const StoreShared *n) {
  visit(n->index);
  visit(n->value);
}
void Visitor::visit(const VectorStore *n) {
  visit(n->index);
  visit(n->value);
}
void Visitor::visit(const MatrixStore *n) {
  visit(n->offset);
  visit(n->stride);
  visit(n->value);
}

// ---- Mutator ----

Expr Mutator::mutate(const Expr &e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case ExprKind::K: return visit(e.as<K>(), e);
    KILN_KIR_EXPR_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
  }
  return e;
}

Stmt Mutator::mutate(const Stmt &s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define KILN_KIR_DISPATCH(K)                                                                   \
  case StmtKind::K: return visit(s.as<K>(), s);
    KILN_KIR_STMT_KINDS(KILN_KIR_DISPATCH)
#undef KILN_KIR_DISPATCH
  }
  return s;
}

Expr Mutator::visit(const IntImm *, const Expr &self) { return self; }
Expr Mutator::visit(const FloatImm *, const Expr &self) { return self; }
Expr Mutator::visit(const Var *, const Expr &self) { return self; }

Expr Mutator::visit(const Binary *n, const Expr &self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return self;
  return binary(n->op, a, b);
}

Expr Mutator::visit(const Cmp *n, const Expr &self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return self;
  return cmp(n->op, a, b);
}

Expr Mutator::visit(const And *n, const Expr &self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return self;
  return logical_and(a, b);
}

Expr Mutator::visit(const Or *n, const Expr &self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return self;
  return logical_or(a, b);
}

Expr Mutator::visit(const Not *n, const Expr &self) {
  Expr a = mutate(n->a);
  if (a.same_as(n->a)) return self;
  return logical_not(a);
}

Expr Mutator::visit(const Select *n, const Expr &self) {
  Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
  if (c.same_as(n->cond) && t.same_as(n->t) && f.same_as(n->f)) return self;
  return select(c, t, f);
}

Expr Mutator::visit(const Cast *n, const Expr &self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return cast(n->type, v);
}

Expr Mutator::visit(const Call *n, const Expr &self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr &a : n->args) {
    args.push_back(mutate(a));
    changed = changed || !args.back().same_as(a);
  }
  if (!changed) return self;
  return call(n->fn, std::move(args));
}

Expr Mutator::visit(const Load *n, const Expr &self) {
  Expr i = mutate(n->index);
  if (i.same_as(n->index)) return self;
  return load(n->buffer, n->type, i);
}

Expr Mutator::visit(const Builtin *, const Expr &self) { return self; }
Expr Mutator::visit(const PushConst *, const Expr &self) { return self; }

Expr Mutator::visit(const LoadShared *n, const Expr &self) {
  Expr i = mutate(n->index);
  if (i.same_as(n->index)) return self;
  return load_shared(n->array, n->type, i, n->lanes);
}

Expr Mutator::visit(const VectorLoad *n, const Expr &self) {
  Expr i = mutate(n->index);
  if (i.same_as(n->index)) return self;
  return vector_load(n->buffer, n->type, i, n->lanes);
}

Expr Mutator::visit(const Broadcast *n, const Expr &self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return broadcast(v, n->lanes);
}

Expr Mutator::visit(const ExtractLane *n, const Expr &self) {
  Expr v = mutate(n->vector);
  if (v.same_as(n->vector)) return self;
  return extract_lane(v, n->lane);
}

Expr Mutator::visit(const MakeVector *n, const Expr &self) {
  std::vector<Expr> elems;
  bool changed = false;
  for (const Expr &e : n->elems) {
    elems.push_back(mutate(e));
    changed = changed || !elems.back().same_as(e);
  }
  if (!changed) return self;
  return make_vector(std::move(elems));
}

Expr Mutator::visit(const SubgroupReduce *n, const Expr &self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return subgroup_reduce(n->op, v);
}

Expr Mutator::visit(const SubgroupBroadcast *n, const Expr &self) {
  Expr v = mutate(n->value), l = mutate(n->lane);
  if (v.same_as(n->value) && l.same_as(n->lane)) return self;
  return l.defined() ? subgroup_broadcast(v, l) : subgroup_broadcast_first(v);
}

Expr Mutator::visit(const SubgroupShuffle *n, const Expr &self) {
  Expr v = mutate(n->value), l = mutate(n->lane);
  if (v.same_as(n->value) && l.same_as(n->lane)) return self;
  return n->mode == ShuffleMode::index ? subgroup_shuffle(v, l) : subgroup_shuffle_xor(v, l);
}

Expr Mutator::visit(const MatrixLoad *n, const Expr &self) {
  Expr o = mutate(n->offset), st = mutate(n->stride);
  if (o.same_as(n->offset) && st.same_as(n->stride)) return self;
  return matrix_load(n->value_type(), n->space, n->target, o, st, n->layout);
}

Expr Mutator::visit(const MatrixMulAdd *n, const Expr &self) {
  Expr a = mutate(n->a), b = mutate(n->b), c = mutate(n->c);
  if (a.same_as(n->a) && b.same_as(n->b) && c.same_as(n->c)) return self;
  return matrix_mul_add(a, b, c);
}

Expr Mutator::visit(const MatrixFill *n, const Expr &self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return matrix_fill(n->value_type(), v);
}

Expr Mutator::visit(const MatrixScale *n, const Expr &self) {
  Expr m = mutate(n->value), f = mutate(n->scale);
  if (m.same_as(n->value) && f.same_as(n->scale)) return self;
  return matrix_scale(m, f);
}

Expr Mutator::visit(const MatrixLength *, const Expr &self) { return self; }

Stmt Mutator::visit(const Store *n, const Stmt &self) {
  Expr i = mutate(n->index), v = mutate(n->value);
  if (i.same_as(n->index) && v.same_as(n->value)) return self;
  return store(n->buffer, i, v);
}

Stmt Mutator::visit(const For *n, const Stmt &self) {
  Expr b = mutate(n->begin), e = mutate(n->extent);
  Stmt body = mutate(n->body);
  if (b.same_as(n->begin) && e.same_as(n->extent) && body.same_as(n->body)) return self;
  return for_loop(n->var, b, e, body);
}

Stmt Mutator::visit(const If *n, const Stmt &self) {
  Expr c = mutate(n->cond);
  Stmt t = mutate(n->then_case), f = mutate(n->else_case);
  if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return self;
  return if_then(c, t, f);
}

Stmt Mutator::visit(const Let *n, const Stmt &self) {
  Expr v = mutate(n->value);
  Stmt body = mutate(n->body);
  if (v.same_as(n->value) && body.same_as(n->body)) return self;
  return let(n->var, v, body);
}

Stmt Mutator::visit(const DeclareVar *n, const Stmt &self) {
  Expr v = mutate(n->init);
  if (v.same_as(n->init)) return self;
  return declare_var(n->var, v);
}

Stmt Mutator::visit(const Assign *n, const Stmt &self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return assign(n->var, v);
}

Stmt Mutator::visit(const Block *n, const Stmt &self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const Stmt &s : n->stmts) {
    stmts.push_back(mutate(s));
    changed = changed || !stmts.back().same_as(s);
  }
  if (!changed) return self;
  return block(std::move(stmts));
}

Stmt Mutator::visit(const Barrier *, const Stmt &self) { return self; }

Stmt Mutator::visit(const StoreShared *n, const Stmt &self) {
  Expr i = mutate(n->index), v = mutate(n->value);
  if (i.same_as(n->index) && v.same_as(n->value)) return self;
  return store_shared(n->array, i, v);
}

Stmt Mutator::visit(const VectorStore *n, const Stmt &self) {
  Expr i = mutate(n->index), v = mutate(n->value);
  if (i.same_as(n->index) && v.same_as(n->value)) return self;
  return vector_store(n->buffer, i, v);
}

Stmt Mutator::visit(const MatrixStore *n, const Stmt &self) {
  Expr o = mutate(n->offset), st = mutate(n->stride), v = mutate(n->value);
  if (o.same_as(n->offset) && st.same_as(n->stride) && v.same_as(n->value)) return self;
  return matrix_store(n->space, n->target, o, st, n->layout, v);
}

} // namespace kiln::kir
