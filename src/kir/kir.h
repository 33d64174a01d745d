// Kernel IR: a small SIMT/loop language describing one compute dispatch.
//
// Expressions (Expr) and statements (Stmt) are immutable nodes behind shared value handles.
// Node kinds come from the X-macro lists below; switches over kinds have no `default:` so a
// new kind fails to compile where it is not handled. Nodes are built only through the
// factory functions, which check operand types and abort (KILN_ASSERT) on misuse: the
// compiler, not the model, is responsible for well-typed kernel IR.
//
// Semantics worth knowing:
// - Integer div truncates toward zero and mod takes the sign of the dividend (C semantics);
//   float mod is fmod. shr is arithmetic for signed types, logical for unsigned ones.
// - Float min/max with a NaN operand may return either operand (device dependent); guard
//   with isnan where NaN propagation matters. Float `!=` is true for NaN, other float
//   comparisons are false. Casts to boolean test `!= 0`; float -> int casts truncate and
//   are undefined out of range. pow follows C for negative and zero bases.
// - div_exact(a, b) is float a / b correctly rounded, as C and CUDA's default divide (the
//   operator `/` may be off by a few ULPs where the target allows it: Vulkan's OpFDiv may be
//   2.5 ULP off). The graph's Div and quantisation use it.
// - Math intrinsics other than sqrt/rsqrt/floor/ceil/round_even/trunc/abs/sign/fma/isnan/
//   isinf have no f64 form on Vulkan: the SPIR-V emitter reports an error for them.
// - Loads and stores use element indices (i32 or u32). Buffers of `boolean` hold one byte
//   per element (0 or 1); loads and stores convert.
// - Variables are identified by name. For, Let and DeclareVar bind a name; DeclareVar's
//   scope is the rest of its enclosing Block. Only DeclareVar variables may be Assigned.
// - Values are scalars, vectors of 2-4 lanes of one scalar type, or cooperative matrices
//   (ValueType). Expr::type() is the scalar (lane / component) type of every value; lanes()
//   and matrix() tell the rest. Arithmetic (Binary, Cmp, And/Or/Not, Select, Cast, Call) is
//   elementwise on vectors of equal lanes; on cooperative matrices only add/sub/mul/div of two
//   matrices of one type, Cast of the component type and MatrixScale exist.
// - VectorLoad/VectorStore take the element index of the first lane, which must be a multiple
//   of the lane count (the access is one aligned 8- or 16-byte access for 2 and 4 lanes).
// - Subgroup operations and cooperative-matrix operations must be reached by every invocation
//   of the subgroup (uniform control flow); cooperative-matrix offsets and strides are in
//   elements of the buffer / shared array, and should be 16-byte multiples.
#pragma once

#include "support/status.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::kir {

enum class ScalarType { boolean, i8, u8, i16, u16, i32, u32, i64, u64, f16, f32, f64 };

const char *to_string(ScalarType t);
bool is_float(ScalarType t);
bool is_int(ScalarType t); // integer types, not boolean
bool is_signed_int(ScalarType t);
bool is_unsigned_int(ScalarType t);
int bits(ScalarType t); // boolean: 1
int storage_bytes(ScalarType t); // bytes per element in a buffer (boolean: 1)

enum class BinOp { add, sub, mul, div, mod, min, max, pow, bit_and, bit_or, bit_xor, shl, shr };
enum class CmpOp { eq, ne, lt, le, gt, ge };
enum class Intrinsic {
  exp, log, sqrt, rsqrt, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh,
  atanh, floor, ceil, round_even, trunc, abs, sign, fma, erf, isnan, isinf, div_exact
};
enum class BuiltinKind {
  global_id_x, global_id_y, global_id_z, local_id_x, local_id_y, local_id_z,
  workgroup_id_x, workgroup_id_y, workgroup_id_z,
  subgroup_size, subgroup_invocation_id, subgroup_id, num_subgroups
};
// Combiners of SubgroupReduce.
enum class ReduceOp { add, mul, min, max };
enum class ShuffleMode { index, xor_mask };
// Cooperative-matrix operand roles (SPIR-V CooperativeMatrixUse) and memory layouts.
enum class MatrixUse { a, b, accumulator };
enum class MatrixLayout { row_major, col_major };
// Where a cooperative matrix is loaded from / stored to.
enum class MemSpace { buffer, shared };

