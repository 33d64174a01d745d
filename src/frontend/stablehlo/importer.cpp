// placeholder: replaced by the StableHLO importer
#include "frontend/stablehlo/importer.h"
namespace kiln::stablehlo_fe {
Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &) {
  return Status::error(path + ": StableHLO import not built yet");
}
Result<std::unique_ptr<Module>> import_text(std::string_view, const std::string &file,
                                            const ImportOptions &) {
  return Status::error(file + ": StableHLO import not built yet");
}
} // namespace kiln::stablehlo_fe
