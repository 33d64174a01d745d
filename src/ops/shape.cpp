// Shape and data-movement ops: shape, size, reshape, transpose, concat, squeeze, unsqueeze,
// flatten, expand, tile. The rest of the family lives in shape_*.cpp.
#include "ops/ops.h"
#include "ops/shape_util.h"

#include <algorithm>

namespace kiln {

namespace shape_ops {
namespace {

// ---- shape / size ---------------------------------------------------------------------------

// [start, end) of kiln.shape clamped to the rank.
std::pair<int64_t, int64_t> shape_range(const Op &op, int64_t rank) {
  int64_t s = op.attr_int("start", 0);
  int64_t e = op.has_attr("end") ? op.attr_int("end", rank) : rank;
  if (s < 0) s += rank;
  if (e < 0) e += rank;
  s = std::clamp<int64_t>(s, 0, rank);
  e = std::clamp<int64_t>(e, 0, rank);
  return {s, std::max(s, e)};
}

void add_shape_size(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.shape",
      .min_operands = 1,
      .max_operands = 1,
      .infer =
          [](InferCtx &ctx) {
            if (!ctx.type(0).ranked) {
              ctx.out = {TensorType{DType::i64, {kDynamic}}};
              return Status::ok();
            }
            auto [s, e] = shape_range(ctx.op, ctx.type(0).rank());
            ctx.out = {TensorType{DType::i64, {e - s}}};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) {
            const Shape &sh = ctx.in[0].shape();
            auto [s, e] = shape_range(ctx.op, ctx.in[0].rank());
            ctx.out = {Tensor::from_i64s(std::vector<int64_t>(sh.begin() + s, sh.begin() + e))};
            return Status::ok();
          },
  });
  r.add(OpDef{
      .name = "kiln.size",
      .min_operands = 1,
      .max_operands = 1,
      .infer =
          [](InferCtx &ctx) {
            ctx.out = {TensorType{DType::i64, {}}};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) {
            ctx.out = {Tensor::scalar_i64(DType::i64, ctx.in[0].numel())};
            return Status::ok();
          },
  });
}

// ---- reshape --------------------------------------------------------------------------------

// Resolves a reshape spec against input dims (which may hold kDynamic during inference).
Result<Shape> reshape_dims(const Op &op, const Shape &in, const std::vector<int64_t> &spec,
                           bool allowzero) {
  Shape out(spec.size());
  int64_t infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t v = spec[i];
    if (v == -1) {
      if (infer_at >= 0) return op_error(op, "shape has more than one -1");
      infer_at = static_cast<int64_t>(i);
      out[i] = kDynamic;
    } else if (v < -1) {
      return op_error(op, fmt::format("invalid dimension {} in shape", v));
    } else if (v == 0 && !allowzero) {
      if (i >= in.size())
        return op_error(op, fmt::format("shape copies dimension {} (0) but the input has rank {}",
                                        i, in.size()));
      out[i] = in[i];
    } else {
      has_zero = has_zero || v == 0;
      out[i] = v;
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    return op_error(op, "shape has both 0 and -1 with allowzero=1");
  if (!all_static(in)) {
    if (infer_at < 0) return out;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int64_t>(i) != infer_at && out[i] == 0)
        return op_error(op, "cannot infer -1 with a zero-sized dimension");
    return out;
  }
  const std::optional<int64_t> in_numel = checked_numel(in);
  if (!in_numel)
    return overflow_error(op, fmt::format("the element count of the input [{}]", shape_str(in)));
  const int64_t numel = *in_numel;
  int64_t prod = 1;
  for (size_t i = 0; i < out.size(); ++i)
    if (static_cast<int64_t>(i) != infer_at) {
      if (out[i] < 0) return out; // copied dynamic dim (only during inference)
      if (__builtin_mul_overflow(prod, out[i], &prod))
        return overflow_error(op, fmt::format("the element count of shape [{}]", shape_str(out)));
    }
  if (infer_at >= 0) {
    if (prod == 0 || numel % prod != 0)
      return op_error(op, fmt::format("cannot reshape [{}] to a shape with -1 (other dims give {})",
                                      shape_str(in), prod));
    out[infer_at] = numel / prod;
  } else if (prod != numel) {
    return op_error(op, fmt::format("cannot reshape [{}] ({} elements) to [{}]", shape_str(in),
                                    numel, shape_str(out)));
  }
  return out;
}

void add_reshape(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.reshape",
      .min_operands = 2,
      .max_operands = 2,
      .infer =
          [](InferCtx &ctx) -> Status {
            KILN_ASSIGN(int64_t n, int_list_len(ctx.op, ctx.type(1), "shape"));
            const TensorType &x = ctx.type(0);
            if (n < 0) {
              ctx.out = {TensorType{x.dtype, {}, false}};
              return Status::ok();
            }
            const Tensor *c = const_operand(ctx, 1);
            if (!c) {
              ctx.out = {TensorType{x.dtype, dynamic_dims(n)}};
              return Status::ok();
            }
            Shape in = x.ranked ? x.dims : Shape{};
            if (!x.ranked) {
              // Unknown input rank: only explicit positive dims are known.
              Shape out;
              for (int64_t v : c->to_i64s()) out.push_back(v > 0 ? v : kDynamic);
              ctx.out = {TensorType{x.dtype, out}};
              return Status::ok();
            }
            KILN_ASSIGN(Shape out, reshape_dims(ctx.op, in, c->to_i64s(),
                                                ctx.op.attr_int("allowzero", 0) != 0));
            ctx.out = {TensorType{x.dtype, out}};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) -> Status {
            KILN_ASSIGN(auto spec, int_list(ctx.op, ctx.in[1], "shape"));
            KILN_ASSIGN(Shape out, reshape_dims(ctx.op, ctx.in[0].shape(), spec,
                                                ctx.op.attr_int("allowzero", 0) != 0));
            ctx.out = {ctx.in[0].reshaped(out)};
            return Status::ok();
          },
  });
}

