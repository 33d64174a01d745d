// Helpers of the C emitter (c_emit_util.h): C spellings of kernel-IR types and literals, and
// the analyses the emitter asks of statements and expressions.
#include "target/c/c_emit_util.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace kiln::cgen::detail {

using namespace kir;

// ---- types and literals ----------------------------------------------------------------------

// The C spelling of a scalar type, and the short suffix of its helper functions.
const char *c_type(ScalarType t) {
  switch (t) {
  case ScalarType::boolean: return "_Bool";
  case ScalarType::i8: return "int8_t";
  case ScalarType::u8: return "uint8_t";
  case ScalarType::i16: return "int16_t";
  case ScalarType::u16: return "uint16_t";
  case ScalarType::i32: return "int32_t";
  case ScalarType::u32: return "uint32_t";
  case ScalarType::i64: return "int64_t";
  case ScalarType::u64: return "uint64_t";
  case ScalarType::f16: return "_Float16";
  case ScalarType::f32: return "float";
  case ScalarType::f64: return "double";
  }
  return "?";
}

const char *suffix(ScalarType t) {
  switch (t) {
  case ScalarType::boolean: return "b";
  case ScalarType::i8: return "i8";
  case ScalarType::u8: return "u8";
  case ScalarType::i16: return "i16";
  case ScalarType::u16: return "u16";
  case ScalarType::i32: return "i32";
  case ScalarType::u32: return "u32";
  case ScalarType::i64: return "i64";
  case ScalarType::u64: return "u64";
  case ScalarType::f16: return "f16";
  case ScalarType::f32: return "f32";
  case ScalarType::f64: return "f64";
  }
  return "?";
}

// The element type a buffer or shared array stores (booleans as bytes).
const char *storage_type(ScalarType t) {
  return t == ScalarType::boolean ? "uint8_t" : c_type(t);
}

std::string value_type(const ValueType &t) {
  if (t.is_matrix()) return fmt::format("kv_m_{}_{}x{}", suffix(t.elem), t.matrix.rows, t.matrix.cols);
  if (t.lanes > 1) return fmt::format("kv_{}x{}", suffix(t.elem), int(t.lanes));
  return c_type(t.elem);
}

std::string int_literal(ScalarType t, int64_t v) {
  if (t == ScalarType::boolean) return v ? "((_Bool)1)" : "((_Bool)0)";
  if (t == ScalarType::u64) return fmt::format("UINT64_C({})", static_cast<uint64_t>(v));
  if (v == INT64_MIN) return "(-INT64_C(9223372036854775807) - 1)";
  if (t == ScalarType::i64) return fmt::format("INT64_C({})", v);
  if (v == INT32_MIN) return fmt::format("(({})(-2147483647 - 1))", c_type(t));
  return fmt::format("(({}){}{})", c_type(t), v, is_unsigned_int(t) ? "u" : "");
}

std::string float_literal(ScalarType t, double v) {
  const bool f32 = t != ScalarType::f64;
  std::string s;
  if (std::isnan(v))
    s = f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
  else if (std::isinf(v))
    s = std::string(v < 0 ? "(-" : "(") + (f32 ? "__builtin_inff())" : "__builtin_inf())");
  else
    s = f32 ? fmt::format("{:a}f", static_cast<double>(static_cast<float>(v)))
            : fmt::format("{:a}", v);
  if (t == ScalarType::f16) return "((_Float16)" + s + ")";
  return "(" + s + ")";
}

// KIR names may be anything the text form allows; C identifiers get a prefix and an escape.
std::string c_name(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  for (unsigned char ch : name) {
    if (std::isalnum(ch)) out += static_cast<char>(ch);
    else out += fmt::format("_{:02x}", ch);
  }
  return out;
}

