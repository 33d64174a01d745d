// The graph IR: SSA values of tensor type, ops from kiln's core op set (see ops/), graphs
// (ordered op lists with parameters and results, also used as regions of control-flow ops),
// functions and a module.
//
// Ownership: a Graph owns its ops and the values it defines (parameters and op results).
// Values of an enclosing graph may be used inside a region (implicit capture), as in ONNX.
#pragma once

#include "ir/tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

inline constexpr int64_t kDynamic = -1;

// Element type plus dims. A dim may be kDynamic ('?') before specialisation; a type may be
// unranked ('*') where the importer cannot know the rank (a few control-flow outputs).
struct TensorType {
  DType dtype = DType::f32;
  Shape dims;
  bool ranked = true;

  static TensorType of(const Tensor &t) { return {t.dtype(), t.shape(), true}; }
  bool is_static() const;
  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  bool operator==(const TensorType &o) const = default;
  std::string str() const; // tensor<2x?x3xf32>
};

// Attribute values. Lists of ints/floats/strings, a tensor, a dtype, a graph reference is not
// needed: regions live on the op.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>, Tensor, DType>;
using AttrMap = std::map<std::string, AttrValue, std::less<>>;

class Op;
class Graph;

class Value {
public:
  int id = -1;          // unique within its function; printed as %name or %id
  std::string name;     // source name (ONNX value name), may be empty
  TensorType type;
  Op *def = nullptr;    // defining op, nullptr for graph parameters
  int result_index = 0; // which result of def
  Graph *owner = nullptr;
};

struct OpDef;

class Op {
public:
  const OpDef *def = nullptr;
  std::vector<Value *> operands; // nullptr marks an omitted optional operand
  std::vector<Value *> results;
  AttrMap attrs;
  std::vector<std::unique_ptr<Graph>> regions;
  std::string loc; // source location for messages: ONNX node name, or file:line

  std::string_view name() const;

  bool has_attr(std::string_view key) const { return attrs.find(key) != attrs.end(); }
  int64_t attr_int(std::string_view key, int64_t dflt) const;
  double attr_float(std::string_view key, double dflt) const;
  std::string attr_str(std::string_view key, std::string dflt) const;
  std::vector<int64_t> attr_ints(std::string_view key, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(std::string_view key, std::vector<double> dflt = {}) const;
  const Tensor *attr_tensor(std::string_view key) const;
  DType attr_dtype(std::string_view key, DType dflt) const;
  // Describes the op for error messages: "op 'kiln.add' (node 'Add_3')".
  std::string describe() const;
};

class Graph {
public:
  std::vector<Value *> params;
  std::vector<std::unique_ptr<Op>> ops;
  std::vector<Value *> results;
  Op *parent = nullptr; // op owning this region, nullptr for a function body

  Value *add_param(TensorType type, std::string name);
  // Creates an op with results of the given types and appends it.
  Op *append(const OpDef *def, std::vector<Value *> operands, std::vector<TensorType> result_types,
             AttrMap attrs = {});
  // Values created here (params and results of ops here).
  const std::vector<std::unique_ptr<Value>> &values() const { return values_; }
  Value *new_value(TensorType type, std::string name);
  // Removes ops whose results are unused (in this graph and nested regions), keeps order.
  void erase_ops_if(const std::function<bool(const Op &)> &pred);
  // Makes every use of `from` (operands here and in nested regions, and results) use `to`.
  void replace_uses(const Value *from, Value *to);

private:
  std::vector<std::unique_ptr<Value>> values_;
};

class Function {
public:
  std::string name;
  Graph body;
};

class Module {
public:
  std::vector<std::unique_ptr<Function>> functions;
  // Source locations (ONNX node names) of ops that lower-precision leaves in f32 whatever the
  // policy table says (--precision auto fills it: calibrate/precision_auto.h).
  std::set<std::string> keep_f32;
  Function *find(std::string_view name) const;
  Function *main() const { return functions.empty() ? nullptr : find("main"); }
};

// Assigns ids to all values of a function in definition order (printer and parser use them).
void renumber(Function &f);

} // namespace kiln
