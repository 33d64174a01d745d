// Kernel IR: type helpers, names and the checked node factories.
#include "kir/kir.h"
#include "kir/kir_factory_util.h"

#include "support/half.h"

#include <cmath>

namespace kiln::kir {
using namespace detail;

// ---- types and names ----

const char *to_string(ScalarType t) {
  switch (t) {
  case ScalarType::boolean: return "bool";
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

bool is_float(ScalarType t) {
  return t == ScalarType::f16 || t == ScalarType::f32 || t == ScalarType::f64;
}
bool is_signed_int(ScalarType t) {
  return t == ScalarType::i8 || t == ScalarType::i16 || t == ScalarType::i32 ||
         t == ScalarType::i64;
}
bool is_unsigned_int(ScalarType t) {
  return t == ScalarType::u8 || t == ScalarType::u16 || t == ScalarType::u32 ||
         t == ScalarType::u64;
}
bool is_int(ScalarType t) { return is_signed_int(t) || is_unsigned_int(t); }

int bits(ScalarType t) {
  switch (t) {
  case ScalarType::boolean: return 1;
  case ScalarType::i8:
  case ScalarType::u8: return 8;
  case ScalarType::i16:
  case ScalarType::u16:
  case ScalarType::f16: return 16;
  case ScalarType::i32:
  case ScalarType::u32:
  case ScalarType::f32: return 32;
  case ScalarType::i64:
  case ScalarType::u64:
  case ScalarType::f64: return 64;
  }
  return 0;
}

int storage_bytes(ScalarType t) { return t == ScalarType::boolean ? 1 : bits(t) / 8; }

const char *to_string(BinOp op) {
  switch (op) {
  case BinOp::add: return "+";
  case BinOp::sub: return "-";
  case BinOp::mul: return "*";
  case BinOp::div: return "/";
  case BinOp::mod: return "%";
  case BinOp::min: return "min";
  case BinOp::max: return "max";
  case BinOp::pow: return "pow";
  case BinOp::bit_and: return "&";
  case BinOp::bit_or: return "|";
  case BinOp::bit_xor: return "^";
  case BinOp::shl: return "<<";
  case BinOp::shr: return ">>";
  }
  return "?";
}

const char *to_string(CmpOp op) {
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

const char *to_string(Intrinsic f) {
  switch (f) {
  case Intrinsic::exp: return "exp";
  case Intrinsic::log: return "log";
  case Intrinsic::sqrt: return "sqrt";
  case Intrinsic::rsqrt: return "rsqrt";
  case Intrinsic::sin: return "sin";
  case Intrinsic::cos: return "cos";
  case Intrinsic::tan: return "tan";
  case Intrinsic::asin: return "asin";
  case Intrinsic::acos: return "acos";
  case Intrinsic::atan: return "atan";
  case Intrinsic::sinh: return "sinh";
  case Intrinsic::cosh: return "cosh";
  case Intrinsic::tanh: return "tanh";
  case Intrinsic::asinh: return "asinh";
  case Intrinsic::acosh: return "acosh";
  case Intrinsic::atanh: return "atanh";
  case Intrinsic::floor: return "floor";
  case Intrinsic::ceil: return "ceil";
  case Intrinsic::round_even: return "round_even";
  case Intrinsic::trunc: return "trunc";
  case Intrinsic::abs: return "abs";
  case Intrinsic::sign: return "sign";
  case Intrinsic::fma: return "fma";
  case Intrinsic::erf: return "erf";
  case Intrinsic::isnan: return "isnan";
  case Intrinsic::isinf: return "isinf";
  case Intrinsic::div_exact: return "div_exact";
  }
  return "?";
}

const char *to_string(BuiltinKind b) {
  switch (b) {
  case BuiltinKind::global_id_x: return "global_id.x";
  case BuiltinKind::global_id_y: return "global_id.y";
  case BuiltinKind::global_id_z: return "global_id.z";
  case BuiltinKind::local_id_x: return "local_id.x";
  case BuiltinKind::local_id_y: return "local_id.y";
  case BuiltinKind::local_id_z: return "local_id.z";
  case BuiltinKind::workgroup_id_x: return "workgroup_id.x";
  case BuiltinKind::workgroup_id_y: return "workgroup_id.y";
  case BuiltinKind::workgroup_id_z: return "workgroup_id.z";
  // Dotted like the other builtins, so that no variable name can print the same.
  case BuiltinKind::subgroup_size: return "subgroup.size";
  case BuiltinKind::subgroup_invocation_id: return "subgroup.invocation_id";
  case BuiltinKind::subgroup_id: return "subgroup.id";
  case BuiltinKind::num_subgroups: return "subgroup.num_subgroups";
  }
  return "?";
}

const char *to_string(ReduceOp op) {
  switch (op) {
  case ReduceOp::add: return "add";
  case ReduceOp::mul: return "mul";
  case ReduceOp::min: return "min";
  case ReduceOp::max: return "max";
  }
  return "?";
}

const char *to_string(MatrixUse u) {
  switch (u) {
  case MatrixUse::a: return "a";
  case MatrixUse::b: return "b";
  case MatrixUse::accumulator: return "accumulator";
  }
  return "?";
}

const char *to_string(MatrixLayout l) {
  switch (l) {
  case MatrixLayout::row_major: return "row_major";
  case MatrixLayout::col_major: return "col_major";
  }
  return "?";
}

std::string to_string(const ValueType &t) {
  if (t.is_matrix())
    return std::string("coopmat<") + to_string(t.elem) + ", " + std::to_string(t.matrix.rows) +
           "x" + std::to_string(t.matrix.cols) + ", " + to_string(t.matrix.use) + ">";
  if (t.is_vector()) return std::string(to_string(t.elem)) + "x" + std::to_string(t.lanes);
  return to_string(t.elem);
}

ValueType ValueType::vector(ScalarType t, int lanes) {
  KILN_ASSERT(lanes >= 2 && lanes <= 4, "kir: vectors have 2 to 4 lanes");
  ValueType v(t);
  v.lanes = static_cast<uint8_t>(lanes);
  return v;
}

ValueType ValueType::coop_matrix(ScalarType component, uint32_t rows, uint32_t cols,
                                 MatrixUse use) {
  KILN_ASSERT(rows > 0 && cols > 0, "kir: empty cooperative matrix");
  KILN_ASSERT(is_float(component) || is_int(component),
              "kir: cooperative matrix component must be a number type");
  ValueType v(component);
  v.matrix = {rows, cols, use};
  return v;
}

const char *to_string(ExprKind k) {
  switch (k) {
#define KILN_KIR_NAME(K)                                                                       \
  case ExprKind::K: return #K;
    KILN_KIR_EXPR_KINDS(KILN_KIR_NAME)
#undef KILN_KIR_NAME
  }
  return "?";
}

const char *to_string(StmtKind k) {
  switch (k) {
#define KILN_KIR_NAME(K)                                                                       \
  case StmtKind::K: return #K;
    KILN_KIR_STMT_KINDS(KILN_KIR_NAME)
#undef KILN_KIR_NAME
  }
  return "?";
}

int arity(Intrinsic f) {
  if (f == Intrinsic::fma) return 3;
  if (f == Intrinsic::div_exact) return 2;
  return 1;
}

// ---- expression factories ----
namespace {

int64_t wrap_to(ScalarType t, int64_t v) {
  switch (t) {
  case ScalarType::boolean: return v != 0;
  case ScalarType::i8: return static_cast<int8_t>(v);
  case ScalarType::u8: return static_cast<uint8_t>(v);
  case ScalarType::i16: return static_cast<int16_t>(v);
  case ScalarType::u16: return static_cast<uint16_t>(v);
  case ScalarType::i32: return static_cast<int32_t>(v);
  case ScalarType::u32: return static_cast<uint32_t>(v);
  case ScalarType::i64:
  case ScalarType::u64: return v;
  case ScalarType::f16:
  case ScalarType::f32:
  case ScalarType::f64: break;
  }
  KILN_ASSERT(false, "kir: integer constant of a float type");
}


void check_not_matrix(const Expr &a, const char *what) {
  KILN_ASSERT(a.defined() && !a.is_matrix(), what);
}

// The type of a boolean result with a's lane count.
ValueType bool_like(const Expr &a) {
  ValueType t(ScalarType::boolean);
  t.lanes = static_cast<uint8_t>(a.lanes());
  return t;
}

ValueType with_elem(const Expr &a, ScalarType t) {
  ValueType v = a.value_type();
  v.elem = t;
  return v;
}

} // namespace

Expr imm(ScalarType t, int64_t v) {
  KILN_ASSERT(is_int(t) || t == ScalarType::boolean, "kir: imm needs an integer type");
  auto n = node<IntImm>(t);
  n->value = wrap_to(t, v);
  return Expr(n);
}

Expr fimm(ScalarType t, double v) {
  KILN_ASSERT(is_float(t), "kir: fimm needs a float type");
  auto n = node<FloatImm>(t);
  if (t == ScalarType::f32) v = static_cast<float>(v);
  if (t == ScalarType::f16) v = f16_to_f32(f32_to_f16(static_cast<float>(v)));
  n->value = v;
  return Expr(n);
}

Expr imm_bool(bool v) { return imm(ScalarType::boolean, v); }
Expr imm_i32(int32_t v) { return imm(ScalarType::i32, v); }
Expr imm_u32(uint32_t v) { return imm(ScalarType::u32, v); }
Expr imm_i64(int64_t v) { return imm(ScalarType::i64, v); }
Expr imm_f32(float v) { return fimm(ScalarType::f32, v); }

Expr make_const(ScalarType t, double v) {
  if (is_float(t)) return fimm(t, v);
  if (t == ScalarType::u64 && v >= 9223372036854775808.0)
    return imm(t, static_cast<int64_t>(static_cast<uint64_t>(v)));
  return imm(t, static_cast<int64_t>(v));
}

Expr var(std::string name, ScalarType t) { return var(std::move(name), ValueType(t)); }

Expr var(std::string name, const ValueType &t) {
  KILN_ASSERT(!name.empty(), "kir: variable without a name");
  auto n = node<Var>(t);
  n->name = std::move(name);
  return Expr(n);
}

Expr binary(BinOp op, Expr a, Expr b) {
  check_operands(a, b);
  ScalarType t = a.type();
  KILN_ASSERT(t != ScalarType::boolean, "kir: arithmetic on booleans");
  KILN_ASSERT(!a.is_matrix() || op == BinOp::add || op == BinOp::sub || op == BinOp::mul ||
                  op == BinOp::div,
              "kir: cooperative matrices take only add/sub/mul/div");
  switch (op) {
  case BinOp::add:
  case BinOp::sub:
  case BinOp::mul:
  case BinOp::div:
  case BinOp::mod:
  case BinOp::min:
  case BinOp::max: break;
  case BinOp::pow: KILN_ASSERT(is_float(t), "kir: pow needs floats"); break;
  case BinOp::bit_and:
  case BinOp::bit_or:
  case BinOp::bit_xor:
  case BinOp::shl:
  case BinOp::shr: KILN_ASSERT(is_int(t), "kir: bit operation needs integers"); break;
  }
  auto n = node<Binary>(a.value_type());
  n->op = op;
  n->a = std::move(a);
  n->b = std::move(b);
  return Expr(n);
}

Expr add(Expr a, Expr b) { return binary(BinOp::add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(BinOp::sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinOp::mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(BinOp::div, std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return binary(BinOp::mod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(BinOp::min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(BinOp::max, std::move(a), std::move(b)); }
Expr pow(Expr a, Expr b) { return binary(BinOp::pow, std::move(a), std::move(b)); }

Expr cmp(CmpOp op, Expr a, Expr b) {
  check_operands(a, b);
  check_not_matrix(a, "kir: comparison of cooperative matrices");
  KILN_ASSERT(a.type() != ScalarType::boolean || op == CmpOp::eq || op == CmpOp::ne,
              "kir: ordered comparison of booleans");
  auto n = node<Cmp>(bool_like(a));
  n->op = op;
  n->a = std::move(a);
  n->b = std::move(b);
  return Expr(n);
}

Expr logical_and(Expr a, Expr b) {
  check_operands(a, b);
  KILN_ASSERT(a.type() == ScalarType::boolean && !a.is_matrix(), "kir: && needs booleans");
  auto n = node<And>(a.value_type());
  n->a = std::move(a);
  n->b = std::move(b);
  return Expr(n);
}

Expr logical_or(Expr a, Expr b) {
  check_operands(a, b);
  KILN_ASSERT(a.type() == ScalarType::boolean && !a.is_matrix(), "kir: || needs booleans");
  auto n = node<Or>(a.value_type());
  n->a = std::move(a);
  n->b = std::move(b);
  return Expr(n);
}

Expr logical_not(Expr a) {
  KILN_ASSERT(a.defined() && a.type() == ScalarType::boolean, "kir: ! needs a boolean");
  auto n = node<Not>(a.value_type());
  n->a = std::move(a);
  return Expr(n);
}

Expr select(Expr cond, Expr t, Expr f) {
  KILN_ASSERT(cond.defined() && cond.type() == ScalarType::boolean,
              "kir: select needs a boolean condition");
  check_operands(t, f);
  check_not_matrix(t, "kir: select of cooperative matrices");
  KILN_ASSERT(cond.lanes() == 1 || cond.lanes() == t.lanes(),
              "kir: select condition lanes must be 1 or the operands' lanes");
  auto n = node<Select>(t.value_type());
  n->cond = std::move(cond);
  n->t = std::move(t);
  n->f = std::move(f);
  return Expr(n);
}

Expr cast(ScalarType t, Expr x) {
  KILN_ASSERT(x.defined(), "kir: cast of an undefined value");
  if (x.type() == t) return x;
  KILN_ASSERT(!x.is_matrix() || is_float(t) || is_int(t),
              "kir: cooperative matrix component must be a number type");
  auto n = node<Cast>(with_elem(x, t));
  n->value = std::move(x);
  return Expr(n);
}

Expr call(Intrinsic fn, std::vector<Expr> args) {
  KILN_ASSERT(static_cast<int>(args.size()) == arity(fn), "kir: wrong intrinsic arity");
  for (const Expr &a : args) check_operands(args[0], a);
  check_not_matrix(args[0], "kir: intrinsic on a cooperative matrix");
  ScalarType t = args[0].type();
  bool int_ok = fn == Intrinsic::abs || fn == Intrinsic::sign;
  KILN_ASSERT(is_float(t) || (int_ok && is_int(t)), "kir: intrinsic operand type");
  bool predicate = fn == Intrinsic::isnan || fn == Intrinsic::isinf;
  auto n = node<Call>(predicate ? bool_like(args[0]) : args[0].value_type());
  n->fn = fn;
  n->args = std::move(args);
  return Expr(n);
}

Expr load(BufferVar buf, Expr index) { return load(buf.index, buf.elem, std::move(index)); }

Expr load(int buffer, ScalarType elem, Expr index) {
  KILN_ASSERT(buffer >= 0, "kir: negative buffer index");
  KILN_ASSERT(is_index(index), "kir: load index must be i32/u32");
  auto n = node<Load>(elem);
  n->buffer = buffer;
  n->index = std::move(index);
  return Expr(n);
}

Expr builtin(BuiltinKind b) {
  auto n = node<Builtin>(ScalarType::u32);
  n->builtin = b;
  return Expr(n);
}

Expr global_id(int axis) {
  KILN_ASSERT(axis >= 0 && axis < 3, "kir: axis out of range");
  return builtin(static_cast<BuiltinKind>(static_cast<int>(BuiltinKind::global_id_x) + axis));
}
Expr local_id(int axis) {
  KILN_ASSERT(axis >= 0 && axis < 3, "kir: axis out of range");
  return builtin(static_cast<BuiltinKind>(static_cast<int>(BuiltinKind::local_id_x) + axis));
}
Expr workgroup_id(int axis) {
  KILN_ASSERT(axis >= 0 && axis < 3, "kir: axis out of range");
  return builtin(static_cast<BuiltinKind>(static_cast<int>(BuiltinKind::workgroup_id_x) + axis));
}

Expr push_const(int slot) {
  KILN_ASSERT(slot >= 0, "kir: negative push constant slot");
  auto n = node<PushConst>(ScalarType::u32);
  n->slot = slot;
  return Expr(n);
}

Expr load_shared(SharedVar array, Expr index) {
  return load_shared(array.index, array.elem, std::move(index));
}

Expr load_shared(int array, ScalarType elem, Expr index, int lanes) {
  KILN_ASSERT(array >= 0, "kir: negative shared array index");
  KILN_ASSERT(is_index(index),
              "kir: shared index must be i32/u32");
  KILN_ASSERT(lanes == 1 || lanes == 2 || lanes == 4, "kir: shared vector loads have 2 or 4 lanes");
  auto n = node<LoadShared>(elem);
  n->lanes = static_cast<uint8_t>(lanes);
  n->array = array;
  n->index = std::move(index);
  return Expr(n);
}

Expr load_shared_vector(SharedVar array, Expr index) {
  KILN_ASSERT(array.lanes > 1, "kir: load_shared_vector from a scalar shared array");
  return load_shared(array.index, array.elem, std::move(index), array.lanes);
}

// ---- operators ----
Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return mod(std::move(a), std::move(b)); }
Expr operator&(Expr a, Expr b) { return binary(BinOp::bit_and, std::move(a), std::move(b)); }
Expr operator|(Expr a, Expr b) { return binary(BinOp::bit_or, std::move(a), std::move(b)); }
Expr operator^(Expr a, Expr b) { return binary(BinOp::bit_xor, std::move(a), std::move(b)); }
Expr operator<<(Expr a, Expr b) { return binary(BinOp::shl, std::move(a), std::move(b)); }
Expr operator>>(Expr a, Expr b) { return binary(BinOp::shr, std::move(a), std::move(b)); }
Expr operator<(Expr a, Expr b) { return cmp(CmpOp::lt, std::move(a), std::move(b)); }
Expr operator<=(Expr a, Expr b) { return cmp(CmpOp::le, std::move(a), std::move(b)); }
Expr operator>(Expr a, Expr b) { return cmp(CmpOp::gt, std::move(a), std::move(b)); }
Expr operator>=(Expr a, Expr b) { return cmp(CmpOp::ge, std::move(a), std::move(b)); }
Expr operator==(Expr a, Expr b) { return cmp(CmpOp::eq, std::move(a), std::move(b)); }
Expr operator!=(Expr a, Expr b) { return cmp(CmpOp::ne, std::move(a), std::move(b)); }
Expr operator&&(Expr a, Expr b) { return logical_and(std::move(a), std::move(b)); }
Expr operator||(Expr a, Expr b) { return logical_or(std::move(a), std::move(b)); }
Expr operator!(Expr a) { return logical_not(std::move(a)); }
namespace {
// A constant of a's type (broadcast for vectors).
Expr like(const Expr &a, int64_t v) {
  KILN_ASSERT(a.defined() && !a.is_matrix(), "kir: undefined operand or matrix");
  Expr c = is_float(a.type()) ? fimm(a.type(), static_cast<double>(v)) : imm(a.type(), v);
  return a.is_vector() ? broadcast(c, a.lanes()) : c;
}
} // namespace

Expr operator-(Expr a) {
  Expr zero = like(a, 0);
  return sub(zero, std::move(a));
}

Expr operator+(Expr a, int64_t b) { return add(a, like(a, b)); }
Expr operator-(Expr a, int64_t b) { return sub(a, like(a, b)); }
Expr operator*(Expr a, int64_t b) { return mul(a, like(a, b)); }
Expr operator/(Expr a, int64_t b) { return div(a, like(a, b)); }
Expr operator%(Expr a, int64_t b) { return mod(a, like(a, b)); }
Expr operator<(Expr a, int64_t b) { return cmp(CmpOp::lt, a, like(a, b)); }
Expr operator<=(Expr a, int64_t b) { return cmp(CmpOp::le, a, like(a, b)); }
Expr operator>(Expr a, int64_t b) { return cmp(CmpOp::gt, a, like(a, b)); }
Expr operator>=(Expr a, int64_t b) { return cmp(CmpOp::ge, a, like(a, b)); }
Expr operator==(Expr a, int64_t b) { return cmp(CmpOp::eq, a, like(a, b)); }
Expr operator!=(Expr a, int64_t b) { return cmp(CmpOp::ne, a, like(a, b)); }

// ---- statement factories ----

Stmt store(BufferVar buf, Expr index, Expr value) {
  KILN_ASSERT(value.defined() && value.type() == buf.elem, "kir: stored value type");
  return store(buf.index, std::move(index), std::move(value));
}

Stmt store(int buffer, Expr index, Expr value) {
  KILN_ASSERT(buffer >= 0, "kir: negative buffer index");
  KILN_ASSERT(is_index(index), "kir: store index must be i32/u32");
  KILN_ASSERT(value.defined() && value.is_scalar(), "kir: stored value must be a scalar");
  auto n = stmt_node<Store>();
  n->buffer = buffer;
  n->index = std::move(index);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt for_loop(Expr v, Expr begin, Expr extent, Stmt body) {
  KILN_ASSERT(v.as<Var>() != nullptr, "kir: loop variable must be a Var");
  KILN_ASSERT(is_index(v), "kir: loop variable must be i32/u32");
  KILN_ASSERT(begin.defined() && begin.value_type() == v.value_type(), "kir: loop begin type");
  KILN_ASSERT(extent.defined() && extent.value_type() == v.value_type(), "kir: loop extent type");
  KILN_ASSERT(body.defined(), "kir: loop without a body");
  auto n = stmt_node<For>();
  n->var = std::move(v);
  n->begin = std::move(begin);
  n->extent = std::move(extent);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt if_then(Expr cond, Stmt then_case, Stmt else_case) {
  KILN_ASSERT(cond.defined() && cond.value_type() == ValueType(ScalarType::boolean),
              "kir: if needs a boolean");
  KILN_ASSERT(then_case.defined(), "kir: if without a then branch");
  auto n = stmt_node<If>();
  n->cond = std::move(cond);
  n->then_case = std::move(then_case);
  n->else_case = std::move(else_case);
  return Stmt(n);
}

Stmt let(Expr v, Expr value, Stmt body) {
  KILN_ASSERT(v.as<Var>() != nullptr, "kir: let binds a Var");
  KILN_ASSERT(value.defined() && value.value_type() == v.value_type(), "kir: let value type");
  KILN_ASSERT(body.defined(), "kir: let without a body");
  auto n = stmt_node<Let>();
  n->var = std::move(v);
  n->value = std::move(value);
  n->body = std::move(body);
  return Stmt(n);
}

Stmt declare_var(Expr v, Expr init) {
  KILN_ASSERT(v.as<Var>() != nullptr, "kir: declare_var declares a Var");
  KILN_ASSERT(init.defined() && init.value_type() == v.value_type(), "kir: declare_var init type");
  auto n = stmt_node<DeclareVar>();
  n->var = std::move(v);
  n->init = std::move(init);
  return Stmt(n);
}

Stmt assign(Expr v, Expr value) {
  KILN_ASSERT(v.as<Var>() != nullptr, "kir: assign to a Var");
  KILN_ASSERT(value.defined() && value.value_type() == v.value_type(), "kir: assigned value type");
  auto n = stmt_node<Assign>();
  n->var = std::move(v);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt block(std::vector<Stmt> stmts) {
  for (const Stmt &s : stmts) KILN_ASSERT(s.defined(), "kir: undefined statement in a block");
  auto n = stmt_node<Block>();
  n->stmts = std::move(stmts);
  return Stmt(n);
}

Stmt barrier() { return Stmt(stmt_node<Barrier>()); }

Stmt store_shared(SharedVar array, Expr index, Expr value) {
  KILN_ASSERT(value.defined() && value.type() == array.elem, "kir: stored value type");
  return store_shared(array.index, std::move(index), std::move(value));
}

Stmt store_shared(int array, Expr index, Expr value) {
  KILN_ASSERT(array >= 0, "kir: negative shared array index");
  KILN_ASSERT(is_index(index),
              "kir: shared index must be i32/u32");
  KILN_ASSERT(value.defined() && value.is_scalar(), "kir: stored value must be a scalar");
  auto n = stmt_node<StoreShared>();
  n->array = array;
  n->index = std::move(index);
  n->value = std::move(value);
  return Stmt(n);
}

// ---- kernels ----

BufferVar Kernel::add_buffer(std::string buf_name, ScalarType elem, bool readonly,
                             bool writeonly) {
  buffers.push_back({std::move(buf_name), elem, readonly, writeonly});
  return {static_cast<int>(buffers.size()) - 1, elem};
}

SharedVar Kernel::add_shared(std::string array_name, ScalarType elem, uint32_t count,
                             int lanes) {
  KILN_ASSERT(lanes == 1 || lanes == 2 || lanes == 4, "kir: shared arrays have 1, 2 or 4 lanes");
  KILN_ASSERT(count % static_cast<uint32_t>(lanes) == 0, "kir: shared count not a multiple of lanes");
  KILN_ASSERT(lanes == 1 || elem != ScalarType::boolean, "kir: vector shared arrays of bool");
  shared.push_back({std::move(array_name), elem, count, lanes});
  return {static_cast<int>(shared.size()) - 1, elem, lanes};
}

BufferVar Kernel::buffer(int i) const {
  KILN_ASSERT(i >= 0 && i < static_cast<int>(buffers.size()), "kir: buffer index");
  return {i, buffers[i].elem};
}

SharedVar Kernel::shared_array(int i) const {
  KILN_ASSERT(i >= 0 && i < static_cast<int>(shared.size()), "kir: shared array index");
  return {i, shared[i].elem, shared[i].lanes};
}

} // namespace kiln::kir
