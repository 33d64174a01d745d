// StableHLO import: parses MLIR text as JAX prints it (`jax.jit(f).lower(...).as_text()`, pretty
// or generic form) and maps the public function into kiln's core ops; private functions are
// inlined at their call sites. Everything after import is shared with the ONNX frontend.
#pragma once

#include "ir/graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace kiln::stablehlo_fe {

struct ImportOptions {
  int64_t max_constant_bytes = int64_t(1) << 30;
};

// The module gets one function "main": its parameters are the public function's arguments,
// named arg0, arg1, ...; its results are named out0, out1, ... Errors give FILE:LINE:COL and
// the op's text; an unsupported op or attribute names the op.
Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &opt = {});
Result<std::unique_ptr<Module>> import_text(std::string_view text, const std::string &file,
                                            const ImportOptions &opt = {});

} // namespace kiln::stablehlo_fe