// A cooperative matrix of subgroup scope: component type (in ValueType::elem), rows x cols,
// use. rows == 0 means "not a matrix".
struct MatrixShape {
  uint32_t rows = 0, cols = 0;
  MatrixUse use = MatrixUse::a;
  bool operator==(const MatrixShape &o) const = default;
};

// The full type of a value: a scalar (lanes 1), a vector (lanes 2..4) or a cooperative
// matrix (matrix.rows > 0, lanes 1). Implicitly built from a ScalarType.
struct ValueType {
  ScalarType elem = ScalarType::i32;
  uint8_t lanes = 1;
  MatrixShape matrix;
  ValueType() = default;
  ValueType(ScalarType t) : elem(t) {} // NOLINT: a scalar type is a value type
  static ValueType vector(ScalarType t, int lanes);
  static ValueType coop_matrix(ScalarType component, uint32_t rows, uint32_t cols,
                               MatrixUse use);
  bool is_scalar() const { return lanes == 1 && matrix.rows == 0; }
  bool is_vector() const { return lanes > 1; }
  bool is_matrix() const { return matrix.rows > 0; }
  bool operator==(const ValueType &o) const = default;
};

const char *to_string(BinOp op);
const char *to_string(CmpOp op);
const char *to_string(Intrinsic f);
const char *to_string(BuiltinKind b);
const char *to_string(ReduceOp op);
const char *to_string(MatrixUse u);
const char *to_string(MatrixLayout l);
// "f32", "f32x4", "coopmat<f16, 16x16, a>".
std::string to_string(const ValueType &t);
int arity(Intrinsic f);

#define KILN_KIR_EXPR_KINDS(X)                                                                 \
  X(IntImm)                                                                                    \
  X(FloatImm)                                                                                  \
  X(Var)                                                                                       \
  X(Binary)                                                                                    \
  X(Cmp)                                                                                       \
  X(And)                                                                                       \
  X(Or)                                                                                        \
  X(Not)                                                                                       \
  X(Select)                                                                                    \
  X(Cast)                                                                                      \
  X(Call)                                                                                      \
  X(Load)                                                                                      \
  X(Builtin)                                                                                   \
  X(PushConst)                                                                                 \
  X(LoadShared)                                                                                \
  X(VectorLoad)                                                                                \
  X(Broadcast)                                                                                 \
  X(ExtractLane)                                                                               \
  X(MakeVector)                                                                                \
  X(SubgroupReduce)                                                                            \
  X(SubgroupBroadcast)                                                                         \
  X(SubgroupShuffle)                                                                           \
  X(MatrixLoad)                                                                                \
  X(MatrixMulAdd)                                                                              \
  X(MatrixFill)                                                                                \
  X(MatrixScale)                                                                               \
  X(MatrixLength)

#define KILN_KIR_STMT_KINDS(X)                                                                 \
  X(Store)                                                                                     \
  X(For)                                                                                       \
  X(If)                                                                                        \
  X(Let)                                                                                       \
  X(DeclareVar)                                                                                \
  X(Assign)                                                                                    \
  X(Block)                                                                                     \
  X(Barrier)                                                                                   \
  X(StoreShared)                                                                               \
  X(VectorStore)                                                                               \
  X(MatrixStore)

enum class ExprKind {
#define KILN_KIR_ENUM(K) K,
  KILN_KIR_EXPR_KINDS(KILN_KIR_ENUM)
};
enum class StmtKind { KILN_KIR_STMT_KINDS(KILN_KIR_ENUM) };
#undef KILN_KIR_ENUM

const char *to_string(ExprKind k);
const char *to_string(StmtKind k);

