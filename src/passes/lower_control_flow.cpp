// lower-control-flow: turns kiln.if / kiln.loop / kiln.scan of the main function into
// straight-line graph IR where that is exact (see pass.h). A region is inlined by cloning its
// ops into the enclosing graph with its parameters mapped to values there; regions may use
// outer values directly, which stay as they are. Cloned ops get their result types inferred
// from the (mapped) operands, and a cloned op whose operands are all small constants is
// folded at once, so that a loop's condition and its index arithmetic become constants.
// An op that cannot be lowered exactly is left as it is (the compiler then names it).
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"

#include <algorithm>
#include <fmt/format.h>
#include <optional>
#include <unordered_map>

namespace kiln {

namespace {

constexpr int64_t kMaxIterations = 1024;       // unrolled loop iterations / scan steps
constexpr int64_t kMaxClonedOps = 100000;      // ops created by the pass, in all
constexpr int64_t kFoldMaxElements = 1 << 16;  // folding of cloned ops with constant operands

using ValueMap = std::unordered_map<const Value *, Value *>;

const Tensor *constant_of(const Value *v) {
  if (!v || !v->def || v->def->name() != "kiln.constant") return nullptr;
  return v->def->attr_tensor("value");
}

bool is_control_flow(const Op &op) { return !op.regions.empty(); }

// Every op of `g` (recursively) is free of side effects: computing it when its result is not
// needed changes nothing.
bool side_effect_free(const Graph &g) {
  for (const auto &op : g.ops) {
    if (!op->def->foldable && op->regions.empty()) return false;
    for (const auto &r : op->regions)
      if (!side_effect_free(*r)) return false;
  }
  return true;
}

Value *mapped(const ValueMap &m, Value *v) {
  if (!v) return nullptr;
  auto it = m.find(v);
  return it == m.end() ? v : it->second;
}

// Deep copy of a nested region, types kept as they are (they are re-inferred when inlined).
std::unique_ptr<Graph> clone_region(const Graph &src, Op *parent, ValueMap &m) {
  auto g = std::make_unique<Graph>();
  g->parent = parent;
  for (Value *p : src.params) m[p] = g->add_param(p->type, p->name);
  for (const auto &op : src.ops) {
    auto c = std::make_unique<Op>();
    c->def = op->def;
    c->attrs = op->attrs;
    c->loc = op->loc;
    for (Value *v : op->operands) c->operands.push_back(mapped(m, v));
    for (const auto &r : op->regions) c->regions.push_back(clone_region(*r, c.get(), m));
    for (Value *r : op->results) {
      Value *v = g->new_value(r->type, r->name);
      v->def = c.get();
      v->result_index = r->result_index;
      c->results.push_back(v);
      m[r] = v;
    }
    g->ops.push_back(std::move(c));
  }
  for (Value *r : src.results) g->results.push_back(mapped(m, r));
  return g;
}

// Ops built for one control-flow op, inserted in place of it only when the lowering succeeds.
class Stage {
public:
  Stage(Graph &g, const Op &at, int64_t &budget) : g_(g), at_(at), budget_(budget) {}

  std::vector<std::unique_ptr<Op>> ops;

  Value *constant(Tensor t) {
    auto c = std::make_unique<Op>();
    c->def = core_ops().find("kiln.constant");
    c->loc = at_.loc;
    Value *v = g_.new_value(TensorType::of(t), {});
    v->def = c.get();
    c->results.push_back(v);
    c->attrs["value"] = std::move(t);
    ops.push_back(std::move(c));
    return v;
  }

  // Appends `op` (operands set, results not yet created; `like` gives their number, names and,
  // for an op with regions, types): infers result types, folds it when all operands are small
  // constants. Returns its results.
  Result<std::vector<Value *>> add(std::unique_ptr<Op> op, const std::vector<Value *> &like) {
    if (--budget_ < 0)
      return Status::error(fmt::format("{}: unrolling exceeds {} ops", at_.describe(), kMaxClonedOps));
    for (size_t i = 0; i < like.size(); ++i) {
      Value *v = g_.new_value(like[i]->type, like[i]->name);
      v->def = op.get();
      v->result_index = static_cast<int>(i);
      op->results.push_back(v);
    }
    if (op->regions.empty()) { // a nested region keeps its types (re-inferred when inlined)
      KILN_ASSIGN(auto types, infer_types(*op));
      if (types.size() != op->results.size())
        return Status::error(op->describe() + ": inferred the wrong number of results");
      for (size_t i = 0; i < types.size(); ++i) op->results[i]->type = types[i];
      if (auto folded = try_fold(*op)) return std::move(*folded);
    }
    std::vector<Value *> res = op->results;
    ops.push_back(std::move(op));
    return res;
  }

