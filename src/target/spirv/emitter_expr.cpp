// SPIR-V emitter: types, constants, conversions and expressions.
#include "target/spirv/emitter_impl.h"
#include "target/spirv/spirv_khr.h"

#include "support/half.h"

#include <spirv/unified1/GLSL.std.450.h>

#include <cstring>

namespace kiln::spirv {

using kir::bits;
using kir::is_float;
using kir::is_signed_int;

namespace {

ScalarType int_type(int width, bool is_signed) {
  switch (width) {
  case 8: return is_signed ? ScalarType::i8 : ScalarType::u8;
  case 16: return is_signed ? ScalarType::i16 : ScalarType::u16;
  case 32: return is_signed ? ScalarType::i32 : ScalarType::u32;
  default: return is_signed ? ScalarType::i64 : ScalarType::u64;
  }
}

// The integer type of at least 32 bits that holds t's values with t's signedness.
ScalarType widened(ScalarType t) { return int_type(std::max(bits(t), 32), is_signed_int(t)); }

} // namespace

uint32_t Emitter::type_of(const ValueType &vt) {
  const ScalarType t = vt.elem;
  uint32_t scalar = t == ScalarType::boolean ? b_.type_bool()
                    : is_float(t)            ? b_.type_float(bits(t))
                                             : b_.type_int(bits(t), is_signed_int(t));
  if (vt.is_vector()) return b_.type_vector(scalar, vt.lanes);
  if (!vt.is_matrix()) return scalar;
  usage_.cooperative_matrix = true;
  uint32_t use = vt.matrix.use == kir::MatrixUse::a   ? khr::kUseA
                 : vt.matrix.use == kir::MatrixUse::b ? khr::kUseB
                                                      : khr::kUseAccumulator;
  return b_.type_cooperative_matrix(scalar, vt.matrix.rows, vt.matrix.cols, use);
}

uint32_t Emitter::storage_type_of(ScalarType t) {
  return t == ScalarType::boolean ? b_.type_int(8, false) : type_of(t);
}

void Emitter::use(ScalarType t, bool arithmetic) {
  switch (t) {
  case ScalarType::boolean: return; // in buffers as u8: the caller records that
  case ScalarType::i8:
  case ScalarType::u8: (arithmetic ? usage_.arith8 : usage_.storage8) = true; return;
  case ScalarType::i16:
  case ScalarType::u16: (arithmetic ? usage_.arith16 : usage_.storage16) = true; return;
  case ScalarType::f16: (arithmetic ? usage_.float16 : usage_.storage16) = true; return;
  case ScalarType::i64:
  case ScalarType::u64: usage_.int64 = true; return;
  case ScalarType::f64: usage_.float64 = true; return;
  case ScalarType::i32:
  case ScalarType::u32:
  case ScalarType::f32: return;
  }
}

uint32_t Emitter::int_constant(ScalarType t, int64_t v) {
  if (t == ScalarType::boolean) return b_.constant_bool(v != 0);
  use(t, true);
  uint64_t u = static_cast<uint64_t>(v);
  if (bits(t) == 64) return b_.constant(type_of(t), {uint32_t(u), uint32_t(u >> 32)});
  if (bits(t) < 32 && !is_signed_int(t)) u &= (1ull << bits(t)) - 1;
  return b_.constant(type_of(t), {uint32_t(u)});
}

uint32_t Emitter::constant(ScalarType t, double v) {
  if (!is_float(t)) return int_constant(t, static_cast<int64_t>(v));
  use(t, true);
  if (t == ScalarType::f16) return b_.constant(type_of(t), {f32_to_f16(static_cast<float>(v))});
  if (t == ScalarType::f32) return b_.constant(type_of(t), {f32_bits(static_cast<float>(v))});
  uint64_t u;
  std::memcpy(&u, &v, 8);
  return b_.constant(type_of(t), {uint32_t(u), uint32_t(u >> 32)});
}

// Conversions avoid arithmetic on 8- and 16-bit types where they can (so that storage-only
// use of those types needs only the storage capabilities): narrow integers are widened to
// 32 bits before comparisons and float conversions, f16 goes through f32.
uint32_t Emitter::convert(uint32_t v, ScalarType from, ScalarType to) {
  if (from == to) return v;
  use(from, false);
  use(to, false);
  if (to == ScalarType::boolean) {
    if (from == ScalarType::f16) return convert(convert(v, from, ScalarType::f32), ScalarType::f32, to);
    if (is_float(from))
      return op(spv::OpFUnordNotEqual, to, {v, constant(from, 0)});
    if (bits(from) < 32) return convert(convert(v, from, widened(from)), widened(from), to);
    return op(spv::OpINotEqual, to, {v, int_constant(from, 0)});
  }
  if (from == ScalarType::boolean) {
    ScalarType wide = to == ScalarType::f16 ? ScalarType::f32 : is_float(to) ? to : widened(to);
    return convert(op(spv::OpSelect, wide, {v, constant(wide, 1), constant(wide, 0)}), wide, to);
  }
  if (is_float(from) && is_float(to)) return op(spv::OpFConvert, to, {v});
  if (!is_float(from) && !is_float(to)) {
    if (bits(from) == bits(to)) {
      use(to, true); // a same-width bitcast is an operation on the narrow type
      return op(spv::OpBitcast, to, {v});
    }
    if (bits(from) > bits(to)) // truncation: the result's signedness picks the opcode
      return op(is_signed_int(to) ? spv::OpSConvert : spv::OpUConvert, to, {v});
    if (is_signed_int(from)) return op(spv::OpSConvert, to, {v}); // sign extension
    ScalarType mid = int_type(bits(to) < 32 ? 32 : bits(to), false);
    uint32_t z = op(spv::OpUConvert, mid, {v}); // zero extension
    if (mid == to) return z;
    if (bits(to) < 32) return op(spv::OpSConvert, to, {z});
    return op(spv::OpBitcast, to, {z});
  }
  if (!is_float(from)) { // int -> float
    if (bits(from) < 32) return convert(convert(v, from, widened(from)), widened(from), to);
    ScalarType mid = to == ScalarType::f16 ? ScalarType::f32 : to;
    uint32_t f = op(is_signed_int(from) ? spv::OpConvertSToF : spv::OpConvertUToF, mid, {v});
    return convert(f, mid, to);
  }
  // float -> int
  if (from == ScalarType::f16) return convert(convert(v, from, ScalarType::f32), ScalarType::f32, to);
  ScalarType mid = bits(to) < 32 ? int_type(32, is_signed_int(to)) : to;
  uint32_t i = op(is_signed_int(to) ? spv::OpConvertFToS : spv::OpConvertFToU, mid, {v});
  return convert(i, mid, to);
}

uint32_t Emitter::expr(const kir::Expr &e) {
  switch (e.kind()) {
#define KILN_SPIRV_DISPATCH(K)                                                                 \
  case kir::ExprKind::K: return expr_node(e.as<kir::K>());
    KILN_KIR_EXPR_KINDS(KILN_SPIRV_DISPATCH)
#undef KILN_SPIRV_DISPATCH
  }
  return 0;
}

uint32_t Emitter::expr_node(const kir::IntImm *n) { return int_constant(n->type, n->value); }
uint32_t Emitter::expr_node(const kir::FloatImm *n) { return constant(n->type, n->value); }

uint32_t Emitter::expr_node(const kir::Var *n) {
  auto it = vars_.find(n->name);
  if (it == vars_.end() || it->second.empty()) {
    fail("variable '" + n->name + "' used out of scope");
    return int_constant(ScalarType::u32, 0);
  }
  const Binding &b = it->second.back();
  if (!b.is_pointer) return b.id;
  use(n->type, true);
  return op(spv::OpLoad, n->value_type(), {b.id});
}

uint32_t Emitter::expr_node(const kir::Binary *n) {
  const ValueType t = n->value_type();
  uint32_t a = expr(n->a), b = expr(n->b);
  use(t.elem, true);
  bool f = is_float(t.elem), s = is_signed_int(t.elem);
  switch (n->op) {
  case kir::BinOp::add: return op(f ? spv::OpFAdd : spv::OpIAdd, t, {a, b});
  case kir::BinOp::sub: return op(f ? spv::OpFSub : spv::OpISub, t, {a, b});
  case kir::BinOp::mul: return op(f ? spv::OpFMul : spv::OpIMul, t, {a, b});
  case kir::BinOp::div:
    if (s && !t.is_matrix())
      return signed_div_rem(t, a, b, true, non_negative(n->a) && non_negative(n->b));
    return op(f ? spv::OpFDiv : spv::OpUDiv, t, {a, b});
  case kir::BinOp::mod:
    if (s && !t.is_matrix())
      return signed_div_rem(t, a, b, false, non_negative(n->a) && non_negative(n->b));
    return op(f ? spv::OpFRem : spv::OpUMod, t, {a, b});
  case kir::BinOp::min:
    return glsl(t, f ? GLSLstd450FMin : s ? GLSLstd450SMin : GLSLstd450UMin, {a, b});
  case kir::BinOp::max:
    return glsl(t, f ? GLSLstd450FMax : s ? GLSLstd450SMax : GLSLstd450UMax, {a, b});
  case kir::BinOp::pow:
    return per_lane(t, {a, b}, {t.elem, t.elem}, [&](const Words &v) {
      return pow(v[0], v[1], t.elem);
    });
  case kir::BinOp::bit_and: return op(spv::OpBitwiseAnd, t, {a, b});
  case kir::BinOp::bit_or: return op(spv::OpBitwiseOr, t, {a, b});
  case kir::BinOp::bit_xor: return op(spv::OpBitwiseXor, t, {a, b});
  case kir::BinOp::shl: return op(spv::OpShiftLeftLogical, t, {a, b});
  case kir::BinOp::shr:
    return op(s ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical, t, {a, b});
  }
  return 0;
}

// Signed division and remainder with C's semantics (quotient truncated toward zero, remainder
// with the dividend's sign). Vulkan leaves OpSRem and OpSMod undefined for negative operands
// (NVIDIA's driver returns other values than lavapipe). Operands known to be non-negative (the
// index arithmetic of nearly every kernel) divide as unsigned, which is exact there and the
// cheapest form; otherwise the quotient is OpSDiv (truncating) and the remainder
// a - (a / b) * b. (Taking every remainder as a - (a / b) * b cost 18% on resnet50 and
// bert-base on the H200, whose kernels divide indices by constants in their inner loops.)
uint32_t Emitter::signed_div_rem(const ValueType &t, uint32_t a, uint32_t b, bool quotient,
                                 bool non_negative) {
  if (non_negative && !t.is_vector()) {
    const ScalarType ut = int_type(bits(t.elem), false);
    uint32_t r = op(quotient ? spv::OpUDiv : spv::OpUMod, ut,
                    {op(spv::OpBitcast, ut, {a}), op(spv::OpBitcast, ut, {b})});
    return op(spv::OpBitcast, t, {r});
  }
  const uint32_t q = op(spv::OpSDiv, t, {a, b});
  if (quotient) return q;
  return op(spv::OpISub, t, {a, op(spv::OpIMul, t, {q, b})});
}

bool Emitter::non_negative(const kir::Expr &e) const {
  if (e.is_vector() || e.is_matrix()) return false;
  switch (e.kind()) {
  case kir::ExprKind::IntImm: return e.as<kir::IntImm>()->value >= 0;
  case kir::ExprKind::Var: {
    auto it = vars_.find(e.as<kir::Var>()->name);
    return it != vars_.end() && !it->second.empty() && it->second.back().non_negative;
  }
  case kir::ExprKind::Binary: {
    const kir::Binary *n = e.as<kir::Binary>();
    switch (n->op) {
    case kir::BinOp::add:
    case kir::BinOp::mul:
    case kir::BinOp::div:
    case kir::BinOp::mod:
    case kir::BinOp::min:
    case kir::BinOp::bit_or:
    case kir::BinOp::shl:
    case kir::BinOp::shr: return non_negative(n->a) && non_negative(n->b);
    case kir::BinOp::max: return non_negative(n->a) || non_negative(n->b);
    case kir::BinOp::bit_and: return non_negative(n->a) || non_negative(n->b);
    default: return false;
    }
  }
  case kir::ExprKind::Select: {
    const kir::Select *n = e.as<kir::Select>();
    return non_negative(n->t) && non_negative(n->f);
  }
  case kir::ExprKind::Cast: {
    const kir::Expr &v = e.as<kir::Cast>()->value;
    if (kir::is_float(v.type()) || v.type() == ScalarType::boolean) return false;
    if (kir::is_signed_int(v.type())) return non_negative(v);
    // Unsigned sources: builtins (ids, counts) and push constants (sizes) are far below
    // 2^31; so is a narrower unsigned value.
    return bits(v.type()) < bits(e.type()) || v.kind() == kir::ExprKind::Builtin ||
           v.kind() == kir::ExprKind::PushConst;
  }
  default: return false;
  }
}

// div_exact on f32 where the target says OpFDiv is not correctly rounded: a / b from f64 multiplications and additions (which Vulkan rounds
// correctly; its OpFDiv may be 2.5 ULP off): y0 = 1/b in f32, two Newton steps
// y += y (1 - b y) in f64 (relative error ~2^-84 plus a few f64 roundings), q = a y. An f64
// quotient within 2^-50 (relative) rounds to the correctly rounded f32 quotient, since a
// quotient of 24-bit significands that is not an f32 midpoint lies at least 2^-48 away from
// one. Divisors whose f32 reciprocal is not normal (0, inf, NaN, |b| outside
// [2^-125, 2^125]) take the plain f32 division, as do lanes whose refined quotient is not
// finite.
uint32_t Emitter::correctly_rounded_fdiv(uint32_t a, uint32_t b) {
  const ScalarType f = ScalarType::f32, d = ScalarType::f64, cond = ScalarType::boolean;
  use(d, true);
  const uint32_t plain = op(spv::OpFDiv, f, {a, b});
  const uint32_t a64 = op(spv::OpFConvert, d, {a}), b64 = op(spv::OpFConvert, d, {b});
  uint32_t y = op(spv::OpFConvert, d, {op(spv::OpFDiv, f, {constant(f, 1.0), b})});
  for (int step = 0; step < 2; ++step) {
    uint32_t e = op(spv::OpFSub, d, {constant(d, 1.0), op(spv::OpFMul, d, {b64, y})});
    y = op(spv::OpFAdd, d, {y, op(spv::OpFMul, d, {y, e})});
  }
  const uint32_t q = op(spv::OpFConvert, f, {op(spv::OpFMul, d, {a64, y})});
  const uint32_t ab = glsl(f, GLSLstd450FAbs, {b});
  auto both = [&](uint32_t x, uint32_t y2) { return op(spv::OpLogicalAnd, cond, {x, y2}); };
  uint32_t ok = both(op(spv::OpFOrdGreaterThanEqual, cond, {ab, constant(f, 0x1p-125)}),
                     op(spv::OpFOrdLessThanEqual, cond, {ab, constant(f, 0x1p125)}));
  uint32_t special = op(spv::OpLogicalOr, cond,
                        {op(spv::OpIsNan, cond, {q}), op(spv::OpIsInf, cond, {q})});
  ok = both(ok, op(spv::OpLogicalNot, cond, {special}));
  return op(spv::OpSelect, f, {ok, q, plain});
}

uint32_t Emitter::expr_node(const kir::Cmp *n) {
  ScalarType t = n->a.type();
  uint32_t a = expr(n->a), b = expr(n->b);
  use(t, true);
  static const spv::Op kFloat[] = {spv::OpFOrdEqual,    spv::OpFUnordNotEqual,
                                   spv::OpFOrdLessThan, spv::OpFOrdLessThanEqual,
                                   spv::OpFOrdGreaterThan, spv::OpFOrdGreaterThanEqual};
  static const spv::Op kSigned[] = {spv::OpIEqual,       spv::OpINotEqual,
                                    spv::OpSLessThan,    spv::OpSLessThanEqual,
                                    spv::OpSGreaterThan, spv::OpSGreaterThanEqual};
  static const spv::Op kUnsigned[] = {spv::OpIEqual,       spv::OpINotEqual,
                                      spv::OpULessThan,    spv::OpULessThanEqual,
                                      spv::OpUGreaterThan, spv::OpUGreaterThanEqual};
  static const spv::Op kBool[] = {spv::OpLogicalEqual, spv::OpLogicalNotEqual};
  int i = static_cast<int>(n->op);
  spv::Op o = t == ScalarType::boolean ? kBool[i]
              : is_float(t)            ? kFloat[i]
              : is_signed_int(t)       ? kSigned[i]
                                       : kUnsigned[i];
  return op(o, n->value_type(), {a, b});
}

uint32_t Emitter::expr_node(const kir::And *n) {
  uint32_t a = expr(n->a), b = expr(n->b);
  return op(spv::OpLogicalAnd, n->value_type(), {a, b});
}

uint32_t Emitter::expr_node(const kir::Or *n) {
  uint32_t a = expr(n->a), b = expr(n->b);
  return op(spv::OpLogicalOr, n->value_type(), {a, b});
}

uint32_t Emitter::expr_node(const kir::Not *n) {
  return op(spv::OpLogicalNot, n->value_type(), {expr(n->a)});
}

uint32_t Emitter::expr_node(const kir::Select *n) {
  uint32_t c = expr(n->cond), t = expr(n->t), f = expr(n->f);
  use(n->type, true);
  return op(spv::OpSelect, n->value_type(), {c, t, f});
}

uint32_t Emitter::expr_node(const kir::Cast *n) {
  const ScalarType from = n->value.type(), to = n->type;
  uint32_t v = expr(n->value);
  if (n->value.is_matrix()) return convert_matrix(v, from, n->value_type());
  return per_lane(n->value_type(), {v}, {from},
                  [&](const Words &x) { return convert(x[0], from, to); });
}

uint32_t Emitter::expr_node(const kir::Call *n) { return call(n); }

uint32_t Emitter::buffer_pointer(int buffer, const kir::Expr &index) {
  ScalarType elem = k_.buffers[buffer].elem;
  uint32_t ptr = b_.type_pointer(spv::StorageClassStorageBuffer, storage_type_of(elem));
  uint32_t i = expr(index);
  return b_.emit_result(spv::OpAccessChain, ptr, {buffers_[buffer], b_.constant_u32(0), i});
}

uint32_t Emitter::shared_pointer(int array, const kir::Expr &index, int lanes) {
  const kir::SharedArray &s = k_.shared[array];
  const uint32_t pointee = lanes > 1 ? type_of(ValueType::vector(s.elem, lanes)) : type_of(s.elem);
  uint32_t ptr = b_.type_pointer(spv::StorageClassWorkgroup, pointee);
  uint32_t i = expr(index);
  if (s.lanes == 1) return b_.emit_result(spv::OpAccessChain, ptr, {shared_[array], i});
  // Vector storage: element i is lane i % lanes of vector i / lanes.
  const ScalarType it = index.type();
  const uint32_t shift = int_constant(it, s.lanes == 4 ? 2 : 1);
  const uint32_t v = op(kir::is_signed_int(it) ? spv::OpShiftRightArithmetic
                                               : spv::OpShiftRightLogical, it, {i, shift});
  if (lanes > 1) return b_.emit_result(spv::OpAccessChain, ptr, {shared_[array], v});
  const uint32_t lane = op(spv::OpBitwiseAnd, it, {i, int_constant(it, s.lanes - 1)});
  return b_.emit_result(spv::OpAccessChain, ptr, {shared_[array], v, lane});
}

uint32_t Emitter::expr_node(const kir::Load *n) {
  uint32_t ptr = buffer_pointer(n->buffer, n->index);
  if (n->type != ScalarType::boolean) return op(spv::OpLoad, n->type, {ptr});
  uint32_t byte = b_.emit_result(spv::OpLoad, storage_type_of(n->type), {ptr});
  return convert(byte, ScalarType::u8, ScalarType::boolean);
}

uint32_t Emitter::expr_node(const kir::Builtin *n) {
  switch (n->builtin) {
  case kir::BuiltinKind::subgroup_size: return subgroup_builtin(spv::BuiltInSubgroupSize);
  case kir::BuiltinKind::subgroup_invocation_id:
    return subgroup_builtin(spv::BuiltInSubgroupLocalInvocationId);
  case kir::BuiltinKind::subgroup_id: return subgroup_builtin(spv::BuiltInSubgroupId);
  case kir::BuiltinKind::num_subgroups: return subgroup_builtin(spv::BuiltInNumSubgroups);
  case kir::BuiltinKind::global_id_x:
  case kir::BuiltinKind::global_id_y:
  case kir::BuiltinKind::global_id_z:
  case kir::BuiltinKind::local_id_x:
  case kir::BuiltinKind::local_id_y:
  case kir::BuiltinKind::local_id_z:
  case kir::BuiltinKind::workgroup_id_x:
  case kir::BuiltinKind::workgroup_id_y:
  case kir::BuiltinKind::workgroup_id_z: break;
  }
  int b = static_cast<int>(n->builtin);
  uint32_t v3 = b_.type_vector(type_of(ScalarType::u32), 3);
  uint32_t vec = b_.emit_result(spv::OpLoad, v3, {builtin_var(b / 3)});
  return op(spv::OpCompositeExtract, ScalarType::u32, {vec, static_cast<uint32_t>(b % 3)});
}

uint32_t Emitter::expr_node(const kir::PushConst *n) {
  uint32_t ptr = b_.type_pointer(spv::StorageClassPushConstant, type_of(ScalarType::u32));
  uint32_t chain = b_.emit_result(spv::OpAccessChain, ptr,
                                  {push_constants_, b_.constant_u32(0),
                                   b_.constant_u32(static_cast<uint32_t>(n->slot))});
  return op(spv::OpLoad, ScalarType::u32, {chain});
}

uint32_t Emitter::expr_node(const kir::LoadShared *n) {
  if (n->lanes > 1) use(n->type, true);
  return op(spv::OpLoad, n->value_type(), {shared_pointer(n->array, n->index, n->lanes)});
}

} // namespace kiln::spirv