// ---- transpose ------------------------------------------------------------------------------

Status check_perm(const Op &op, const std::vector<int64_t> &perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return op_error(op, fmt::format("perm has {} entries for rank {}", perm.size(), rank));
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p]) return op_error(op, "perm is not a permutation");
    seen[p] = true;
  }
  return Status::ok();
}

void add_transpose(OpRegistry &r) {
  r.add(OpDef{
      .name = "kiln.transpose",
      .min_operands = 1,
      .max_operands = 1,
      .infer =
          [](InferCtx &ctx) -> Status {
            const TensorType &x = ctx.type(0);
            auto perm = ctx.op.attr_ints("perm");
            if (!x.ranked) {
              ctx.out = {TensorType{x.dtype, dynamic_dims(static_cast<int64_t>(perm.size()))}};
              return Status::ok();
            }
            KILN_TRY(check_perm(ctx.op, perm, x.rank()));
            Shape out;
            for (int64_t p : perm) out.push_back(x.dims[p]);
            ctx.out = {TensorType{x.dtype, out}};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) -> Status {
            const Tensor &x = ctx.in[0];
            auto perm = ctx.op.attr_ints("perm");
            KILN_TRY(check_perm(ctx.op, perm, x.rank()));
            Shape os;
            std::vector<int64_t> st;
            auto ist = shape_strides(x.shape());
            for (int64_t p : perm) {
              os.push_back(x.shape()[p]);
              st.push_back(ist[p]);
            }
            Tensor out(x.dtype(), os);
            strided_copy(x, 0, st, out);
            ctx.out = {std::move(out)};
            return Status::ok();
          },
  });
}

// ---- concat ---------------------------------------------------------------------------------

