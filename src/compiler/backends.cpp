#include "compiler/backends.h"

#include "target/c/c.h"
#include "target/spirv/spirv.h"

#include <fmt/format.h>

namespace kiln::compiler {

const std::vector<const target::BackendInfo *> &backends() {
  // Add a backend here (and to kiln_compiler's link line); nothing registers itself.
  static const std::vector<const target::BackendInfo *> all = {&spirv::backend_info(),
                                                                  &cgen::backend_info()};
  return all;
}

Result<std::unique_ptr<target::Backend>> create_backend(const kir::TargetDesc &t) {
  std::string known;
  for (const target::BackendInfo *b : backends()) {
    if (t.backend == b->name) return b->create(t);
    known += known.empty() ? b->name : fmt::format(", {}", b->name);
  }
  return Status::error(fmt::format("target '{}' needs backend '{}', which this kiln lacks "
                                   "(backends: {})",
                                   t.name, t.backend, known));
}

} // namespace kiln::compiler
