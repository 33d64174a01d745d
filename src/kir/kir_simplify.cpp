// Kernel IR simplifier: constant folding and the algebraic identities that index math
// produces (x+0, x*1, x*0 on integers, nested constant add/mul), constant conditions and
// empty loops. Float rewrites are limited to those that are exact in IEEE arithmetic.
#include "kir/kir.h"

#include <cmath>
#include <limits>
#include <optional>

namespace kiln::kir {
namespace {

std::optional<int64_t> int_const(const Expr &e) {
  if (const IntImm *i = e.as<IntImm>()) return i->value;
  return std::nullopt;
}
std::optional<double> float_const(const Expr &e) {
  if (const FloatImm *f = e.as<FloatImm>()) return f->value;
  return std::nullopt;
}
bool is_int_const(const Expr &e, int64_t v) {
  auto c = int_const(e);
  return c && is_int(e.type()) && *c == v;
}
bool is_float_const(const Expr &e, double v) {
  auto c = float_const(e);
  return c && *c == v;
}
bool is_const(const Expr &e) { return e.as<IntImm>() || e.as<FloatImm>(); }

// Folds an integer operation; nullopt where the result is undefined (division by zero,
// shifts past the width, overflowing signed division).
std::optional<int64_t> fold_int(BinOp op, ScalarType t, int64_t a, int64_t b) {
  bool u = is_unsigned_int(t);
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
  case BinOp::add: return static_cast<int64_t>(ua + ub);
  case BinOp::sub: return static_cast<int64_t>(ua - ub);
  case BinOp::mul: return static_cast<int64_t>(ua * ub);
  case BinOp::div:
  case BinOp::mod:
    if (b == 0) return std::nullopt;
    if (u) return static_cast<int64_t>(op == BinOp::div ? ua / ub : ua % ub);
    if (a == std::numeric_limits<int64_t>::min() && b == -1) return std::nullopt;
    return op == BinOp::div ? a / b : a % b;
  case BinOp::min: return u ? static_cast<int64_t>(std::min(ua, ub)) : std::min(a, b);
  case BinOp::max: return u ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
  case BinOp::pow: return std::nullopt;
  case BinOp::bit_and: return a & b;
  case BinOp::bit_or: return a | b;
  case BinOp::bit_xor: return a ^ b;
  case BinOp::shl:
  case BinOp::shr:
    if (ub >= static_cast<uint64_t>(bits(t))) return std::nullopt;
    if (op == BinOp::shl) return static_cast<int64_t>(ua << ub);
    return u ? static_cast<int64_t>((ua & (bits(t) == 64 ? ~0ull : (1ull << bits(t)) - 1)) >> ub)
             : a >> b;
  }
  return std::nullopt;
}

std::optional<double> fold_float(BinOp op, double a, double b) {
  switch (op) {
  case BinOp::add: return a + b;
  case BinOp::sub: return a - b;
  case BinOp::mul: return a * b;
  case BinOp::div: return a / b;
  case BinOp::mod: return std::fmod(a, b);
  case BinOp::min:
  case BinOp::max:
    if (std::isnan(a) || std::isnan(b)) return std::nullopt; // device NaN behaviour varies
    return op == BinOp::min ? std::min(a, b) : std::max(a, b);
  case BinOp::pow: return std::pow(a, b);
  case BinOp::bit_and:
  case BinOp::bit_or:
  case BinOp::bit_xor:
  case BinOp::shl:
  case BinOp::shr: return std::nullopt;
  }
  return std::nullopt;
}

bool compare(CmpOp op, ScalarType t, int64_t a, int64_t b) {
  if (is_unsigned_int(t)) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    switch (op) {
    case CmpOp::eq: return ua == ub;
    case CmpOp::ne: return ua != ub;
    case CmpOp::lt: return ua < ub;
    case CmpOp::le: return ua <= ub;
    case CmpOp::gt: return ua > ub;
    case CmpOp::ge: return ua >= ub;
    }
  }
  switch (op) {
  case CmpOp::eq: return a == b;
  case CmpOp::ne: return a != b;
  case CmpOp::lt: return a < b;
  case CmpOp::le: return a <= b;
  case CmpOp::gt: return a > b;
  case CmpOp::ge: return a >= b;
  }
  return false;
}

bool compare(CmpOp op, double a, double b) {
  switch (op) {
  case CmpOp::eq: return a == b;
  case CmpOp::ne: return a != b; // unordered: true for NaN, like OpFUnordNotEqual
  case CmpOp::lt: return a < b;
  case CmpOp::le: return a <= b;
  case CmpOp::gt: return a > b;
  case CmpOp::ge: return a >= b;
  }
  return false;
}