struct ExprNode {
  ExprKind kind;
  ScalarType type; // scalar, lane or matrix component type
  uint8_t lanes = 1;
  MatrixShape matrix; // rows == 0: not a matrix
  ValueType value_type() const {
    ValueType t(type);
    t.lanes = lanes;
    t.matrix = matrix;
    return t;
  }
};
struct StmtNode {
  StmtKind kind;
};

// Value handle of an immutable expression. Default-constructed = undefined (null).
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  ExprKind kind() const { return node_->kind; }
  ScalarType type() const { return node_->type; }
  int lanes() const { return node_->lanes; }
  ValueType value_type() const { return node_->value_type(); }
  bool is_scalar() const { return node_->lanes == 1 && node_->matrix.rows == 0; }
  bool is_vector() const { return node_->lanes > 1; }
  bool is_matrix() const { return node_->matrix.rows > 0; }
  const ExprNode *get() const { return node_.get(); }
  bool same_as(const Expr &o) const { return node_ == o.node_; }
  template <class T> const T *as() const {
    return node_ && node_->kind == T::node_kind ? static_cast<const T *>(node_.get()) : nullptr;
  }

private:
  std::shared_ptr<const ExprNode> node_;
};

class Stmt {
public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind; }
  const StmtNode *get() const { return node_.get(); }
  bool same_as(const Stmt &o) const { return node_ == o.node_; }
  template <class T> const T *as() const {
    return node_ && node_->kind == T::node_kind ? static_cast<const T *>(node_.get()) : nullptr;
  }

private:
  std::shared_ptr<const StmtNode> node_;
};

// ---- expression nodes ----
struct IntImm : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::IntImm;
  int64_t value; // normalised to the type's range (u64: bit pattern)
};
struct FloatImm : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::FloatImm;
  double value;
};
struct Var : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Var;
  std::string name;
};
struct Binary : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Binary;
  BinOp op;
  Expr a, b;
};
struct Cmp : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Cmp;
  CmpOp op;
  Expr a, b;
};
struct And : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::And;
  Expr a, b;
};
struct Or : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Or;
  Expr a, b;
};
struct Not : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Not;
  Expr a;
};
struct Select : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Select;
  Expr cond, t, f;
};
struct Cast : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Cast;
  Expr value;
};
struct Call : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
};
struct Load : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Load;
  int buffer; // index into Kernel::buffers; type = that buffer's element type
  Expr index;
};
struct Builtin : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::Builtin;
  BuiltinKind builtin;
};
struct PushConst : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::PushConst;
  int slot; // u32 at byte offset 4 * slot of the push constants
};
// A scalar, or (lanes > 1) the vector of lanes [index, index + lanes) of an array stored with
// that many lanes; index % lanes == 0.
struct LoadShared : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::LoadShared;
  int array; // index into Kernel::shared
  Expr index;
};

// Lanes [index, index + lanes) of a buffer as one vector; index % lanes == 0.
struct VectorLoad : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::VectorLoad;
  int buffer;
  Expr index;
};
struct Broadcast : ExprNode { // scalar -> every lane
  static constexpr ExprKind node_kind = ExprKind::Broadcast;
  Expr value;
};
struct ExtractLane : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::ExtractLane;
  Expr vector;
  int lane;
};
struct MakeVector : ExprNode { // lanes from scalars
  static constexpr ExprKind node_kind = ExprKind::MakeVector;
  std::vector<Expr> elems;
};
// The combination of `value` over the active invocations of the subgroup (every invocation
// gets the result). Integer or float scalars and vectors.
struct SubgroupReduce : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::SubgroupReduce;
  ReduceOp op;
  Expr value;
};
// `value` of the invocation `lane` (a dynamically uniform u32), or of the lowest active
// invocation when `lane` is undefined.
struct SubgroupBroadcast : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::SubgroupBroadcast;
  Expr value, lane;
};
// `value` of invocation `lane` (index mode) or of `subgroup_invocation_id ^ lane` (xor mode).
struct SubgroupShuffle : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::SubgroupShuffle;
  ShuffleMode mode;
  Expr value, lane;
};
// A cooperative matrix (this node's type) read from a buffer or shared array: element (r, c)
// at offset + r * stride + c (row-major) or offset + c * stride + r (column-major).
struct MatrixLoad : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::MatrixLoad;
  MemSpace space;
  int target; // buffer or shared array index
  Expr offset, stride; // u32/i32, in elements
  MatrixLayout layout;
};
struct MatrixMulAdd : ExprNode { // a * b + c; the type is c's
  static constexpr ExprKind node_kind = ExprKind::MatrixMulAdd;
  Expr a, b, c;
};
struct MatrixFill : ExprNode { // every element = value (a scalar of the component type)
  static constexpr ExprKind node_kind = ExprKind::MatrixFill;
  Expr value;
};
struct MatrixScale : ExprNode { // matrix * scalar
  static constexpr ExprKind node_kind = ExprKind::MatrixScale;
  Expr value, scale;
};
// The number of elements of a matrix of type `of` that one invocation holds (u32).
struct MatrixLength : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::MatrixLength;
  ValueType of;
};

