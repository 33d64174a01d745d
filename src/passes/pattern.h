// Helpers shared by the pattern-matching passes (fuse-composites, fuse-attention).
#pragma once

#include "ir/graph.h"

#include <map>
#include <optional>

namespace kiln::pattern {

using UseCounts = std::map<const Value *, int>;

// Adds to `uses` how many operands (in `g` and its regions) and results of `g` read each value.
void count_uses(const Graph &g, UseCounts &uses);

// The value of a one-element kiln.constant (any dtype but bool; `float_only`: a float dtype).
std::optional<double> scalar_const(const Value *v, bool float_only = false);

} // namespace kiln::pattern
