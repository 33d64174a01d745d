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

// Where the parts of an operand index come from, shared by gather (one index per result element)
// and scatter (one per update element); `target` is the result / updates shape.
struct IndexPlan {
  std::vector<int64_t> index_map, collapsed, obatch, ibatch;
  std::vector<int64_t> window_dims; // operand dims with a window offset
  std::vector<int64_t> offset;      // target dims holding those offsets
  std::vector<int64_t> bpos;        // target dims holding the batch (index) dims
  int64_t ivd = 0;
  Value *iv = nullptr; // index vectors [batch..., nk], i64
  Shape target;
};

// Reads and checks the dimension numbers against the operand, indices and target shapes.
Status plan_indices(OpCtx &c, IndexPlan &p, const Shape &xd, Value *indices) {
  const int64_t r = static_cast<int64_t>(xd.size());
  if (p.obatch.size() != p.ibatch.size()) return c.error("batching dimension lists differ in length");
  KILN_TRY(check_dnums(c, r, indices->type.rank(), p.ivd, p.index_map, p.collapsed, p.obatch, p.ibatch));
  KILN_TRY(distinct_in_range(c, p.offset, static_cast<int64_t>(p.target.size()), "window / offset dims"));
  KILN_ASSIGN(p.iv, index_vectors(c, indices, p.ivd));
  const Shape ivd = p.iv->type.dims;
  const int64_t nb = static_cast<int64_t>(ivd.size()) - 1;
  if (ivd[nb] != static_cast<int64_t>(p.index_map.size()))
    return c.error("the index vector length differs from the index map");
  for (int64_t i = 0; i < static_cast<int64_t>(p.target.size()); ++i)
    if (!contains(p.offset, i)) p.bpos.push_back(i);
  if (static_cast<int64_t>(p.bpos.size()) != nb) return c.error("the result / updates rank does not match the indices");
  for (int64_t i = 0; i < nb; ++i)
    if (p.target[p.bpos[i]] != ivd[i]) return c.error("the batch dims do not match the indices");
  for (int64_t d = 0; d < r; ++d)
    if (!contains(p.collapsed, d) && !contains(p.obatch, d)) p.window_dims.push_back(d);
  if (p.window_dims.size() != p.offset.size()) return c.error("the window dims do not match the operand");
  for (size_t k = 0; k < p.obatch.size(); ++k)
    if (p.target[p.bpos[batch_index(p.ibatch[k], p.ivd)]] != xd[p.obatch[k]])
      return c.error("batching dims differ in size");
  return Status::ok();
}

// Operand index along dim d for every target element: the batch position for batching dims,
// else start (clamped to [0, xd - window] when `clamp`) plus the window offset.
Result<Value *> index_component(OpCtx &c, const IndexPlan &p, int64_t d, const Shape &xd,
                                int64_t window, bool clamp, Value **start) {
  if (contains(p.obatch, d))
    return c.iota(p.target, p.bpos[batch_index(p.ibatch[position(p.obatch, d)], p.ivd)]);
  Value *comp = nullptr;
  if (contains(p.index_map, d)) {
    KILN_ASSIGN(comp, component(c, p.iv, position(p.index_map, d), p.bpos, p.target));
    if (clamp) {
      KILN_ASSIGN(comp, c.clamp(comp, c.scalar_int(DType::i64, 0), c.scalar_int(DType::i64, xd[d] - window)));
    }
    if (start) *start = comp;
  }
  if (contains(p.window_dims, d)) {
    KILN_ASSIGN(Value * o, c.iota(p.target, p.offset[position(p.window_dims, d)]));
    if (!comp) return o;
    return c.make("kiln.add", {comp, o});
  }
  return comp ? comp : c.scalar_int(DType::i64, 0);
}

// x[idx] along one axis a (the result holds x's dims before a, the batch dims, x's dims after
// a): kiln.gather with clamped indices; nullptr when the gather has another form.
Result<Value *> gather_take(OpCtx &c, Value *x, const IndexPlan &p, const std::vector<int64_t> &sizes) {
  if (p.index_map.size() != 1 || p.collapsed != p.index_map || !p.obatch.empty()) return nullptr;
  const int64_t a = p.index_map[0], r = x->type.rank();
  const Shape &xd = x->type.dims;
  if (sizes[a] != 1) return nullptr;
  for (int64_t d = 0; d < r; ++d)
    if (d != a && sizes[d] != xd[d]) return nullptr;
  for (size_t i = 0; i < p.bpos.size(); ++i)
    if (p.bpos[i] != a + static_cast<int64_t>(i)) return nullptr;
  const Shape &ivd = p.iv->type.dims;
  KILN_ASSIGN(Value * s, c.reshape(p.iv, Shape(ivd.begin(), ivd.end() - 1)));
  KILN_ASSIGN(s, c.clamp(s, c.scalar_int(DType::i64, 0), c.scalar_int(DType::i64, xd[a] - 1)));
  return c.make("kiln.gather", {x, s}, {{"axis", a}});
}

