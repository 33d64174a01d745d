// Internals of the StableHLO text parser, shared by parser.cpp (module, functions, regions,
// generic ops, signatures), parser_attrs.cpp (types and attributes) and parser_ops.cpp (the
// pretty forms of ops). Not a public API: the contract is ast.h.
#pragma once

#include "frontend/stablehlo/ast.h"
#include "frontend/stablehlo/lexer.h"

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kiln::stablehlo_fe {

// A type list after ':' as written: `T`, `T, U`, `(T, U) -> R`, `T -> (R, S)`.
struct Signature {
  std::vector<Type> ins;
  bool parens = false; // ins were written in parentheses
  bool arrow = false;
  std::vector<Type> outs;
  Token at; // first token, for messages
};

// A dense literal's nested lists: length per level (-1 until seen), nesting level of the
// scalars, number of scalars.
struct DenseShape {
  std::vector<int64_t> shape;
  int leaf_depth = -1;
  int64_t leaves = 0;
};
// Encodes scalar number `index` (its token, and whether a '-' preceded it).
using DenseEncode = std::function<Status(const Token &, bool, int64_t)>;

// How a pretty op spells its types after ':'.
enum class SigForm {
  same,       // `T` (every operand and the result) or `(T, ...) -> R`
  functional, // `(T, ...) -> R` or `(T, ...) -> (R, ...)`
  select,     // `P, T` (pred, then operands and result) or functional
  pairwise,   // `T, U, ...`: operand i and result i have type i
  arrow,      // chlo: `T -> R`, `T, U -> R`, `(T, U) -> R`, `T -> (R, S)`
};

class Parser {
public:
  Parser(std::string_view text, const std::string &file, const ParseOptions &opt);
  Result<ModuleAst> module();

  // ---- tokens and errors (parser.cpp) ----
  void bump();
  Token peek_token(); // the token after cur_ (lexer state restored)
  bool at(Tok k) const { return cur_.kind == k; }
  bool at_id(std::string_view s) const { return cur_.kind == Tok::bare_id && cur_.text == s; }
  Status error(const Token &t, const std::string &msg) const;
  Status error_at(int line, int col, const std::string &msg) const;
  Status expected(const std::string &what) const;
  Status expect(Tok k, const char *what);
  Status expect_id(std::string_view word);
  static std::string spelling(const Token &t);

  // Depth of regions and attributes, checked against ParseOptions::max_depth.
  struct DepthGuard {
    Parser &p;
    explicit DepthGuard(Parser &parser) : p(parser) { ++p.depth_; }
    ~DepthGuard() { --p.depth_; }
  };
  Status check_depth(const Token &t) const;

  // ---- SSA names (parser.cpp) ----
  Status define(const Token &t, const std::string &name, int count);
  Result<std::string> use(const Token &t); // cur_ must be a value_id; consumes it

  // ---- ops, blocks and regions (parser.cpp) ----
  Status block_ops(Block &b);                // ops up to (not including) '}'
  Status region(Block &b, const std::vector<std::string> *names,
                const std::vector<Type> *types); // '{' ... '}'; preset args when names given
  Status op(Block &b);
  Status generic_op(Operation &o, bool isolated);
  Status signature(Signature &sig);
  Status apply_signature(Operation &o, const Signature &sig, SigForm form);
  Status attr_dict_into(std::vector<NamedAttr> &attrs); // '{' ... '}' merged, no duplicates
  Status operand_list(Operation &o);                    // %a, %b, ... (possibly empty)
  Status attrs_and_signature(Operation &o, SigForm form); // attr-dict? ':' types

  // ---- types and attributes (parser_attrs.cpp) ----
  Result<Type> type(bool allow_index = false);
  Result<Attr> attr();
  Result<Attr> dense_attr(); // at `dense`
  Status dense_walk(DenseShape &w, const DenseEncode *encode); // the literal's lists
  Result<Attr> dense_array_attr(); // at `array`
  Result<Attr> hash_attr();        // at a hash_id
  Result<Attr> struct_params(const std::string &name); // `<key = value, ...>` at '<'
  Result<Attr> conv_dims();  // `[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]`
  Result<int64_t> integer(); // [-]N
  Result<std::vector<int64_t>> int_list(); // [1, 2, ...]
  Result<Attr> dense_i64(std::vector<int64_t> values, std::vector<int64_t> dims);

  // ---- pretty forms (parser_ops.cpp) ----
  Status pretty_op(Operation &o, const Token &name);
  Status pretty_reduce(Operation &o);
  Status pretty_while(Operation &o);
  Status pretty_conv(Operation &o);
  Status pretty_keywords(Operation &o, const Token &name, int form_index);

  // ---- functions (parser.cpp) ----
  Status module_items(ModuleAst &m, bool until_rbrace);
  Status pretty_func(ModuleAst &m);
  Status generic_func(ModuleAst &m);
  Status generic_module(ModuleAst &m);

  Lexer lex_;
  std::string file_;
  ParseOptions opt_;
  Token cur_;
  bool skipped_loc_ = false; // the last bump() dropped a loc(...)
  int depth_ = 0;
  int synth_ = 0; // counter for names of synthesised region values
  // Visible SSA names of the function being parsed: name -> result count, innermost last.
  std::vector<std::unordered_map<std::string, int>> scopes_;
};

// Element type by MLIR name (i1, i32, ui8, bf16, ...); false for anything else. `index` maps to
// i64 when allowed (attribute types such as custom_call layouts).
bool element_type(std::string_view name, bool allow_index, DType &out);

} // namespace kiln::stablehlo_fe
