// The elementwise op family (internal to src/ops/elementwise*.cpp).
//
// Core ops (all numpy-broadcasting where they take several operands):
//   unary, result dtype = operand dtype unless noted:
//     kiln.abs neg sign relu                      floats and integers
//     kiln.exp log sqrt reciprocal sin cos tan asin acos atan sinh cosh asinh acosh atanh erf
//          floor ceil round(half to even) sigmoid tanh softplus softsign mish gelu gelu_tanh
//          hard_swish                             floats
//     kiln.leaky_relu{alpha} elu{alpha} celu{alpha} thresholded_relu{alpha} swish{alpha}
//          selu{alpha,gamma} hard_sigmoid{alpha,beta}   floats
//     kiln.shrink{bias,lambd}                     floats and integers (computed in f64)
//     kiln.isnan isinf isposinf isneginf          floats -> bool
//     kiln.not                                    bool
//     kiln.bitwise_not                            integers
//   binary (same operand dtypes, except kiln.pow whose result has the base's dtype):
//     kiln.add sub mul div mod(sign of divisor) fmod(sign of dividend) pow max min
//     kiln.prelu(x, slope)
//     kiln.equal less greater less_equal greater_equal      -> bool
//     kiln.and or xor                                        bool
//     kiln.bitwise_and bitwise_or bitwise_xor                integers
//     kiln.shl shr                                           unsigned integers
//   kiln.where(cond, x, y); kiln.cast{to: DType}; kiln.bitcast{to: DType}
//
// Integer semantics: exact, in the int64/uint64 domain, wrapping to the result width.
// Integer division or modulo by zero gives 0 (defined here; ONNX leaves it undefined).
// INT64_MIN / -1 wraps to INT64_MIN.
#pragma once

#include "ops/op_util.h"

namespace kiln::elementwise {

// Which operand dtypes an op accepts.
enum class Accept : uint8_t {
  floats,        // f16 bf16 f32 f64
  numeric,       // floats and integers
  ints,          // integers
  unsigned_ints, // u8..u64
  boolean,       // bool
  any,           // every dtype (bool, integers, floats)
};

bool accepts(Accept a, DType t);
const char *accept_str(Accept a);

void register_unary_ops(OpRegistry &r);
void register_binary_ops(OpRegistry &r);
void register_misc_elementwise_ops(OpRegistry &r); // where, cast, bitcast

} // namespace kiln::elementwise
