// The compiler's backend list: the one place backends are registered (target/backend.h).
#pragma once

#include "target/backend.h"

#include <string>
#include <vector>

namespace kiln::compiler {

// Registered backends, in a fixed order.
const std::vector<const target::BackendInfo *> &backends();

// The backend named by `t.backend`, configured from `t`; an error listing the registered
// backends when there is none of that name.
Result<std::unique_ptr<target::Backend>> create_backend(const kir::TargetDesc &t);

} // namespace kiln::compiler