  Result<Value *> add1(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {}) {
    auto op = std::make_unique<Op>();
    op->def = core_ops().find(name);
    KILN_ASSERT(op->def, "core op is not registered");
    op->operands = std::move(operands);
    op->attrs = std::move(attrs);
    op->loc = at_.loc;
    Value proto; // one result; its type is inferred
    KILN_ASSIGN(auto res, add(std::move(op), {&proto}));
    return res.at(0);
  }

  // Clones the ops of region `r` with its parameters bound to `params`; returns its results.
  Result<std::vector<Value *>> inline_region(const Graph &r, const std::vector<Value *> &params) {
    ValueMap m;
    for (size_t i = 0; i < r.params.size(); ++i) m[r.params[i]] = params[i];
    for (const auto &op : r.ops) {
      auto c = std::make_unique<Op>();
      c->def = op->def;
      c->attrs = op->attrs;
      c->loc = op->loc;
      for (Value *v : op->operands) c->operands.push_back(mapped(m, v));
      for (const auto &reg : op->regions) c->regions.push_back(clone_region(*reg, c.get(), m));
      KILN_ASSIGN(auto res, add(std::move(c), op->results));
      for (size_t i = 0; i < op->results.size() && i < res.size(); ++i) m[op->results[i]] = res[i];
    }
    std::vector<Value *> out;
    for (Value *v : r.results) out.push_back(mapped(m, v));
    return out;
  }

private:
  std::optional<std::vector<Value *>> try_fold(const Op &op) {
    if (!op.def->foldable || !op.def->eval || !op.regions.empty() || op.operands.empty())
      return std::nullopt;
    std::vector<Tensor> in;
    std::vector<bool> absent;
    for (Value *v : op.operands) {
      const Tensor *t = constant_of(v);
      if (v && !t) return std::nullopt;
      in.push_back(t ? *t : Tensor());
      absent.push_back(v == nullptr);
    }
    for (const Value *r : op.results)
      if (!r->type.is_static() || shape_numel(r->type.dims) > kFoldMaxElements) return std::nullopt;
    EvalCtx ctx{op, in, {}, nullptr, absent};
    if (!op.def->eval(ctx) || ctx.out.size() != op.results.size()) return std::nullopt;
    std::vector<Value *> res;
    for (auto &t : ctx.out) res.push_back(constant(std::move(t)));
    return res;
  }

