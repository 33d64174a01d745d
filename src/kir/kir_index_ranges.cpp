// Index simplification from value ranges (kir::simplify_index_ranges). Lowerings compute
// element coordinates by dividing a flat index (unflatten), and fused epilogues flatten and
// divide again; with the ranges of loop variables, lets and the dispatch's ids known, most of
// those divisions are exact: (o * 3136 + u) / 3136 is o when 0 <= u < 3136. A C compiler
// cannot see that (it would need the same ranges), and a division in an index keeps it from
// vectorising the loop around it.
//
// Ranges: integer constants; loop variables from their begin and extent; lets from their
// value; workgroup, local and global ids from the dispatch grid and the workgroup size; and
// +, -, * , /, %, min, max, select and casts over those. A range that leaves its type's range
// is unknown (the arithmetic could wrap), so every rewrite below is exact integer algebra on
// values that do not wrap. Mutable variables have no range.
//
// Rewrites, for a non-negative x and a constant D > 0, with x written as a sum of terms
// coefficient * atom plus a constant:
//   - the terms whose coefficient is a multiple of D (Q * D) split off when the rest R is
//     non-negative: x / D = Q + R / D, x % D = R % D;
//   - for a coefficient c dividing D, x = c * Y + R with 0 <= R < c: x / D = Y / (D / c) and
//     x % D = (Y % (D / c)) * c + R;
//   - 0 <= x < D: x / D = 0, x % D = x;
//   - nested: (x / A) / B = x / (A * B).
// and in a sum, k * (x / c) * c + k * (x % c) becomes k * x.
#include "kir/kir.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace kiln::kir {
namespace {

struct Range {
  int64_t lo, hi; // inclusive
};
using MaybeRange = std::optional<Range>;

std::optional<int64_t> const_of(const Expr &e) {
  if (const IntImm *i = e.as<IntImm>()) return i->value;
  return std::nullopt;
}

// The values type t holds (64-bit types: a conservative half range, so sums stay in int64).
Range type_range(ScalarType t) {
  switch (t) {
  case ScalarType::i8: return {-128, 127};
  case ScalarType::u8: return {0, 255};
  case ScalarType::i16: return {-32768, 32767};
  case ScalarType::u16: return {0, 65535};
  case ScalarType::i32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
  case ScalarType::u32: return {0, std::numeric_limits<uint32_t>::max()};
  default: return {-(int64_t(1) << 61), int64_t(1) << 61};
  }
}

MaybeRange fit(ScalarType t, int64_t lo, int64_t hi) {
  const Range r = type_range(t);
  if (lo < r.lo || hi > r.hi || lo > hi) return std::nullopt;
  return Range{lo, hi};
}

// A sum: coefficient * atom terms plus a constant.
struct Term {
  int64_t coef;
  Expr atom;
};
struct Sum {
  std::vector<Term> terms;
  int64_t constant = 0;
  bool overflow = false; // too many terms or nodes: not rewritten
  int visits = 0;
};

class IndexRanges : public Mutator {
public:
  IndexRanges(const std::array<uint32_t, 3> &groups, const uint32_t wg[3]) {
    for (int a = 0; a < 3; ++a) {
      groups_[a] = std::max<int64_t>(1, groups[static_cast<size_t>(a)]);
      wg_[a] = std::max<int64_t>(1, wg[a]);
    }
  }
  using Mutator::visit;

protected:
  Stmt visit(const Let *n, const Stmt &self) override {
    Expr v = mutate(n->value);
    push(n->var, range(v), v);
    Stmt body = mutate(n->body);
    pop(n->var);
    if (v.same_as(n->value) && body.same_as(n->body)) return self;
    return let(n->var, v, body);
  }

  Stmt visit(const For *n, const Stmt &self) override {
    Expr b = mutate(n->begin), e = mutate(n->extent);
    MaybeRange rb = range(b), re = range(e), rv;
    if (rb && re && re->hi >= 1) rv = fit(n->var.type(), rb->lo, rb->hi + re->hi - 1);
    push(n->var, rv);
    Stmt body = mutate(n->body);
    pop(n->var);
    if (Stmt hoisted = unswitch(n->var, b, e, body); hoisted.defined()) return hoisted;
    if (b.same_as(n->begin) && e.same_as(n->extent) && body.same_as(n->body)) return self;
    return for_loop(n->var, b, e, body);
  }

