// kiln's core op set. Every op is registered explicitly by the family functions below;
// core_ops() builds the registry once.
#pragma once

#include "ir/op_registry.h"

namespace kiln {

// The registry with every core op (built on first use; thread-safe).
const OpRegistry &core_ops();

// One function per op family; each lives in its own file in src/ops/.
void register_core_basic_ops(OpRegistry &r);       // basic.cpp: constant
void register_elementwise_ops(OpRegistry &r);      // elementwise*.cpp
void register_reduce_ops(OpRegistry &r);           // reduce*.cpp, norm*.cpp
void register_shape_ops(OpRegistry &r);            // shape*.cpp
void register_nn_ops(OpRegistry &r);               // nn*.cpp
void register_misc_ops(OpRegistry &r);             // misc*.cpp: rnn, attention, signal, ...
void register_control_ops(OpRegistry &r);          // control.cpp: if, loop, scan

} // namespace kiln
