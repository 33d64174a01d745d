// SPIR-V emitter: module structure, resource declarations, statements and the target check.
#include "target/spirv/emitter_impl.h"
#include "target/spirv/spirv.h"
#include "target/spirv/spirv_khr.h"

#include <fmt/format.h>

namespace kiln::spirv {
namespace {

constexpr uint32_t kSpirvVersion = 0x00010500; // SPIR-V 1.5: Vulkan 1.2 and later
constexpr uint32_t kMaxPushConstantBytes = 128; // the Vulkan guaranteed minimum

uint32_t shared_bytes(const kir::Kernel &k) {
  uint64_t total = 0;
  for (const kir::SharedArray &s : k.shared) {
    // Booleans have no defined size in Workgroup memory; count them as 32-bit.
    uint64_t elem = s.elem == ScalarType::boolean ? 4 : kir::storage_bytes(s.elem);
    total += elem * s.count;
  }
  return total > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(total);
}

Status check_shape(const kir::Kernel &k, const kir::TargetDesc &t) {
  uint64_t invocations = 1;
  for (int d = 0; d < 3; ++d) {
    invocations *= k.workgroup_size[d];
    if (k.workgroup_size[d] > t.max_workgroup_size[d])
      return Status::error(fmt::format("workgroup size {} on axis {} exceeds the target's {}",
                                       k.workgroup_size[d], d, t.max_workgroup_size[d]));
  }
  if (invocations > t.max_workgroup_invocations)
    return Status::error(fmt::format("workgroup of {} invocations exceeds the target's {}",
                                     invocations, t.max_workgroup_invocations));
  if (uint64_t(k.push_constant_count) * 4 > kMaxPushConstantBytes)
    return Status::error(fmt::format("{} push constant slots exceed {} bytes",
                                     k.push_constant_count, kMaxPushConstantBytes));
  if (shared_bytes(k) > t.shared_memory_bytes)
    return Status::error(fmt::format("{} bytes of shared memory exceed the target's {}",
                                     shared_bytes(k), t.shared_memory_bytes));
  return Status::ok();
}

} // namespace

Result<Words> Emitter::run(kir::Requirements *used) {
  KILN_TRY(kir::verify(k_));
  KILN_TRY(check_shape(k_, t_).with_context("kernel '" + k_.name + "'"));
  declare_buffers();
  declare_shared();
  declare_push_constants();
  uint32_t void_type = b_.type_void();
  uint32_t fn_type = b_.type_function(void_type);
  uint32_t fn = b_.new_id();
  label(b_.new_id());
  stmt(k_.body);
  b_.emit(spv::OpReturn, {});
  if (!error_.empty()) return Status::error("kernel '" + k_.name + "': " + error_);
  KILN_TRY(check_target(used).with_context("kernel '" + k_.name + "'"));
  add_capabilities();
  decorate_aliased_views();
  b_.entry_point(fn, "main", interface_);
  b_.local_size(fn, k_.workgroup_size[0], k_.workgroup_size[1], k_.workgroup_size[2]);
  b_.name(fn, k_.name.empty() ? "main" : k_.name);
  return b_.finish(kSpirvVersion, fn, fn_type, void_type);
}

Status Emitter::check_target(kir::Requirements *used) {
  struct Need {
    bool used, offered;
    const char *what;
  };
  const Need needs[] = {
      {usage_.float16, t_.float16, "16-bit float arithmetic (shaderFloat16)"},
      {usage_.float64, t_.float64, "64-bit floats (shaderFloat64)"},
      {usage_.arith8, t_.int8, "8-bit integer arithmetic (shaderInt8)"},
      {usage_.arith16, t_.int16, "16-bit integer arithmetic (shaderInt16)"},
      {usage_.int64, t_.int64, "64-bit integers (shaderInt64)"},
      {usage_.storage8, t_.storage8, "8-bit storage buffers (storageBuffer8BitAccess)"},
      {usage_.storage16, t_.storage16, "16-bit storage buffers (storageBuffer16BitAccess)"},
  };
  for (const Need &n : needs)
    if (n.used && !n.offered)
      return Status::error(fmt::format("uses {}, which target '{}' lacks", n.what, t_.name));
  if (uint32_t missing = usage_.subgroup_ops & ~t_.subgroup_operations)
    return Status::error(fmt::format("uses subgroup operations 0x{:x} (VkSubgroupFeatureFlags), "
                                     "which target '{}' lacks (it offers 0x{:x})",
                                     missing, t_.name, t_.subgroup_operations));
  if (usage_.cooperative_matrix && !t_.cooperative_matrix)
    return Status::error(fmt::format("uses cooperative matrices (VK_KHR_cooperative_matrix), "
                                     "which target '{}' lacks",
                                     t_.name));
  if (used) {
    *used = kir::Requirements();
    used->float16 = usage_.float16;
    used->float64 = usage_.float64;
    used->int8 = usage_.arith8;
    used->int16 = usage_.arith16;
    used->int64 = usage_.int64;
    used->storage8 = usage_.storage8;
    used->storage16 = usage_.storage16;
    used->subgroup_operations = usage_.subgroup_ops;
    used->cooperative_matrix = usage_.cooperative_matrix;
    used->shared_memory_bytes = shared_bytes(k_);
    used->max_workgroup_invocations =
        k_.workgroup_size[0] * k_.workgroup_size[1] * k_.workgroup_size[2];
  }
  return Status::ok();
}

void Emitter::add_capabilities() {
  b_.capability(spv::CapabilityShader);
  if (usage_.arith8) b_.capability(spv::CapabilityInt8);
  if (usage_.arith16) b_.capability(spv::CapabilityInt16);
  if (usage_.float16) b_.capability(spv::CapabilityFloat16);
  if (usage_.int64) b_.capability(spv::CapabilityInt64);
  if (usage_.float64) b_.capability(spv::CapabilityFloat64);
  if (usage_.storage8) b_.capability(spv::CapabilityStorageBuffer8BitAccess);
  if (usage_.storage16) b_.capability(spv::CapabilityStorageBuffer16BitAccess);
  if (usage_.subgroup_ops) b_.capability(spv::CapabilityGroupNonUniform);
  if (usage_.subgroup_ops & kir::subgroup_ops::arithmetic)
    b_.capability(spv::CapabilityGroupNonUniformArithmetic);
  if (usage_.subgroup_ops & kir::subgroup_ops::ballot)
    b_.capability(spv::CapabilityGroupNonUniformBallot);
  if (usage_.subgroup_ops & kir::subgroup_ops::shuffle)
    b_.capability(spv::CapabilityGroupNonUniformShuffle);
  if (usage_.cooperative_matrix) {
    // The Vulkan memory model, as the cooperative-matrix rules ask (core in SPIR-V 1.5).
    b_.capability(khr::CapabilityCooperativeMatrix);
    b_.capability(spv::CapabilityVulkanMemoryModel);
    b_.extension(khr::kExtension);
    b_.memory_model(spv::MemoryModelVulkan);
  }
}

void Emitter::declare_buffers() {
  for (size_t i = 0; i < k_.buffers.size(); ++i) {
    const kir::BufferParam &p = k_.buffers[i];
    use(p.elem == ScalarType::boolean ? ScalarType::u8 : p.elem, false);
    buffers_.push_back(declare_buffer_variable(static_cast<int>(i), storage_type_of(p.elem),
                                               kir::storage_bytes(p.elem)));
  }
}

// A storage-buffer variable at set 0, binding `buffer`: a Block struct holding a runtime array
// of `elem_type` with the given stride.
uint32_t Emitter::declare_buffer_variable(int buffer, uint32_t elem_type, uint32_t stride) {
  const kir::BufferParam &p = k_.buffers[buffer];
  uint32_t array = b_.type_runtime_array(elem_type, stride);
  uint32_t block = b_.type_struct({array});
  b_.decorate(block, spv::DecorationBlock);
  b_.member_decorate(block, 0, spv::DecorationOffset, {0});
  if (p.readonly) b_.member_decorate(block, 0, spv::DecorationNonWritable);
  if (p.writeonly) b_.member_decorate(block, 0, spv::DecorationNonReadable);
  uint32_t ptr = b_.type_pointer(spv::StorageClassStorageBuffer, block);
  uint32_t var = b_.global_variable(ptr, spv::StorageClassStorageBuffer);
  b_.decorate(var, spv::DecorationDescriptorSet, {0});
  b_.decorate(var, spv::DecorationBinding, {static_cast<uint32_t>(buffer)});
  b_.name(var, p.name);
  interface_.push_back(var);
  return var;
}

// Buffers read or written through a vector view have two variables on one binding; both are
// marked Aliased so that the compiler keeps their accesses ordered.
void Emitter::decorate_aliased_views() {
  std::vector<bool> viewed(k_.buffers.size(), false);
  for (const auto &[key, var] : views_) {
    viewed[key.first] = true;
    b_.decorate(var, spv::DecorationAliased);
  }
  for (size_t i = 0; i < viewed.size(); ++i)
    if (viewed[i]) b_.decorate(buffers_[i], spv::DecorationAliased);
}

void Emitter::declare_shared() {
  for (const kir::SharedArray &s : k_.shared) {
    use(s.elem, true);
    // A vector-stored array (lanes 2 or 4) is an array of count / lanes vectors.
    const uint32_t elem = s.lanes > 1 ? type_of(ValueType::vector(s.elem, s.lanes)) : type_of(s.elem);
    uint32_t array = b_.type_array(elem, s.count / static_cast<uint32_t>(s.lanes));
    uint32_t ptr = b_.type_pointer(spv::StorageClassWorkgroup, array);
    uint32_t var = b_.global_variable(ptr, spv::StorageClassWorkgroup);
    b_.name(var, s.name);
    shared_.push_back(var);
    interface_.push_back(var);
  }
}

void Emitter::declare_push_constants() {
  if (k_.push_constant_count == 0) return;
  uint32_t u32 = type_of(ScalarType::u32);
  uint32_t array = b_.type_array_with_stride(u32, k_.push_constant_count, 4);
  uint32_t block = b_.type_struct({array});
  b_.decorate(block, spv::DecorationBlock);
  b_.member_decorate(block, 0, spv::DecorationOffset, {0});
  uint32_t ptr = b_.type_pointer(spv::StorageClassPushConstant, block);
  push_constants_ = b_.global_variable(ptr, spv::StorageClassPushConstant);
  b_.name(push_constants_, "push_constants");
  interface_.push_back(push_constants_);
}

uint32_t Emitter::builtin_var(int which) {
  if (builtins_[which] != 0) return builtins_[which];
  static const spv::BuiltIn kinds[3] = {spv::BuiltInGlobalInvocationId,
                                        spv::BuiltInLocalInvocationId, spv::BuiltInWorkgroupId};
  uint32_t v3 = b_.type_vector(type_of(ScalarType::u32), 3);
  uint32_t ptr = b_.type_pointer(spv::StorageClassInput, v3);
  uint32_t var = b_.global_variable(ptr, spv::StorageClassInput);
  b_.decorate(var, spv::DecorationBuiltIn, {static_cast<uint32_t>(kinds[which])});
  interface_.push_back(var);
  builtins_[which] = var;
  return var;
}

// ---- statements ----

uint32_t Emitter::label(uint32_t id) {
  b_.emit(spv::OpLabel, {id});
  return id;
}

void Emitter::bind(const std::string &name, Binding b) { vars_[name].push_back(b); }

void Emitter::unbind(const std::string &name) {
  auto it = vars_.find(name);
  KILN_ASSERT(it != vars_.end() && !it->second.empty(), "spirv: unbalanced variable scope");
  it->second.pop_back();
}

void Emitter::scoped_body(const kir::Stmt &s) {
  block_decls_.emplace_back();
  stmt(s);
  for (const std::string &name : block_decls_.back()) unbind(name);
  block_decls_.pop_back();
}

void Emitter::stmt(const kir::Stmt &s) {
  switch (s.kind()) {
#define KILN_SPIRV_DISPATCH(K)                                                                 \
  case kir::StmtKind::K: stmt_node(s.as<kir::K>()); return;
    KILN_KIR_STMT_KINDS(KILN_SPIRV_DISPATCH)
#undef KILN_SPIRV_DISPATCH
  }
}

void Emitter::stmt_node(const kir::Store *n) {
  uint32_t ptr = buffer_pointer(n->buffer, n->index);
  uint32_t v = expr(n->value);
  if (n->value.type() == ScalarType::boolean) v = convert(v, ScalarType::boolean, ScalarType::u8);
  b_.emit(spv::OpStore, {ptr, v});
}

void Emitter::stmt_node(const kir::For *n) {
  ScalarType t = n->var.type();
  uint32_t begin = expr(n->begin);
  uint32_t end = op(spv::OpIAdd, t, {begin, expr(n->extent)});
  uint32_t counter = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, type_of(t)));
  b_.emit(spv::OpStore, {counter, begin});
  uint32_t header = b_.new_id(), body = b_.new_id(), cont = b_.new_id(), merge = b_.new_id();
  b_.emit(spv::OpBranch, {header});
  label(header);
  uint32_t i = op(spv::OpLoad, t, {counter});
  uint32_t in_range = b_.emit_result(kir::is_signed_int(t) ? spv::OpSLessThan : spv::OpULessThan,
                                     type_of(ScalarType::boolean), {i, end});
  b_.emit(spv::OpLoopMerge, {merge, cont, uint32_t(spv::LoopControlMaskNone)});
  b_.emit(spv::OpBranchConditional, {in_range, body, merge});
  label(body);
  const std::string &name = n->var.as<kir::Var>()->name;
  bind(name, {false, i, kir::is_signed_int(t) && non_negative(n->begin)});
  scoped_body(n->body);
  unbind(name);
  b_.emit(spv::OpBranch, {cont});
  label(cont);
  uint32_t next = op(spv::OpIAdd, t, {op(spv::OpLoad, t, {counter}), int_constant(t, 1)});
  b_.emit(spv::OpStore, {counter, next});
  b_.emit(spv::OpBranch, {header});
  label(merge);
}