Outs convert_gather(OpCtx &c) {
  Value *x = c.in.at(0);
  const Attr *dn = c.attr("dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing gather dimension_numbers");
  IndexPlan p;
  KILN_ASSIGN(p.offset, c.field_ints(*dn, "offset_dims"));
  KILN_ASSIGN(p.collapsed, c.field_ints(*dn, "collapsed_slice_dims"));
  KILN_ASSIGN(p.obatch, c.field_ints(*dn, "operand_batching_dims"));
  KILN_ASSIGN(p.ibatch, c.field_ints(*dn, "start_indices_batching_dims"));
  KILN_ASSIGN(p.index_map, c.field_ints(*dn, "start_index_map"));
  KILN_ASSIGN(p.ivd, c.field_int(*dn, "index_vector_dim", 0));
  KILN_ASSIGN(std::vector<int64_t> sizes, c.ints("slice_sizes"));
  const Shape xd = x->type.dims;
  const int64_t r = x->type.rank();
  p.target = c.result_dims();
  if (static_cast<int64_t>(sizes.size()) != r) return c.error("slice_sizes needs one entry per dim");
  for (int64_t d = 0; d < r; ++d)
    if (sizes[d] < 0 || sizes[d] > xd[d]) return c.error("slice_sizes exceed the operand");
  KILN_TRY(plan_indices(c, p, xd, c.in.at(1)));
  for (int64_t d : p.collapsed)
    if (sizes[d] > 1) return c.error("collapsed slice dims must have slice size 1");
  for (int64_t d : p.obatch)
    if (sizes[d] > 1) return c.error("operand batching dims must have slice size 1");
  for (size_t j = 0; j < p.window_dims.size(); ++j)
    if (p.target[p.offset[j]] != sizes[p.window_dims[j]])
      return c.error("result offset dims do not match slice_sizes");
  KILN_ASSIGN(Value * take, gather_take(c, x, p, sizes));
  if (take) return std::vector<Value *>{take};
  // General form: the full operand index of every result element, then kiln.gather_nd.
  std::vector<Value *> comps;
  for (int64_t d = 0; d < r; ++d) {
    KILN_ASSIGN(Value * comp, index_component(c, p, d, xd, sizes[d], true, nullptr));
    KILN_ASSIGN(comp, c.expand(comp, p.target));
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

// Which update windows fit (a bool mask over the updates), or nullptr when all of them do.
Result<Value *> windows_fit(OpCtx &c, const Shape &xd,
                            const std::vector<Value *> &starts, const std::vector<int64_t> &window) {
  Value *valid = nullptr;
  for (size_t d = 0; d < starts.size(); ++d) {
    if (!starts[d]) continue;
    KILN_ASSIGN(Value * ge, c.make("kiln.greater_equal", {starts[d], c.scalar_int(DType::i64, 0)}));
    KILN_ASSIGN(Value * le, c.make("kiln.less_equal", {starts[d], c.scalar_int(DType::i64, xd[d] - window[d])}));
    KILN_ASSIGN(Value * ok, c.make("kiln.and", {ge, le}));
    if (valid) {
      KILN_ASSIGN(ok, c.make("kiln.and", {valid, ok}));
    }
    valid = ok;
  }
  if (const Tensor *v = valid ? Builder::constant_value(valid) : nullptr) {
    bool all = true;
    for (int64_t i = 0; i < v->numel(); ++i) all = all && v->get_i64(i) != 0;
    if (all) return nullptr;
  }
  return valid;
}

Outs convert_scatter(OpCtx &c) {
  if (c.in.size() != 3) return c.error("only scatter with one operand is supported");
  Value *x = c.in[0], *u = c.in[2];
  const Attr *dn = c.attr("scatter_dimension_numbers");
  if (!dn) dn = c.attr("dimension_numbers");
  if (!dn || dn->kind != Attr::Kind::Dialect) return c.error("missing scatter_dimension_numbers");
  IndexPlan p;
  KILN_ASSIGN(p.offset, c.field_ints(*dn, "update_window_dims"));
  KILN_ASSIGN(p.collapsed, c.field_ints(*dn, "inserted_window_dims"));
  KILN_ASSIGN(p.obatch, c.field_ints(*dn, "input_batching_dims"));
  KILN_ASSIGN(p.ibatch, c.field_ints(*dn, "scatter_indices_batching_dims"));
  KILN_ASSIGN(p.index_map, c.field_ints(*dn, "scatter_dims_to_operand_dims"));
  KILN_ASSIGN(p.ivd, c.field_int(*dn, "index_vector_dim", 0));
  KILN_ASSIGN(std::string red, scatter_reduction(c, x->type.dtype));
  const Shape xd = x->type.dims;
  const int64_t r = x->type.rank();
  p.target = u->type.dims;
  KILN_TRY(plan_indices(c, p, xd, c.in[1]));
  std::vector<int64_t> window(r, 1); // window size per operand dim
  for (size_t j = 0; j < p.window_dims.size(); ++j) {
    window[p.window_dims[j]] = p.target[p.offset[j]];
    if (p.target[p.offset[j]] > xd[p.window_dims[j]]) return c.error("an update window is larger than the operand");
  }
  // Per operand dim: the index of every update element (unclamped).
  std::vector<Value *> comps, starts(r, nullptr);
  for (int64_t d = 0; d < r; ++d) {
    KILN_ASSIGN(Value * comp, index_component(c, p, d, xd, window[d], false, &starts[d]));
    comps.push_back(comp);
  }
  // Windows that do not fit go to an extra row appended to dim 0, sliced off afterwards.
  KILN_ASSIGN(Value * valid, windows_fit(c, xd, starts, window));
  if (valid) {
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
    KILN_ASSIGN(comp, c.expand(comp, p.target));
  }
  KILN_ASSIGN(Value * idx, c.stack_last(comps));
  AttrMap a;
  if (red != "none") a["reduction"] = red;
  KILN_ASSIGN(Value * y, c.make("kiln.scatter_nd", {x, idx, u}, a));
  if (valid) {
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