  // A mutable variable shadows any range its name had, to the end of its block.
  Stmt visit(const Block *n, const Stmt &self) override {
    std::vector<Expr> declared;
    std::vector<Stmt> out;
    bool changed = false;
    for (const Stmt &s : n->stmts) {
      Stmt m = mutate(s);
      changed = changed || !m.same_as(s);
      if (const DeclareVar *d = m.as<DeclareVar>()) {
        push(d->var, std::nullopt);
        ranges_[d->var.as<Var>()->name].back().assignable = true;
        declared.push_back(d->var);
      }
      out.push_back(std::move(m));
    }
    for (auto it = declared.rbegin(); it != declared.rend(); ++it) pop(*it);
    if (!changed) return self;
    return block(std::move(out));
  }

  // In the branch where `cond` holds, a condition v + c <= k or v + c < k (v a variable, c and
  // k constants; several joined by &&) bounds v from above: `if (n0 + 64 <= N)` around a whole
  // tile's epilogue.
  Stmt visit(const If *n, const Stmt &self) override {
    Expr c = mutate(n->cond);
    std::vector<Expr> refined;
    refine(c, refined);
    Stmt t = mutate(n->then_case);
    for (auto it = refined.rbegin(); it != refined.rend(); ++it) pop(*it);
    Stmt f = n->else_case.defined() ? mutate(n->else_case) : Stmt();
    if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return self;
    return if_then(c, t, f);
  }

  Expr visit(const Binary *n, const Expr &self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    const ScalarType t = n->type;
    if (a.is_scalar() && is_signed_int(t)) {
      const auto d = const_of(b);
      if ((n->op == BinOp::div || n->op == BinOp::mod) && d && *d > 0)
        if (auto r = divide(n->op, a, *d)) return *r;
      if (n->op == BinOp::add || n->op == BinOp::sub)
        if (auto r = recombine(binary(n->op, a, b))) return *r;
    }
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return binary(n->op, a, b);
  }

private:
  int64_t groups_[3], wg_[3];