void Emitter::stmt_node(const kir::If *n) {
  uint32_t cond = expr(n->cond);
  uint32_t then_label = b_.new_id(), merge = b_.new_id();
  uint32_t else_label = n->else_case.defined() ? b_.new_id() : merge;
  b_.emit(spv::OpSelectionMerge, {merge, uint32_t(spv::SelectionControlMaskNone)});
  b_.emit(spv::OpBranchConditional, {cond, then_label, else_label});
  label(then_label);
  scoped_body(n->then_case);
  b_.emit(spv::OpBranch, {merge});
  if (n->else_case.defined()) {
    label(else_label);
    scoped_body(n->else_case);
    b_.emit(spv::OpBranch, {merge});
  }
  label(merge);
}

void Emitter::stmt_node(const kir::Let *n) {
  const std::string &name = n->var.as<kir::Var>()->name;
  bind(name, {false, expr(n->value), kir::is_signed_int(n->value.type()) && non_negative(n->value)});
  scoped_body(n->body);
  unbind(name);
}

void Emitter::stmt_node(const kir::DeclareVar *n) {
  use(n->var.type(), true);
  uint32_t ptr = b_.function_variable(
      b_.type_pointer(spv::StorageClassFunction, type_of(n->var.value_type())));
  b_.emit(spv::OpStore, {ptr, expr(n->init)});
  const std::string &name = n->var.as<kir::Var>()->name;
  b_.name(ptr, name);
  bind(name, {true, ptr});
  if (!block_decls_.empty()) block_decls_.back().push_back(name);
}

