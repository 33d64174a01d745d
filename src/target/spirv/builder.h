// A small SPIR-V module builder: ids, the logical sections of a module, uniqued types and
// constants. It knows nothing about the kernel IR.
#pragma once

#include <spirv/unified1/spirv.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::spirv {

using Words = std::vector<uint32_t>;

class Builder {
public:
  uint32_t new_id() { return next_id_++; }

  void capability(spv::Capability c) { capabilities_.insert(c); }
  void extension(const std::string &name) { extensions_.insert(name); }
  void memory_model(spv::MemoryModel m) { memory_model_ = m; }
  uint32_t import_glsl();
  void name(uint32_t id, const std::string &n);
  void decorate(uint32_t id, spv::Decoration d, Words literals = {});
  void member_decorate(uint32_t id, uint32_t member, spv::Decoration d, Words literals = {});
  void entry_point(uint32_t fn, const std::string &n, const Words &interface);
  void local_size(uint32_t fn, uint32_t x, uint32_t y, uint32_t z);

  // Types (uniqued, except structs which may carry per-variable decorations).
  uint32_t type_void();
  uint32_t type_bool();
  uint32_t type_int(uint32_t width, bool is_signed);
  uint32_t type_float(uint32_t width);
  uint32_t type_vector(uint32_t elem, uint32_t n);
  uint32_t type_pointer(spv::StorageClass sc, uint32_t pointee);
  uint32_t type_array(uint32_t elem, uint32_t count);
  uint32_t type_runtime_array(uint32_t elem, uint32_t stride);
  // A fresh (not uniqued) array type decorated with ArrayStride, for explicit layouts.
  uint32_t type_array_with_stride(uint32_t elem, uint32_t count, uint32_t stride);
  uint32_t type_struct(const Words &members);
  uint32_t type_function(uint32_t ret);
  // OpTypeCooperativeMatrixKHR of subgroup scope; `use` is a CooperativeMatrixUse value.
  uint32_t type_cooperative_matrix(uint32_t component, uint32_t rows, uint32_t cols,
                                   uint32_t use);

  // Constants (uniqued by type and bit pattern).
  uint32_t constant(uint32_t type, const Words &bits);
  uint32_t constant_bool(bool v);
  uint32_t constant_u32(uint32_t v);

  // A module-scope variable.
  uint32_t global_variable(uint32_t ptr_type, spv::StorageClass sc);
  // A Function-storage variable, placed at the start of the function's first block.
  uint32_t function_variable(uint32_t ptr_type);

  // Instructions in the function body.
  void emit(spv::Op op, const Words &operands);
  uint32_t emit_result(spv::Op op, uint32_t type, const Words &operands);
  uint32_t ext_inst(uint32_t type, uint32_t inst, const Words &args);

  // Assembles the module; `bound` ids are final once this is called.
  Words finish(uint32_t version, uint32_t fn, uint32_t fn_type, uint32_t void_type) const;

private:
  uint32_t next_id_ = 1;
  uint32_t glsl_ = 0;
  std::set<spv::Capability> capabilities_;
  std::set<std::string> extensions_;
  spv::MemoryModel memory_model_ = spv::MemoryModelGLSL450;
  Words entry_, modes_, debug_, annotations_, globals_, fn_vars_, body_;
  std::map<Words, uint32_t> types_;     // opcode + operands -> id
  std::map<Words, uint32_t> constants_; // type + bits -> id

  uint32_t cached_type(spv::Op op, const Words &operands);
};

void append(Words &out, spv::Op op, const Words &operands);
Words string_words(const std::string &s);

} // namespace kiln::spirv
