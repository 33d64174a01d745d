// ONNX model import: reads a .onnx file (protobuf), resolves external data inside the model's
// folder, inlines model-local functions, and maps every node into kiln's core ops.
#pragma once

#include "ir/graph.h"
#include "support/limits.h"

#include <map>
#include <string>

namespace kiln::onnx_fe {

// Defaults from limits() (KILN_MAX_* environment variables).
struct ImportOptions {
  int64_t max_tensor_bytes = limits().max_tensor_bytes; // per initializer, per node result
  int64_t max_model_bytes = limits().max_model_bytes;   // the .onnx file
  int max_graph_depth = limits().max_graph_depth;       // nested subgraphs and functions
  int64_t max_nodes = limits().max_nodes;               // nodes once functions are inlined
};

// Imports the model; the module has one function "main" whose params are the graph inputs that
// have no initializer, in order, and whose results are the graph outputs.
// On failure the message lists every node that could not be imported.
Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &opt = {});
Result<std::unique_ptr<Module>> import_bytes(const std::string &bytes, const std::string &base_dir,
                                             const ImportOptions &opt = {});

// The op type of each node of the model's main graph by the name the importer gives the node
// (Op::loc: the node's name, else its first output, else its op type); ops of a non-default
// domain as "domain.OpType". For tools that show graph-IR values as the ONNX nodes they came
// from (kiln validate --per-op).
Result<std::map<std::string, std::string>> node_op_types(const std::string &path,
                                                         const ImportOptions &opt = {});

// The bytes of a model file, within the size limits (max_model_bytes, protobuf's 2 GiB).
Result<std::string> read_model_bytes(const std::string &path, const ImportOptions &opt = {});

// Reads a serialized TensorProto (.pb test data).
Result<Tensor> read_tensor_pb(const std::string &path);

} // namespace kiln::onnx_fe
