// The core op set's registry. Each op has an OpDef: arity, a verifier, a shape function and a
// reference implementation. Ops are registered explicitly (ops/register.cpp), never by static
// constructors.
#pragma once

#include "ir/graph.h"

#include <functional>
#include <span>
#include <string_view>
#include <unordered_map>

namespace kiln {

// What a shape function sees: the op, its operand types and, for operands whose value is known
// at compile time (constants), the value.
struct InferCtx {
  const Op &op;
  std::vector<const TensorType *> in;   // nullptr for omitted optional operands
  std::vector<const Tensor *> consts;   // nullptr unless the operand is a known constant
  std::vector<TensorType> out;          // to fill, one per result

  const TensorType &type(size_t i) const { return *in[i]; }
  bool present(size_t i) const { return i < in.size() && in[i] != nullptr; }
  Status error(const std::string &msg) const;
};

// Runs a region of a control-flow op on given parameter values (set by the executor).
using RegionRunner =
    std::function<Result<std::vector<Tensor>>(const Graph &, std::vector<Tensor> params)>;

// What a reference implementation sees: operand values (an invalid Tensor for an omitted
// optional operand) and a place for results.
struct EvalCtx {
  const Op &op;
  std::span<const Tensor> in;
  std::vector<Tensor> out;
  RegionRunner run_region;

  const Tensor &input(size_t i) const { return in[i]; }
  bool present(size_t i) const { return i < in.size() && in[i].valid() && !absent[i]; }
  std::vector<bool> absent;
  Status error(const std::string &msg) const;
};

struct OpDef {
  std::string name;          // "kiln.add"
  int min_operands = 0;
  int max_operands = 0;      // -1: variadic
  int min_results = 1;
  int max_results = 1;       // -1: variadic
  int num_regions = 0;
  // Optional extra checks beyond arity (attribute presence and ranges, operand dtypes).
  std::function<Status(const Op &)> verify;
  // Result types from operand types (and constant operand values where known). Where a result
  // dim depends on a non-constant value it is kDynamic.
  std::function<Status(InferCtx &)> infer;
  // The reference implementation.
  std::function<Status(EvalCtx &)> eval;
  // Pure ops without side effects and regions may be constant-folded.
  bool foldable = true;
};

class OpRegistry {
public:
  void add(OpDef def);
  const OpDef *find(std::string_view name) const;
  std::vector<const OpDef *> all() const;

private:
  std::unordered_map<std::string, std::unique_ptr<OpDef>> defs_;
};

// Arity + OpDef::verify for one op (not recursive).
Status verify_op(const Op &op);
// verify_op plus: the recorded result types agree with the op's shape function (where both
// are known). The per-op part of verify_function.
Status verify_op_and_types(const Op &op);
// Whole-function verification: SSA dominance, arity, attributes, recorded types equal to the
// inferred ones where both are known, recursively into regions.
Status verify_function(const Function &f);

// Computes result types for `op` (calls OpDef::infer with constant operand values where the
// operands are defined by kiln.constant ops).
Result<std::vector<TensorType>> infer_types(const Op &op);

} // namespace kiln
