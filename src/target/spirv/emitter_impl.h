// Internal to the SPIR-V emitter: the per-kernel emission state shared by the statement,
// expression and math files.
#pragma once

#include "kir/kir.h"
#include "kir/target.h"
#include "target/spirv/builder.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::spirv {

using kir::ScalarType;

// What the emitted code uses, before it is checked against the target.
struct Usage {
  bool arith8 = false, arith16 = false, float16 = false, float64 = false, int64 = false;
  bool storage8 = false, storage16 = false;
};

class Emitter {
public:
  Emitter(const kir::Kernel &k, const kir::TargetDesc &t) : k_(k), t_(t) {}
  Result<Words> run(kir::Requirements *used);

  // ---- used by the expression and math files ----
  uint32_t type_of(ScalarType t);           // the value type (booleans: OpTypeBool)
  uint32_t storage_type_of(ScalarType t);   // the in-buffer type (booleans: u8)
  void use(ScalarType t, bool arithmetic);  // records capabilities
  uint32_t constant(ScalarType t, double v);
  uint32_t int_constant(ScalarType t, int64_t v);
  uint32_t expr(const kir::Expr &e);
  uint32_t convert(uint32_t value, ScalarType from, ScalarType to);
  uint32_t call(const kir::Call *n);
  uint32_t pow(uint32_t x, uint32_t y, ScalarType t);
  uint32_t glsl(ScalarType t, uint32_t inst, const Words &args) {
    return b_.ext_inst(type_of(t), inst, args);
  }
  uint32_t op(spv::Op o, ScalarType t, const Words &args) {
    return b_.emit_result(o, type_of(t), args);
  }
  Builder &builder() { return b_; }
  void fail(std::string msg) {
    if (error_.empty()) error_ = std::move(msg);
  }

private:
  struct Binding {
    bool is_pointer;  // Function variable (load on use) or SSA value
    uint32_t id;
  };

  const kir::Kernel &k_;
  const kir::TargetDesc &t_;
  Builder b_;
  Usage usage_;
  std::string error_;
  std::map<std::string, std::vector<Binding>> vars_;
  std::vector<std::vector<std::string>> block_decls_;
  std::vector<uint32_t> buffers_, shared_;
  uint32_t push_constants_ = 0;
  uint32_t builtins_[3] = {0, 0, 0}; // GlobalInvocationId, LocalInvocationId, WorkgroupId
  Words interface_;

  Status check_target(kir::Requirements *used);
  void declare_buffers();
  void declare_shared();
  void declare_push_constants();
  void add_capabilities();

  void stmt(const kir::Stmt &s);
#define KILN_SPIRV_STMT(K) void stmt_node(const kir::K *n);
  KILN_KIR_STMT_KINDS(KILN_SPIRV_STMT)
#undef KILN_SPIRV_STMT
  void bind(const std::string &name, Binding b);
  void unbind(const std::string &name);
  void scoped_body(const kir::Stmt &s);
  uint32_t label(uint32_t id);

#define KILN_SPIRV_EXPR(K) uint32_t expr_node(const kir::K *n);
  KILN_KIR_EXPR_KINDS(KILN_SPIRV_EXPR)
#undef KILN_SPIRV_EXPR
  uint32_t buffer_pointer(int buffer, const kir::Expr &index);
  uint32_t shared_pointer(int array, const kir::Expr &index);
  uint32_t builtin_var(int which);
};

} // namespace kiln::spirv
