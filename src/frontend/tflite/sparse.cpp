// Densifies a sparse constant tensor (TFLite's SparsityParameters: a traversal order over the
// tensor's dimensions plus block dimensions, each stored dense or as CSR segments/indices).
// Every index read from the file is bounds-checked.
#include "frontend/tflite/sparse.h"
#include "kiln/tflite/tflite_generated.h"

#include <cstring>
#include <fmt/format.h>

namespace kiln::tflite_fe {

namespace fb = ::kiln::tflite_fb;

namespace {

struct IndexVec {
  const void *p = nullptr;
  int kind = 0; // 1 int32, 2 uint16, 3 uint8
  size_t n = 0;
  int64_t at(size_t i) const {
    switch (kind) {
    case 1: return static_cast<const int32_t *>(p)[i];
    case 2: return static_cast<const uint16_t *>(p)[i];
    default: return static_cast<const uint8_t *>(p)[i];
    }
  }
};

Result<IndexVec> index_vec(fb::SparseIndexVector type, const void *v) {
  IndexVec r;
  if (!v) return Status::error("a sparse dimension has no segment or index vector");
  switch (type) {
  case fb::SparseIndexVector::Int32Vector: {
    auto *x = static_cast<const fb::Int32Vector *>(v);
    if (x->values()) r = {x->values()->data(), 1, x->values()->size()};
    break;
  }
  case fb::SparseIndexVector::Uint16Vector: {
    auto *x = static_cast<const fb::Uint16Vector *>(v);
    if (x->values()) r = {x->values()->data(), 2, x->values()->size()};
    break;
  }
  case fb::SparseIndexVector::Uint8Vector: {
    auto *x = static_cast<const fb::Uint8Vector *>(v);
    if (x->values()) r = {x->values()->data(), 3, x->values()->size()};
    break;
  }
  default: return Status::error("unknown sparse index vector type");
  }
  return r;
}

struct Level {
  int64_t dim = 0;   // expanded dimension this level walks
  bool csr = false;
  int64_t size = 0;  // dense size
  IndexVec seg, idx;
};

struct Walker {
  std::vector<Level> levels;
  std::vector<int64_t> coord;        // per expanded dim
  std::vector<int64_t> expanded;     // sizes
  std::vector<int64_t> block_of;     // per original dim: block dim index or -1
  const Shape *shape;
  const uint8_t *values;
  size_t nvalues, esize;
  uint8_t *out;
  std::vector<int64_t> strides;

  Status walk(size_t level, int64_t pos) {
    if (level == levels.size()) {
      if (pos < 0 || static_cast<size_t>(pos) >= nvalues)
        return Status::error("sparse tensor addresses a value past its data");
      int64_t flat = 0;
      const size_t n = shape->size();
      for (size_t d = 0; d < n; ++d) {
        int64_t c = coord[d];
        if (block_of[d] >= 0) c = c * expanded[n + block_of[d]] + coord[n + block_of[d]];
        if (c < 0 || c >= (*shape)[d]) return Status::error("sparse index is out of range");
        flat += c * strides[d];
      }
      std::memcpy(out + flat * esize, values + pos * esize, esize);
      return Status::ok();
    }
    const Level &l = levels[level];
    if (!l.csr) {
      for (int64_t i = 0; i < l.size; ++i) {
        coord[l.dim] = i;
        KILN_TRY(walk(level + 1, pos * l.size + i));
      }
      return Status::ok();
    }
    if (pos < 0 || static_cast<size_t>(pos) + 1 >= l.seg.n) return Status::error("sparse segment is out of range");
    const int64_t b = l.seg.at(pos), e = l.seg.at(pos + 1);
    if (b < 0 || e < b || static_cast<size_t>(e) > l.idx.n) return Status::error("sparse segment is malformed");
    for (int64_t j = b; j < e; ++j) {
      const int64_t i = l.idx.at(j);
      if (i < 0 || i >= expanded[l.dim]) return Status::error("sparse index is out of range");
      coord[l.dim] = i;
      KILN_TRY(walk(level + 1, j));
    }
    return Status::ok();
  }
};

} // namespace

Result<std::vector<uint8_t>> densify(const fb::SparsityParameters &sp, const Shape &shape, size_t esize,
                                     const uint8_t *values, size_t nbytes) {
  const size_t n = shape.size();
  const auto *order = sp.traversal_order();
  const auto *md = sp.dim_metadata();
  const size_t k = sp.block_map() ? sp.block_map()->size() : 0;
  if (!order || !md || order->size() != n + k || md->size() != n + k)
    return Status::error("sparsity parameters do not describe every dimension");
  Walker w;
  w.shape = &shape;
  w.expanded.assign(n + k, 0);
  w.block_of.assign(n, -1);
  for (size_t j = 0; j < k; ++j) {
    const int32_t d = sp.block_map()->Get(static_cast<flatbuffers::uoffset_t>(j));
    if (d < 0 || static_cast<size_t>(d) >= n || w.block_of[d] >= 0) return Status::error("block map is invalid");
    w.block_of[d] = static_cast<int64_t>(j);
  }
  // Sizes of block dimensions come from their (dense) metadata.
  for (size_t i = 0; i < n + k; ++i) {
    const int32_t d = order->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (d < 0 || static_cast<size_t>(d) >= n + k) return Status::error("traversal order is invalid");
    if (static_cast<size_t>(d) >= n) w.expanded[d] = md->Get(static_cast<flatbuffers::uoffset_t>(i))->dense_size();
  }
  for (size_t d = 0; d < n; ++d) {
    if (w.block_of[d] < 0) {
      w.expanded[d] = shape[d];
      continue;
    }
    const int64_t bs = w.expanded[n + w.block_of[d]];
    if (bs <= 0 || shape[d] % bs != 0) return Status::error("block size does not divide the dimension");
    w.expanded[d] = shape[d] / bs;
  }
  std::vector<bool> seen(n + k, false);
  for (size_t i = 0; i < n + k; ++i) {
    const int32_t d = order->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (seen[d]) return Status::error("traversal order repeats a dimension");
    seen[d] = true;
    const fb::DimensionMetadata *m = md->Get(static_cast<flatbuffers::uoffset_t>(i));
    Level l;
    l.dim = d;
    l.csr = m->format() == fb::DimensionType::SPARSE_CSR;
    if (!l.csr) {
      l.size = m->dense_size();
      if (l.size != w.expanded[d]) return Status::error("dense dimension size does not match the shape");
    } else {
      KILN_ASSIGN(l.seg, index_vec(m->array_segments_type(), m->array_segments()));
      KILN_ASSIGN(l.idx, index_vec(m->array_indices_type(), m->array_indices()));
    }
    w.levels.push_back(l);
  }
  w.coord.assign(n + k, 0);
  w.strides = shape_strides(shape);
  w.values = values;
  w.esize = esize;
  w.nvalues = esize ? nbytes / esize : 0;
  if (w.nvalues * esize != nbytes) return Status::error("sparse data is not a whole number of values");
  std::vector<uint8_t> out(static_cast<size_t>(shape_numel(shape)) * esize, 0);
  w.out = out.data();
  KILN_TRY(w.walk(0, 0));
  return out;
}

} // namespace kiln::tflite_fe