  Graph &g_;
  const Op &at_;
  int64_t &budget_;
};

// The boolean value of a constant condition, nullopt when it is not a constant.
std::optional<bool> const_bool(const Value *v) {
  const Tensor *t = constant_of(v);
  if (!t || t->numel() != 1) return std::nullopt;
  return t->get_i64(0) != 0;
}

// Stacks `parts` (equal static types) along a new `axis`; `elem` gives the type when empty.
Result<Value *> stack(Stage &s, const Op &op, std::vector<Value *> parts, int64_t axis,
                      const TensorType &elem) {
  if (parts.empty()) {
    if (!elem.is_static()) return Status::error(op.describe() + ": no iterations, unknown scan output shape");
    Shape dims = elem.dims;
    dims.insert(dims.begin() + axis, 0);
    return s.constant(Tensor(elem.dtype, dims));
  }
  std::vector<Value *> rows;
  Value *axes = s.constant(Tensor::from_i64s({axis}));
  for (Value *p : parts) {
    if (!(p->type == parts[0]->type) || !p->type.is_static())
      return Status::error(op.describe() + ": scan output changes shape between iterations");
    KILN_ASSIGN(Value *u, s.add1("kiln.unsqueeze", {p, axes}));
    rows.push_back(u);
  }
  if (rows.size() == 1) return rows[0];
  return s.add1("kiln.concat", rows, {{"axis", axis}});
}

Result<std::vector<Value *>> lower_if(Stage &s, const Op &op) {
  Value *cond = op.operands[0];
  if (auto c = const_bool(cond)) return s.inline_region(*op.regions[*c ? 0 : 1], {});
  const TensorType &ct = cond->type;
  if (ct.dtype != DType::boolean || !ct.is_static() || shape_numel(ct.dims) != 1)
    return Status::error(op.describe() + ": condition is not a static one-element bool");
  if (!side_effect_free(*op.regions[0]) || !side_effect_free(*op.regions[1]))
    return Status::error(op.describe() + ": a branch has side effects");
  KILN_ASSIGN(auto a, s.inline_region(*op.regions[0], {}));
  KILN_ASSIGN(auto b, s.inline_region(*op.regions[1], {}));
  if (a.size() != b.size()) return Status::error(op.describe() + ": branches differ in results");
  if (ct.rank() != 0) {
    KILN_ASSIGN(cond, s.add1("kiln.reshape", {cond, s.constant(Tensor::from_i64s({}))}));
  }
  std::vector<Value *> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i]->type == b[i]->type) || !a[i]->type.is_static())
      return Status::error(op.describe() + ": branch results differ in type");
    KILN_ASSIGN(Value *w, s.add1("kiln.where", {cond, a[i], b[i]}));
    out.push_back(w);
  }
  return out;
}

Result<std::vector<Value *>> lower_loop(Stage &s, const Op &op) {
  const Graph &body = *op.regions[0];
  const size_t n = op.operands.size() - 2;
  if (body.params.size() != n + 2 || body.results.size() < n + 1)
    return Status::error(op.describe() + ": body signature does not match the operands");
  const size_t k = body.results.size() - 1 - n;
  Value *trip_v = op.operands[0], *cond_v = op.operands[1];
  const Tensor *trip_t = constant_of(trip_v);
  if ((trip_v && (!trip_t || trip_t->numel() != 1)) || (cond_v && !const_bool(cond_v)))
    return Status::error(op.describe() + ": trip count or condition is not a constant");
  const int64_t trip = trip_t ? trip_t->get_i64(0) : kMaxIterations + 1;
  bool cond = cond_v ? *const_bool(cond_v) : true;
  std::vector<Value *> vals(op.operands.begin() + 2, op.operands.end());
  std::vector<std::vector<Value *>> scans(k);
  int64_t i = 0;
  for (; i < trip && cond; ++i) {
    if (i >= kMaxIterations)
      return Status::error(fmt::format("{}: more than {} iterations", op.describe(), kMaxIterations));
    std::vector<Value *> params = {s.constant(Tensor::scalar_i64(DType::i64, i)),
                                   s.constant(Tensor::scalar_i64(DType::boolean, 1))};
    params.insert(params.end(), vals.begin(), vals.end());
    KILN_ASSIGN(auto res, s.inline_region(body, params));
    auto c = const_bool(res[0]);
    if (!c) return Status::error(op.describe() + ": the loop condition depends on data");
    cond = *c;
    for (size_t j = 0; j < n; ++j) vals[j] = res[1 + j];
    for (size_t j = 0; j < k; ++j) scans[j].push_back(res[1 + n + j]);
  }
  for (size_t j = 0; j < k; ++j) {
    KILN_ASSIGN(Value *v, stack(s, op, scans[j], 0, body.results[1 + n + j]->type));
    vals.push_back(v);
  }
  return vals;
}

