// The C emitter's expressions: scalar, vector and matrix nodes as C text (c_emitter.h).
#include "target/c/c_emitter.h"

namespace kiln::cgen::detail {

Result<std::string> Emitter::expr(const Expr &e) {
  if (e.is_matrix())
    KILN_TRY(note_matrix(e.value_type()));
  auto it = hoisted_.find(e.get());
  if (it != hoisted_.end()) return it->second;
  KILN_ASSIGN(std::string text, node(e));
  auto u = uses_.find(e.get());
  if (u != uses_.end() && u->second > 1 && !trivial(e) && !e.is_matrix() && !reads_memory(e)) {
    const std::string t = temp();
    pre_.push_back(fmt::format("const {} {} = {};", value_type(e.value_type()), t, text));
    hoisted_.emplace(e.get(), t);
    return t;
  }
  return text;
}

template <class F>
Result<std::string> Emitter::lanewise(const ValueType &result, const std::vector<Expr> &operands,
                                      F scalar) {
  std::vector<std::string> texts;
  for (const Expr &o : operands) {
    KILN_ASSIGN(std::string t, expr(o));
    texts.push_back(std::move(t));
  }
  if (result.lanes == 1) {
    bool any_vector = false;
    for (const Expr &o : operands) any_vector = any_vector || o.is_vector();
    if (!any_vector) {
      std::vector<ScalarType> types;
      for (const Expr &o : operands) types.push_back(o.type());
      return scalar(texts, types);
    }
  }
  std::string s = "({ ";
  std::vector<std::string> names;
  for (size_t i = 0; i < operands.size(); ++i) {
    names.push_back(temp());
    s += fmt::format("const {} {} = {}; ", value_type(operands[i].value_type()), names.back(),
                     texts[i]);
  }
  const std::string r = temp();
  s += fmt::format("{} {}; ", value_type(result), r);
  for (int l = 0; l < result.lanes; ++l) {
    std::vector<std::string> lane;
    std::vector<ScalarType> types;
    for (size_t i = 0; i < operands.size(); ++i) {
      lane.push_back(operands[i].is_vector() ? fmt::format("{}.v[{}]", names[i], l) : names[i]);
      types.push_back(operands[i].type());
    }
    KILN_ASSIGN(std::string v, scalar(lane, types));
    s += fmt::format("{}.v[{}] = {}; ", r, l, v);
  }
  return s + r + "; })";
}

namespace {

bool same_value(const Expr &a, const Expr &b) {
  if (a.same_as(b)) return true;
  const auto *x = a.as<Var>(), *y = b.as<Var>();
  return x && y && x->name == y->name;
}

} // namespace

// select(isnan(x), x, max(x, y)) (or min): the prelude's kiln_max / kiln_min return their first
// operand when it is NaN (a < b ? b : a), so the select is the max itself. Kernel IR keeps the
// check because other targets' max (SPIR-V FMax) leaves NaN operands undefined; dropping it
// here lets GCC compile a clip to vmaxps / vminps without a branch per element.
bool nan_guard_is_redundant(const Select &s) {
  const auto *c = s.cond.as<Call>();
  const auto *m = s.f.as<Binary>();
  return c && c->fn == Intrinsic::isnan && same_value(c->args[0], s.t) && m &&
         (m->op == BinOp::max || m->op == BinOp::min) && same_value(m->a, s.t);
}

std::string Emitter::opaque_constant(ScalarType t, double v) {
  auto [it, added] =
      opaque_constants_.try_emplace({std::string(c_type(t)), float_literal(t, v)}, "");
  if (added) it->second = fmt::format("kiln_k{}", opaque_constants_.size() - 1);
  return it->second;
}

Result<std::string> Emitter::node(const Expr &e) {
  switch (e.kind()) {
  case ExprKind::IntImm: return int_literal(e.type(), e.as<IntImm>()->value);
  case ExprKind::FloatImm: return float_literal(e.type(), e.as<FloatImm>()->value);
  case ExprKind::Var: {
    const auto *v = e.as<Var>();
    const std::string n = c_name("v_", v->name);
    if (zero_pending_.count(v->name))
      pre_.push_back(fmt::format("if ({0}_z) {{ for (uint32_t i = 0; i < {1}u; ++i) {0}.v[i] = "
                                 "0.0f; {0}_z = 0; }}",
                                 n, e.value_type().matrix.rows * e.value_type().matrix.cols));
    return per_invocation_.count(v->name) ? n + "[lid]" : n;
  }
  case ExprKind::Binary: {
    const auto *b = e.as<Binary>();
    if (e.is_matrix()) {
      const char *op = b->op == BinOp::add   ? "+"
                       : b->op == BinOp::sub ? "-"
                       : b->op == BinOp::mul ? "*"
                       : b->op == BinOp::div ? "/"
                                             : nullptr;
      if (!op) return unsupported(fmt::format("{} on cooperative matrices", to_string(b->op)));
      KILN_ASSIGN(std::string x, expr(b->a));
      KILN_ASSIGN(std::string y, expr(b->b));
      return matrix_map(e.value_type(), x, y, fmt::format("X {} Y", op));
    }
    const BinOp op = b->op;
    if ((op == BinOp::min || op == BinOp::max) && e.is_scalar() &&
        (e.type() == ScalarType::f32 || e.type() == ScalarType::f64) &&
        (b->a.as<FloatImm>() || b->b.as<FloatImm>())) {
      auto operand = [&](const Expr &x) -> Result<std::string> {
        if (const auto *f = x.as<FloatImm>()) return opaque_constant(x.type(), f->value);
        return expr(x);
      };
      KILN_ASSIGN(std::string x, operand(b->a));
      KILN_ASSIGN(std::string y, operand(b->b));
      return binary_scalar(op, e.type(), x, y);
    }
    const bool wrap = (e.type() == ScalarType::i32 || e.type() == ScalarType::i64) &&
                      (op == BinOp::add || op == BinOp::sub || op == BinOp::mul) &&
                      carries_value(e);
    return lanewise(e.value_type(), {b->a, b->b},
                    [op, wrap](const std::vector<std::string> &x, const std::vector<ScalarType> &t)
                        -> Result<std::string> {
                      return wrap ? binary_wrapping(op, t[0], x[0], x[1])
                                  : binary_scalar(op, t[0], x[0], x[1]);
                    });
  }
  case ExprKind::Cmp: {
    const auto *c = e.as<Cmp>();
    const char *op = cmp_op(c->op);
    return lanewise(e.value_type(), {c->a, c->b},
                    [op](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> {
                      return fmt::format("((_Bool)({} {} {}))", x[0], op, x[1]);
                    });
  }
  case ExprKind::And: {
    const auto *a = e.as<And>();
    return lanewise(e.value_type(), {a->a, a->b},
                    [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> {
                      return fmt::format("((_Bool)({} && {}))", x[0], x[1]);
                    });
  }
  case ExprKind::Or: {
    const auto *o = e.as<Or>();
    return lanewise(e.value_type(), {o->a, o->b},
                    [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> {
                      return fmt::format("((_Bool)({} || {}))", x[0], x[1]);
                    });
  }
  case ExprKind::Not: {
    const auto *n = e.as<Not>();
    return lanewise(e.value_type(), {n->a},
                    [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> { return fmt::format("((_Bool)!{})", x[0]); });
  }
  case ExprKind::Select: {
    const auto *s = e.as<Select>();
    if (e.is_matrix()) return unsupported("cooperative matrices");
    if (nan_guard_is_redundant(*s)) return node(s->f);
    if (s->cond.is_scalar()) { // only the chosen side is evaluated: guarded loads stay safe
      KILN_ASSIGN(std::string c, expr(s->cond));
      KILN_ASSIGN(std::string t, expr(s->t));
      KILN_ASSIGN(std::string f, expr(s->f));
      return fmt::format("({} ? {} : {})", c, t, f);
    }
    return lanewise(e.value_type(), {s->cond, s->t, s->f},
                    [](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> {
                      return fmt::format("({} ? {} : {})", x[0], x[1], x[2]);
                    });
  }
  case ExprKind::Cast: {
    const auto *c = e.as<Cast>();
    if (e.is_matrix()) return expr(c->value); // f32 -> f32: the only matrix component type
    const ScalarType to = e.type();
    return lanewise(e.value_type(), {c->value},
                    [to](const std::vector<std::string> &x, const std::vector<ScalarType> &)
                        -> Result<std::string> {
                      if (to == ScalarType::boolean)
                        return fmt::format("((_Bool)({} != 0))", x[0]);
                      return fmt::format("(({}){})", c_type(to), x[0]);
                    });
  }
  case ExprKind::Call: {
    const auto *c = e.as<Call>();
    const Intrinsic fn = c->fn;
    return lanewise(e.value_type(), c->args,
                    [fn](const std::vector<std::string> &x,
                         const std::vector<ScalarType> &t) -> Result<std::string> {
                      return intrinsic_scalar(fn, t[0], x);
                    });
  }
  case ExprKind::Load: {
    const auto *l = e.as<Load>();
    if (const auto *c = l->index.as<IntImm>(); c && k_.buffers[size_t(l->buffer)].readonly) {
      auto it = invariant_loads_.find({l->buffer, c->value});
      if (it != invariant_loads_.end()) return it->second;
    }
    KILN_ASSIGN(std::string i, expr(l->index));
    if (k_.buffers[size_t(l->buffer)].elem == ScalarType::boolean)
      return fmt::format("((_Bool)(b{}[{}] != 0))", l->buffer, i);
    return fmt::format("b{}[{}]", l->buffer, i);
  }
  case ExprKind::Builtin: return builtin_text(e.as<Builtin>()->builtin, k_.workgroup_size);
  case ExprKind::PushConst: return fmt::format("pc[{}]", e.as<PushConst>()->slot);
  case ExprKind::LoadShared: {
    const auto *l = e.as<LoadShared>();
    KILN_ASSIGN(std::string i, expr(l->index));
    return load_lanes(fmt::format("s{}", l->array), k_.shared[size_t(l->array)].elem,
                      e.value_type(), i);
  }
  case ExprKind::VectorLoad: {
    const auto *l = e.as<VectorLoad>();
    KILN_ASSIGN(std::string i, expr(l->index));
    return load_lanes(fmt::format("b{}", l->buffer), k_.buffers[size_t(l->buffer)].elem,
                      e.value_type(), i);
  }
  case ExprKind::Broadcast: {
    KILN_ASSIGN(std::string v, expr(e.as<Broadcast>()->value));
    const std::string t = temp(), r = temp();
    std::string s = fmt::format("({{ const {} {} = {}; {} {}; ", c_type(e.type()), t, v,
                                value_type(e.value_type()), r);
    for (int l = 0; l < e.lanes(); ++l) s += fmt::format("{}.v[{}] = {}; ", r, l, t);
    return s + r + "; })";
  }
  case ExprKind::ExtractLane: {
    const auto *x = e.as<ExtractLane>();
    KILN_ASSIGN(std::string v, expr(x->vector));
    return fmt::format("({}).v[{}]", v, x->lane);
  }
  case ExprKind::MakeVector: {
    std::string s = fmt::format("(({}){{ .v = {{", value_type(e.value_type()));
    for (const Expr &x : e.as<MakeVector>()->elems) {
      KILN_ASSIGN(std::string v, expr(x));
      s += v + ", ";
    }
    return s + "} })";
  }
  // One invocation per subgroup: every combination is the value itself.
  case ExprKind::SubgroupReduce: return expr(e.as<SubgroupReduce>()->value);
  case ExprKind::SubgroupBroadcast: return expr(e.as<SubgroupBroadcast>()->value);
  case ExprKind::SubgroupShuffle: return expr(e.as<SubgroupShuffle>()->value);
  case ExprKind::MatrixLoad: {
    const auto *l = e.as<MatrixLoad>();
    KILN_ASSIGN(std::string array, matrix_memory(l->space, l->target));
    KILN_ASSIGN(std::string off, expr(l->offset));
    KILN_ASSIGN(std::string stride, expr(l->stride));
    const MatrixShape &m = e.value_type().matrix;
    const std::string r = temp();
    return fmt::format("({{ {0} {1}; kiln_mload_{8}({1}.v, &{2}[(uint32_t)({3})], "
                       "(uint32_t)({4}), {5}, {6}, {7}); {1}; }})",
                       value_type(e.value_type()), r, array, off, stride, m.rows, m.cols,
                       l->layout == MatrixLayout::col_major ? 1 : 0,
                       suffix(matrix_elem(l->space, l->target)));
  }
  case ExprKind::MatrixMulAdd: {
    const auto *m = e.as<MatrixMulAdd>();
    KILN_ASSIGN(std::string a, expr(m->a));
    KILN_ASSIGN(std::string b, expr(m->b));
    KILN_ASSIGN(std::string c, expr(m->c));
    const MatrixShape &ma = m->a.value_type().matrix, &mc = e.value_type().matrix;
    const std::string ta = temp(), tb = temp(), r = temp();
    return fmt::format("({{ const {0} {1} = {2}; const {3} {4} = {5}; {6} {7} = {8}; "
                       "kiln_mma_f32({7}.v, {1}.v, {9}, {4}.v, {10}, {11}, {10}, {9}, 0); {7}; }})",
                       value_type(m->a.value_type()), ta, a, value_type(m->b.value_type()), tb,
                       b, value_type(e.value_type()), r, c, ma.cols, mc.cols, mc.rows);
  }
  case ExprKind::MatrixFill: {
    KILN_ASSIGN(std::string v, expr(e.as<MatrixFill>()->value));
    const std::string t = temp(), r = temp(), i = temp();
    return fmt::format("({{ const float {0} = {1}; {2} {3}; for (uint32_t {4} = 0; {4} < {5}u; "
                       "++{4}) {3}.v[{4}] = {0}; {3}; }})",
                       t, v, value_type(e.value_type()), r, i,
                       e.value_type().matrix.rows * e.value_type().matrix.cols);
  }
  case ExprKind::MatrixScale: {
    const auto *m = e.as<MatrixScale>();
    KILN_ASSIGN(std::string x, expr(m->value));
    KILN_ASSIGN(std::string f, expr(m->scale));
    const std::string t = temp();
    pre_.push_back(fmt::format("const float {} = {};", t, f));
    return matrix_map(e.value_type(), x, "", "X * " + t);
  }
  case ExprKind::MatrixLength: {
    const ValueType &of = e.as<MatrixLength>()->of;
    return fmt::format("{}u", of.matrix.rows * of.matrix.cols);
  }
  }
  return unsupported("an unknown node");
}

Result<std::string> Emitter::load_lanes(const std::string &array, ScalarType elem,
                                        const ValueType &t, const std::string &index) {
  const bool boolean = elem == ScalarType::boolean;
  if (t.lanes == 1)
    return boolean ? fmt::format("((_Bool)({}[{}] != 0))", array, index)
                   : fmt::format("{}[{}]", array, index);
  const std::string i = temp(), r = temp();
  std::string s = fmt::format("({{ const uint32_t {} = (uint32_t)({}); {} {}; ", i, index,
                              value_type(t), r);
  for (int l = 0; l < t.lanes; ++l)
    s += boolean ? fmt::format("{}.v[{}] = ({}[{} + {}u] != 0); ", r, l, array, i, l)
                 : fmt::format("{}.v[{}] = {}[{} + {}u]; ", r, l, array, i, l);
  return s + r + "; })";
}

} // namespace kiln::cgen::detail
