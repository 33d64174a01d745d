// LowerCtx, GridKernel and index helpers shared by the op lowerings.
#include "compiler/lowering/lower.h"

#include "compiler/definitions/parallel.h"
#include "compiler/lowering/kir_stages.h"

#include "ir/builder.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::compiler {

using namespace kir;

Result<ScalarType> scalar_type(const Op &op, DType t) {
  switch (t) {
  case DType::f32: return ScalarType::f32;
  case DType::f16: return ScalarType::f16;
  case DType::f64: return ScalarType::f64;
  case DType::i8: return ScalarType::i8;
  case DType::u8: return ScalarType::u8;
  case DType::i16: return ScalarType::i16;
  case DType::u16: return ScalarType::u16;
  case DType::i32: return ScalarType::i32;
  case DType::u32: return ScalarType::u32;
  case DType::i64: return ScalarType::i64;
  case DType::u64: return ScalarType::u64;
  case DType::boolean: return ScalarType::boolean;
  case DType::bf16: break;
  // Narrow integers are held one a byte, sign-extended / in range, so kernels read them as
  // i8 / u8 exactly; only ops that wrap or clamp (cast, quantize_linear) or copy elements may
  // produce them (check_narrow_result in compiler.cpp).
  case DType::i4:
  case DType::i2: return ScalarType::i8;
  case DType::u4:
  case DType::u2: return ScalarType::u8;
  // float8 / float4 / e8m0 are held as their bit pattern: only data movement, the decoding
  // lowerings (cast to a float, dequantize_linear) and the rounding ones (cast and
  // quantize_linear to them) may see them (check_narrow in compiler.cpp).
  case DType::f8e4m3fn:
  case DType::f8e4m3fnuz:
  case DType::f8e5m2:
  case DType::f8e5m2fnuz:
  case DType::f4e2m1:
  case DType::f8e8m0: return ScalarType::u8;
  }
  return Status::error(fmt::format("{}: dtype {} has no Vulkan lowering yet", op.describe(),
                                   dtype_name(t)));
}

// ---- LowerCtx ----------------------------------------------------------------------------------

LowerCtx::LowerCtx(Program &p, const TargetDesc &t, const CompileOptions &o,
                   const target::Backend &backend)
    : prog_(&p), target_(&t), opts_(&o), backend_(&backend) {
  uint32_t wg = std::max<uint32_t>(1, o.workgroup_size);
  wg = std::min({wg, t.max_workgroup_invocations, t.max_workgroup_size[0]});
  wg_ = std::max<uint32_t>(1, wg);
}

static uint64_t value_bytes(const Value *v) {
  return static_cast<uint64_t>(shape_numel(v->type.dims)) * dtype_size(v->type.dtype);
}

int LowerCtx::buffer_of(const Value *v) {
  auto it = buf_of_.find(v);
  if (it != buf_of_.end()) return it->second;
  const Tensor *t = Builder::constant_value(v);
  KILN_ASSERT(t != nullptr, "value used before its lowering defined a buffer");
  const int id = new_constant(*t);
  buf_of_[v] = id;
  return id;
}

int LowerCtx::new_constant(Tensor t) {
  Buffer b;
  b.kind = BufKind::constant;
  for (const Buffer &q : prog_->buffers) b.index += q.kind == BufKind::constant;
  b.size = t.nbytes();
  b.data = std::move(t);
  prog_->buffers.push_back(std::move(b));
  return static_cast<int>(prog_->buffers.size()) - 1;
}

int LowerCtx::new_scratch(uint64_t bytes) {
  Buffer b;
  b.kind = BufKind::transient;
  b.size = bytes;
  prog_->buffers.push_back(std::move(b));
  return static_cast<int>(prog_->buffers.size()) - 1;
}

int LowerCtx::define(const Value *v) {
  Buffer b;
  b.kind = BufKind::transient;
  b.size = value_bytes(v);
  prog_->buffers.push_back(std::move(b));
  const int id = static_cast<int>(prog_->buffers.size()) - 1;
  buf_of_[v] = id;
  return id;
}

void LowerCtx::alias(const Value *result, const Value *operand) {
  buf_of_[result] = buffer_of(operand);
}

void LowerCtx::bind_input(const Value *v, uint32_t index) {
  Buffer b;
  b.kind = BufKind::input;
  b.index = index;
  b.size = value_bytes(v);
  prog_->buffers.push_back(std::move(b));
  buf_of_[v] = static_cast<int>(prog_->buffers.size()) - 1;
}

