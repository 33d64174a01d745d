// Graph-IR passes: one pass per file, a stable name, run(Module&) -> Status. Pipelines are
// small functions listing passes (pass_manager.cpp).
#pragma once

#include "ir/graph.h"

#include <string>
#include <vector>

namespace kiln {

struct Pass {
  std::string name;        // stable, kebab-case: "dce"
  std::string description;
  Status (*run)(Module &m);
};

// Every registered pass, in a fixed order.
const std::vector<Pass> &all_passes();
const Pass *find_pass(std::string_view name);

Status run_dce(Module &m); // dce.cpp

} // namespace kiln
