// SPIR-V emitter: vector values and subgroup operations.
//
// Vector loads and stores of 2 and 4 lanes go through a second variable on the buffer's
// binding, a runtime array of vec2/vec4 (a "vector view", ArrayStride 8 or 16 for f32), so a
// 4 x f32 access is one OpLoad/OpStore of a vec4: one 128-bit access, which no driver has to
// rediscover from four scalar loads. This is why a vector access needs its first element
// index to be a multiple of the lane count, and the binding's offset to be a multiple of the
// vector size (kiln's arena aligns bindings to the device's minStorageBufferOffsetAlignment,
// at least 16 bytes in the presets). Both variables of a viewed buffer are decorated Aliased.
// Three-lane vectors have no 12-byte array stride in std430, so they are scalar accesses.
#include "target/spirv/emitter_impl.h"

namespace kiln::spirv {

using kir::is_float;
using kir::is_signed_int;

uint32_t Emitter::buffer_view(int buffer, int lanes) {
  auto key = std::make_pair(buffer, lanes);
  if (auto it = views_.find(key); it != views_.end()) return it->second;
  ScalarType elem = k_.buffers[buffer].elem;
  uint32_t vec = type_of(ValueType::vector(elem, lanes));
  uint32_t var = declare_buffer_variable(buffer, vec, kir::storage_bytes(elem) * lanes);
  views_[key] = var;
  return var;
}

// A pointer to the vector at element `index` (index / lanes in the view).
uint32_t Emitter::vector_pointer(int buffer, const kir::Expr &index, int lanes) {
  ScalarType it = index.type();
  uint32_t shift = int_constant(it, lanes == 4 ? 2 : 1);
  uint32_t i = op(is_signed_int(it) ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical, it,
                  {expr(index), shift});
  ValueType vt = ValueType::vector(k_.buffers[buffer].elem, lanes);
  uint32_t ptr = b_.type_pointer(spv::StorageClassStorageBuffer, type_of(vt));
  return b_.emit_result(spv::OpAccessChain, ptr,
                        {buffer_view(buffer, lanes), b_.constant_u32(0), i});
}

uint32_t Emitter::expr_node(const kir::VectorLoad *n) {
  use(n->type, true);
  if (n->lanes != 3)
    return op(spv::OpLoad, n->value_type(), {vector_pointer(n->buffer, n->index, n->lanes)});
  uint32_t base = expr(n->index);
  ScalarType it = n->index.type();
  Words lanes;
  uint32_t ptr_type = b_.type_pointer(spv::StorageClassStorageBuffer, type_of(n->type));
  for (uint32_t l = 0; l < 3; ++l) {
    uint32_t i = op(spv::OpIAdd, it, {base, int_constant(it, l)});
    uint32_t ptr = b_.emit_result(spv::OpAccessChain, ptr_type,
                                  {buffers_[n->buffer], b_.constant_u32(0), i});
    lanes.push_back(op(spv::OpLoad, n->type, {ptr}));
  }
  return op(spv::OpCompositeConstruct, n->value_type(), lanes);
}

uint32_t Emitter::expr_node(const kir::Broadcast *n) {
  uint32_t v = expr(n->value);
  use(n->type, true);
  return op(spv::OpCompositeConstruct, n->value_type(), Words(n->lanes, v));
}

uint32_t Emitter::expr_node(const kir::ExtractLane *n) {
  uint32_t v = expr(n->vector);
  return op(spv::OpCompositeExtract, n->type, {v, static_cast<uint32_t>(n->lane)});
}

uint32_t Emitter::expr_node(const kir::MakeVector *n) {
  Words elems;
  for (const kir::Expr &e : n->elems) elems.push_back(expr(e));
  use(n->type, true);
  return op(spv::OpCompositeConstruct, n->value_type(), elems);
}

// ---- subgroups ----

uint32_t Emitter::subgroup_builtin(spv::BuiltIn b) {
  usage_.subgroup_ops |= kir::subgroup_ops::basic;
  uint32_t &var = scalar_builtins_[static_cast<uint32_t>(b)];
  if (var == 0) {
    uint32_t ptr = b_.type_pointer(spv::StorageClassInput, type_of(ScalarType::u32));
    var = b_.global_variable(ptr, spv::StorageClassInput);
    b_.decorate(var, spv::DecorationBuiltIn, {static_cast<uint32_t>(b)});
    interface_.push_back(var);
  }
  return op(spv::OpLoad, ScalarType::u32, {var});
}

uint32_t Emitter::group_op(spv::Op o, const ValueType &t, uint32_t capability_bit,
                           const Words &args) {
  usage_.subgroup_ops |= kir::subgroup_ops::basic | capability_bit;
  use(t.elem, true);
  Words ops = {b_.constant_u32(spv::ScopeSubgroup)};
  ops.insert(ops.end(), args.begin(), args.end());
  return op(o, t, ops);
}

uint32_t Emitter::expr_node(const kir::SubgroupReduce *n) {
  const ScalarType t = n->type;
  const bool f = is_float(t), s = is_signed_int(t);
  spv::Op o = spv::OpGroupNonUniformIAdd;
  switch (n->op) {
  case kir::ReduceOp::add: o = f ? spv::OpGroupNonUniformFAdd : spv::OpGroupNonUniformIAdd; break;
  case kir::ReduceOp::mul: o = f ? spv::OpGroupNonUniformFMul : spv::OpGroupNonUniformIMul; break;
  case kir::ReduceOp::min:
    o = f   ? spv::OpGroupNonUniformFMin
        : s ? spv::OpGroupNonUniformSMin
            : spv::OpGroupNonUniformUMin;
    break;
  case kir::ReduceOp::max:
    o = f   ? spv::OpGroupNonUniformFMax
        : s ? spv::OpGroupNonUniformSMax
            : spv::OpGroupNonUniformUMax;
    break;
  }
  uint32_t v = expr(n->value);
  return group_op(o, n->value_type(), kir::subgroup_ops::arithmetic,
                  {static_cast<uint32_t>(spv::GroupOperationReduce), v});
}

uint32_t Emitter::expr_node(const kir::SubgroupBroadcast *n) {
  uint32_t v = expr(n->value);
  if (!n->lane.defined())
    return group_op(spv::OpGroupNonUniformBroadcastFirst, n->value_type(),
                    kir::subgroup_ops::ballot, {v});
  uint32_t lane = expr(n->lane);
  return group_op(spv::OpGroupNonUniformBroadcast, n->value_type(), kir::subgroup_ops::ballot,
                  {v, lane});
}

uint32_t Emitter::expr_node(const kir::SubgroupShuffle *n) {
  uint32_t v = expr(n->value), lane = expr(n->lane);
  spv::Op o = n->mode == kir::ShuffleMode::index ? spv::OpGroupNonUniformShuffle
                                                 : spv::OpGroupNonUniformShuffleXor;
  return group_op(o, n->value_type(), kir::subgroup_ops::shuffle, {v, lane});
}

} // namespace kiln::spirv
