// canonicalize: removes identity-like ops and collapses chains of layout ops, in every graph and
// region. Rewrites (each only where the types prove it exact):
//   kiln.cast to the operand's own dtype                  -> the operand
//   kiln.reshape whose result type equals the operand's   -> the operand (static types only)
//   kiln.reshape of a kiln.reshape                        -> one reshape of the inner operand,
//       when the outer shape is a constant without 0 entries (a 0 would copy a dim of the
//       intermediate shape) or allowzero is set
//   kiln.transpose with the identity permutation          -> the operand
//   kiln.transpose of a kiln.transpose                    -> one transpose with the composed
//       permutation, or the inner operand when the composition is the identity
// Ops made dead are left for dce.
#include "ir/op_registry.h"
#include "passes/pass.h"

#include <algorithm>

namespace kiln {

namespace {

const Value *producer_operand(const Value *v, std::string_view name) {
  if (!v || !v->def || v->def->name() != name || v->def->operands.empty()) return nullptr;
  return v->def->operands[0];
}

bool is_identity_perm(const std::vector<int64_t> &perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// The value `op` can be replaced by (its result has the same type), or nullptr.
Value *forwarded(Op &op) {
  Value *x = op.operands.empty() ? nullptr : op.operands[0];
  if (!x || op.results.size() != 1 || op.results[0]->type != x->type) return nullptr;
  std::string_view n = op.name();
  if (n == "kiln.cast" && op.attr_dtype("to", x->type.dtype) == x->type.dtype) return x;
  if (n == "kiln.reshape" && x->type.ranked && x->type.is_static()) return x;
  if (n == "kiln.transpose" && is_identity_perm(op.attr_ints("perm"))) return x;
  return nullptr;
}

bool constant_shape_without_zero(const Op &reshape) {
  const Value *s = reshape.operands.size() > 1 ? reshape.operands[1] : nullptr;
  if (!s || !s->def || s->def->name() != "kiln.constant") return false;
  const Tensor *t = s->def->attr_tensor("value");
  if (!t) return false;
  if (reshape.attr_int("allowzero", 0) != 0) return true;
  auto dims = t->to_i64s();
  return std::find(dims.begin(), dims.end(), 0) == dims.end();
}

// Reshape of reshape, transpose of transpose: the op reads the inner op's operand instead.
bool collapse_chain(Op &op) {
  if (op.operands.empty() || !op.operands[0]) return false;
  Value *inner = op.operands[0];
  if (op.name() == "kiln.reshape" && producer_operand(inner, "kiln.reshape") &&
      constant_shape_without_zero(op)) {
    op.operands[0] = inner->def->operands[0];
    return true;
  }
  if (op.name() == "kiln.transpose" && producer_operand(inner, "kiln.transpose")) {
    auto outer = op.attr_ints("perm"), first = inner->def->attr_ints("perm");
    if (outer.size() != first.size()) return false;
    std::vector<int64_t> composed;
    for (int64_t p : outer) {
      if (p < 0 || p >= static_cast<int64_t>(first.size())) return false;
      composed.push_back(first[p]);
    }
    op.operands[0] = inner->def->operands[0];
    op.attrs["perm"] = composed;
    return true;
  }
  return false;
}

// One walk in definition order suffices: a rewritten op only reads values defined before it,
// which were already rewritten.
void canonicalize_graph(Graph &g) {
  for (auto &op : g.ops) {
    for (auto &r : op->regions) canonicalize_graph(*r);
    collapse_chain(*op);
    if (Value *x = forwarded(*op)) g.replace_uses(op->results[0], x);
  }
}

} // namespace

Status run_canonicalize(Module &m) {
  for (auto &f : m.functions) canonicalize_graph(f->body);
  return Status::ok();
}

} // namespace kiln