Result<std::vector<Value *>> lower_scan(Stage &s, const Op &op) {
  const Graph &body = *op.regions[0];
  const size_t n_in = static_cast<size_t>(op.attr_int("num_scan_inputs", 0));
  if (n_in < 1 || n_in > op.operands.size() || body.params.size() != op.operands.size())
    return Status::error(op.describe() + ": bad num_scan_inputs");
  const size_t n_state = op.operands.size() - n_in;
  if (body.results.size() < n_state) return Status::error(op.describe() + ": bad body results");
  const size_t n_out = body.results.size() - n_state;
  auto in_axes = op.attr_ints("scan_input_axes", std::vector<int64_t>(n_in, 0));
  auto in_dirs = op.attr_ints("scan_input_directions", std::vector<int64_t>(n_in, 0));
  auto out_axes = op.attr_ints("scan_output_axes", std::vector<int64_t>(n_out, 0));
  auto out_dirs = op.attr_ints("scan_output_directions", std::vector<int64_t>(n_out, 0));
  if (in_axes.size() != n_in || in_dirs.size() != n_in || out_axes.size() != n_out ||
      out_dirs.size() != n_out)
    return Status::error(op.describe() + ": scan axis/direction lists have the wrong length");
  int64_t len = -1;
  for (size_t i = 0; i < n_in; ++i) {
    const TensorType &t = op.operands[n_state + i]->type;
    if (!t.is_static()) return Status::error(op.describe() + ": scan input shape is not static");
    if (in_axes[i] < 0) in_axes[i] += t.rank();
    if (in_axes[i] < 0 || in_axes[i] >= t.rank()) return Status::error(op.describe() + ": bad scan axis");
    if (len >= 0 && t.dims[in_axes[i]] != len) return Status::error(op.describe() + ": sequence lengths differ");
    len = t.dims[in_axes[i]];
  }
  if (len > kMaxIterations)
    return Status::error(fmt::format("{}: more than {} steps", op.describe(), kMaxIterations));
  std::vector<Value *> state(op.operands.begin(), op.operands.begin() + n_state);
  std::vector<std::vector<Value *>> outs(n_out);
  for (int64_t t = 0; t < len; ++t) {
    std::vector<Value *> params = state;
    for (size_t i = 0; i < n_in; ++i) {
      Value *idx = s.constant(Tensor::scalar_i64(DType::i64, in_dirs[i] ? len - 1 - t : t));
      KILN_ASSIGN(Value *e, s.add1("kiln.gather", {op.operands[n_state + i], idx}, {{"axis", in_axes[i]}}));
      params.push_back(e);
    }
    KILN_ASSIGN(auto res, s.inline_region(body, params));
    for (size_t i = 0; i < n_state; ++i) state[i] = res[i];
    for (size_t i = 0; i < n_out; ++i) outs[i].push_back(res[n_state + i]);
  }
  for (size_t i = 0; i < n_out; ++i) {
    const TensorType &et = outs[i].empty() ? body.results[n_state + i]->type : outs[i][0]->type;
    int64_t axis = out_axes[i] < 0 ? out_axes[i] + et.rank() + 1 : out_axes[i];
    if (axis < 0 || axis > et.rank()) return Status::error(op.describe() + ": bad scan output axis");
    if (out_dirs[i]) std::reverse(outs[i].begin(), outs[i].end());
    KILN_ASSIGN(Value *v, stack(s, op, outs[i], axis, et));
    state.push_back(v);
  }
  return state;
}

Result<std::vector<Value *>> lower_op(Stage &s, const Op &op) {
  if (op.name() == "kiln.if") return lower_if(s, op);
  if (op.name() == "kiln.loop") return lower_loop(s, op);
  if (op.name() == "kiln.scan") return lower_scan(s, op);
  return Status::error(op.describe() + ": unknown control-flow op");
}

// Lowers the control-flow ops of `g` (and those that inlining brings into it), in order.
void lower_graph(Graph &g) {
  int64_t budget = kMaxClonedOps;
  size_t k = 0;
  while (k < g.ops.size()) {
    Op &op = *g.ops[k];
    if (!is_control_flow(op)) {
      ++k;
      continue;
    }
    Stage s(g, op, budget);
    auto res = lower_op(s, op);
    if (!res || res->size() != op.results.size()) { // left for the compiler to name
      ++k;
      continue;
    }
    for (size_t i = 0; i < op.results.size(); ++i) g.replace_uses(op.results[i], res.value()[i]);
    // The inlined ops take the op's place; those holding further control flow come next.
    g.ops.erase(g.ops.begin() + static_cast<long>(k));
    g.ops.insert(g.ops.begin() + static_cast<long>(k), std::make_move_iterator(s.ops.begin()),
                 std::make_move_iterator(s.ops.end()));
  }
}

} // namespace

Status run_lower_control_flow(Module &m) {
  for (auto &f : m.functions) lower_graph(f->body);
  return Status::ok();
}

} // namespace kiln
