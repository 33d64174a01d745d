// Helpers of the C emitter (c_emitter.cpp): the C spellings of kernel-IR types, literals and
// names, and the analyses the emitter asks of statements and expressions. Internal to
// src/target/c.
#pragma once

#include "kir/kir.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::cgen::detail {

// The C spelling of a scalar type, and the short suffix of its helper functions.
const char *c_type(kir::ScalarType t);
const char *suffix(kir::ScalarType t);
// The element type a buffer or shared array stores (booleans as bytes).
const char *storage_type(kir::ScalarType t);
// A scalar, vector (kv_<suffix>x<lanes>) or f32 matrix (kv_m_<suffix>_<rows>x<cols>) type.
std::string value_type(const kir::ValueType &t);
std::string int_literal(kir::ScalarType t, int64_t v);
std::string float_literal(kir::ScalarType t, double v);
// KIR names may be anything the text form allows; C identifiers get a prefix and an escape.
std::string c_name(std::string_view prefix, std::string_view name);
// A binary operation on two scalar operand texts of type `t` (the kernel IR's semantics:
// integer division and remainder by zero give 0, shifts are masked), and a comparison operator.
std::string binary_scalar(kir::BinOp op, kir::ScalarType t, const std::string &a,
                          const std::string &b);
// i32 / i64 add, sub or mul that wraps modulo 2^N (computed in the unsigned type): for data
// values, whose overflow the kernel IR defines; the emitted C is built without -fwrapv.
std::string binary_wrapping(kir::BinOp op, kir::ScalarType t, const std::string &a,
                            const std::string &b);
const char *cmp_op(kir::CmpOp op);

// An intrinsic call on scalar operand texts of type `t`, and a builtin's C text (one
// invocation per subgroup: the subgroup id is the invocation's index).
std::string intrinsic_scalar(kir::Intrinsic fn, kir::ScalarType t,
                             const std::vector<std::string> &a);
std::string builtin_text(kir::BuiltinKind b, const uint32_t workgroup_size[3]);
// Whether `e` depends on data: a memory read or subgroup exchange, or a variable in `values`
// (memoised per node in `memo`). Signed arithmetic on data wraps; on indices it stays plain C.
bool carries_data(const kir::Expr &e, const std::set<std::string> &values,
                  std::unordered_map<const kir::ExprNode *, bool> &memo);

bool has_barrier(const kir::Stmt &s);
// Whether `e` may differ between the invocations of a workgroup: it reads an invocation id or
// a per-invocation variable.
bool varies(const kir::Expr &e, const std::set<std::string> &per_invocation);
// Nodes an expression may read from memory or that are cheap to repeat stay inline; others
// used more than once in one statement are bound to a temporary (shared sub-expressions would
// otherwise be written out once per use, exponentially in the worst case).
bool reads_memory(const kir::Expr &e);
bool trivial(const kir::Expr &e);
void count_uses(const kir::Expr &e, std::unordered_map<const kir::ExprNode *, int> &uses);

} // namespace kiln::cgen::detail
