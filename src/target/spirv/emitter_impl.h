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
using kir::ValueType;

// What the emitted code uses, before it is checked against the target.
struct Usage {
  bool arith8 = false, arith16 = false, float16 = false, float64 = false, int64 = false;
  bool storage8 = false, storage16 = false;
  uint32_t subgroup_ops = 0; // kir::subgroup_ops bits
  bool cooperative_matrix = false;
};

class Emitter {
public:
  Emitter(const kir::Kernel &k, const kir::TargetDesc &t) : k_(k), t_(t) {}
  Result<Words> run(kir::Requirements *used);

  // ---- used by the expression and math files ----
  uint32_t type_of(const ValueType &t);     // the value type (booleans: OpTypeBool)
  uint32_t storage_type_of(ScalarType t);   // the in-buffer type (booleans: u8)
  void use(ScalarType t, bool arithmetic);  // records capabilities
  uint32_t constant(ScalarType t, double v);
  uint32_t int_constant(ScalarType t, int64_t v);
  uint32_t expr(const kir::Expr &e);
  uint32_t convert(uint32_t value, ScalarType from, ScalarType to);
  // Lane-wise: applies `f` to each lane of the values (of lane types `elems`) and rebuilds a
  // vector of type `result`; for a scalar result, f is applied to the values themselves.
  template <class F>
  uint32_t per_lane(const ValueType &result, const Words &values,
                    const std::vector<ScalarType> &elems, F f);
  uint32_t call(const kir::Call *n);
  uint32_t call_scalar(kir::Intrinsic fn, ScalarType t, const Words &args);
  uint32_t pow(uint32_t x, uint32_t y, ScalarType t);
  // Signed integer a / b (quotient) or a % b with C semantics on every driver (no OpSRem).
  uint32_t signed_div_rem(const ValueType &t, uint32_t a, uint32_t b, bool quotient,
                          bool non_negative);
  // Whether a signed integer scalar is known to be >= 0: constants, loop counters from a
  // non-negative start, Let-bound values, casts of builtins and push constants, and +, *, /, %,
  // min/max, shifts and selects of such (index arithmetic does not overflow: docs/LIMITS.md).
  bool non_negative(const kir::Expr &e) const;
  // Scalar f32 a / b correctly rounded, refined in f64 (div_exact on TargetDesc::fdiv_via_f64;
  // vectors reach it lane by lane through call()).
  uint32_t correctly_rounded_fdiv(uint32_t a, uint32_t b);
  uint32_t glsl(const ValueType &t, uint32_t inst, const Words &args) {
    return b_.ext_inst(type_of(t), inst, args);
  }
  uint32_t op(spv::Op o, const ValueType &t, const Words &args) {
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
    bool non_negative = false; // an integer SSA value known to be >= 0 (see non_negative)
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
  std::map<uint32_t, uint32_t> scalar_builtins_; // spv::BuiltIn -> u32 Input variable
  std::map<std::pair<int, int>, uint32_t> views_; // (buffer, lanes) -> vector view variable
  Words interface_;

  Status check_target(kir::Requirements *used);
  void declare_buffers();
  void declare_shared();
  void declare_push_constants();
  void add_capabilities();
  uint32_t declare_buffer_variable(int buffer, uint32_t elem_type, uint32_t stride);
  void decorate_aliased_views();

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
  // A pointer to the scalar at element `index` of a shared array, or (lanes > 1) to the array's
  // vector whose first lane is `index`.
  uint32_t shared_pointer(int array, const kir::Expr &index, int lanes = 1);
  uint32_t builtin_var(int which);
  uint32_t subgroup_builtin(spv::BuiltIn b); // a u32 Input builtin of the subgroup
  uint32_t convert_matrix(uint32_t value, ScalarType from, const ValueType &to);
  uint32_t buffer_view(int buffer, int lanes);
  uint32_t vector_pointer(int buffer, const kir::Expr &index, int lanes);
  uint32_t matrix_pointer(kir::MemSpace space, int target, const kir::Expr &offset);
  void check_matrix_alignment(kir::ScalarType t, const kir::Expr &offset, const kir::Expr &stride);
  bool offers_mul_add(const kir::MatrixMulAdd *n) const;
  uint32_t group_op(spv::Op o, const ValueType &t, uint32_t capability_bit, const Words &args);
};

template <class F>
uint32_t Emitter::per_lane(const ValueType &result, const Words &values,
                           const std::vector<ScalarType> &elems, F f) {
  if (!result.is_vector()) return f(values);
  Words lanes;
  for (uint32_t l = 0; l < result.lanes; ++l) {
    Words at;
    for (size_t i = 0; i < values.size(); ++i)
      at.push_back(b_.emit_result(spv::OpCompositeExtract, type_of(elems[i]), {values[i], l}));
    lanes.push_back(f(at));
  }
  return b_.emit_result(spv::OpCompositeConstruct, type_of(result), lanes);
}

} // namespace kiln::spirv
