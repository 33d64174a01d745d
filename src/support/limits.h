// Limits on what an input file (a model, an artifact, a .npy) can make kiln allocate or
// recurse into. Every size a file declares is checked against them before anything is
// allocated, so a hostile or corrupt file gets a clear error instead of exhausting memory.
// Set through environment variables (docs/LIMITS.md); the CLI reads them once at start-up.
#pragma once

#include "support/status.h"

#include <cstdint>

namespace kiln {

struct Limits {
  // One tensor: an initializer, external data, a .npy or .pb input, a value computed by the
  // reference executor, a buffer of a compiled program (KILN_MAX_TENSOR_BYTES).
  int64_t max_tensor_bytes = int64_t(16) << 30;
  // One model or artifact file read into memory (KILN_MAX_MODEL_BYTES). Protobuf cannot
  // parse an ONNX file of 2 GiB or more whatever this says.
  int64_t max_model_bytes = int64_t(2) << 30;
  // Nesting of control-flow subgraphs and model-local functions (KILN_MAX_GRAPH_DEPTH).
  int max_graph_depth = 64;
  // Nodes of a model once its local functions are inlined (KILN_MAX_NODES): a function that
  // calls another twice, 40 levels deep, would otherwise expand to 2^40 nodes.
  int64_t max_nodes = 1000000;
  // The largest constant expression fold-constants evaluates at compile time into the
  // artifact (KILN_MAX_FOLD_BYTES); a larger one runs on the device once, at load, as init
  // commands (a light model's ConstantOfShape weights).
  int64_t max_fold_bytes = int64_t(256) << 20;
};

// The limits in force: the defaults, or what load_limits_from_env() read.
const Limits &limits();

// Reads KILN_MAX_TENSOR_BYTES, KILN_MAX_MODEL_BYTES, KILN_MAX_FOLD_BYTES (a byte count, optionally
// with a K, M or G suffix: powers of 1024), KILN_MAX_GRAPH_DEPTH and KILN_MAX_NODES. Call once, before any other thread
// runs; an unparsable or non-positive value is an error naming the variable.
Status load_limits_from_env();

} // namespace kiln