std::optional<Expr> fold_cast(ScalarType to, const Expr &x) {
  if (auto i = int_const(x)) {
    if (to == ScalarType::boolean) return imm_bool(*i != 0);
    if (is_float(to)) {
      double d = is_unsigned_int(x.type()) ? static_cast<double>(static_cast<uint64_t>(*i))
                                            : static_cast<double>(*i);
      return fimm(to, d);
    }
    return imm(to, *i);
  }
  if (auto f = float_const(x)) {
    if (to == ScalarType::boolean) return imm_bool(*f != 0);
    if (is_float(to)) return fimm(to, *f);
    double t = std::trunc(*f);
    // Only fold conversions that are exact and in range of the target type.
    if (std::isnan(t) || t < -9.2e18 || t > 9.2e18) return std::nullopt;
    if (is_unsigned_int(to) && t < 0) return std::nullopt;
    int64_t v = static_cast<int64_t>(t);
    Expr r = imm(to, v);
    if (r.as<IntImm>()->value != v) return std::nullopt;
    return r;
  }
  return std::nullopt;
}

Expr make_like(const Expr &e, int64_t v) { return imm(e.type(), v); }

class Simplifier : public Mutator {
public:
  using Mutator::visit;

protected:
  Expr visit(const Binary *n, const Expr &self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    ScalarType t = n->type;
    if (!a.is_scalar()) { // vectors and matrices: no constants to fold, identities are scalar
      if (a.same_as(n->a) && b.same_as(n->b)) return self;
      return binary(n->op, a, b);
    }
    if (is_const(a) && is_const(b)) {
      if (is_int(t)) {
        if (auto r = fold_int(n->op, t, *int_const(a), *int_const(b))) return imm(t, *r);
      } else if (auto r = fold_float(n->op, *float_const(a), *float_const(b))) {
        return fimm(t, *r);
      }
    }
    if (is_int(t)) {
      if (auto r = int_identity(n->op, a, b)) return *r;
    } else if (auto r = float_identity(n->op, a, b)) {
      return *r;
    }
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return binary(n->op, a, b);
  }

  Expr visit(const Cmp *n, const Expr &self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    if (auto x = int_const(a), y = int_const(b); x && y)
      return imm_bool(compare(n->op, a.type(), *x, *y));
    if (auto x = float_const(a), y = float_const(b); x && y)
      return imm_bool(compare(n->op, *x, *y));
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return cmp(n->op, a, b);
  }

  Expr visit(const And *n, const Expr &self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    if (auto c = int_const(a)) return *c ? b : a;
    if (auto c = int_const(b)) return *c ? a : b;
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return logical_and(a, b);
  }

  Expr visit(const Or *n, const Expr &self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    if (auto c = int_const(a)) return *c ? a : b;
    if (auto c = int_const(b)) return *c ? b : a;
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return logical_or(a, b);
  }

  Expr visit(const Not *n, const Expr &self) override {
    Expr a = mutate(n->a);
    if (auto c = int_const(a)) return imm_bool(!*c);
    if (const Not *inner = a.as<Not>()) return inner->a;
    if (a.same_as(n->a)) return self;
    return logical_not(a);
  }

  Expr visit(const Select *n, const Expr &self) override {
    Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
    if (auto v = int_const(c)) return *v ? t : f;
    if (t.same_as(f)) return t;
    if (c.same_as(n->cond) && t.same_as(n->t) && f.same_as(n->f)) return self;
    return select(c, t, f);
  }

  Expr visit(const Cast *n, const Expr &self) override {
    Expr v = mutate(n->value);
    if (auto r = fold_cast(n->type, v)) return *r;
    if (v.same_as(n->value)) return self;
    return cast(n->type, v);
  }

  // extract_lane(broadcast(x), i) -> x; extract_lane(make_vector(..., x_i, ...), i) -> x_i.
  Expr visit(const ExtractLane *n, const Expr &self) override {
    Expr v = mutate(n->vector);
    if (const Broadcast *b = v.as<Broadcast>()) return b->value;
    if (const MakeVector *m = v.as<MakeVector>()) return m->elems[n->lane];
    if (v.same_as(n->vector)) return self;
    return extract_lane(v, n->lane);
  }

  Stmt visit(const If *n, const Stmt &self) override {
    Expr c = mutate(n->cond);
    if (auto v = int_const(c)) {
      Stmt taken = *v ? n->then_case : n->else_case;
      return taken.defined() ? mutate(taken) : block({});
    }
    Stmt t = mutate(n->then_case), f = mutate(n->else_case);
    if (c.same_as(n->cond) && t.same_as(n->then_case) && f.same_as(n->else_case)) return self;
    return if_then(c, t, f);
  }

