// Helpers shared by the pattern-matching passes (fuse-composites, fuse-attention).
#pragma once

#include "ir/graph.h"

#include <map>
#include <optional>
#include <vector>

namespace kiln::pattern {

using UseCounts = std::map<const Value *, int>;

// Adds to `uses` how many operands (in `g` and its regions) and results of `g` read each value.
void count_uses(const Graph &g, UseCounts &uses);

// The value of a kiln.constant (nullptr for anything else, an absent operand included).
const Tensor *constant_tensor(const Value *v);

// A new kiln.constant op holding `t` (not yet in `g`; its result is a value of `g`).
std::unique_ptr<Op> new_constant(Graph &g, Tensor t, const std::string &loc);

// The value of a one-element kiln.constant (any dtype but bool; `float_only`: a float dtype).
std::optional<double> scalar_const(const Value *v, bool float_only = false);

// Gives `op` (not yet in `g`) a result that replaces `root`'s only result (same type and name)
// and moves the use counts: the operand uses of the ops in `dead` (each counted once) go,
// `op`'s come. The caller inserts `op` into `g`.
void adopt_result(Graph &g, Op &root, Op &op, const std::vector<Op *> &dead, UseCounts &uses);

} // namespace kiln::pattern
