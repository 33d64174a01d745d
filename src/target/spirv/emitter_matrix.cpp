// SPIR-V emitter: cooperative matrices (SPV_KHR_cooperative_matrix, subgroup scope).
//
// Loads and stores take a pointer to the first element (an access chain to element `offset`
// of the buffer's or shared array's scalar array), so the stride operand counts elements of
// that scalar type. A module using any of these declares the CooperativeMatrixKHR capability,
// the extension and the Vulkan memory model (add_capabilities).
#include "target/spirv/emitter_impl.h"
#include "target/spirv/spirv_khr.h"

#include <fmt/format.h>

namespace kiln::spirv {

using kir::is_float;
using kir::is_signed_int;

namespace {

uint32_t layout_of(kir::MatrixLayout l) {
  return l == kir::MatrixLayout::row_major ? khr::kRowMajor : khr::kColumnMajor;
}

} // namespace

// Vulkan wants a cooperative-matrix access's offset and stride in whole 16-byte units; constant
// ones are checked here (the kernel IR allows any: the C backend's matrices take them all).
void Emitter::check_matrix_alignment(kir::ScalarType t, const kir::Expr &offset,
                                     const kir::Expr &stride) {
  for (const kir::Expr *e : {&offset, &stride})
    if (const auto *c = e->as<kir::IntImm>(); c && (c->value * kir::storage_bytes(t)) % 16 != 0)
      fail(fmt::format("cooperative-matrix {} {} ({} bytes) is not a multiple of 16 bytes",
                       e == &offset ? "offset" : "stride", c->value,
                       c->value * kir::storage_bytes(t)));
}

uint32_t Emitter::matrix_pointer(kir::MemSpace space, int target, const kir::Expr &offset) {
  usage_.cooperative_matrix = true;
  return space == kir::MemSpace::buffer ? buffer_pointer(target, offset)
                                        : shared_pointer(target, offset);
}

uint32_t Emitter::expr_node(const kir::MatrixLoad *n) {
  use(n->type, true);
  check_matrix_alignment(n->type, n->offset, n->stride);
  uint32_t ptr = matrix_pointer(n->space, n->target, n->offset);
  uint32_t stride = expr(n->stride);
  return op(khr::OpCooperativeMatrixLoad, n->value_type(),
            {ptr, b_.constant_u32(layout_of(n->layout)), stride});
}

void Emitter::stmt_node(const kir::MatrixStore *n) {
  check_matrix_alignment(n->value.type(), n->offset, n->stride);
  uint32_t ptr = matrix_pointer(n->space, n->target, n->offset);
  uint32_t stride = expr(n->stride);
  uint32_t v = expr(n->value);
  b_.emit(khr::OpCooperativeMatrixStore, {ptr, v, b_.constant_u32(layout_of(n->layout)), stride});
}

// Whether the target offers a * b + c with these shapes and component types.
bool Emitter::offers_mul_add(const kir::MatrixMulAdd *n) const {
  if (t_.cooperative_matrix_shapes.empty()) return true;
  const kir::MatrixShape &ma = n->a.get()->matrix, &mb = n->b.get()->matrix;
  for (const kir::CoopMatrixShape &s : t_.cooperative_matrix_shapes)
    if (s.m == ma.rows && s.k == ma.cols && s.n == mb.cols && s.a == n->a.type() &&
        s.b == n->b.type() && s.c == n->c.type() && s.result == n->type)
      return true;
  return false;
}

uint32_t Emitter::expr_node(const kir::MatrixMulAdd *n) {
  if (!offers_mul_add(n))
    fail(fmt::format("cooperative-matrix multiply-add {}x{}x{} {} x {} + {} is not among the "
                     "shapes target '{}' offers",
                     n->a.get()->matrix.rows, n->b.get()->matrix.cols, n->a.get()->matrix.cols,
                     kir::to_string(n->a.type()), kir::to_string(n->b.type()),
                     kir::to_string(n->c.type()), t_.name));
  uint32_t a = expr(n->a), b = expr(n->b), c = expr(n->c);
  use(n->a.type(), true);
  use(n->type, true);
  uint32_t operands = 0; // signedness of integer components
  if (is_signed_int(n->a.type())) operands |= khr::kASigned;
  if (is_signed_int(n->b.type())) operands |= khr::kBSigned;
  if (is_signed_int(n->c.type())) operands |= khr::kCSigned | khr::kResultSigned;
  Words ops = {a, b, c};
  if (operands) ops.push_back(operands);
  return op(khr::OpCooperativeMatrixMulAdd, n->value_type(), ops);
}

uint32_t Emitter::expr_node(const kir::MatrixFill *n) {
  uint32_t v = expr(n->value);
  use(n->type, true);
  // A cooperative matrix is constructed from exactly one constituent, replicated.
  return op(spv::OpCompositeConstruct, n->value_type(), {v});
}

uint32_t Emitter::expr_node(const kir::MatrixScale *n) {
  uint32_t m = expr(n->value), s = expr(n->scale);
  use(n->type, true);
  return op(spv::OpMatrixTimesScalar, n->value_type(), {m, s});
}

uint32_t Emitter::expr_node(const kir::MatrixLength *n) {
  return op(khr::OpCooperativeMatrixLength, ScalarType::u32, {type_of(n->of)});
}

// Component conversion of a matrix (same shape and use).
uint32_t Emitter::convert_matrix(uint32_t v, ScalarType from, const ValueType &to) {
  use(from, true);
  use(to.elem, true);
  const ScalarType t = to.elem;
  spv::Op o;
  if (is_float(from) && is_float(t)) o = spv::OpFConvert;
  else if (is_float(from)) o = is_signed_int(t) ? spv::OpConvertFToS : spv::OpConvertFToU;
  else if (is_float(t)) o = is_signed_int(from) ? spv::OpConvertSToF : spv::OpConvertUToF;
  else o = is_signed_int(from) ? spv::OpSConvert : spv::OpUConvert;
  return op(o, to, {v});
}

} // namespace kiln::spirv
