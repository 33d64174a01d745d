// What an NNEF operation converter sees (shared by importer.cpp and ops.cpp): one invocation
// with its arguments bound to parameter names, resolved through the (possibly inlined
// fragment's) environment.
#pragma once

#include "frontend/nnef/archive.h"
#include "frontend/nnef/syntax.h"
#include "ir/builder.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::nnef_fe {

struct Env;

// What an identifier is bound to: a tensor value, or (inside a fragment) the caller's
// expression for an attribute, resolved in the caller's environment.
struct Binding {
  Value *t = nullptr;
  const Expr *lit = nullptr;
  const Env *lit_env = nullptr;
};

struct Env {
  std::map<std::string, Binding, std::less<>> names;
  const Binding *find(std::string_view n) const {
    auto it = names.find(n);
    return it == names.end() ? nullptr : &it->second;
  }
};

class Importer;

struct Call {
  Importer *imp;
  const Expr *e; // the invocation; e->str is the operation's name
  const Env *env;
  Builder *b;
  Function *fn;               // for external (parameters)
  const std::string *folder;  // the model folder (variables); empty: none
  const Archive *archive;     // or the files of a .tgz model (nullptr: read the folder)
  std::map<std::string, std::pair<const Expr *, const Env *>, std::less<>> args;

  Status error(const std::string &msg) const;
  bool has(std::string_view n) const { return args.count(n) > 0; }
  Result<const Expr *> get(std::string_view n, const Env **where) const;
  Result<Value *> tensor(std::string_view n) const;
  Result<std::vector<Value *>> tensors(std::string_view n) const;
  Result<std::vector<int64_t>> ints(std::string_view n, std::vector<int64_t> dflt) const;
  Result<double> number(std::string_view n, double dflt) const;
  Result<int64_t> integer(std::string_view n, int64_t dflt) const; // an integer literal
  Result<std::string> str(std::string_view n, std::string dflt) const;
  Result<bool> boolean(std::string_view n, bool dflt) const;
  Result<std::vector<std::pair<int64_t, int64_t>>> pairs(std::string_view n) const;
  Result<Value *> op(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {}) const;
};

using Outs = Result<std::vector<Value *>>;
using OpFn = Outs (*)(Call &);

// A standard operation: its NNEF parameter names in declaration order and its converter.
struct OpSig {
  std::vector<std::string> params;
  OpFn fn;
};

// Every standard operation kiln converts (ops.cpp).
const std::map<std::string, OpSig, std::less<>> &standard_ops();

} // namespace kiln::nnef_fe