std::vector<std::string> LowerCtx::fused_op_names(const Op &op) const {
  std::vector<std::string> names{std::string(op.name())};
  for (const Value *r : op.results) {
    const Epilogue *e = epilogue(r);
    if (!e) continue;
    for (const Op *step : e->chain) names.emplace_back(step->name());
    for (const Op *step : e->moves) names.emplace_back(step->name());
    if (e->concat) names.emplace_back(e->concat->name());
  }
  return names;
}

Status LowerCtx::dispatch(const Op &op, Kernel k, std::vector<int> buffers,
                          std::array<uint32_t, 3> groups) {
  std::vector<uint64_t> sizes;
  for (int b : buffers) {
    const Buffer &buf = prog_->buffers[static_cast<size_t>(b)];
    if (buf.size == 0)
      return Status::error(op.describe() + ": internal error: a kernel binds an empty tensor");
    sizes.push_back(buf.size);
  }
  KILN_TRY(after_kir_stage(op, "lower", k, *opts_));
  KILN_ASSIGN(std::vector<ByteRange> ranges,
              split_large_bindings(op, k, buffers, sizes, *target_));
  KILN_TRY(after_kir_stage(op, "split-bindings", k, *opts_));
  // The C backend: index divisions the grid makes exact are removed, so the C compiler can
  // vectorise the loops around them (a fused channel shuffle's store, per-channel operands).
  if (target_->backend == "c") {
    k = simplify_index_ranges(k, groups);
    KILN_TRY(after_kir_stage(op, "index-ranges", k, *opts_));
  }
  KILN_ASSIGN(k, run_kir_stages(op, std::move(k), *opts_)); // simplify, unroll, verify
  ++kernels_emitted_;
  KILN_ASSIGN(uint32_t exe, executable_for(op, std::move(k)));
  Dispatch d;
  d.executable = exe;
  d.buffers = std::move(buffers);
  if (ranges.size() != sizes.size()) d.ranges = std::move(ranges); // some binding was split
  std::copy(groups.begin(), groups.end(), d.workgroups);
  d.source_ops = fused_op_names(op);
  prog_->commands.push_back(std::move(d));
  return Status::ok();
}

Result<uint32_t> LowerCtx::executable_for(const Op &op, Kernel k) {
  const uint64_t hash = structural_hash(k);
  for (auto [it, end] = exe_of_hash_.equal_range(hash); it != end; ++it)
    if (structural_equal(kernel_of_exe_[it->second], k)) return it->second;
  Requirements req;
  auto code = backend_->serialize(k, &req);
  if (!code) return code.status().with_context(op.describe());
  req.loop_iterations = static_cast<uint64_t>(std::max<int64_t>(0, loop_iterations(k.body)));
  Executable e;
  e.name = k.name;
  e.code = std::move(*code);
  std::copy(k.workgroup_size, k.workgroup_size + 3, e.workgroup_size);
  e.num_bindings = static_cast<uint32_t>(k.buffers.size());
  for (const auto &b : k.buffers) e.binding_writes.push_back(!b.readonly);
  e.push_constant_bytes = 4 * k.push_constant_count;
  e.requirements = req;
  const auto exe = static_cast<uint32_t>(prog_->executables.size());
  prog_->executables.push_back(std::move(e));
  exe_of_hash_.emplace(hash, exe);
  kernel_of_exe_.push_back(std::move(k));
  return exe;
}

// ---- GridKernel --------------------------------------------------------------------------------

GridKernel::GridKernel(LowerCtx &c, const Op &op, std::string name) : c_(c), op_(op) {
  k_.name = std::move(name);
}

Result<BufferVar> GridKernel::bind(const Value *v, bool write, bool reuse) {
  KILN_ASSIGN(ScalarType t, scalar_type(op_, v->type.dtype));
  const int id = write && !reuse ? c_.define(v) : c_.buffer_of(v);
  if (!write)
    for (size_t i = 0; i < bufs_.size(); ++i)
      if (bufs_[i] == id && k_.buffers[i].readonly) return k_.buffer(static_cast<int>(i));
  bufs_.push_back(id);
  return k_.add_buffer(fmt::format("b{}", bufs_.size() - 1), t, !write, write);
}

Result<BufferVar> GridKernel::in(const Value *v) { return bind(v, false); }

BufferVar GridKernel::scratch(int id, ScalarType t, bool write) {
  bufs_.push_back(id);
  return k_.add_buffer(fmt::format("b{}", bufs_.size() - 1), t, !write, write);
}

