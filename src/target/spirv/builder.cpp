#include "target/spirv/builder.h"

#include "support/status.h"
#include "target/spirv/spirv_khr.h"

namespace kiln::spirv {

void append(Words &out, spv::Op op, const Words &operands) {
  uint32_t count = static_cast<uint32_t>(operands.size() + 1);
  KILN_ASSERT(count <= 0xffff, "spirv: instruction too long");
  out.push_back((count << spv::WordCountShift) | static_cast<uint32_t>(op));
  out.insert(out.end(), operands.begin(), operands.end());
}

Words string_words(const std::string &s) {
  Words w((s.size() + 4) / 4, 0); // always at least one terminating zero byte
  for (size_t i = 0; i < s.size(); ++i)
    w[i / 4] |= static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << (8 * (i % 4));
  return w;
}

uint32_t Builder::import_glsl() {
  if (glsl_ == 0) glsl_ = new_id();
  return glsl_;
}

void Builder::name(uint32_t id, const std::string &n) {
  Words ops = {id};
  Words s = string_words(n);
  ops.insert(ops.end(), s.begin(), s.end());
  append(debug_, spv::OpName, ops);
}

void Builder::decorate(uint32_t id, spv::Decoration d, Words literals) {
  Words ops = {id, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(annotations_, spv::OpDecorate, ops);
}

void Builder::member_decorate(uint32_t id, uint32_t member, spv::Decoration d, Words literals) {
  Words ops = {id, member, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(annotations_, spv::OpMemberDecorate, ops);
}

void Builder::entry_point(uint32_t fn, const std::string &n, const Words &interface) {
  Words ops = {static_cast<uint32_t>(spv::ExecutionModelGLCompute), fn};
  Words s = string_words(n);
  ops.insert(ops.end(), s.begin(), s.end());
  ops.insert(ops.end(), interface.begin(), interface.end());
  append(entry_, spv::OpEntryPoint, ops);
}

void Builder::local_size(uint32_t fn, uint32_t x, uint32_t y, uint32_t z) {
  append(modes_, spv::OpExecutionMode,
         {fn, static_cast<uint32_t>(spv::ExecutionModeLocalSize), x, y, z});
}

uint32_t Builder::cached_type(spv::Op op, const Words &operands) {
  Words key = {static_cast<uint32_t>(op)};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  uint32_t id = new_id();
  Words ops = {id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  append(globals_, op, ops);
  types_[key] = id;
  return id;
}

uint32_t Builder::type_void() { return cached_type(spv::OpTypeVoid, {}); }
uint32_t Builder::type_bool() { return cached_type(spv::OpTypeBool, {}); }
uint32_t Builder::type_int(uint32_t width, bool is_signed) {
  return cached_type(spv::OpTypeInt, {width, is_signed ? 1u : 0u});
}
uint32_t Builder::type_float(uint32_t width) { return cached_type(spv::OpTypeFloat, {width}); }
uint32_t Builder::type_vector(uint32_t elem, uint32_t n) {
  return cached_type(spv::OpTypeVector, {elem, n});
}
uint32_t Builder::type_pointer(spv::StorageClass sc, uint32_t pointee) {
  return cached_type(spv::OpTypePointer, {static_cast<uint32_t>(sc), pointee});
}
uint32_t Builder::type_array(uint32_t elem, uint32_t count) {
  return cached_type(spv::OpTypeArray, {elem, constant_u32(count)});
}

uint32_t Builder::type_runtime_array(uint32_t elem, uint32_t stride) {
  // The stride is part of the key: the ArrayStride decoration belongs to the type.
  Words key = {static_cast<uint32_t>(spv::OpTypeRuntimeArray), elem, stride};
  auto it = types_.find(key);
  if (it != types_.end()) return it->second;
  uint32_t id = new_id();
  append(globals_, spv::OpTypeRuntimeArray, {id, elem});
  decorate(id, spv::DecorationArrayStride, {stride});
  types_[key] = id;
  return id;
}

uint32_t Builder::type_array_with_stride(uint32_t elem, uint32_t count, uint32_t stride) {
  uint32_t length = constant_u32(count);
  uint32_t id = new_id();
  append(globals_, spv::OpTypeArray, {id, elem, length});
  decorate(id, spv::DecorationArrayStride, {stride});
  return id;
}

uint32_t Builder::type_struct(const Words &members) {
  uint32_t id = new_id();
  Words ops = {id};
  ops.insert(ops.end(), members.begin(), members.end());
  append(globals_, spv::OpTypeStruct, ops);
  return id;
}

uint32_t Builder::type_function(uint32_t ret) { return cached_type(spv::OpTypeFunction, {ret}); }

uint32_t Builder::type_cooperative_matrix(uint32_t component, uint32_t rows, uint32_t cols,
                                          uint32_t use) {
  Words ops = {component, constant_u32(spv::ScopeSubgroup), constant_u32(rows),
               constant_u32(cols), constant_u32(use)};
  return cached_type(khr::OpTypeCooperativeMatrix, ops);
}

uint32_t Builder::constant(uint32_t type, const Words &bits) {
  Words key = {type};
  key.insert(key.end(), bits.begin(), bits.end());
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  uint32_t id = new_id();
  Words ops = {type, id};
  ops.insert(ops.end(), bits.begin(), bits.end());
  append(globals_, spv::OpConstant, ops);
  constants_[key] = id;
  return id;
}

uint32_t Builder::constant_bool(bool v) {
  uint32_t t = type_bool();
  Words key = {t, v ? 1u : 0u, 0xb001u}; // distinct from OpConstant keys (one word of bits)
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  uint32_t id = new_id();
  append(globals_, v ? spv::OpConstantTrue : spv::OpConstantFalse, {t, id});
  constants_[key] = id;
  return id;
}

uint32_t Builder::constant_u32(uint32_t v) { return constant(type_int(32, false), {v}); }

uint32_t Builder::global_variable(uint32_t ptr_type, spv::StorageClass sc) {
  uint32_t id = new_id();
  append(globals_, spv::OpVariable, {ptr_type, id, static_cast<uint32_t>(sc)});
  return id;
}

uint32_t Builder::function_variable(uint32_t ptr_type) {
  uint32_t id = new_id();
  append(fn_vars_, spv::OpVariable,
         {ptr_type, id, static_cast<uint32_t>(spv::StorageClassFunction)});
  return id;
}

void Builder::emit(spv::Op op, const Words &operands) { append(body_, op, operands); }

uint32_t Builder::emit_result(spv::Op op, uint32_t type, const Words &operands) {
  uint32_t id = new_id();
  Words ops = {type, id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  append(body_, op, ops);
  return id;
}

uint32_t Builder::ext_inst(uint32_t type, uint32_t inst, const Words &args) {
  Words ops = {import_glsl(), inst};
  ops.insert(ops.end(), args.begin(), args.end());
  return emit_result(spv::OpExtInst, type, ops);
}

Words Builder::finish(uint32_t version, uint32_t fn, uint32_t fn_type, uint32_t void_type) const {
  Words out = {spv::MagicNumber, version, 0 /* generator */, next_id_, 0};
  for (spv::Capability c : capabilities_) append(out, spv::OpCapability, {uint32_t(c)});
  for (const std::string &e : extensions_) append(out, spv::OpExtension, string_words(e));
  if (glsl_ != 0) {
    Words ops = {glsl_};
    Words s = string_words("GLSL.std.450");
    ops.insert(ops.end(), s.begin(), s.end());
    append(out, spv::OpExtInstImport, ops);
  }
  append(out, spv::OpMemoryModel,
         {uint32_t(spv::AddressingModelLogical), uint32_t(memory_model_)});
  out.insert(out.end(), entry_.begin(), entry_.end());
  out.insert(out.end(), modes_.begin(), modes_.end());
  out.insert(out.end(), debug_.begin(), debug_.end());
  out.insert(out.end(), annotations_.begin(), annotations_.end());
  out.insert(out.end(), globals_.begin(), globals_.end());
  append(out, spv::OpFunction, {void_type, fn, uint32_t(spv::FunctionControlMaskNone), fn_type});
  // The body starts with the entry block's label; function variables must follow it.
  KILN_ASSERT(body_.size() >= 2 && (body_[0] & spv::OpCodeMask) == spv::OpLabel,
              "spirv: function body must start with a label");
  out.insert(out.end(), body_.begin(), body_.begin() + 2);
  out.insert(out.end(), fn_vars_.begin(), fn_vars_.end());
  out.insert(out.end(), body_.begin() + 2, body_.end());
  append(out, spv::OpFunctionEnd, {});
  return out;
}

} // namespace kiln::spirv