void Emitter::stmt_node(const kir::Assign *n) {
  const std::string &name = n->var.as<kir::Var>()->name;
  auto it = vars_.find(name);
  if (it == vars_.end() || it->second.empty() || !it->second.back().is_pointer)
    return fail("assignment to '" + name + "', which is not a declared variable");
  b_.emit(spv::OpStore, {it->second.back().id, expr(n->value)});
}

void Emitter::stmt_node(const kir::Block *n) {
  block_decls_.emplace_back();
  for (const kir::Stmt &s : n->stmts) stmt(s);
  for (const std::string &name : block_decls_.back()) unbind(name);
  block_decls_.pop_back();
}

void Emitter::stmt_node(const kir::Barrier *) {
  uint32_t workgroup = b_.constant_u32(spv::ScopeWorkgroup);
  uint32_t semantics = b_.constant_u32(spv::MemorySemanticsAcquireReleaseMask |
                                       spv::MemorySemanticsWorkgroupMemoryMask);
  b_.emit(spv::OpControlBarrier, {workgroup, workgroup, semantics});
}

void Emitter::stmt_node(const kir::StoreShared *n) {
  uint32_t ptr = shared_pointer(n->array, n->index);
  b_.emit(spv::OpStore, {ptr, expr(n->value)});
}

void Emitter::stmt_node(const kir::VectorStore *n) {
  const int lanes = n->value.lanes();
  uint32_t v = expr(n->value);
  use(n->value.type(), true);
  if (lanes == 3) { // no 12-byte view: three scalar stores
    uint32_t base = expr(n->index);
    ScalarType it = n->index.type();
    for (uint32_t l = 0; l < 3; ++l) {
      uint32_t i = op(spv::OpIAdd, it, {base, int_constant(it, l)});
      uint32_t ptr = b_.emit_result(
          spv::OpAccessChain,
          b_.type_pointer(spv::StorageClassStorageBuffer, type_of(n->value.type())),
          {buffers_[n->buffer], b_.constant_u32(0), i});
      b_.emit(spv::OpStore, {ptr, op(spv::OpCompositeExtract, n->value.type(), {v, l})});
    }
    return;
  }
  b_.emit(spv::OpStore, {vector_pointer(n->buffer, n->index, lanes), v});
}

Result<std::vector<uint32_t>> emit_spirv(const kir::Kernel &k, const kir::TargetDesc &t,
                                         kir::Requirements *used) {
  Emitter e(k, t);
  return e.run(used);
}

} // namespace kiln::spirv
