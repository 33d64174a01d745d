// StableHLO text as a syntax tree: the contract between the parser (parser.cpp) and the
// importer (importer.cpp). The parser accepts both MLIR's pretty and generic forms and
// normalises every pretty form into the generic one: an op's attributes carry the names the
// generic printer uses (`mlir-opt --mlir-print-op-generic`), properties and discardable
// attributes merged. The importer therefore never sees how an op was spelled.
#pragma once

#include "ir/tensor.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::stablehlo_fe {

// 1-based line and column in the source text.
struct Loc {
  int line = 0;
  int col = 0;
};

// A ranked tensor type: tensor<2x3xf32> -> {dims {2,3}, f32}; tensor<f32> -> scalar.
// Element types: i1 -> boolean, i8..i64, ui8..ui64, f16, bf16, f32, f64. Dynamic dims (`?`) are
// kDynamic (-1). Other element types (complex, f8, tokens, tuples) are parse errors.
struct Type {
  std::vector<int64_t> dims;
  DType dtype = DType::f32;
};

struct NamedAttr;

struct Attr {
  enum class Kind {
    Unit,       // a bare name in an attribute dict: {foo}
    Int,        // 3, 3 : i64, true/false are Bool
    Float,      // 1.5, 1.5 : f32
    Bool,       // true / false
    String,     // "text" (escapes decoded), also @symbol references (without the @)
    Ident,      // bare keyword or enum value: DEFAULT, GT, FLOAT, HIGHEST;
                //   #stablehlo<comparison_direction GT> -> Ident "GT" (enum kind dropped)
    Array,      // [a, b, ...] of any attrs
    DenseArray, // array<i64: 1, 2> and array<i1: true, false> -> ints (bools as 0/1)
    Dense,      // dense<...> : tensor<...> (splat, nested list, hex) -> tensor (splat expanded)
    TypeAttr,   // a type used as an attribute
    Dict,       // {a = 1, b}
    Dialect,    // #stablehlo.gather<...>, #stablehlo.scatter<...>, #stablehlo.dot<...>,
                // #stablehlo.conv<...>: name is "stablehlo.gather" etc., params in `dict`;
                // fields StableHLO's printer omits (empty lists, a zero index_vector_dim) are
                // absent. Other dialects' attributes keep their text: dict {"raw": String}.
  };
  Kind kind = Kind::Unit;
  int64_t i = 0;            // Int, Bool (0/1)
  double f = 0;             // Float
  std::string s;            // String, Ident, Dialect name
  std::vector<Attr> list;   // Array
  std::vector<int64_t> ints; // DenseArray
  Tensor dense;             // Dense
  Type type;                // TypeAttr; declared type of Dense
  std::vector<NamedAttr> dict; // Dict, Dialect

  // Dict / Dialect member, nullptr when absent.
  const Attr *get(std::string_view name) const;
};

// A dict member. A struct, not std::pair: clang with libstdc++ rejects std::pair<std::string,
// Attr> inside Attr's own definition (the pair needs Attr complete).
struct NamedAttr {
  std::string first;
  Attr second;
  NamedAttr() = default;
  NamedAttr(std::string name, Attr attr) : first(std::move(name)), second(std::move(attr)) {}
};

inline const Attr *Attr::get(std::string_view name) const {
  for (const auto &[k, v] : dict)
    if (k == name) return &v;
  return nullptr;
}

struct Operation;

// A block with arguments; regions in StableHLO have exactly one block.
struct Block {
  std::vector<std::string> arg_names; // without '%'
  std::vector<Type> arg_types;
  std::vector<Operation> ops;
  Loc loc;
};

struct Operation {
  // Full op name: "stablehlo.add", "chlo.erf", "func.call", "func.return", "stablehlo.return".
  // The pretty spellings `call` and `return` are normalised to func.call / func.return.
  std::string name;
  // SSA names without '%'. `%0:2 = ...` gives results "0#0", "0#1"; an operand `%0#1` is "0#1".
  std::vector<std::string> results;
  std::vector<std::string> operands;
  std::vector<Type> operand_types;
  std::vector<Type> result_types;
  // Generic attribute names, e.g. for the pretty forms:
  //   constant                 value (Dense)
  //   compare GT, a, b, FLOAT  comparison_direction (Ident), compare_type (Ident, optional)
  //   broadcast_in_dim dims=   broadcast_dimensions (DenseArray)
  //   transpose dims= / reverse dims=   permutation / dimensions (DenseArray)
  //   dot_general              dot_dimension_numbers (Dialect "stablehlo.dot": lhs_batching_dimensions,
  //                            rhs_batching_dimensions, lhs_contracting_dimensions,
  //                            rhs_contracting_dimensions, each an Array of Int, absent when empty),
  //                            precision_config (Array of Ident)
  //   convolution              dimension_numbers (Dialect "stablehlo.conv": input_batch_dimension,
  //                            input_feature_dimension, kernel_input_feature_dimension,
  //                            kernel_output_feature_dimension, output_batch_dimension,
  //                            output_feature_dimension (Int), input_spatial_dimensions,
  //                            kernel_spatial_dimensions, output_spatial_dimensions (Array of Int)),
  //                            window_strides, lhs_dilation, rhs_dilation, window_reversal
  //                            (DenseArray), padding (Dense i64 Nx2), feature_group_count,
  //                            batch_group_count (Int)
  //   reduce(...) applies OP across dimensions=   dimensions (DenseArray) and a synthesised
  //                            region ^bb0(%lhs, %rhs): %r = OP %lhs, %rhs; stablehlo.return %r;
  //                            operands are all inputs, then all init values
  //   iota dim=                iota_dimension (Int)
  //   concatenate ..., dim=    dimension (Int)
  //   slice %a [0:2, 1:4:2]    start_indices, limit_indices, strides (DenseArray)
  //   dynamic_slice sizes=     slice_sizes (DenseArray)
  //   pad low= high= interior= edge_padding_low, edge_padding_high, interior_padding (DenseArray)
  //   gather / scatter         dimension_numbers (Dialect "stablehlo.gather" / "stablehlo.scatter"
  //                            with the generic field names), slice_sizes, indices_are_sorted, ...
  //   custom_call @target      call_target_name (String)
  //   func.call @f             callee (String "f")
  //   while(%it = %x) cond {} do {}   operands as given, regions {cond, body}, block args named
  //                            after the iteration arguments
  std::vector<NamedAttr> attrs;
  std::vector<Block> regions;
  Loc loc;

  const Attr *attr(std::string_view n) const {
    for (const auto &[k, v] : attrs)
      if (k == n) return &v;
    return nullptr;
  }
};

struct Function {
  std::string name; // without '@'
  bool is_public = true;
  std::vector<Type> result_types;
  Block body; // arguments are the function's parameters
  Loc loc;
};

struct ModuleAst {
  std::string file; // for messages
  std::string name; // module @name, may be empty
  std::vector<Function> funcs;
};

struct ParseOptions {
  // Dense constants (splats expanded) larger than this are refused.
  int64_t max_constant_bytes = int64_t(1) << 30;
  // Nesting depth of regions / attributes beyond which the text is refused.
  int max_depth = 64;
};

// Parses a whole file's text. Errors read "FILE:LINE:COL: message" and quote the offending
// token or line. Never throws, never crashes on any input.
Result<ModuleAst> parse_module(std::string_view text, const std::string &file,
                               const ParseOptions &opt = {});

} // namespace kiln::stablehlo_fe