// ---- statement nodes ----
struct Store : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::Store;
  int buffer;
  Expr index, value;
};
struct For : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::For;
  Expr var; // a Var of type i32 or u32; runs begin, begin+1, ..., begin+extent-1
  Expr begin, extent;
  Stmt body;
};
struct If : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::If;
  Expr cond;
  Stmt then_case, else_case; // else_case may be undefined
};
struct Let : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::Let;
  Expr var, value;
  Stmt body;
};
struct DeclareVar : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::DeclareVar;
  Expr var, init;
};
struct Assign : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::Assign;
  Expr var, value;
};
struct Block : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::Block;
  std::vector<Stmt> stmts;
};
struct Barrier : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::Barrier;
};
struct StoreShared : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::StoreShared;
  int array;
  Expr index, value;
};

struct VectorStore : StmtNode { // lanes of value to [index, index + lanes)
  static constexpr StmtKind node_kind = StmtKind::VectorStore;
  int buffer;
  Expr index, value;
};
struct MatrixStore : StmtNode { // the inverse of MatrixLoad
  static constexpr StmtKind node_kind = StmtKind::MatrixStore;
  MemSpace space;
  int target;
  Expr offset, stride;
  MatrixLayout layout;
  Expr value;
};

// Typed references to a kernel's buffers and shared arrays (see Kernel::add_buffer).
struct BufferVar {
  int index;
  ScalarType elem;
};
struct SharedVar {
  int index;
  ScalarType elem;
  int lanes = 1; // the array's storage vector width (SharedArray::lanes)
};