std::string binary_scalar(BinOp op, ScalarType t, const std::string &a,
                          const std::string &b) {
  const char *T = c_type(t);
  const char *S = suffix(t);
  const bool fl = is_float(t);
  switch (op) {
  case BinOp::add: return fmt::format("(({})({} + {}))", T, a, b);
  case BinOp::sub: return fmt::format("(({})({} - {}))", T, a, b);
  case BinOp::mul: return fmt::format("(({})({} * {}))", T, a, b);
  case BinOp::div:
    return fl ? fmt::format("(({})({} / {}))", T, a, b)
              : fmt::format("kiln_div_{}({}, {})", S, a, b);
  case BinOp::mod: return fmt::format("kiln_mod_{}({}, {})", S, a, b);
  case BinOp::min: return fmt::format("kiln_min_{}({}, {})", S, a, b);
  case BinOp::max: return fmt::format("kiln_max_{}({}, {})", S, a, b);
  case BinOp::pow: return fmt::format("kiln_pow_{}({}, {})", S, a, b);
  case BinOp::bit_and: return fmt::format("(({})({} & {}))", T, a, b);
  case BinOp::bit_or: return fmt::format("(({})({} | {}))", T, a, b);
  case BinOp::bit_xor: return fmt::format("(({})({} ^ {}))", T, a, b);
  case BinOp::shl: return fmt::format("kiln_shl_{}({}, {})", S, a, b);
  case BinOp::shr: return fmt::format("kiln_shr_{}({}, {})", S, a, b);
  }
  return "?";
}

std::string binary_wrapping(BinOp op, ScalarType t, const std::string &a,
                            const std::string &b) {
  const char *T = c_type(t);
  const char *U = t == ScalarType::i64 ? "uint64_t" : "uint32_t";
  const char *o = op == BinOp::add ? "+" : op == BinOp::sub ? "-" : "*";
  return fmt::format("(({0})(({1})({2}) {3} ({1})({4})))", T, U, a, o, b);
}

const char *cmp_op(CmpOp op) {
  switch (op) {
  case CmpOp::eq: return "==";
  case CmpOp::ne: return "!=";
  case CmpOp::lt: return "<";
  case CmpOp::le: return "<=";
  case CmpOp::gt: return ">";
  case CmpOp::ge: return ">=";
  }
  return "?";
}

// ---- analysis --------------------------------------------------------------------------------

bool has_barrier(const Stmt &s) {
  struct Finder : Visitor {
    using Visitor::visit;
    bool found = false;
    void visit(const Barrier *) override { found = true; }
  } f;
  f.visit(s);
  return f.found;
}

// Whether `e` may differ between the invocations of a workgroup: it reads an invocation id or
// a per-invocation variable.
bool varies(const Expr &e, const std::set<std::string> &per_invocation) {
  struct Finder : Visitor {
    using Visitor::visit;
    const std::set<std::string> *names;
    bool found = false;
    void visit(const Builtin *b) override {
      switch (b->builtin) {
      case BuiltinKind::workgroup_id_x:
      case BuiltinKind::workgroup_id_y:
      case BuiltinKind::workgroup_id_z:
      case BuiltinKind::subgroup_size:
      case BuiltinKind::num_subgroups: return;
      default: found = true;
      }
    }
    void visit(const Var *v) override { found = found || names->count(v->name) > 0; }
  } f;
  f.names = &per_invocation;
  f.visit(e);
  return f.found;
}

// Nodes an expression may read from memory or that are cheap to repeat stay inline; others
// used more than once in one statement are bound to a temporary (shared sub-expressions would
// otherwise be written out once per use, exponentially in the worst case).
bool reads_memory(const Expr &e) {
  struct Finder : Visitor {
    using Visitor::visit;
    bool found = false;
    void visit(const Load *) override { found = true; }
    void visit(const LoadShared *) override { found = true; }
    void visit(const VectorLoad *) override { found = true; }
    void visit(const MatrixLoad *) override { found = true; }
  } f;
  f.visit(e);
  return f.found;
}

