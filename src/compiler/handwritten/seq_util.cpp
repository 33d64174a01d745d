// Kernel building helpers of the seq lowering family (see seq.h).
#include "compiler/handwritten/seq.h"

#include <fmt/format.h>

#include <limits>

namespace kiln::compiler::seq {

using namespace kir;

int new_scratch(LowerCtx &c, ScalarType t, int64_t count) {
  return c.new_scratch(static_cast<uint64_t>(count) * static_cast<uint64_t>(storage_bytes(t)));
}

SeqKernel::SeqKernel(LowerCtx &c, const Op &op, std::string name) : c_(c), op_(op) {
  k_.name = std::move(name);
}

Result<BufferVar> SeqKernel::in(const Value *v) {
  KILN_ASSIGN(ScalarType t, scalar_type(op_, v->type.dtype));
  const int id = c_.buffer_of(v);
  for (size_t i = 0; i < bufs_.size(); ++i)
    if (bufs_[i] == id)
      return k_.buffer(static_cast<int>(i));
  return bind(id, t, true, false);
}

Result<BufferVar> SeqKernel::out(const Value *v, bool read_back) {
  KILN_ASSIGN(ScalarType t, scalar_type(op_, v->type.dtype));
  return bind(c_.define(v), t, false, !read_back);
}

BufferVar SeqKernel::bind(int id, ScalarType t, bool readonly, bool writeonly) {
  bufs_.push_back(id);
  return k_.add_buffer(fmt::format("b{}", bufs_.size() - 1), t, readonly, writeonly);
}

SharedVar SeqKernel::shared(ScalarType t, int64_t count) {
  return k_.add_shared(fmt::format("s{}", k_.shared.size()), t, static_cast<uint32_t>(count));
}

Expr SeqKernel::fresh(const std::string &prefix, ScalarType t) {
  return var(fmt::format("{}{}", prefix, next_var_++), t);
}

Status SeqKernel::grid(int64_t count, const std::function<Result<Stmt>(Expr)> &body) {
  return dispatch_flat(c_, op_, k_, bufs_, count,
                       fmt::format("i{}", next_var_++), body);
}

Status SeqKernel::per_group(int64_t items, const std::function<Result<Stmt>(Expr, Expr)> &body) {
  if (items == 0)
    return Status::ok();
  if (items > 65535)
    return Status::error(
        fmt::format("{}: {} workgroups exceed the dispatch limit of 65535", op_.describe(), items));
  k_.workgroup_size[0] = c_.workgroup_size();
  k_.workgroup_size[1] = k_.workgroup_size[2] = 1;
  Expr item = fresh("item", ScalarType::i32), lane = fresh("lane", ScalarType::i32);
  KILN_ASSIGN(Stmt s, body(item, lane));
  k_.body = let(item, cast(ScalarType::i32, workgroup_id(0)),
                let(lane, cast(ScalarType::i32, local_id(0)), s));
  return c_.dispatch(op_, std::move(k_), std::move(bufs_), {static_cast<uint32_t>(items), 1, 1});
}

Stmt loop(SeqKernel &g, const Expr &n, const std::function<Stmt(Expr)> &body) {
  Expr v = g.fresh("j", ScalarType::i32);
  return for_loop(v, i32(0), n, body(v));
}

Stmt loop(SeqKernel &g, int64_t n, const std::function<Stmt(Expr)> &body) {
  return loop(g, i32(n), body);
}

ScalarType acc_type(ScalarType t) { return t == ScalarType::f16 ? ScalarType::f32 : t; }

Expr fconst(const Expr &like, double v) { return make_const(like.type(), v); }

const Value *operand_or_null(const Op &op, size_t i) {
  return i < op.operands.size() ? op.operands[i] : nullptr;
}

} // namespace kiln::compiler::seq
