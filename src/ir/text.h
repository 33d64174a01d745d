// The textual form of the graph IR. print(parse(x)) == x for any printed module (exact round
// trip, constants included). Grammar (see docs/ARCHITECTURE.md):
//
//   func @main(%x: tensor<1x3xf32>, %y: tensor<3xf32>) -> (tensor<1x3xf32>) {
//     %0 = kiln.add %x, %y : (tensor<1x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
//     %1 = kiln.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
//     return %0
//   }
#pragma once

#include "ir/op_registry.h"

#include <string>

namespace kiln {

std::string print_module(const Module &m);
std::string print_function(const Function &f);

// Parses text; errors carry "file:line:col: message" (file as given).
Result<std::unique_ptr<Module>> parse_module(const OpRegistry &ops, const std::string &text,
                                             const std::string &filename = "<input>");

} // namespace kiln