Result<BufferVar> GridKernel::out(const Value *v) {
  const Epilogue *e = c_.epilogue(v);
  if (!e) return bind(v, true);
  // The producers of a concat's operands written in place share its result's buffer.
  KILN_ASSIGN(BufferVar o, bind(e->result(), true, e->concat && c_.has_buffer(e->result())));
  BoundEpilogue be{e, v->type.dims, {}};
  const Value *chain_value = v;
  for (const Op *step : e->chain) {
    std::vector<BufferVar> ops;
    for (const Value *x : step->operands) {
      if (x == chain_value) {
        ops.push_back(BufferVar{-1, o.elem});
        continue;
      }
      KILN_ASSIGN(ScalarType xt, scalar_type(*step, x->type.dtype));
      if (Expr c = scalar_immediate(x, xt); c.defined()) {
        be.immediates[{be.operands.size(), ops.size()}] = c;
        ops.push_back(BufferVar{-2, xt});
        continue;
      }
      KILN_ASSIGN(BufferVar b, bind(x, false));
      ops.push_back(b);
    }
    be.operands.push_back(std::move(ops));
    chain_value = step->results[0];
  }
  epi_.emplace(o.index, std::move(be));
  KILN_ASSIGN(ScalarType root_type, scalar_type(op_, v->type.dtype));
  return BufferVar{o.index, root_type}; // the producer stores values of the root's type
}

namespace {

// The flat index in the epilogue's stored value of element `i` (flat, in the root's shape):
// each transpose of its moves permutes the coordinates; reshapes keep the flat index.
Expr moved_index(const Epilogue &e, Expr i) {
  for (const Op *m : e.moves) {
    if (m->name() != "kiln.transpose") continue;
    const Shape &xd = m->operands[0]->type.dims, &yd = m->results[0]->type.dims;
    std::vector<int64_t> perm = m->attr_ints("perm");
    if (perm.empty())
      for (int64_t d = static_cast<int64_t>(xd.size()) - 1; d >= 0; --d) perm.push_back(d);
    const std::vector<Expr> xs = unflatten(i, xd);
    std::vector<Expr> ys;
    for (int64_t d : perm) ys.push_back(xs[static_cast<size_t>(d)]);
    i = flatten(ys, yd);
  }
  return i;
}

} // namespace

