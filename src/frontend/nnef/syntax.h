// NNEF 1.0 text: the syntax tree and the parser (graph.nnef documents).
#pragma once

#include "support/status.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::nnef_fe {

struct NamedArg;

struct Expr {
  enum class Kind { number, boolean, string, ident, array, tuple, invoke } kind = Kind::number;
  double num = 0;
  bool is_int = false;  // a number written without '.' or exponent
  bool flag = false;    // boolean value
  std::string str;      // string value, identifier, or invoked operation name
  std::string generic;  // invoke: the <type> argument, if any
  std::vector<Expr> items;                          // array/tuple items, positional arguments
  std::vector<NamedArg> named;  // invoke: named arguments
  int line = 0, col = 0;
};

struct NamedArg {
  std::string name;
  Expr value;
};

struct Assignment {
  Expr lhs; // identifier, or array/tuple of identifiers
  Expr rhs;
};

struct Param {
  std::string name, type;
  bool has_default = false;
  Expr dflt;
};

struct Fragment {
  std::string name;
  std::vector<Param> params;
  std::vector<std::string> results;
  bool has_body = false;
  std::vector<Assignment> body;
  int line = 0, col = 0;
};

struct Document {
  std::string file;
  double version = 0;
  std::vector<std::string> extensions;
  std::vector<Fragment> fragments;
  std::string graph_name;
  std::vector<std::string> inputs, outputs;
  std::vector<Assignment> body;
};

// Errors read "FILE:LINE:COL: message".
Result<Document> parse_document(std::string_view text, const std::string &file);

} // namespace kiln::nnef_fe