  // Loop unswitching: for (v) { let a = ..; let b = ..; if (c) T else F } whose condition,
  // with the lets' values put in, does not involve v becomes
  // if (c) for (v) { lets; T } else for (v) { lets; F }. A concat's source test (which input
  // a row of the output comes from) is then decided once per row and each loop is one copy the
  // C compiler vectorises, where the branch inside the loop kept it scalar.
  Stmt unswitch(const Expr &v, const Expr &b, const Expr &e, const Stmt &body) {
    std::vector<const Let *> chain;
    Stmt s = body;
    while (const Let *l = s.as<Let>()) {
      chain.push_back(l);
      s = l->body;
    }
    const If *branch = s.as<If>();
    if (!branch) return Stmt();
    // The condition with the chain's lets substituted, innermost first.
    Expr c = branch->cond;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) c = substitute(c, (*it)->var, (*it)->value);
    if (!pure(c) || mentions(c, v.as<Var>()->name) || !immutable_outside(c)) return Stmt();
    for (const Let *l : chain)
      if (mentions(c, l->var.as<Var>()->name)) return Stmt();
    auto rebuild = [&](const Stmt &inner) {
      Stmt out = inner;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) out = let((*it)->var, (*it)->value, out);
      return for_loop(v, b, e, out);
    };
    if (!branch->else_case.defined()) return if_then(c, rebuild(branch->then_case));
    return if_then(c, rebuild(branch->then_case), rebuild(branch->else_case));
  }

  // Whether every variable `e` reads is bound here by a let or a loop (not an assignable
  // variable, which the loop body could change, nor one this pass has not seen bound).
  bool immutable_outside(const Expr &e) const {
    struct Names : Visitor {
      std::vector<std::string> names;
      using Visitor::visit;
      void visit(const Var *n) override { names.push_back(n->name); }
    } found;
    found.visit(e);
    for (const std::string &name : found.names) {
      auto it = ranges_.find(name);
      if (it == ranges_.end() || it->second.empty() || it->second.back().assignable) return false;
    }
    return true;
  }

  // Integer and boolean arithmetic on variables, constants and ids: no memory read (a load
  // could see what the loop writes), so the value is the same before the loop as in it.
  static bool pure(const Expr &e) {
    struct Check : Visitor {
      bool ok = true;
      using Visitor::visit;
      void visit(const Expr &x) override {
        switch (x.kind()) {
        case ExprKind::IntImm: case ExprKind::Var: case ExprKind::Binary: case ExprKind::Cmp:
        case ExprKind::And: case ExprKind::Or: case ExprKind::Not: case ExprKind::Cast:
        case ExprKind::Builtin: case ExprKind::Select: case ExprKind::PushConst:
          Visitor::visit(x);
          return;
        default: ok = false;
        }
      }
    } check;
    check.visit(e);
    return check.ok;
  }

  static bool mentions(const Expr &e, const std::string &name) {
    struct Finder : Visitor {
      const std::string &name;
      bool found = false;
      explicit Finder(const std::string &n) : name(n) {}
      using Visitor::visit;
      void visit(const Var *n) override { found = found || n->name == name; }
    } f(name);
    f.visit(e);
    return f.found;
  }

  static Expr substitute(const Expr &e, const Expr &var, const Expr &value) {
    struct Sub : Mutator {
      const std::string &name;
      const Expr &value;
      Sub(const std::string &n, const Expr &v) : name(n), value(v) {}
      using Mutator::visit;
      Expr visit(const Var *n, const Expr &self) override { return n->name == name ? value : self; }
    } sub(var.as<Var>()->name, value);
    return sub.mutate(e);
  }
  // Per name, the bindings in scope (innermost last): the range, and for a let its value with
  // the binding ids its variables referred to there (a let is expanded into a sum only where
  // those variables still mean the same bindings: an inner loop may reuse a name).
  struct Binding {
    MaybeRange range;
    uint64_t id;
    Expr value;
    std::vector<std::pair<std::string, uint64_t>> uses;
    bool refined = false; // narrowed by a condition: kept as an atom, not expanded
    bool assignable = false; // a DeclareVar's variable: its value changes, never expanded into
  };
  std::unordered_map<std::string, std::vector<Binding>> ranges_;
  uint64_t next_id_ = 1;

  uint64_t current_id(const std::string &name) const {
    auto it = ranges_.find(name);
    return it == ranges_.end() || it->second.empty() ? 0 : it->second.back().id;
  }
  void vars_of(const Expr &e, std::vector<std::pair<std::string, uint64_t>> &out) const {
    if (const Var *v = e.as<Var>()) {
      // A let value that reads an assignable variable (or one this pass has not seen bound)
      // is never expanded elsewhere: the variable may hold another value there.
      auto it = ranges_.find(v->name);
      if (it == ranges_.end() || it->second.empty() || it->second.back().assignable)
        out.emplace_back("", 1);
      else
        out.emplace_back(v->name, it->second.back().id);
      return;
    }
    if (const Binary *b = e.as<Binary>()) {
      vars_of(b->a, out);
      vars_of(b->b, out);
    } else if (const Cast *c = e.as<Cast>()) {
      vars_of(c->value, out);
    } else if (!e.as<IntImm>() && !e.as<Builtin>()) {
      out.emplace_back("", 1); // anything else is not expanded
    }
  }
  void push(const Expr &v, MaybeRange r, Expr value = Expr()) {
    Binding b{r, next_id_++, {}, {}};
    if (value.defined() && value.is_scalar() && is_signed_int(value.type())) {
      vars_of(value, b.uses);
      b.value = value;
    }
    ranges_[v.as<Var>()->name].push_back(std::move(b));
  }
  void pop(const Expr &v) { ranges_[v.as<Var>()->name].pop_back(); }

  void refine(const Expr &cond, std::vector<Expr> &refined) {
    if (const And *a = cond.as<And>()) {
      refine(a->a, refined);
      refine(a->b, refined);
      return;
    }
    const Cmp *cmp = cond.as<Cmp>();
    if (!cmp || (cmp->op != CmpOp::le && cmp->op != CmpOp::lt)) return;
    const auto k = const_of(cmp->b);
    if (!k) return;
    Expr v = cmp->a;
    int64_t off = 0;
    if (const Binary *b = v.as<Binary>(); b && b->op == BinOp::add)
      if (auto c = const_of(b->b)) {
        off = *c;
        v = b->a;
      }
    const Var *var = v.as<Var>();
    if (!var) return;
    auto it = ranges_.find(var->name);
    if (it == ranges_.end() || it->second.empty() || !it->second.back().range) return;
    Binding b = it->second.back(); // the same binding, known to be smaller here
    int64_t hi;
    if (__builtin_sub_overflow(*k, off, &hi) ||
        __builtin_sub_overflow(hi, cmp->op == CmpOp::lt ? 1 : 0, &hi))
      return;
    if (hi >= b.range->hi) return;
    if (hi < b.range->lo) return; // the branch never runs: nothing to learn
    b.range->hi = hi;
    b.refined = true;
    it->second.push_back(std::move(b));
    refined.push_back(v);
  }
  // The let value a variable stands for, when its variables still mean what they meant there.
  Expr value_of(const Var *v) const {
    auto it = ranges_.find(v->name);
    if (it == ranges_.end() || it->second.empty() || !it->second.back().value.defined() ||
        it->second.back().refined)
      return Expr();
    for (const auto &[name, id] : it->second.back().uses)
      if (name.empty() || current_id(name) != id) return Expr();
    return it->second.back().value;
  }

  MaybeRange range(const Expr &e) {
    if (!e.is_scalar() || !is_int(e.type())) return std::nullopt;
    const ScalarType t = e.type();
    if (auto c = const_of(e)) return fit(t, *c, *c);
    if (const Var *v = e.as<Var>()) {
      auto it = ranges_.find(v->name);
      if (it == ranges_.end() || it->second.empty()) return std::nullopt;
      return it->second.back().range;
    }
    if (const Builtin *b = e.as<Builtin>()) {
      switch (b->builtin) {
      case BuiltinKind::workgroup_id_x: return Range{0, groups_[0] - 1};
      case BuiltinKind::workgroup_id_y: return Range{0, groups_[1] - 1};
      case BuiltinKind::workgroup_id_z: return Range{0, groups_[2] - 1};
      case BuiltinKind::local_id_x: return Range{0, wg_[0] - 1};
      case BuiltinKind::local_id_y: return Range{0, wg_[1] - 1};
      case BuiltinKind::local_id_z: return Range{0, wg_[2] - 1};
      case BuiltinKind::global_id_x: return Range{0, groups_[0] * wg_[0] - 1};
      case BuiltinKind::global_id_y: return Range{0, groups_[1] * wg_[1] - 1};
      case BuiltinKind::global_id_z: return Range{0, groups_[2] * wg_[2] - 1};
      default: return std::nullopt;
      }
    }
    if (const Cast *c = e.as<Cast>()) {
      MaybeRange r = range(c->value);
      if (!r) return std::nullopt;
      return fit(t, r->lo, r->hi);
    }
    if (const Select *s = e.as<Select>()) {
      MaybeRange x = range(s->t), y = range(s->f);
      if (!x || !y) return std::nullopt;
      return Range{std::min(x->lo, y->lo), std::max(x->hi, y->hi)};
    }
    const Binary *bin = e.as<Binary>();
    if (!bin) return std::nullopt;
    MaybeRange x = range(bin->a), y = range(bin->b);
    if (!x || !y) return std::nullopt;
    switch (bin->op) {
    case BinOp::add: return fit(t, x->lo + y->lo, x->hi + y->hi);
    case BinOp::sub: return fit(t, x->lo - y->hi, x->hi - y->lo);
    case BinOp::mul: {
      // Operands are within 2^32 of zero (types of 32 bits or fewer) or 2^61 (wider): guard
      // the products against int64 overflow.
      const int64_t lim = int64_t(1) << 31;
      if (std::max({-x->lo, x->hi, -y->lo, y->hi}) > lim) return std::nullopt;
      const int64_t p[4] = {x->lo * y->lo, x->lo * y->hi, x->hi * y->lo, x->hi * y->hi};
      return fit(t, *std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    case BinOp::div:
      if (y->lo != y->hi || y->lo <= 0) return std::nullopt;
      return Range{x->lo / y->lo, x->hi / y->lo};
    case BinOp::mod:
      if (y->lo != y->hi || y->lo <= 0 || x->lo < 0) return std::nullopt;
      if (x->hi < y->lo) return *x;
      return Range{0, y->lo - 1};
    case BinOp::min: return Range{std::min(x->lo, y->lo), std::min(x->hi, y->hi)};
    case BinOp::max: return Range{std::max(x->lo, y->lo), std::max(x->hi, y->hi)};
    default: return std::nullopt;
    }
  }

  // x as a sum of coefficient * atom terms (through +, - and multiplication by a constant).
  // At most kMaxTerms terms: expanding lets undoes the let-binding that keeps shared
  // subexpressions from growing exponentially (GridKernel::store), so the expansion is capped
  // and a sum that needs more is left alone (`s.overflow`).
  static constexpr size_t kMaxTerms = 64;
  void flatten(const Expr &x, int64_t k, Sum &s) const {
    if (s.overflow) return;
    if (s.terms.size() >= kMaxTerms || ++s.visits > 4 * static_cast<int>(kMaxTerms)) {
      s.overflow = true;
      return;
    }
    if (auto c = const_of(x)) {
      int64_t v;
      if (__builtin_mul_overflow(k, *c, &v) || __builtin_add_overflow(s.constant, v, &s.constant))
        s.overflow = true;
      return;
    }
    if (const Var *v = x.as<Var>())
      if (Expr value = value_of(v); value.defined()) return flatten(value, k, s);
    if (const Binary *b = x.as<Binary>()) {
      if (b->op == BinOp::add) {
        flatten(b->a, k, s);
        flatten(b->b, k, s);
        return;
      }
      if (b->op == BinOp::sub) {
        if (k == std::numeric_limits<int64_t>::min()) {
          s.overflow = true;
          return;
        }
        flatten(b->a, k, s);
        flatten(b->b, -k, s);
        return;
      }
      if (b->op == BinOp::mul) {
        auto c = const_of(b->b);
        const Expr &other = c ? b->a : b->b;
        if (!c) c = const_of(b->a);
        if (c) {
          int64_t k2;
          if (__builtin_mul_overflow(k, *c, &k2)) {
            s.overflow = true;
            return;
          }
          return flatten(other, k2, s);
        }
      }
    }
    s.terms.push_back({k, x});
  }

  static Expr build(const Sum &s, ScalarType t) {
    Expr out;
    for (const Term &term : s.terms) {
      if (term.coef == 0) continue;
      Expr e = term.coef == 1 ? term.atom : mul(term.atom, imm(t, term.coef));
      out = out.defined() ? add(out, e) : e;
    }
    if (!out.defined()) return imm(t, s.constant);
    return s.constant == 0 ? out : add(out, imm(t, s.constant));
  }

  MaybeRange sum_range(const Sum &s, ScalarType t) {
    int64_t lo = s.constant, hi = s.constant;
    for (const Term &term : s.terms) {
      MaybeRange r = range(term.atom);
      if (!r || term.coef < -(int64_t(1) << 31) || term.coef > (int64_t(1) << 31) ||
          std::max(-r->lo, r->hi) > (int64_t(1) << 31))
        return std::nullopt;
      const int64_t a = term.coef * r->lo, b = term.coef * r->hi; // both below 2^62
      if (__builtin_add_overflow(lo, std::min(a, b), &lo) ||
          __builtin_add_overflow(hi, std::max(a, b), &hi))
        return std::nullopt;
    }
    return fit(t, lo, hi);
  }

  // x / D or x % D (D > 0) rewritten by the rules in the file header; nullopt: unchanged.
  std::optional<Expr> divide(BinOp op, const Expr &x, int64_t D) {
    const ScalarType t = x.type();
    MaybeRange rx = range(x);
    if (!rx || rx->lo < 0) return std::nullopt;
    if (rx->hi < D) return op == BinOp::div ? imm(t, 0) : x;
    // (y / A) / D = y / (A * D)
    if (const Binary *b = x.as<Binary>(); b && op == BinOp::div && b->op == BinOp::div)
      if (auto a = const_of(b->b); a && *a > 0 && *a <= (int64_t(1) << 31) / D) {
        MaybeRange ry = range(b->a);
        if (ry && ry->lo >= 0) return visit_div(b->a, *a * D);
      }
    Sum s;
    flatten(x, 1, s);
    const int64_t big = int64_t(1) << 62; // keeps the floor divisions below from overflowing
    if (s.overflow || s.constant < -big || s.constant > big || D > big) return std::nullopt;
    // Multiples of D split off.
    {
      Sum q, r;
      for (const Term &term : s.terms) (term.coef % D == 0 ? q : r).terms.push_back(term);
      const int64_t qc = s.constant >= 0 ? s.constant / D : -((-s.constant + D - 1) / D);
      q.constant = qc;
      r.constant = s.constant - qc * D;
      for (Term &term : q.terms) term.coef /= D;
      MaybeRange rr = sum_range(r, t);
      if ((!q.terms.empty() || q.constant != 0) && rr && rr->lo >= 0) {
        const Expr rest = build(r, t);
        if (op == BinOp::mod) return visit_mod(rest, D);
        const Expr qe = build(q, t);
        if (rr->hi < D) return qe;
        return add(qe, visit_div(rest, D));
      }
    }
    // x = c * Y + R, 0 <= R < c, c dividing D.
    std::vector<int64_t> cands;
    for (const Term &term : s.terms)
      if (term.coef > 1 && term.coef < D && D % term.coef == 0) cands.push_back(term.coef);
    std::sort(cands.rbegin(), cands.rend());
    for (int64_t c : cands) {
      Sum y, r;
      for (const Term &term : s.terms) (term.coef % c == 0 ? y : r).terms.push_back(term);
      y.constant = s.constant >= 0 ? s.constant / c : -((-s.constant + c - 1) / c);
      r.constant = s.constant - y.constant * c;
      for (Term &term : y.terms) term.coef /= c;
      MaybeRange rr = sum_range(r, t), ry = sum_range(y, t);
      if (!rr || rr->lo < 0 || rr->hi >= c || !ry || ry->lo < 0) continue;
      const Expr ye = build(y, t);
      const int64_t m = D / c;
      if (op == BinOp::div) return visit_div(ye, m);
      const Expr rest = build(r, t);
      return add(mul(visit_mod(ye, m), imm(t, c)), rest);
    }
    return std::nullopt;
  }

  Expr visit_div(const Expr &x, int64_t d) {
    if (auto r = divide(BinOp::div, x, d)) return *r;
    return div(x, imm(x.type(), d));
  }
  Expr visit_mod(const Expr &x, int64_t d) {
    if (auto r = divide(BinOp::mod, x, d)) return *r;
    return mod(x, imm(x.type(), d));
  }

  // The same integer expression, names included (structural_equal renames variables): the
  // index arithmetic recombine looks at; anything else compares unequal.
  static bool same_value(const Expr &a, const Expr &b) {
    if (a.same_as(b)) return true;
    if (a.kind() != b.kind() || a.type() != b.type() || !a.is_scalar() || !b.is_scalar())
      return false;
    if (const Var *x = a.as<Var>()) return x->name == b.as<Var>()->name;
    if (const IntImm *x = a.as<IntImm>()) return x->value == b.as<IntImm>()->value;
    if (const Builtin *x = a.as<Builtin>()) return x->builtin == b.as<Builtin>()->builtin;
    if (const Cast *x = a.as<Cast>()) return same_value(x->value, b.as<Cast>()->value);
    if (const Binary *x = a.as<Binary>()) {
      const Binary *y = b.as<Binary>();
      return x->op == y->op && same_value(x->a, y->a) && same_value(x->b, y->b);
    }
    return false;
  }

  // k * ((x / c) * c) + k * (x % c) in one sum becomes k * x; nullopt when no pair is found.
  std::optional<Expr> recombine(const Expr &e) {
    Sum s;
    flatten(e, 1, s);
    if (s.overflow) return std::nullopt;
    bool found = false;
    for (size_t i = 0; i < s.terms.size(); ++i) {
      const Binary *m = s.terms[i].atom.as<Binary>();
      if (!m || m->op != BinOp::mod) continue;
      const auto c = const_of(m->b);
      if (!c || *c <= 0) continue;
      for (size_t j = 0; j < s.terms.size(); ++j) {
        const Binary *d = s.terms[j].atom.as<Binary>();
        if (j == i || !d || d->op != BinOp::div || !same_value(d->a, m->a)) continue;
        const auto dc = const_of(d->b);
        int64_t want;
        if (!dc || *dc != *c || __builtin_mul_overflow(*c, s.terms[i].coef, &want) ||
            s.terms[j].coef != want)
          continue;
        s.terms[i].atom = m->a; // k * (x % c) -> k * x
        s.terms[j].coef = 0;    // the (x / c) * c * k term goes
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
    return build(s, e.type());
  }
};

} // namespace

Kernel simplify_index_ranges(const Kernel &k, const std::array<uint32_t, 3> &groups) {
  Kernel out = k;
  out.body = IndexRanges(groups, k.workgroup_size).mutate(k.body);
  return out;
}

} // namespace kiln::kir