Status infer_concat(InferCtx &ctx) {
  int64_t rank = -1;
  for (size_t i = 0; i < ctx.in.size(); ++i)
    if (ctx.type(i).ranked) rank = ctx.type(i).rank();
  const DType dt = ctx.type(0).dtype;
  if (rank < 0) {
    ctx.out = {TensorType{dt, {}, false}};
    return Status::ok();
  }
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), rank));
  Shape out = dynamic_dims(rank);
  out[axis] = 0;
  for (size_t i = 0; i < ctx.in.size(); ++i) {
    const TensorType &t = ctx.type(i);
    if (t.dtype != dt) return op_error(ctx.op, "operands have different dtypes");
    if (!t.ranked) {
      out[axis] = kDynamic;
      continue;
    }
    if (t.rank() != rank) return op_error(ctx.op, "operands have different ranks");
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) {
        if (out[d] < 0 || t.dims[d] < 0) {
          out[d] = kDynamic;
        } else if (__builtin_add_overflow(out[d], t.dims[d], &out[d])) {
          return overflow_error(ctx.op, fmt::format("the concatenated dimension {}", d));
        }
      } else if (t.dims[d] >= 0) {
        if (out[d] >= 0 && out[d] != t.dims[d])
          return op_error(ctx.op, fmt::format("dimension {} differs between operands", d));
        out[d] = t.dims[d];
      }
    }
  }
  ctx.out = {TensorType{dt, out}};
  return Status::ok();
}

Status eval_concat(EvalCtx &ctx) {
  const Tensor &x0 = ctx.in[0];
  const int64_t rank = x0.rank();
  KILN_ASSIGN(int64_t axis, norm_axis(ctx.op, ctx.op.attr_int("axis", 0), rank));
  Shape os = x0.shape();
  os[axis] = 0;
  for (const Tensor &t : ctx.in) {
    if (t.rank() != rank || t.dtype() != x0.dtype())
      return op_error(ctx.op, "operands differ in rank or dtype");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && t.shape()[d] != x0.shape()[d])
        return op_error(ctx.op, fmt::format("dimension {} differs between operands", d));
    os[axis] += t.shape()[axis];
  }
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x0.dtype(), os));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= os[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= os[d];
  const int64_t out_chunk = os[axis] * inner;
  int64_t at = 0;
  for (const Tensor &t : ctx.in) {
    const int64_t chunk = t.shape()[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) copy_elems(t, o * chunk, out, o * out_chunk + at, chunk);
    at += chunk;
  }
  ctx.out = {std::move(out)};
  return Status::ok();
}

// ---- squeeze / unsqueeze / flatten ------------------------------------------------------------

Result<Shape> squeeze_dims(const Op &op, const Shape &in, const std::vector<int64_t> *axes) {
  std::vector<bool> drop(in.size(), false);
  if (axes) {
    KILN_ASSIGN(auto ax, norm_axes(op, *axes, static_cast<int64_t>(in.size())));
    for (int64_t a : ax) {
      if (in[a] >= 0 && in[a] != 1)
        return op_error(op, fmt::format("cannot squeeze axis {} of size {}", a, in[a]));
      drop[a] = true;
    }
  } else {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Result<Shape> unsqueeze_dims(const Op &op, const Shape &in, const std::vector<int64_t> &axes) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  KILN_ASSIGN(auto ax, norm_axes(op, axes, rank));
  Shape out;
  size_t k = 0, j = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (k < ax.size() && ax[k] == d) {
      out.push_back(1);
      ++k;
    } else {
      out.push_back(in[j++]);
    }
  }
  return out;
}