Result<Stmt> GridKernel::store(const BufferVar &o, const Expr &i, Expr v,
                               std::vector<Expr> coords) {
  auto it = epi_.find(o.index);
  if (it == epi_.end()) return kir::store(o, i, v);
  const BoundEpilogue &be = it->second;
  if (!be.e->moves.empty() && !i.as<Var>()) { // the moved index uses i several times
    Expr iv = var(fresh("e"), ScalarType::i32);
    KILN_ASSIGN(Stmt s, store(o, iv, std::move(v)));
    return let(iv, i, s);
  }
  // Each step's value is bound to a variable before the next step reads it: steps use their
  // operand several times (a clip's NaN checks and bounds, a quantisation's saturation), and
  // substituting expressions grew a chain of n such steps to ~6^n nodes (a requantised conv
  // followed by DequantizeLinear -> Clip -> QuantizeLinear -> DequantizeLinear: one C statement
  // of ~100 KB per kernel, which GCC merged again, but the kernel IR and compile time grew).
  std::vector<std::pair<Expr, Expr>> lets;
  auto bound = [&](Result<Stmt> st) -> Result<Stmt> {
    if (!st) return st;
    Stmt out = std::move(st).value();
    for (auto l = lets.rbegin(); l != lets.rend(); ++l) out = let(l->first, l->second, out);
    return out;
  };
  auto apply_steps = [&](const std::vector<Expr> &cs) -> Result<Stmt> {
    auto operands_of = [&](size_t s) {
      const Op &step = *be.e->chain[s];
      std::vector<Expr> xs;
      for (size_t j = 0; j < step.operands.size(); ++j) {
        const BufferVar &b = be.operands[s][j];
        if (b.index == -2) {
          xs.push_back(be.immediates.at({s, j}));
          continue;
        }
        if (b.index < 0) {
          xs.push_back(v);
          continue;
        }
        const Shape &xs_shape = step.operands[j]->type.dims;
        xs.push_back(load(b, xs_shape == be.shape ? i : broadcast_index(cs, xs_shape)));
      }
      return xs;
    };
    for (size_t s = 0; s < be.e->chain.size(); ++s) {
      const Op &step = *be.e->chain[s];
      std::vector<Expr> xs = operands_of(s);
      std::optional<Result<Expr>> pair;
      if (s + 1 < be.e->chain.size())
        pair = quantize_dequantize_steps(step, xs, *be.e->chain[s + 1], operands_of(s + 1));
      if (pair) {
        KILN_ASSIGN(v, std::move(*pair));
        ++s;
      } else {
        KILN_ASSIGN(v, elementwise_expr(step, xs));
      }
      if (s + 1 < be.e->chain.size() && !v.as<Var>()) {
        Expr t = var(fresh("ev"), v.type());
        lets.emplace_back(t, v);
        v = t;
      }
    }
    const Expr to = moved_index(*be.e, i);
    if (!be.e->concat) return kir::store(k_.buffer(o.index), to, v);
    if (be.e->moves.empty()) {
      // Only the concat axis shifts: i splits around it into (outer, the rest), no division
      // at all when nothing lies outside it (one image, channel concat).
      const Shape &rd = be.e->result()->type.dims;
      const auto ax = static_cast<size_t>(be.e->axis);
      const int64_t inner = shape_numel(Shape(be.shape.begin() + ax + 1, be.shape.end()));
      const int64_t outer = shape_numel(Shape(be.shape.begin(), be.shape.begin() + ax));
      const int64_t span = be.shape[ax] * inner, rspan = rd[ax] * inner;
      const Expr at = outer == 1 ? i + be.e->offset * inner
                                 : (i / span) * rspan + be.e->offset * inner + i % span;
      return kir::store(k_.buffer(o.index), at, v);
    }
    std::vector<Expr> at = be.e->moves.empty() ? cs : unflatten(to, be.e->stored()->type.dims);
    at[be.e->axis] = at[be.e->axis] + be.e->offset;
    return kir::store(k_.buffer(o.index), flatten(at, be.e->result()->type.dims), v);
  };
  auto apply = [&](const std::vector<Expr> &cs) -> Result<Stmt> {
    lets.clear();
    return bound(apply_steps(cs));
  };
  bool broadcast = be.e->concat != nullptr && !be.e->moves.empty();
  for (const Op *step : be.e->chain)
    for (const Value *x : step->operands) broadcast = broadcast || x->type.dims != be.shape;
  if (!broadcast) return apply({});
  if (coords.size() != be.shape.size()) coords = unflatten(i, be.shape);
  return let_all(*this, "e", coords, apply);
}

std::string GridKernel::fresh(const std::string &prefix) {
  return fmt::format("{}{}", prefix, next_var_++);
}

Status GridKernel::finish(int64_t count, const std::function<Result<Stmt>(Expr)> &body) {
  return dispatch_flat(c_, op_, k_, bufs_, count, fresh("i"), body);
}

Status GridKernel::finish_per_element(int64_t count,
                                      const std::function<Result<Stmt>(Expr)> &body) {
  if (count == 0) return Status::ok();
  KILN_ASSIGN(ParallelDef d, parallel_def(op_, count, fresh("i"), body));
  return emit_parallel(c_, op_, std::move(k_), std::move(bufs_), d, ParallelSchedule{});
}

Status GridKernel::finish_grid(std::array<uint32_t, 3> wg, std::array<uint32_t, 3> groups,
                               Stmt body) {
  std::copy(wg.begin(), wg.end(), k_.workgroup_size);
  k_.body = std::move(body);
  return c_.dispatch(op_, std::move(k_), std::move(bufs_), groups);
}

Status dispatch_flat(LowerCtx &c, const Op &op, Kernel &k, std::vector<int> &buffers,
                     int64_t count, const std::string &index_name,
                     const std::function<Result<Stmt>(Expr)> &body) {
  if (count == 0) return Status::ok();
  KILN_ASSIGN(ParallelDef d, parallel_def(op, count, index_name, body));
  const ParallelSchedule s = schedule_parallel(c, d);
  return emit_parallel(c, op, std::move(k), std::move(buffers), d, s);
}

// ---- index helpers -----------------------------------------------------------------------------

Expr i32(int64_t v) { return imm_i32(static_cast<int32_t>(v)); }

std::vector<Expr> unflatten(const Expr &i, const Shape &shape) {
  const auto st = shape_strides(shape);
  std::vector<Expr> c;
  bool outer_trivial = true; // every dim before this one is 1: no modulo needed
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      c.push_back(i32(0));
      continue;
    }
    Expr e = st[d] == 1 ? i : i / st[d];
    if (!outer_trivial) e = e % shape[d];
    outer_trivial = false;
    c.push_back(e);
  }
  return c;
}

