// Indexing: dynamic_slice, dynamic_update_slice, gather, scatter.
//
// StableHLO clamps gather / dynamic_slice start indices so that the slice fits, and skips a
// scatter update window that does not fit; kiln's gather / scatter ops instead reject out-of-range
// indices. The converters therefore clamp explicitly, and scatter redirects windows that do not
// fit to one extra row appended to the operand, sliced off afterwards.
//
// gather: x[idx] / jnp.take along one axis map to kiln.gather; every other form (batching dims,
// several indexed dims, windows) is computed as one full index tuple per result element and
// kiln.gather_nd. scatter works the same way with kiln.scatter_nd over update elements.
#include "frontend/stablehlo/convert.h"

#include <algorithm>
#include <fmt/format.h>

namespace kiln::stablehlo_fe {

namespace {

bool contains(const std::vector<int64_t> &v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t position(const std::vector<int64_t> &v, int64_t x) {
  return static_cast<int64_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

Result<Value *> to_i64(OpCtx &c, Value *v) {
  if (!is_integer(v->type.dtype))
    return c.error(fmt::format("indices must be integers, got {}", dtype_name(v->type.dtype)));
  return c.cast(v, DType::i64);
}

// ---- dynamic_slice / dynamic_update_slice ------------------------------------------------------

// The start indices clamped into [0, dim - size] (i64 scalars); constants fold.
Result<std::vector<Value *>> clamped_starts(OpCtx &c, size_t first, const Shape &dims,
                                            const Shape &sizes) {
  std::vector<Value *> out;
  for (size_t d = 0; d < dims.size(); ++d) {
    Value *s = c.in.at(first + d);
    if (s->type.rank() != 0) return c.error("start indices must be scalars");
    KILN_ASSIGN(s, to_i64(c, s));
    if (sizes[d] > dims[d]) return c.error("the slice is larger than the operand");
    KILN_ASSIGN(s, c.clamp(s, c.scalar_int(DType::i64, 0), c.scalar_int(DType::i64, dims[d] - sizes[d])));
    out.push_back(s);
  }
  return out;
}

Outs convert_dynamic_slice(OpCtx &c) {
  Value *x = c.in.at(0);
  const Shape dims = x->type.dims;
  KILN_ASSIGN(std::vector<int64_t> sizes, c.ints("slice_sizes"));
  if (sizes.size() != dims.size() || c.in.size() != 1 + dims.size())
    return c.error("dynamic_slice needs one start index and one size per dim");
  KILN_ASSIGN(auto starts, clamped_starts(c, 1, dims, sizes));
  bool all_const = true;
  for (Value *s : starts) all_const = all_const && Builder::constant_value(s);
  if (all_const) {
    std::vector<int64_t> st, lim, step(dims.size(), 1);
    for (size_t d = 0; d < dims.size(); ++d) {
      st.push_back(Builder::constant_value(starts[d])->get_i64(0));
      lim.push_back(st.back() + sizes[d]);
    }
    return one(c.slice(x, st, lim, step));
  }
  // One kiln.gather per sliced dim with indices start + [0, size).
  for (size_t d = 0; d < dims.size(); ++d) {
    if (sizes[d] == dims[d]) continue;
    KILN_ASSIGN(Value * r, c.iota({sizes[d]}, 0));
    KILN_ASSIGN(Value * idx, c.make("kiln.add", {r, starts[d]}));
    KILN_ASSIGN(x, c.make("kiln.gather", {x, idx}, {{"axis", static_cast<int64_t>(d)}}));
  }
  return std::vector<Value *>{x};
}

// Index tuples start + local index over the leading k dims of `shape` (an i64 tensor of shape
// shape[:k] + [k]).
Result<Value *> index_grid(OpCtx &c, const std::vector<Value *> &starts, const Shape &shape, size_t k) {
  Shape lead(shape.begin(), shape.begin() + static_cast<int64_t>(k));
  std::vector<Value *> comps;
  for (size_t j = 0; j < k; ++j) {
    KILN_ASSIGN(Value * r, c.iota(lead, static_cast<int64_t>(j)));
    KILN_ASSIGN(Value * v, c.make("kiln.add", {r, starts[j]}));
    comps.push_back(v);
  }
  return c.stack_last(comps);
}

Outs convert_dynamic_update_slice(OpCtx &c) {
  Value *x = c.in.at(0), *u = c.in.at(1);
  const Shape dims = x->type.dims, us = u->type.dims;
  if (us.size() != dims.size() || c.in.size() != 2 + dims.size())
    return c.error("dynamic_update_slice needs one start index per dim");
  KILN_ASSIGN(auto starts, clamped_starts(c, 2, dims, us));
  // Dims from k on are fully overwritten (start 0 after clamping); scatter over the first k.
  size_t k = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    if (us[d] != dims[d]) k = d + 1;
  if (k == 0) return std::vector<Value *>{u};
  KILN_ASSIGN(Value * idx, index_grid(c, starts, us, k));
  return one(c.make("kiln.scatter_nd", {x, idx, u}));
}

// ---- gather -------------------------------------------------------------------------------------

struct GatherDims {
  std::vector<int64_t> offset, collapsed, obatch, ibatch, index_map;
  int64_t ivd = 0;
};

// Start indices as [batch..., nk] (index_vector_dim moved last or appended), i64.
Result<Value *> index_vectors(OpCtx &c, Value *idx, int64_t ivd) {
  KILN_ASSIGN(idx, to_i64(c, idx));
  const int64_t r = idx->type.rank();
  if (ivd == r) {
    Shape s = idx->type.dims;
    s.push_back(1);
    return c.reshape(idx, s);
  }
  if (ivd < 0 || ivd > r) return c.error("index_vector_dim is out of range");
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r; ++d)
    if (d != ivd) perm.push_back(d);
  perm.push_back(ivd);
  return c.transpose(idx, perm);
}

// Component k of the index vectors ([batch...] shape), placed at `bpos` of a rank-`rank` tensor
// and expanded to `shape`.
Result<Value *> component(OpCtx &c, Value *iv, int64_t k, const std::vector<int64_t> &bpos,
                          const Shape &shape) {
  const Shape &d = iv->type.dims;
  const int64_t nb = static_cast<int64_t>(d.size()) - 1;
  std::vector<int64_t> st(d.size(), 0), lim(d), step(d.size(), 1);
  st[nb] = k;
  lim[nb] = k + 1;
  KILN_ASSIGN(Value * s, c.slice(iv, st, lim, step));
  Shape placed(shape.size(), 1);
  for (int64_t i = 0; i < nb; ++i) placed[bpos[i]] = d[i];
  KILN_ASSIGN(s, c.reshape(s, placed));
  return s;
}

// Batch index of original start-index dim `sd` among the dims other than index_vector_dim.
int64_t batch_index(int64_t sd, int64_t ivd) { return sd > ivd ? sd - 1 : sd; }

Status distinct_in_range(OpCtx &c, const std::vector<int64_t> &v, int64_t n, const char *what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(n, 0)), false);
  for (int64_t d : v) {
    if (d < 0 || d >= n || seen[d]) return c.error(fmt::format("{} are invalid", what));
    seen[d] = true;
  }
  return Status::ok();
}

// The dimension numbers gather and scatter share: operand dims named by index_map, collapsed
// (inserted) and batching lists; index dims named by the index batching list.
Status check_dnums(OpCtx &c, int64_t r, int64_t idx_rank, int64_t ivd,
                   const std::vector<int64_t> &index_map, const std::vector<int64_t> &collapsed,
                   const std::vector<int64_t> &obatch, const std::vector<int64_t> &ibatch) {
  KILN_TRY(distinct_in_range(c, index_map, r, "index map dims"));
  KILN_TRY(distinct_in_range(c, collapsed, r, "collapsed / inserted window dims"));
  KILN_TRY(distinct_in_range(c, obatch, r, "operand batching dims"));
  KILN_TRY(distinct_in_range(c, ibatch, idx_rank, "index batching dims"));
  for (int64_t d : obatch)
    if (contains(index_map, d) || contains(collapsed, d))
      return c.error("a batching dim is also indexed or collapsed");
  for (int64_t d : ibatch)
    if (d == ivd) return c.error("index_vector_dim is a batching dim");
  return Status::ok();
}

Outs convert_gather(OpCtx &c) {
  Value *x = c.in.at(0);
  const Attr *dn = c.attr("dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing gather dimension_numbers");
  GatherDims g;
  KILN_ASSIGN(g.offset, c.field_ints(*dn, "offset_dims"));
  KILN_ASSIGN(g.collapsed, c.field_ints(*dn, "collapsed_slice_dims"));
  KILN_ASSIGN(g.obatch, c.field_ints(*dn, "operand_batching_dims"));
  KILN_ASSIGN(g.ibatch, c.field_ints(*dn, "start_indices_batching_dims"));
  KILN_ASSIGN(g.index_map, c.field_ints(*dn, "start_index_map"));
  KILN_ASSIGN(g.ivd, c.field_int(*dn, "index_vector_dim", 0));
  KILN_ASSIGN(std::vector<int64_t> sizes, c.ints("slice_sizes"));
  const Shape xd = x->type.dims;
  const int64_t r = x->type.rank();
  const Shape &out = c.result_dims();
  if (static_cast<int64_t>(sizes.size()) != r) return c.error("slice_sizes needs one entry per dim");
  if (g.obatch.size() != g.ibatch.size()) return c.error("batching dimension lists differ in length");
  for (int64_t d = 0; d < r; ++d)
    if (sizes[d] < 0 || sizes[d] > xd[d]) return c.error("slice_sizes exceed the operand");
  KILN_ASSIGN(Value * iv, index_vectors(c, c.in.at(1), g.ivd));
  const Shape ivd = iv->type.dims;
  const int64_t nb = static_cast<int64_t>(ivd.size()) - 1;
  if (ivd[nb] != static_cast<int64_t>(g.index_map.size()))
    return c.error("the index vector length differs from start_index_map");
  if (static_cast<int64_t>(out.size()) != nb + static_cast<int64_t>(g.offset.size()))
    return c.error("result rank does not match offset_dims and the batch dims");
  KILN_TRY(check_dnums(c, r, c.in[1]->type.rank(), g.ivd, g.index_map, g.collapsed, g.obatch, g.ibatch));
  KILN_TRY(distinct_in_range(c, g.offset, static_cast<int64_t>(out.size()), "offset_dims"));
  for (int64_t d : g.collapsed)
    if (sizes[d] > 1) return c.error("collapsed slice dims must have slice size 1");
  for (int64_t d : g.obatch)
    if (sizes[d] > 1) return c.error("operand batching dims must have slice size 1");
  std::vector<int64_t> bpos; // result positions of the batch dims
  for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
    if (!contains(g.offset, i)) bpos.push_back(i);
  for (int64_t i = 0; i < nb; ++i)
    if (out[bpos[i]] != ivd[i]) return c.error("result batch dims do not match the indices");

  // x[idx] along one axis a: kiln.gather (result: x dims before a, batch dims, x dims after a).
  if (g.index_map.size() == 1 && g.collapsed == g.index_map && g.obatch.empty()) {
    const int64_t a = g.index_map[0];
    bool take = a >= 0 && a < r && sizes[a] == 1;
    for (int64_t d = 0; d < r && take; ++d)
      if (d != a && sizes[d] != xd[d]) take = false;
    for (int64_t i = 0; i < nb && take; ++i)
      if (bpos[i] != a + i) take = false;
    if (take) {
      KILN_ASSIGN(Value * s, c.reshape(iv, Shape(ivd.begin(), ivd.end() - 1)));
      KILN_ASSIGN(s, c.clamp(s, c.scalar_int(DType::i64, 0), c.scalar_int(DType::i64, xd[a] - 1)));
      return one(c.make("kiln.gather", {x, s}, {{"axis", a}}));
    }
  }

  // General form: the full operand index of every result element.
  std::vector<int64_t> window_dims; // operand dims that have an offset dim in the result
  for (int64_t d = 0; d < r; ++d)
    if (!contains(g.collapsed, d) && !contains(g.obatch, d)) window_dims.push_back(d);
  if (window_dims.size() != g.offset.size()) return c.error("offset_dims do not match the slice dims");
  for (size_t j = 0; j < window_dims.size(); ++j)
    if (out[g.offset[j]] != sizes[window_dims[j]]) return c.error("result offset dims do not match slice_sizes");
  std::vector<Value *> comps;
  for (int64_t d = 0; d < r; ++d) {
    Value *comp = nullptr;
    if (contains(g.obatch, d)) {
      const int64_t sd = g.ibatch[position(g.obatch, d)];
      const int64_t pos = bpos[batch_index(sd, g.ivd)];
      if (out[pos] != xd[d]) return c.error("batching dims differ in size");
      KILN_ASSIGN(comp, c.iota(out, pos));
    } else {
      if (contains(g.index_map, d)) {
        KILN_ASSIGN(Value * s, component(c, iv, position(g.index_map, d), bpos, out));
        KILN_ASSIGN(s, c.clamp(s, c.scalar_int(DType::i64, 0), c.scalar_int(DType::i64, xd[d] - sizes[d])));
        comp = s;
      }
      if (contains(window_dims, d)) {
        KILN_ASSIGN(Value * o, c.iota(out, g.offset[position(window_dims, d)]));
        if (comp) {
          KILN_ASSIGN(o, c.make("kiln.add", {comp, o}));
        }
        comp = o;
      }
      if (!comp) comp = c.scalar_int(DType::i64, 0);
    }
    KILN_ASSIGN(comp, c.expand(comp, out));
    comps.push_back(comp);
  }
  KILN_ASSIGN(Value * idx, c.stack_last(comps));
  return one(c.make("kiln.gather_nd", {x, idx}));
}

// ---- scatter ------------------------------------------------------------------------------------

// The update computation: "none" (the update replaces), or a kiln scatter reduction.
Result<std::string> scatter_reduction(OpCtx &c, DType t) {
  if (c.op.regions.size() != 1) return c.error("scatter needs one update computation region");
  const Block &blk = c.op.regions[0];
  if (blk.arg_names.size() != 2) return c.error("only scatter with one operand is supported");
  if (blk.ops.size() == 1 && blk.ops[0].operands.size() == 1 && blk.ops[0].operands[0] == blk.arg_names[1])
    return std::string("none");
  const std::string op = single_binary_body(blk);
  if (op == "stablehlo.add" && !is_bool(t)) return std::string("add");
  if (op == "stablehlo.multiply" && !is_bool(t)) return std::string("mul");
  if (op == "stablehlo.maximum" || (op == "stablehlo.or" && is_bool(t))) return std::string("max");
  if (op == "stablehlo.minimum" || (op == "stablehlo.and" && is_bool(t))) return std::string("min");
  return c.error("scatter update computation is not supported (expected set, add, multiply, "
                 "maximum or minimum)");
}

Outs convert_scatter(OpCtx &c) {
  if (c.in.size() != 3) return c.error("only scatter with one operand is supported");
  Value *x = c.in[0], *u = c.in[2];
  const Attr *dn = c.attr("scatter_dimension_numbers");
  if (!dn) dn = c.attr("dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing scatter_dimension_numbers");
  KILN_ASSIGN(auto window, c.field_ints(*dn, "update_window_dims"));
  KILN_ASSIGN(auto inserted, c.field_ints(*dn, "inserted_window_dims"));
  KILN_ASSIGN(auto obatch, c.field_ints(*dn, "input_batching_dims"));
  KILN_ASSIGN(auto ibatch, c.field_ints(*dn, "scatter_indices_batching_dims"));
  KILN_ASSIGN(auto index_map, c.field_ints(*dn, "scatter_dims_to_operand_dims"));
  KILN_ASSIGN(int64_t ivdim, c.field_int(*dn, "index_vector_dim", 0));
  KILN_ASSIGN(std::string red, scatter_reduction(c, x->type.dtype));
  const Shape xd = x->type.dims, ud = u->type.dims;
  const int64_t r = x->type.rank();
  if (obatch.size() != ibatch.size()) return c.error("batching dimension lists differ in length");
  KILN_ASSIGN(Value * iv, index_vectors(c, c.in[1], ivdim));
  const Shape ivd = iv->type.dims;
  const int64_t nb = static_cast<int64_t>(ivd.size()) - 1;
  if (ivd[nb] != static_cast<int64_t>(index_map.size()))
    return c.error("the index vector length differs from scatter_dims_to_operand_dims");
  KILN_TRY(check_dnums(c, r, c.in[1]->type.rank(), ivdim, index_map, inserted, obatch, ibatch));
  KILN_TRY(distinct_in_range(c, window, static_cast<int64_t>(ud.size()), "update_window_dims"));
  std::vector<int64_t> upos; // update dims that are scatter (batch) dims
  for (int64_t i = 0; i < static_cast<int64_t>(ud.size()); ++i)
    if (!contains(window, i)) upos.push_back(i);
  if (static_cast<int64_t>(upos.size()) != nb) return c.error("updates rank does not match the indices");
  for (int64_t i = 0; i < nb; ++i)
    if (ud[upos[i]] != ivd[i]) return c.error("update scatter dims do not match the indices");
  std::vector<int64_t> window_dims;
  for (int64_t d = 0; d < r; ++d)
    if (!contains(inserted, d) && !contains(obatch, d)) window_dims.push_back(d);
  if (window_dims.size() != window.size()) return c.error("update_window_dims do not match the operand");
  for (size_t j = 0; j < window.size(); ++j)
    if (ud[window[j]] > xd[window_dims[j]]) return c.error("an update window is larger than the operand");
  // Per operand dim: the index of every update element (unclamped) and whether its window fits.
  Value *valid = nullptr;
  std::vector<Value *> comps;
  for (int64_t d = 0; d < r; ++d) {
    Value *comp = nullptr;
    if (contains(obatch, d)) {
      const int64_t sd = ibatch[position(obatch, d)];
      const int64_t pos = upos[batch_index(sd, ivdim)];
      if (ud[pos] != xd[d]) return c.error("batching dims differ in size");
      KILN_ASSIGN(comp, c.iota(ud, pos));
    } else {
      const int64_t wsize = contains(window_dims, d) ? ud[window[position(window_dims, d)]] : 1;
      if (contains(index_map, d)) {
        KILN_ASSIGN(Value * s, component(c, iv, position(index_map, d), upos, ud));
        KILN_ASSIGN(Value * ge, c.make("kiln.greater_equal", {s, c.scalar_int(DType::i64, 0)}));
        KILN_ASSIGN(Value * le, c.make("kiln.less_equal", {s, c.scalar_int(DType::i64, xd[d] - wsize)}));
        KILN_ASSIGN(Value * ok, c.make("kiln.and", {ge, le}));
        if (valid) {
          KILN_ASSIGN(ok, c.make("kiln.and", {valid, ok}));
        }
        valid = ok;
        comp = s;
      }
      if (contains(window_dims, d)) {
        KILN_ASSIGN(Value * o, c.iota(ud, window[position(window_dims, d)]));
        if (comp) {
          KILN_ASSIGN(o, c.make("kiln.add", {comp, o}));
        }
        comp = o;
      }
      if (!comp) comp = c.scalar_int(DType::i64, 0);
    }
    comps.push_back(comp);
  }
  // Windows that do not fit go to an extra row appended to dim 0.
  bool all_valid = !valid;
  if (valid) {
    const Tensor *v = Builder::constant_value(valid);
    if (v) {
      all_valid = true;
      for (int64_t i = 0; i < v->numel(); ++i) all_valid = all_valid && v->get_i64(i) != 0;
    }
  }
  if (!all_valid && r == 0) return c.error("scatter into a scalar with out-of-range indices");
  if (!all_valid) {
    for (int64_t d = 0; d < r; ++d) {
      Value *other = c.scalar_int(DType::i64, d == 0 ? xd[0] : 0);
      KILN_ASSIGN(comps[d], c.make("kiln.where", {valid, comps[d], other}));
    }
    std::vector<int64_t> lo(r, 0), hi(r, 0);
    hi[0] = 1;
    Value *zero = is_float(x->type.dtype) ? c.scalar(x->type.dtype, 0) : c.scalar_int(x->type.dtype, 0);
    KILN_ASSIGN(x, c.pad(x, lo, hi, zero));
  }
  for (auto &comp : comps) {
    KILN_ASSIGN(comp, c.expand(comp, ud));
  }
  KILN_ASSIGN(Value * idx, c.stack_last(comps));
  AttrMap a;
  if (red != "none") a["reduction"] = red;
  KILN_ASSIGN(Value * y, c.make("kiln.scatter_nd", {x, idx, u}, a));
  if (!all_valid) {
    std::vector<int64_t> st(r, 0), lim(xd), step(r, 1);
    KILN_ASSIGN(y, c.slice(y, st, lim, step));
  }
  return std::vector<Value *>{y};
}

} // namespace

void register_gather(ConverterTable &t) {
  t.add("stablehlo.dynamic_slice", convert_dynamic_slice);
  t.add("stablehlo.dynamic_update_slice", convert_dynamic_update_slice);
  t.add("stablehlo.gather", convert_gather);
  t.add("stablehlo.scatter", convert_scatter);
}

} // namespace kiln::stablehlo_fe