bool trivial(const Expr &e) {
  switch (e.kind()) {
  case ExprKind::IntImm:
  case ExprKind::FloatImm:
  case ExprKind::Var:
  case ExprKind::Builtin:
  case ExprKind::PushConst: return true;
  default: return false;
  }
}

void count_uses(const Expr &e, std::unordered_map<const ExprNode *, int> &uses) {
  struct Counter : Visitor {
    using Visitor::visit;
    std::unordered_map<const ExprNode *, int> *uses;
    void visit(const Expr &x) override {
      if (++(*uses)[x.get()] == 1) Visitor::visit(x);
    }
  } c;
  c.uses = &uses;
  c.visit(e);
}

std::string intrinsic_scalar(Intrinsic fn, ScalarType t, const std::vector<std::string> &a) {
  const char *S = suffix(t);
  switch (fn) {
  case Intrinsic::isnan: return fmt::format("((_Bool)__builtin_isnan({}))", a[0]);
  case Intrinsic::isinf: return fmt::format("((_Bool)__builtin_isinf({}))", a[0]);
  case Intrinsic::abs: return fmt::format("kiln_abs_{}({})", S, a[0]);
  case Intrinsic::sign: return fmt::format("kiln_sign_{}({})", S, a[0]);
  case Intrinsic::div_exact: return fmt::format("(({})({} / {}))", c_type(t), a[0], a[1]);
  case Intrinsic::fma: return fmt::format("kiln_fma_{}({}, {}, {})", S, a[0], a[1], a[2]);
  default: break;
  }
  return fmt::format("kiln_{}_{}({})", to_string(fn), S, a[0]);
}

std::string builtin_text(BuiltinKind b, const uint32_t workgroup_size[3]) {
  const uint32_t *w = workgroup_size;
  switch (b) {
  case BuiltinKind::global_id_x: return fmt::format("(wg_x * {}u + lx)", w[0]);
  case BuiltinKind::global_id_y: return fmt::format("(wg_y * {}u + ly)", w[1]);
  case BuiltinKind::global_id_z: return fmt::format("(wg_z * {}u + lz)", w[2]);
  case BuiltinKind::local_id_x: return "lx";
  case BuiltinKind::local_id_y: return "ly";
  case BuiltinKind::local_id_z: return "lz";
  case BuiltinKind::workgroup_id_x: return "wg_x";
  case BuiltinKind::workgroup_id_y: return "wg_y";
  case BuiltinKind::workgroup_id_z: return "wg_z";
  case BuiltinKind::subgroup_size: return "1u";
  case BuiltinKind::subgroup_invocation_id: return "0u";
  case BuiltinKind::subgroup_id: return "lid";
  case BuiltinKind::num_subgroups: return fmt::format("{}u", w[0] * w[1] * w[2]);
  }
  return "0u";
}

bool carries_data(const Expr &e, const std::set<std::string> &values,
                  std::unordered_map<const ExprNode *, bool> &memo) {
  struct Finder : Visitor {
    using Visitor::visit;
    const std::set<std::string> *values = nullptr;
    std::unordered_map<const ExprNode *, bool> *memo = nullptr;
    bool found = false;
    void visit(const Expr &x) override {
      if (found) return;
      if (auto it = memo->find(x.get()); it != memo->end()) {
        found = it->second;
        return;
      }
      switch (x.kind()) {
      case ExprKind::Load:
      case ExprKind::LoadShared:
      case ExprKind::VectorLoad:
      case ExprKind::MatrixLoad:
      case ExprKind::SubgroupReduce:
      case ExprKind::SubgroupBroadcast:
      case ExprKind::SubgroupShuffle: found = true; break;
      case ExprKind::Var: found = values->count(x.as<Var>()->name) > 0; break;
      default: Visitor::visit(x); break;
      }
      (*memo)[x.get()] = found;
    }
  } f;
  f.values = &values;
  f.memo = &memo;
  f.visit(e);
  return f.found;
}

} // namespace kiln::cgen::detail