// ---- expression factories (checked) ----
Expr imm(ScalarType t, int64_t v); // integer or boolean type
Expr fimm(ScalarType t, double v); // float type
Expr imm_bool(bool v);
Expr imm_i32(int32_t v);
Expr imm_u32(uint32_t v);
Expr imm_i64(int64_t v);
Expr imm_f32(float v);
// A constant of type t holding v (float or integer type; integer types take the value
// rounded toward zero).
Expr make_const(ScalarType t, double v);
Expr var(std::string name, ScalarType t);
Expr var(std::string name, const ValueType &t); // a vector or matrix variable
Expr binary(BinOp op, Expr a, Expr b);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr pow(Expr a, Expr b);
Expr cmp(CmpOp op, Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(ScalarType t, Expr x); // identity cast returns x; vectors/matrices keep their shape
Expr call(Intrinsic fn, std::vector<Expr> args);
Expr load(BufferVar buf, Expr index);
Expr load(int buffer, ScalarType elem, Expr index);
Expr builtin(BuiltinKind b);
Expr global_id(int axis); // u32
Expr local_id(int axis);
Expr workgroup_id(int axis);
Expr push_const(int slot); // u32
Expr load_shared(SharedVar array, Expr index);
Expr load_shared(int array, ScalarType elem, Expr index, int lanes = 1);
// The array's vector (array.lanes lanes) whose first lane is element `index`.
Expr load_shared_vector(SharedVar array, Expr index);
// Vectors.
Expr vector_load(BufferVar buf, Expr index, int lanes);
Expr vector_load(int buffer, ScalarType elem, Expr index, int lanes);
Expr broadcast(Expr scalar, int lanes);
Expr extract_lane(Expr vector, int lane);
Expr make_vector(std::vector<Expr> elems);
// Subgroups.
Expr subgroup_reduce(ReduceOp op, Expr value);
Expr subgroup_broadcast(Expr value, Expr lane);
Expr subgroup_broadcast_first(Expr value);
Expr subgroup_shuffle(Expr value, Expr lane);
Expr subgroup_shuffle_xor(Expr value, Expr mask);
Expr subgroup_size();
Expr subgroup_invocation_id();
Expr subgroup_id();
Expr num_subgroups();
// Cooperative matrices (subgroup scope).
Expr matrix_load(const ValueType &type, BufferVar buf, Expr offset, Expr stride,
                 MatrixLayout layout);
Expr matrix_load(const ValueType &type, SharedVar array, Expr offset, Expr stride,
                 MatrixLayout layout);
Expr matrix_load(const ValueType &type, MemSpace space, int target, Expr offset, Expr stride,
                 MatrixLayout layout);
Expr matrix_mul_add(Expr a, Expr b, Expr c);
Expr matrix_fill(const ValueType &type, Expr value);
Expr matrix_scale(Expr matrix, Expr scale);
Expr matrix_length(const ValueType &type);

// Operators build nodes; `==` etc. build Cmp nodes (use Expr::same_as for identity).
// Mixed with a C++ number, the number becomes a constant of the Expr's type.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator&(Expr a, Expr b);
Expr operator|(Expr a, Expr b);
Expr operator^(Expr a, Expr b);
Expr operator<<(Expr a, Expr b);
Expr operator>>(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr operator-(Expr a); // 0 - a
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator/(Expr a, int64_t b);
Expr operator%(Expr a, int64_t b);
Expr operator<(Expr a, int64_t b);
Expr operator<=(Expr a, int64_t b);
Expr operator>(Expr a, int64_t b);
Expr operator>=(Expr a, int64_t b);
Expr operator==(Expr a, int64_t b);
Expr operator!=(Expr a, int64_t b);

// ---- statement factories (checked) ----
Stmt store(BufferVar buf, Expr index, Expr value);
Stmt store(int buffer, Expr index, Expr value);
Stmt for_loop(Expr var, Expr begin, Expr extent, Stmt body);
Stmt if_then(Expr cond, Stmt then_case, Stmt else_case = Stmt());
Stmt let(Expr var, Expr value, Stmt body);
Stmt declare_var(Expr var, Expr init);
Stmt assign(Expr var, Expr value);
Stmt block(std::vector<Stmt> stmts);
Stmt barrier();
Stmt store_shared(SharedVar array, Expr index, Expr value);
Stmt store_shared(int array, Expr index, Expr value);
Stmt vector_store(BufferVar buf, Expr index, Expr value);
Stmt vector_store(int buffer, Expr index, Expr value);
Stmt matrix_store(BufferVar buf, Expr offset, Expr stride, MatrixLayout layout, Expr value);
Stmt matrix_store(SharedVar array, Expr offset, Expr stride, MatrixLayout layout, Expr value);
Stmt matrix_store(MemSpace space, int target, Expr offset, Expr stride, MatrixLayout layout,
                  Expr value);

// ---- kernels ----
struct BufferParam {
  std::string name;
  ScalarType elem;
  bool readonly = false;
  bool writeonly = false;
};

// `count` scalar elements; with lanes 2 or 4 they are stored as vectors of that many lanes
// (count % lanes == 0), so a vector load_shared of `lanes` lanes at an index that is a multiple
// of `lanes` is one wide access (a 128-bit shared-memory load for f32x4). Scalar accesses
// address single lanes; indices always count scalar elements. Cooperative-matrix accesses need
// lanes 1.
struct SharedArray {
  std::string name;
  ScalarType elem;
  uint32_t count;
  int lanes = 1;
};

struct Kernel {
  std::string name;
  std::vector<BufferParam> buffers; // set 0, binding i
  uint32_t workgroup_size[3] = {1, 1, 1};
  uint32_t push_constant_count = 0; // u32 slots
  std::vector<SharedArray> shared;
  Stmt body;

  BufferVar add_buffer(std::string buf_name, ScalarType elem, bool readonly = false,
                       bool writeonly = false);
  SharedVar add_shared(std::string array_name, ScalarType elem, uint32_t count, int lanes = 1);
  BufferVar buffer(int i) const;
  SharedVar shared_array(int i) const;
};

// ---- traversal ----
// Visitor: each visit() walks the children by default; override the kinds you care about
// (add `using Visitor::visit;` in the subclass to keep the other overloads visible).
class Visitor {
public:
  virtual ~Visitor() = default;
  virtual void visit(const Expr &e);
  virtual void visit(const Stmt &s);
#define KILN_KIR_VISIT(K) virtual void visit(const K *node);
  KILN_KIR_EXPR_KINDS(KILN_KIR_VISIT)
  KILN_KIR_STMT_KINDS(KILN_KIR_VISIT)
#undef KILN_KIR_VISIT
};

// Mutator: rebuilds a node only when a child changed, so an unchanged tree comes back as
// the same nodes (same_as). Override visit(const K *, self) for the kinds you rewrite.
class Mutator {
public:
  virtual ~Mutator() = default;
  virtual Expr mutate(const Expr &e);
  virtual Stmt mutate(const Stmt &s);

protected:
#define KILN_KIR_MUTATE_E(K) virtual Expr visit(const K *node, const Expr &self);
#define KILN_KIR_MUTATE_S(K) virtual Stmt visit(const K *node, const Stmt &self);
  KILN_KIR_EXPR_KINDS(KILN_KIR_MUTATE_E)
  KILN_KIR_STMT_KINDS(KILN_KIR_MUTATE_S)
#undef KILN_KIR_MUTATE_E
#undef KILN_KIR_MUTATE_S
};

// ---- passes ----
// Constant folding and algebraic identities (x+0, x*1, x*0 for integers, nested constant
// add/mul, select/if with a constant condition, loops with a zero extent).
Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s);
Kernel simplify(const Kernel &k);

// Index divisions made exact by value ranges (kir_index_ranges.cpp): the ranges of loop
// variables, lets and ids (from the dispatch grid `groups` and the workgroup size) turn
// (o * L + u) / L into o and (o * L + u) % L into u where 0 <= u < L, and similar.
Kernel simplify_index_ranges(const Kernel &k, const std::array<uint32_t, 3> &groups);

// Unrolls innermost loops (no nested loop, declaration or barrier in the body) whose extent is
// a constant of at least min_extent by `factor`, the remainder written out after the loop.
Kernel unroll_long_loops(const Kernel &k, int64_t min_extent = 1024, int factor = 8);
// Loop iterations (back-edges) one invocation runs, every loop of the nest counted; the larger
// branch of an If; -1 when a loop's extent is not a constant.
int64_t loop_iterations(const Stmt &s);

// Checks types, buffer/shared indices, push-constant slots, variable scoping and
// assignability, read/write permissions and the workgroup size.
Status verify(const Kernel &k);

// Structural identity (kir_hash.cpp): the same node kinds, types, operators, constants (floats
// bit for bit), buffer/shared-array declarations, workgroup size and push-constant count.
// Names are ignored: kernel, buffer and shared-array names, and variables up to a consistent
// renaming. Equal kernels hash equally; use structural_equal to rule out a hash collision.
uint64_t structural_hash(const Expr &e);
uint64_t structural_hash(const Stmt &s);
uint64_t structural_hash(const Kernel &k);
bool structural_equal(const Expr &a, const Expr &b);
bool structural_equal(const Stmt &a, const Stmt &b);
bool structural_equal(const Kernel &a, const Kernel &b);

std::string print(const Expr &e);
std::string print(const Stmt &s, int indent = 0);
std::string print(const Kernel &k);

} // namespace kiln::kir