Status infer_squeeze(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  const bool unsq = ctx.op.name() == "kiln.unsqueeze";
  if (!ctx.present(1) && unsq) return op_error(ctx.op, "needs axes");
  int64_t n = 0;
  if (ctx.present(1)) {
    KILN_ASSIGN(n, int_list_len(ctx.op, ctx.type(1), "axes"));
  }
  const Tensor *c = const_operand(ctx, 1);
  if (!x.ranked || (ctx.present(1) && !c && n < 0) ||
      (!ctx.present(1) && !all_static(x.dims))) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  if (ctx.present(1) && !c) {
    ctx.out = {TensorType{x.dtype, dynamic_dims(unsq ? x.rank() + n : x.rank() - n)}};
    return Status::ok();
  }
  std::vector<int64_t> axes;
  if (c) axes = c->to_i64s();
  Shape out;
  if (unsq) {
    KILN_ASSIGN(out, unsqueeze_dims(ctx.op, x.dims, axes));
  } else {
    KILN_ASSIGN(out, squeeze_dims(ctx.op, x.dims, c ? &axes : nullptr));
  }
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_squeeze(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  const bool unsq = ctx.op.name() == "kiln.unsqueeze";
  std::vector<int64_t> axes;
  if (ctx.present(1)) {
    KILN_ASSIGN(axes, int_list(ctx.op, ctx.in[1], "axes"));
  }
  Shape out;
  if (unsq) {
    KILN_ASSIGN(out, unsqueeze_dims(ctx.op, x.shape(), axes));
  } else {
    KILN_ASSIGN(out, squeeze_dims(ctx.op, x.shape(), ctx.present(1) ? &axes : nullptr));
  }
  ctx.out = {x.reshaped(out)};
  return Status::ok();
}

// The two dims of a flatten; error when a product overflows int64.
Result<Shape> flatten_dims(const Op &op, const Shape &in, int64_t axis) {
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) {
    int64_t &p = d < axis ? a : b;
    if (p < 0 || in[d] < 0) {
      p = kDynamic;
    } else if (__builtin_mul_overflow(p, in[d], &p)) {
      return overflow_error(op, fmt::format("the flattened shape of [{}] at axis {}",
                                            shape_str(in), axis));
    }
  }
  return Shape{a, b};
}

Result<int64_t> flatten_axis(const Op &op, int64_t rank) {
  int64_t axis = op.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank)
    return op_error(op, fmt::format("axis {} is out of range for rank {}", axis, rank));
  return axis;
}

void add_squeeze_family(OpRegistry &r) {
  for (const char *name : {"kiln.squeeze", "kiln.unsqueeze"})
    r.add(OpDef{.name = name,
                .min_operands = 1,
                .max_operands = 2,
                .infer = infer_squeeze,
                .eval = eval_squeeze});
  r.add(OpDef{
      .name = "kiln.flatten",
      .min_operands = 1,
      .max_operands = 1,
      .infer =
          [](InferCtx &ctx) -> Status {
            if (unranked_result(ctx, 0, ctx.type(0).dtype)) return Status::ok();
            KILN_ASSIGN(int64_t axis, flatten_axis(ctx.op, ctx.type(0).rank()));
            KILN_ASSIGN(Shape out, flatten_dims(ctx.op, ctx.type(0).dims, axis));
            ctx.out = {TensorType{ctx.type(0).dtype, out}};
            return Status::ok();
          },
      .eval =
          [](EvalCtx &ctx) -> Status {
            KILN_ASSIGN(int64_t axis, flatten_axis(ctx.op, ctx.in[0].rank()));
            KILN_ASSIGN(Shape out, flatten_dims(ctx.op, ctx.in[0].shape(), axis));
            ctx.out = {ctx.in[0].reshaped(out)};
            return Status::ok();
          },
  });
}

// ---- expand / tile --------------------------------------------------------------------------

Status infer_expand(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  KILN_ASSIGN(int64_t n, int_list_len(ctx.op, ctx.type(1), "shape"));
  if (!x.ranked || n < 0) {
    ctx.out = {TensorType{x.dtype, {}, false}};
    return Status::ok();
  }
  Shape target = dynamic_dims(n);
  if (const Tensor *c = const_operand(ctx, 1)) target = c->to_i64s();
  for (int64_t d : target)
    if (d < kDynamic) return op_error(ctx.op, fmt::format("invalid dimension {} in shape", d));
  if (!const_operand(ctx, 1)) {
    // Unknown target dims: where x has a dim > 1 the result keeps it.
    const int64_t rank = std::max<int64_t>(x.rank(), n);
    Shape out = dynamic_dims(rank);
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x.dims[i] > 1) out[rank - x.rank() + i] = x.dims[i];
    ctx.out = {TensorType{x.dtype, out}};
    return Status::ok();
  }
  KILN_ASSIGN(Shape out, broadcast_dims(ctx.op, x.dims, target));
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_expand(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  KILN_ASSIGN(auto target, int_list(ctx.op, ctx.in[1], "shape"));
  for (int64_t d : target)
    if (d < 0) return op_error(ctx.op, fmt::format("invalid dimension {} in shape", d));
  auto os = broadcast_shapes(x.shape(), target);
  if (!os) return op_error(ctx.op, os.status().message());
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), *os));
  BroadcastIndexer bi(*os, {x.shape()});
  bi.for_each([&](int64_t i, const int64_t *off) { copy_elem(x, off[0], out, i); });
  ctx.out = {std::move(out)};
  return Status::ok();
}

