// The C emitter's class (kernel IR -> C; c.h says what the generated code looks like). Its
// members live in three files: c_emitter.cpp (the kernel, statements and the workgroup's
// invocation loops), c_emit_expr.cpp (expressions) and c_emit_matrix.cpp (cooperative
// matrices). Internal to src/target/c.
#pragma once

#include "target/c/c.h"
#include "target/c/c_emit_util.h"

#include <fmt/format.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::cgen::detail {

// The emitter is written against the kernel IR's names (kir::Expr, kir::Stmt, ...); this
// directive stays inside this internal namespace.
using namespace kir;

// Emits one kernel as a C function (emit_c, c.h).
class Emitter {
public:
  Emitter(const Kernel &k, Requirements *used) : k_(k), used_(used) {}

  Result<std::string> run();

private:
  const Kernel &k_;
  Requirements *used_;
  uint32_t wg_ = 1;
  std::string out_;
  int depth_ = 0;
  int temps_ = 0;
  std::set<std::string> per_invocation_; // privatised variables: name[lid]
  // Variables that carry data values (bound to an expression that reads memory, or mutable):
  // signed integer arithmetic on them wraps explicitly (through unsigned), while arithmetic
  // of coordinates, sizes and loop counters stays plain C, where signed overflow cannot
  // happen (indices fit 31 bits) and the C compiler may treat it as affine and vectorise.
  std::set<std::string> values_;
  std::unordered_map<const ExprNode *, bool> carries_; // per statement: memo of carries_value
  // Per statement: hoisted sub-expressions and their use counts.
  std::unordered_map<const ExprNode *, int> uses_;
  std::unordered_map<const ExprNode *, std::string> hoisted_;
  std::vector<std::string> pre_;
  // Elements of read-only buffers at constant indices (a Clip's bounds, a scalar scale), read
  // once into locals before the workgroup loop: as loads inside a select they would be
  // conditional, which keeps GCC from vectorising the loop around them. Keyed by (buffer, index).
  std::map<std::pair<int, int64_t>, std::string> invariant_loads_;
  // Float constants compared against by a min / max (a clip's bounds, folded into the kernel
  // IR), as locals the C compiler cannot see through: with the literal GCC threads the jumps
  // of a clamp into data-dependent branches in scalar loop remainders (a 2.5x slower
  // depthwise kernel on mobilenet_v2, where the mispredictions dominated); as an opaque
  // register it emits maxss / blends. Declared at the top of the kernel (at consts_at_).
  std::map<std::pair<std::string, std::string>, std::string> opaque_constants_; // (C type, literal) -> name
  size_t consts_at_ = 0;
  std::string opaque_constant(ScalarType t, double v);
  // Matrix accumulators declared as zero and not yet filled (v_NAME_z is 1 until the first
  // multiply-add wrote them); any other read fills them first.
  std::set<std::string> zero_pending_;
  std::set<std::string> matrix_types_;            // C names of the matrix types used
  std::map<std::string, uint32_t> matrix_elems_; // and their element counts

  void line(const std::string &s) {
    out_.append(static_cast<size_t>(depth_) * 2, ' ');
    out_ += s;
    out_ += '\n';
  }
  std::string temp() { return fmt::format("t{}", temps_++); }

  Status unsupported(const std::string &what) const {
    return Status::error(fmt::format("kernel '{}': the cpu target does not support {}", k_.name,
                                     what));
  }

  bool carries_value(const Expr &e) { return carries_data(e, values_, carries_); }
  // Marks `var` (bound to `value`) as carrying data or not; returns whether it was before.
  bool bind_value_var(const Expr &var, const Expr &value) {
    const std::string &n = var.as<Var>()->name;
    const bool was = values_.count(n) > 0;
    if (carries_value(value)) values_.insert(n);
    else values_.erase(n);
    return was;
  }
  void restore_value_var(const Expr &var, bool was) {
    const std::string &n = var.as<Var>()->name;
    if (was) values_.insert(n);
    else values_.erase(n);
  }

  // ---- statements with expressions: bind shared sub-expressions first ----
  void begin_statement(std::initializer_list<const Expr *> exprs) {
    uses_.clear();
    hoisted_.clear();
    pre_.clear();
    carries_.clear();
    for (const Expr *e : exprs)
      if (e && e->defined()) count_uses(*e, uses_);
  }
  void flush_pre() {
    for (const std::string &s : pre_) line(s);
    pre_.clear();
  }

  // The loops over a workgroup's invocations around `stmts`.
  Status invocations(const std::vector<Stmt> &stmts);

  // A statement that contains a barrier, at the workgroup's uniform level.
  Status uniform(const Stmt &s);

  Status for_header(const For &f);
  // A loop or a conditional whose bodies are emitted by `body` (uniform or stmt).
  Status for_stmt(const For &f, Status (Emitter::*body)(const Stmt &));
  Status if_stmt(const If &i, Status (Emitter::*body)(const Stmt &));

  // A statement inside the invocation loops.
  Status stmt(const Stmt &s);

  // ---- cooperative matrices: f32 arrays the (only) invocation of the subgroup owns ----
  // f16 matrices (A and B of an f16 product) are f32 arrays too: every f16 value is an f32
  // one and so is every product of two, so the sums are those of an f32 product.
  Status note_matrix(const ValueType &t);

  ScalarType matrix_elem(MemSpace space, int target) const {
    return space == MemSpace::buffer ? k_.buffers[size_t(target)].elem
                                     : k_.shared[size_t(target)].elem;
  }

  // The C array behind a matrix load or store (buffers and shared arrays of f32 or f16).
  Result<std::string> matrix_memory(MemSpace space, int target);

  // A matrix load of the given layout as (pointer, stride) for the multiply-add fast path;
  // empty when `e` is not one.
  Result<std::pair<std::string, std::string>> memory_operand(const Expr &e, MatrixLayout layout);

  // `acc = a * b + acc` with a row- or column-major load of a and a row-major load of b, or a
  // row-major a and a column-major b:
  // multiplied in place from memory, no copies. False when the statement has another form.
  Result<bool> multiply_add_in_place(const Assign &a);

  // Elementwise on matrices of one shape: `body` computes r.v[i] from x.v[i] (and y.v[i]).
  std::string matrix_map(const ValueType &t, const std::string &x, const std::string &y,
                         const std::string &body);

  Status store_lanes(const std::string &array, ScalarType elem, const ValueType &t,
                     const std::string &index, const std::string &value);

  // ---- expressions ----
  Result<std::string> expr(const Expr &e);

  // Applies `scalar` (which writes the operation on scalar operand texts) lane by lane when
  // the result is a vector.
  template <class F>
  Result<std::string> lanewise(const ValueType &result, const std::vector<Expr> &operands,
                               F scalar);

  Result<std::string> node(const Expr &e);

  Result<std::string> load_lanes(const std::string &array, ScalarType elem, const ValueType &t,
                                 const std::string &index);
};

} // namespace kiln::cgen::detail
