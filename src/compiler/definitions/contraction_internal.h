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

// The coop strategy's kernel (contraction_coop.cpp), bound and finished through `g`. With
// `steps_per_slice` > 0 it is split-K's partial-sum kernel: `slices` slices of that many tk
// steps, the grid's z (slice * batch + batch entry) bound as the i32 variable `zg`.
Status emit_coop(GridKernel &g, const ContractionDef &d, const TileConfig &t,
                 int64_t steps_per_slice = 0, int64_t slices = 1);

} // namespace kiln::compiler::contraction_detail
