#include "ir/text.h"

namespace kiln {

Result<std::unique_ptr<Module>> parse_module(const OpRegistry &ops, const std::string &text,
                                             const std::string &filename) {
  return Status::error(filename + ": the text parser is not implemented yet");
}

} // namespace kiln