Expr flatten(const std::vector<Expr> &coords, const Shape &shape) {
  const auto st = shape_strides(shape);
  Expr e = i32(0);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) e = e + (st[d] == 1 ? coords[d] : coords[d] * st[d]);
  return e;
}

Expr broadcast_index(const std::vector<Expr> &out_coords, const Shape &in) {
  const size_t off = out_coords.size() - in.size();
  const auto st = shape_strides(in);
  Expr e = i32(0);
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1) e = e + (st[d] == 1 ? out_coords[off + d] : out_coords[off + d] * st[d]);
  return e;
}

Result<Stmt> let_all(GridKernel &g, const std::string &prefix, std::vector<Expr> values,
                     const std::function<Result<Stmt>(std::vector<Expr>)> &body) {
  std::vector<std::pair<Expr, Expr>> binds;
  std::vector<Expr> vars;
  for (Expr &v : values) {
    v = simplify(v);
    if (v.as<IntImm>() || v.as<Var>()) {
      vars.push_back(v);
      continue;
    }
    Expr x = var(g.fresh(prefix), v.type());
    binds.emplace_back(x, v);
    vars.push_back(x);
  }
  KILN_ASSIGN(Stmt s, body(vars));
  for (auto it = binds.rbegin(); it != binds.rend(); ++it) s = let(it->first, it->second, s);
  return s;
}

// ---- checks ------------------------------------------------------------------------------------

Status require_static(const Op &op) {
  for (const Value *v : op.operands)
    if (v && (!v->type.ranked || !v->type.is_static()))
      return Status::error(fmt::format("{}: operand type {} is not static; the Vulkan compiler "
                                       "needs static shapes",
                                       op.describe(), v->type.str()));
  for (const Value *v : op.results)
    if (!v->type.ranked || !v->type.is_static())
      return Status::error(fmt::format("{}: result type {} is not static; the Vulkan compiler "
                                       "needs static shapes",
                                       op.describe(), v->type.str()));
  return Status::ok();
}

Status unsupported(const Op &op, const std::string &what) {
  return Status::error(fmt::format("{}: {} has no Vulkan lowering yet", op.describe(), what));
}

const Tensor *const_operand(const Op &op, size_t i) {
  return i < op.operands.size() ? Builder::constant_value(op.operands[i]) : nullptr;
}

Expr scalar_immediate(const Value *v, ScalarType t) {
  const Tensor *c = Builder::constant_value(v);
  if (!c || c->numel() != 1) return Expr();
  switch (c->dtype()) {
  case DType::f32:
  case DType::f16:
  case DType::f64:
    return is_float(t) ? fimm(t, c->get_f64(0)) : Expr();
  case DType::i32:
  case DType::boolean:
    return is_int(t) || t == ScalarType::boolean ? imm(t, c->get_i64(0)) : Expr();
  default:
    return Expr();
  }
}

Result<int64_t> norm_axis(const Op &op, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1))
    return Status::error(fmt::format("{}: axis {} is out of range for rank {}", op.describe(), axis,
                                     rank));
  return a;
}

Expr lowest_value(ScalarType t) {
  if (is_float(t)) return fimm(t, -std::numeric_limits<double>::infinity());
  switch (t) {
  case ScalarType::i8: return imm(t, std::numeric_limits<int8_t>::min());
  case ScalarType::i16: return imm(t, std::numeric_limits<int16_t>::min());
  case ScalarType::i32: return imm(t, std::numeric_limits<int32_t>::min());
  case ScalarType::i64: return imm(t, std::numeric_limits<int64_t>::min());
  default: return imm(t, 0);
  }
}

Expr highest_value(ScalarType t) {
  if (is_float(t)) return fimm(t, std::numeric_limits<double>::infinity());
  switch (t) {
  case ScalarType::i8: return imm(t, std::numeric_limits<int8_t>::max());
  case ScalarType::u8: return imm(t, std::numeric_limits<uint8_t>::max());
  case ScalarType::i16: return imm(t, std::numeric_limits<int16_t>::max());
  case ScalarType::u16: return imm(t, std::numeric_limits<uint16_t>::max());
  case ScalarType::i32: return imm(t, std::numeric_limits<int32_t>::max());
  case ScalarType::u32: return imm(t, std::numeric_limits<uint32_t>::max());
  case ScalarType::i64: return imm(t, std::numeric_limits<int64_t>::max());
  case ScalarType::u64: return imm(t, -1);
  default: return imm(t, 1);
  }
}

} // namespace kiln::compiler
