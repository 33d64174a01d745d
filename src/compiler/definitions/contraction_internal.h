// Helpers the contraction strategies share (contraction.cpp: tiled, registers, matrix;
// contraction_coop.cpp: cooperative matrices). Not part of the definition's interface.
#pragma once

#include "compiler/definitions/contraction.h"

#include <functional>
#include <optional>

namespace kiln::compiler::contraction_detail {

// The most workgroups a grid may have along one axis (Vulkan's guaranteed minimum).
constexpr int64_t kMaxGroups = 65535;

inline kir::Expr as_i32(kir::Expr e) { return kir::cast(kir::ScalarType::i32, std::move(e)); }

// Row-major coordinates of `flat` in `dims` (i32; `flat` < numel(dims)).
std::vector<kir::Expr> coords_of(const kir::Expr &flat, const Shape &dims);

// The value of one operand element as type `as`, zero outside the operand or where `extra`
// (undefined: none) is false; the index is clamped to 0 there so the load is always in bounds.
kir::Expr read(const kir::BufferVar &buf, const OperandRef &r, const kir::Expr &extra,
               kir::ScalarType as);

// Row m (or column n) of the tile clamped into the operand, so reads past the edge stay in
// bounds; the clamped rows compute values that are never stored.
kir::Expr clamp_to(const kir::Expr &x, int64_t extent, int64_t tile);

// Whether an operand map is a plain row-major matrix over (x, y) (see contraction.cpp): its
// row stride, or nothing.
std::optional<int64_t> row_major_stride(
    const std::function<OperandRef(int64_t z, int64_t x, int64_t y)> &at, int64_t batch,
    int64_t X, int64_t Y, int64_t chunk = 0);

// The invocation layout shared by both strategies. With split-K the grid's z is
// slice * batch + batch entry, and `slice` (else undefined) is the invocation's K slice.
struct Layout {
  int wx, wy;       // invocations along n and m
  int va = 1, vb = 1; // rows / columns per group (see the file comment)
  kir::Expr tx, ty, lid; // local coordinates, linear id
  kir::Expr m0, n0, z;   // tile origin and batch entry
  kir::Expr zg, slice;   // split-K: the grid's z and the slice
  // The tile-local row of register-block row i and column of block column j.
  kir::Expr row(int i) const { return va == 1 ? ty + i * wy : ty * va + ((i / va) * wy * va + i % va); }
  kir::Expr col(int j) const { return tx + j * wx; }
};

// The matrix strategy's kernel body (contraction_matrix.cpp; the C backend).
Result<kir::Stmt> matrix_body(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                              const Layout &l);

// The coop strategy's kernel (contraction_coop.cpp), bound and finished through `g`. With
// `steps_per_slice` > 0 it is split-K's partial-sum kernel: `slices` slices of that many tk
// steps, the grid's z (slice * batch + batch entry) bound as the i32 variable `zg`.
Status emit_coop(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                 int64_t steps_per_slice = 0, int64_t slices = 1);

} // namespace kiln::compiler::contraction_detail
