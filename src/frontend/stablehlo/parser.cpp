// placeholder: replaced by the StableHLO parser
#include "frontend/stablehlo/ast.h"
namespace kiln::stablehlo_fe {
Result<ModuleAst> parse_module(std::string_view, const std::string &file, const ParseOptions &) {
  return Status::error(file + ": StableHLO parser not built yet");
}
} // namespace kiln::stablehlo_fe