Status infer_tile(InferCtx &ctx) {
  const TensorType &x = ctx.type(0);
  if (unranked_result(ctx, 0, x.dtype)) return Status::ok();
  KILN_ASSIGN(int64_t n, int_list_len(ctx.op, ctx.type(1), "repeats"));
  if (n >= 0 && n != x.rank())
    return op_error(ctx.op, fmt::format("repeats has {} entries for rank {}", n, x.rank()));
  Shape out = dynamic_dims(x.rank());
  if (const Tensor *c = const_operand(ctx, 1)) {
    auto rep = c->to_i64s();
    for (int64_t d = 0; d < x.rank(); ++d) {
      if (rep[d] < 0) return op_error(ctx.op, "repeats must be non-negative");
      if (x.dims[d] < 0) {
        out[d] = kDynamic;
      } else if (__builtin_mul_overflow(x.dims[d], rep[d], &out[d])) {
        return overflow_error(ctx.op, fmt::format("dimension {} ({} x {} repeats)", d,
                                                  x.dims[d], rep[d]));
      }
    }
  }
  ctx.out = {TensorType{x.dtype, out}};
  return Status::ok();
}

Status eval_tile(EvalCtx &ctx) {
  const Tensor &x = ctx.in[0];
  KILN_ASSIGN(auto rep, int_list(ctx.op, ctx.in[1], "repeats"));
  if (static_cast<int64_t>(rep.size()) != x.rank())
    return op_error(ctx.op, fmt::format("repeats has {} entries for rank {}", rep.size(), x.rank()));
  Shape os(x.shape());
  for (size_t d = 0; d < os.size(); ++d) {
    if (rep[d] < 0) return op_error(ctx.op, "repeats must be non-negative");
    os[d] *= rep[d];
  }
  KILN_ASSIGN(Tensor out, alloc(ctx.op, x.dtype(), os));
  if (out.numel() == 0) {
    ctx.out = {std::move(out)};
    return Status::ok();
  }
  auto st = shape_strides(x.shape());
  std::vector<int64_t> idx(os.size(), 0);
  int64_t i = 0;
  do {
    int64_t off = 0;
    for (size_t d = 0; d < os.size(); ++d) off += (idx[d] % x.shape()[d]) * st[d];
    copy_elem(x, off, out, i++);
  } while (next_index(idx, os));
  ctx.out = {std::move(out)};
  return Status::ok();
}

} // namespace

void register_shape_core(OpRegistry &r) {
  add_shape_size(r);
  add_reshape(r);
  add_transpose(r);
  r.add(OpDef{.name = "kiln.concat",
              .min_operands = 1,
              .max_operands = -1,
              .infer = infer_concat,
              .eval = eval_concat});
  add_squeeze_family(r);
  r.add(OpDef{.name = "kiln.expand",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_expand,
              .eval = eval_expand});
  r.add(OpDef{.name = "kiln.tile",
              .min_operands = 2,
              .max_operands = 2,
              .infer = infer_tile,
              .eval = eval_tile});
}

} // namespace shape_ops

void register_shape_ops(OpRegistry &r) {
  shape_ops::register_shape_core(r);
  shape_ops::register_shape_slice(r);
  shape_ops::register_shape_gather(r);
  shape_ops::register_shape_gen(r);
  shape_ops::register_shape_misc(r);
}

} // namespace kiln
