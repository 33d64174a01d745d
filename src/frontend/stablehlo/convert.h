// The StableHLO -> core op mapping (internal to src/frontend/stablehlo). One converter per op
// name; it sees the op through OpCtx (the syntax tree node, its operand values, the builder)
// and returns one Value per result. Families register their converters in convert_<family>.cpp.
// Every error a converter returns goes through OpCtx::error, which gives FILE:LINE:COL and the
// op's source line.
#pragma once

#include "frontend/stablehlo/ast.h"
#include "ir/builder.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace kiln::stablehlo_fe {

// What the importer shares with converters beyond one op.
struct ImportState {
  std::string file;
  std::vector<std::string_view> lines; // source lines, for messages
  // Values known to equal an iota along the given dim (set by the iota converter; sort and
  // variadic reduce use it to recognise argsort / argmax).
  std::unordered_map<const Value *, int64_t> iota_dim;

  std::string format(Loc loc, const std::string &msg) const;
};

class OpCtx {
public:
  const Operation &op;
  std::vector<Value *> in;
  Builder &b;
  ImportState &state;
  // Converts the ops of `block` into the builder's current graph with the block's arguments
  // bound to `args` (enclosing values stay visible); returns the values of its terminator.
  std::function<Result<std::vector<Value *>>(const Block &, const std::vector<Value *> &)>
      inline_block;

  OpCtx(const Operation &o, std::vector<Value *> ins, Builder &bld, ImportState &st)
      : op(o), in(std::move(ins)), b(bld), state(st) {}

  // An error at the op: "FILE:LINE:COL: msg: <source line>".
  Status error(const std::string &msg) const;
  // Builder::create1 / create with errors reported at the op.
  Result<Value *> make(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {});
  Result<std::vector<Value *>> make_n(std::string_view name, std::vector<Value *> operands,
                                      AttrMap attrs, int num_results);

  // ---- attributes ----
  const Attr *attr(std::string_view n) const { return op.attr(n); }
  // An integer list attribute (array<i64: ...>, [1, 2], or a 1-D dense tensor); `dflt` when
  // absent, an error when required and absent.
  Result<std::vector<int64_t>> ints(std::string_view n) const;
  Result<std::vector<int64_t>> ints_or(std::string_view n, std::vector<int64_t> dflt) const;
  Result<int64_t> int_attr(std::string_view n, std::optional<int64_t> dflt = std::nullopt) const;
  // Identifier / enum attribute (e.g. comparison_direction), `dflt` when absent.
  std::string ident(std::string_view n, std::string dflt = {}) const;
  // A list field of a dialect attribute (#stablehlo.gather<...>): empty when absent.
  Result<std::vector<int64_t>> field_ints(const Attr &dialect, std::string_view n) const;
  // An integer field; `dflt` when absent (the generic printer omits fields at their default).
  Result<int64_t> field_int(const Attr &dialect, std::string_view n,
                            std::optional<int64_t> dflt = std::nullopt) const;

  // ---- types ----
  const Type &result_type(size_t i) const { return op.result_types.at(i); }
  DType result_dtype(size_t i = 0) const { return op.result_types.at(i).dtype; }
  const Shape &result_dims(size_t i = 0) const { return op.result_types.at(i).dims; }
  // The operand's static dims (operand values always have static types here).
  const Shape &dims(size_t i) const { return in.at(i)->type.dims; }
  int64_t rank(size_t i) const { return in.at(i)->type.rank(); }

  // ---- building blocks (all report errors at the op) ----
  Value *i64s(const std::vector<int64_t> &v) { return b.i64s(v); }
  Value *scalar(DType dt, double v) { return b.scalar_f(dt, v); }
  Value *scalar_int(DType dt, int64_t v) { return b.scalar_i(dt, v); }
  Result<Value *> reshape(Value *x, const Shape &dims);
  Result<Value *> transpose(Value *x, const std::vector<int64_t> &perm); // no-op for identity
  Result<Value *> cast(Value *x, DType to);                              // no-op for same dtype
  Result<Value *> expand(Value *x, const Shape &dims);                   // numpy broadcast
  Result<Value *> slice(Value *x, const std::vector<int64_t> &starts,
                        const std::vector<int64_t> &limits, const std::vector<int64_t> &strides);
  // kiln.pad in constant mode with `value` (a scalar value of x's dtype); pads may be negative.
  Result<Value *> pad(Value *x, const std::vector<int64_t> &low, const std::vector<int64_t> &high,
                      Value *value);
  // StableHLO pad: edge padding (may be negative) and interior padding.
  Result<Value *> pad_interior(Value *x, const std::vector<int64_t> &low,
                               const std::vector<int64_t> &high,
                               const std::vector<int64_t> &interior, Value *value);
  // 0, 1, ..., n-1 along `dim` of a tensor of shape `dims` (i64).
  Result<Value *> iota(const Shape &dims, int64_t dim, DType dt = DType::i64);
  // max(lo, min(x, hi)) elementwise (scalars broadcast).
  Result<Value *> clamp(Value *x, Value *lo, Value *hi);
  // Stacks same-shaped i64 tensors along a new last axis.
  Result<Value *> stack_last(const std::vector<Value *> &parts);
};

using Outs = Result<std::vector<Value *>>;
using ConvertFn = std::function<Outs(OpCtx &)>;

inline Outs one(Result<Value *> v) {
  if (!v) return v.status();
  return std::vector<Value *>{v.value()};
}

class ConverterTable {
public:
  void add(std::string name, ConvertFn fn) { table_[std::move(name)] = std::move(fn); }
  const ConvertFn *find(std::string_view name) const {
    auto it = table_.find(name);
    return it == table_.end() ? nullptr : &it->second;
  }

private:
  std::map<std::string, ConvertFn, std::less<>> table_;
};

// Evaluates a scalar region (a reduction body or a comparator) on constant arguments by
// converting it into a scratch graph where every op folds; nullopt when some result does not
// fold to a constant (the region is not a pure scalar function of its arguments).
Result<std::optional<std::vector<Tensor>>> eval_block(OpCtx &c, const Block &blk,
                                                      const std::vector<Tensor> &args);

// The single binary op of a reduction body `^bb(%a, %b): %r = OP %a, %b; return %r`
// ("stablehlo.add", ...), or empty when the body is anything else.
std::string single_binary_body(const Block &blk);

// Family registration (one file each).
void register_elementwise(ConverterTable &t); // convert_elementwise.cpp
void register_shape(ConverterTable &t);       // convert_shape.cpp
void register_gather(ConverterTable &t);      // convert_gather.cpp: gather, scatter, dynamic_*
void register_nn(ConverterTable &t);          // convert_nn.cpp: dot_general, dot, convolution
void register_reduce(ConverterTable &t);      // convert_reduce.cpp: reduce, reduce_window, sort
void register_control(ConverterTable &t);     // convert_control.cpp: while, case, if, ...

} // namespace kiln::stablehlo_fe