  Stmt visit(const For *n, const Stmt &self) override {
    Expr b = mutate(n->begin), e = mutate(n->extent);
    if (auto c = int_const(e); c && (*c == 0 || (is_signed_int(e.type()) && *c < 0)))
      return block({});
    Stmt body = mutate(n->body);
    if (b.same_as(n->begin) && e.same_as(n->extent) && body.same_as(n->body)) return self;
    return for_loop(n->var, b, e, body);
  }

  Stmt visit(const Block *n, const Stmt &self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt &s : n->stmts) {
      Stmt m = mutate(s);
      changed = changed || !m.same_as(s);
      const Block *inner = m.as<Block>();
      if (inner && !declares(inner)) {
        changed = true;
        stmts.insert(stmts.end(), inner->stmts.begin(), inner->stmts.end());
      } else {
        stmts.push_back(m);
      }
    }
    if (!changed) return self;
    return block(std::move(stmts));
  }

private:
  static bool declares(const Block *b) {
    for (const Stmt &s : b->stmts)
      if (s.as<DeclareVar>()) return true;
    return false;
  }

  std::optional<Expr> int_identity(BinOp op, const Expr &a, const Expr &b) {
    switch (op) {
    case BinOp::add:
      if (is_int_const(b, 0)) return a;
      if (is_int_const(a, 0)) return b;
      if (is_const(a) && !is_const(b)) return mutate(add(b, a)); // constants to the right
      return reassociate(op, a, b);
    case BinOp::sub:
      if (is_int_const(b, 0)) return a;
      if (a.same_as(b)) return make_like(a, 0);
      if (auto c = int_const(b); c && is_signed_int(a.type()))
        return mutate(add(a, make_like(a, static_cast<int64_t>(0ull - static_cast<uint64_t>(*c)))));
      return std::nullopt;
    case BinOp::mul:
      if (is_int_const(b, 1)) return a;
      if (is_int_const(a, 1)) return b;
      if (is_int_const(a, 0) || is_int_const(b, 0)) return make_like(a, 0);
      if (is_const(a) && !is_const(b)) return mutate(mul(b, a));
      return reassociate(op, a, b);
    case BinOp::div:
      if (is_int_const(b, 1)) return a;
      return std::nullopt;
    case BinOp::mod:
      if (is_int_const(b, 1)) return make_like(a, 0);
      return std::nullopt;
    case BinOp::min:
    case BinOp::max:
      if (a.same_as(b)) return a;
      return std::nullopt;
    case BinOp::shl:
    case BinOp::shr:
      if (is_int_const(b, 0)) return a;
      return std::nullopt;
    case BinOp::pow:
    case BinOp::bit_and:
    case BinOp::bit_or:
    case BinOp::bit_xor: return std::nullopt;
    }
    return std::nullopt;
  }

  // (x + c1) + c2 -> x + (c1 + c2); (x * c1) * c2 -> x * (c1 * c2).
  std::optional<Expr> reassociate(BinOp op, const Expr &a, const Expr &b) {
    auto c2 = int_const(b);
    const Binary *inner = a.as<Binary>();
    if (!c2 || !inner || inner->op != op) return std::nullopt;
    auto c1 = int_const(inner->b);
    if (!c1) return std::nullopt;
    auto folded = fold_int(op, a.type(), *c1, *c2);
    if (!folded) return std::nullopt;
    return mutate(binary(op, inner->a, imm(a.type(), *folded)));
  }

  // Only rewrites that are exact for every IEEE value (including -0 and NaN payloads
  // aside): x * 1, 1 * x, x / 1, x - 0.
  std::optional<Expr> float_identity(BinOp op, const Expr &a, const Expr &b) {
    switch (op) {
    case BinOp::mul:
      if (is_float_const(b, 1)) return a;
      if (is_float_const(a, 1)) return b;
      return std::nullopt;
    case BinOp::div:
      if (is_float_const(b, 1)) return a;
      return std::nullopt;
    case BinOp::sub:
      if (is_float_const(b, 0) && !std::signbit(*float_const(b))) return a;
      return std::nullopt;
    case BinOp::add:
      if (is_float_const(b, 0) && std::signbit(*float_const(b))) return a; // x + -0 == x
      return std::nullopt;
    case BinOp::mod:
    case BinOp::min:
    case BinOp::max:
    case BinOp::pow:
    case BinOp::bit_and:
    case BinOp::bit_or:
    case BinOp::bit_xor:
    case BinOp::shl:
    case BinOp::shr: return std::nullopt;
    }
    return std::nullopt;
  }
};

} // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) { return Simplifier().mutate(s); }

Kernel simplify(const Kernel &k) {
  Kernel out = k;
  out.body = simplify(k.body);
  return out;
}

} // namespace kiln::kir
