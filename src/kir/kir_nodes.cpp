// Kernel IR: checked factories of the vector, subgroup and cooperative-matrix nodes.
#include "kir/kir.h"
#include "kir/kir_factory_util.h"

namespace kiln::kir {
using namespace detail;

namespace {

bool is_number(ScalarType t) { return is_float(t) || is_int(t); }

void check_matrix(const Expr &m, const char *what) {
  KILN_ASSERT(m.defined() && m.is_matrix(), what);
}

} // namespace

// ---- vectors ----

Expr vector_load(BufferVar buf, Expr index, int lanes) {
  return vector_load(buf.index, buf.elem, std::move(index), lanes);
}

Expr vector_load(int buffer, ScalarType elem, Expr index, int lanes) {
  KILN_ASSERT(buffer >= 0, "kir: negative buffer index");
  KILN_ASSERT(is_index(index), "kir: vector load index must be i32/u32");
  KILN_ASSERT(elem != ScalarType::boolean, "kir: vector load of booleans");
  auto n = node<VectorLoad>(ValueType::vector(elem, lanes));
  n->buffer = buffer;
  n->index = std::move(index);
  return Expr(n);
}

Expr broadcast(Expr scalar, int lanes) {
  KILN_ASSERT(scalar.defined() && scalar.is_scalar(), "kir: broadcast needs a scalar");
  auto n = node<Broadcast>(ValueType::vector(scalar.type(), lanes));
  n->value = std::move(scalar);
  return Expr(n);
}

Expr extract_lane(Expr vector, int lane) {
  KILN_ASSERT(vector.defined() && vector.is_vector(), "kir: extract_lane needs a vector");
  KILN_ASSERT(lane >= 0 && lane < vector.lanes(), "kir: lane out of range");
  auto n = node<ExtractLane>(vector.type());
  n->vector = std::move(vector);
  n->lane = lane;
  return Expr(n);
}

Expr make_vector(std::vector<Expr> elems) {
  KILN_ASSERT(elems.size() >= 2 && elems.size() <= 4, "kir: vectors have 2 to 4 lanes");
  for (const Expr &e : elems) {
    check_operands(elems[0], e);
    KILN_ASSERT(e.is_scalar(), "kir: make_vector takes scalars");
  }
  auto n = node<MakeVector>(ValueType::vector(elems[0].type(), static_cast<int>(elems.size())));
  n->elems = std::move(elems);
  return Expr(n);
}

// ---- subgroups ----

Expr subgroup_reduce(ReduceOp op, Expr value) {
  KILN_ASSERT(value.defined() && !value.is_matrix() && is_number(value.type()),
              "kir: subgroup_reduce needs a number scalar or vector");
  auto n = node<SubgroupReduce>(value.value_type());
  n->op = op;
  n->value = std::move(value);
  return Expr(n);
}

Expr subgroup_broadcast(Expr value, Expr lane) {
  KILN_ASSERT(value.defined() && !value.is_matrix(), "kir: subgroup_broadcast of a matrix");
  KILN_ASSERT(lane.defined() && lane.value_type() == ValueType(ScalarType::u32),
              "kir: subgroup lane must be u32");
  auto n = node<SubgroupBroadcast>(value.value_type());
  n->value = std::move(value);
  n->lane = std::move(lane);
  return Expr(n);
}

Expr subgroup_broadcast_first(Expr value) {
  KILN_ASSERT(value.defined() && !value.is_matrix(), "kir: subgroup_broadcast of a matrix");
  auto n = node<SubgroupBroadcast>(value.value_type());
  n->value = std::move(value);
  return Expr(n);
}

namespace {
Expr shuffle(ShuffleMode mode, Expr value, Expr lane) {
  KILN_ASSERT(value.defined() && !value.is_matrix(), "kir: subgroup_shuffle of a matrix");
  KILN_ASSERT(lane.defined() && lane.value_type() == ValueType(ScalarType::u32),
              "kir: subgroup lane must be u32");
  auto n = node<SubgroupShuffle>(value.value_type());
  n->mode = mode;
  n->value = std::move(value);
  n->lane = std::move(lane);
  return Expr(n);
}
} // namespace

Expr subgroup_shuffle(Expr value, Expr lane) {
  return shuffle(ShuffleMode::index, std::move(value), std::move(lane));
}
Expr subgroup_shuffle_xor(Expr value, Expr mask) {
  return shuffle(ShuffleMode::xor_mask, std::move(value), std::move(mask));
}
Expr subgroup_size() { return builtin(BuiltinKind::subgroup_size); }
Expr subgroup_invocation_id() { return builtin(BuiltinKind::subgroup_invocation_id); }
Expr subgroup_id() { return builtin(BuiltinKind::subgroup_id); }
Expr num_subgroups() { return builtin(BuiltinKind::num_subgroups); }

// ---- cooperative matrices ----

Expr matrix_load(const ValueType &type, BufferVar buf, Expr offset, Expr stride,
                 MatrixLayout layout) {
  KILN_ASSERT(buf.elem == type.elem, "kir: matrix_load component differs from the buffer's");
  return matrix_load(type, MemSpace::buffer, buf.index, std::move(offset), std::move(stride),
                     layout);
}

Expr matrix_load(const ValueType &type, SharedVar array, Expr offset, Expr stride,
                 MatrixLayout layout) {
  KILN_ASSERT(array.elem == type.elem, "kir: matrix_load component differs from the array's");
  return matrix_load(type, MemSpace::shared, array.index, std::move(offset), std::move(stride),
                     layout);
}

Expr matrix_load(const ValueType &type, MemSpace space, int target, Expr offset, Expr stride,
                 MatrixLayout layout) {
  KILN_ASSERT(type.is_matrix(), "kir: matrix_load needs a cooperative matrix type");
  KILN_ASSERT(target >= 0, "kir: negative buffer / shared array index");
  KILN_ASSERT(is_index(offset) && is_index(stride), "kir: matrix offset/stride must be i32/u32");
  auto n = node<MatrixLoad>(type);
  n->space = space;
  n->target = target;
  n->offset = std::move(offset);
  n->stride = std::move(stride);
  n->layout = layout;
  return Expr(n);
}

Expr matrix_mul_add(Expr a, Expr b, Expr c) {
  check_matrix(a, "kir: matrix_mul_add A must be a matrix");
  check_matrix(b, "kir: matrix_mul_add B must be a matrix");
  check_matrix(c, "kir: matrix_mul_add C must be a matrix");
  const MatrixShape &ma = a.get()->matrix, &mb = b.get()->matrix, &mc = c.get()->matrix;
  KILN_ASSERT(ma.use == MatrixUse::a && mb.use == MatrixUse::b &&
                  mc.use == MatrixUse::accumulator,
              "kir: matrix_mul_add operands must be A, B and accumulator matrices");
  KILN_ASSERT(ma.rows == mc.rows && mb.cols == mc.cols && ma.cols == mb.rows,
              "kir: matrix_mul_add shapes do not chain (MxK * KxN + MxN)");
  KILN_ASSERT(a.type() == b.type(), "kir: matrix_mul_add A and B components differ");
  KILN_ASSERT(is_float(a.type()) == is_float(c.type()),
              "kir: matrix_mul_add mixes integer and float components");
  auto n = node<MatrixMulAdd>(c.value_type());
  n->a = std::move(a);
  n->b = std::move(b);
  n->c = std::move(c);
  return Expr(n);
}

Expr matrix_fill(const ValueType &type, Expr value) {
  KILN_ASSERT(type.is_matrix(), "kir: matrix_fill needs a cooperative matrix type");
  KILN_ASSERT(value.defined() && value.value_type() == ValueType(type.elem),
              "kir: matrix_fill value must be a scalar of the component type");
  auto n = node<MatrixFill>(type);
  n->value = std::move(value);
  return Expr(n);
}

Expr matrix_scale(Expr matrix, Expr scale) {
  check_matrix(matrix, "kir: matrix_scale needs a matrix");
  KILN_ASSERT(is_float(matrix.type()), "kir: matrix_scale needs a float matrix");
  KILN_ASSERT(scale.defined() && scale.value_type() == ValueType(matrix.type()),
              "kir: matrix_scale factor must be a scalar of the component type");
  auto n = node<MatrixScale>(matrix.value_type());
  n->value = std::move(matrix);
  n->scale = std::move(scale);
  return Expr(n);
}

Expr matrix_length(const ValueType &type) {
  KILN_ASSERT(type.is_matrix(), "kir: matrix_length needs a cooperative matrix type");
  auto n = node<MatrixLength>(ScalarType::u32);
  n->of = type;
  return Expr(n);
}

// ---- statements ----

Stmt vector_store(BufferVar buf, Expr index, Expr value) {
  KILN_ASSERT(value.defined() && value.type() == buf.elem, "kir: stored value type");
  return vector_store(buf.index, std::move(index), std::move(value));
}

Stmt vector_store(int buffer, Expr index, Expr value) {
  KILN_ASSERT(buffer >= 0, "kir: negative buffer index");
  KILN_ASSERT(is_index(index), "kir: vector store index must be i32/u32");
  KILN_ASSERT(value.defined() && value.is_vector(), "kir: vector_store needs a vector");
  KILN_ASSERT(value.type() != ScalarType::boolean, "kir: vector store of booleans");
  auto n = stmt_node<VectorStore>();
  n->buffer = buffer;
  n->index = std::move(index);
  n->value = std::move(value);
  return Stmt(n);
}

Stmt matrix_store(BufferVar buf, Expr offset, Expr stride, MatrixLayout layout, Expr value) {
  KILN_ASSERT(value.defined() && value.type() == buf.elem, "kir: stored matrix component");
  return matrix_store(MemSpace::buffer, buf.index, std::move(offset), std::move(stride), layout,
                      std::move(value));
}

Stmt matrix_store(SharedVar array, Expr offset, Expr stride, MatrixLayout layout, Expr value) {
  KILN_ASSERT(value.defined() && value.type() == array.elem, "kir: stored matrix component");
  return matrix_store(MemSpace::shared, array.index, std::move(offset), std::move(stride), layout,
                      std::move(value));
}

Stmt matrix_store(MemSpace space, int target, Expr offset, Expr stride, MatrixLayout layout,
                  Expr value) {
  KILN_ASSERT(target >= 0, "kir: negative buffer / shared array index");
  KILN_ASSERT(is_index(offset) && is_index(stride), "kir: matrix offset/stride must be i32/u32");
  check_matrix(value, "kir: matrix_store needs a matrix");
  auto n = stmt_node<MatrixStore>();
  n->space = space;
  n->target = target;
  n->offset = std::move(offset);
  n->stride = std::move(stride);
  n->layout = layout;
  n->value = std::move(value);
  return Stmt(n);
}

} // namespace kiln::kir
