// The ONNX -> core op mapping. One converter per (domain, op_type); it sees the node through
// NodeCtx (no protobuf types leak here) and returns one Value per node output. Converters
// handle versioned semantics by looking at ctx.opset. Families register their converters in
// convert_<family>.cpp.
#pragma once

#include "ir/builder.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kiln::onnx_fe {

class NodeAttrs; // wraps the node's AttributeProtos (defined in importer.cpp)

struct NodeCtx {
  std::string_view op_type;
  std::string_view domain; // "" for ai.onnx
  std::string_view name;
  int opset = 0;           // opset version of the node's domain
  std::vector<Value *> in; // nullptr for an omitted optional input ("")
  size_t num_outputs = 0;  // outputs named by the node (trailing optional ones may be absent)
  std::vector<bool> output_used; // false for empty output names
  Builder *b = nullptr;
  const NodeAttrs *attrs = nullptr;
  // Imports a graph attribute (If/Loop/Scan bodies) as a region; set by the importer.
  // `param_hints` (may be empty) gives, per subgraph input, the type to use where the
  // subgraph declares no shape (e.g. Loop-carried values).
  std::function<Result<std::unique_ptr<Graph>>(std::string_view attr,
                                               const std::vector<TensorType> &param_hints)>
      import_subgraph;

  Builder &builder() { return *b; }
  bool has_input(size_t i) const { return i < in.size() && in[i] != nullptr; }
  Value *input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
  // The constant value of input i (initializer, Constant node or folded), else nullptr.
  const Tensor *const_input(size_t i) const;

  bool has_attr(std::string_view n) const;
  int64_t attr_int(std::string_view n, int64_t dflt) const;
  double attr_float(std::string_view n, double dflt) const;
  std::string attr_str(std::string_view n, std::string dflt) const;
  std::vector<int64_t> attr_ints(std::string_view n, std::vector<int64_t> dflt = {}) const;
  std::vector<double> attr_floats(std::string_view n, std::vector<double> dflt = {}) const;
  std::vector<std::string> attr_strs(std::string_view n) const;
  // Tensor attribute, decoded to a kiln Tensor (error for unsupported dtypes).
  Result<Tensor> attr_tensor(std::string_view n) const;
  // The ONNX dtype attribute (e.g. Cast's 'to') mapped to a kiln dtype, or an error.
  Result<DType> attr_dtype(std::string_view n, std::optional<int64_t> dflt = std::nullopt) const;

  // An error that names the node ("node 'x' (Foo, opset 13): msg").
  Status error(const std::string &msg) const;
  // Shorthand for builder().create1 / create with the node's location set.
  Result<Value *> op(std::string_view name, std::vector<Value *> operands, AttrMap attrs = {});
  Result<std::vector<Value *>> op_n(std::string_view name, std::vector<Value *> operands,
                                    AttrMap attrs, int num_results);
};

// What a converter returns: one Value per node output.
using Outs = Result<std::vector<Value *>>;
using ConvertFn = std::function<Outs(NodeCtx &)>;

// A single-output converter's result.
inline Outs one(Result<Value *> v) {
  if (!v) return v.status();
  return std::vector<Value *>{v.value()};
}

class ConverterTable {
public:
  // `domain` is "" for ai.onnx (also matched by "ai.onnx").
  void add(std::string domain, std::string op_type, ConvertFn fn);
  const ConvertFn *find(std::string_view domain, std::string_view op_type) const;

private:
  std::map<std::pair<std::string, std::string>, ConvertFn, std::less<>> table_;
};

// ONNX TensorProto.DataType code -> kiln dtype; nullopt for unsupported ones (string,
// complex, float8, int4, ...).
std::optional<DType> dtype_from_onnx(int64_t code);
// Human-readable ONNX dtype name ("FLOAT8E4M3FN") for messages.
std::string onnx_dtype_name(int64_t code);

// Family registration (one file each).
void register_onnx_elementwise(ConverterTable &t); // convert_elementwise.cpp
void register_onnx_reduce(ConverterTable &t);      // convert_reduce.cpp
void register_onnx_shape(ConverterTable &t);       // convert_shape.cpp
void register_onnx_nn(ConverterTable &t);          // convert_nn.cpp
void register_onnx_misc(ConverterTable &t);        // convert_misc.cpp
void register_onnx_control(ConverterTable &t);     // convert_control.cpp

} // namespace kiln::onnx_fe
