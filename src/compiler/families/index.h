// Internal to the index lowering family (families/index*.cpp): registration of the split files
// and index helpers shared by them.
#pragma once

#include "compiler/lowering/lower.h"

namespace kiln::compiler::index {

void add_gen_lowerings(LoweringTable &t);  // index_gen.cpp: generators, trilu, bitcast...
void add_move_lowerings(LoweringTable &t); // index_move.cpp: depth/space, unpool, pow...

// A data-dependent index `v` (any integer type) into an axis of `dim` elements: negative
// values count from the end, then the result is clamped into [0, dim) and returned as i32.
// The reference rejects out-of-range indices; a kernel cannot report them, so it reads the
// nearest valid element instead of reading out of bounds.
kir::Expr clamp_index(const kir::Expr &v, int64_t dim);
// Whether index `v` (any integer type; negative counts from the end of an axis of `dim`
// elements) addresses coordinate `coord` (i32, in range). Compared in v's own type, so
// out-of-range indices never match.
kir::Expr index_is(const kir::Expr &v, int64_t dim, const kir::Expr &coord);
// A zero of element type `t` (false for boolean).
kir::Expr zero_of(kir::ScalarType t);

} // namespace kiln::compiler::index
