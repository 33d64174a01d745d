// expand-qlinear: lets the compiled targets run the integer groups of fuse-qdq (kiln.qlinear_conv
// and kiln.qlinear_matmul with requant = "f32", constant weights) on their float contraction
// kernels, bit for bit. The group becomes
//   xf   = kiln.dequantize_linear(x, 1.0, x_zero_point)          exact: x - x_zp
//   acc  = kiln.conv(xf, w - w_zp, bias)  /  kiln.matmul(xf, w - w_zp)
//   real = kiln.mul(acc, m)                                       m = f32(f32(xs * ws) / ys)
//   y    = kiln.quantize_linear(real, 1.0, y_zero_point)          round_even(real) + y_zp
// Every product and partial sum of acc is an integer; when the largest possible |sum| (the
// widest |x - x_zp| times the sum of a channel's |w - w_zp|, plus |bias|) stays below 2^24, every
// one of them is an f32 exactly, whatever order a kernel adds them in, so acc equals the int32
// accumulator and the rest is ONNX Runtime's f32 requantisation. An op whose bound fails keeps
// its integer kernel. This runs after the precision passes (target_pipeline, compiler.cpp), so
// the new conv / matmul stay f32; cpu-ref never runs it (it keeps the integer reference).
#include "ir/builder.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/pattern.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln {

namespace {

// Parameters of the op that must be constants with f32 scales.
struct Group {
  const Tensor *xs, *xz, *w, *ws, *wz, *ys, *yz, *bias = nullptr;
};

std::optional<Group> constant_group(const Op &op) {
  const auto &o = op.operands;
  Group g{pattern::constant_tensor(o[1]), pattern::constant_tensor(o[2]), pattern::constant_tensor(o[3]), pattern::constant_tensor(o[4]),
          pattern::constant_tensor(o[5]), pattern::constant_tensor(o[6]), pattern::constant_tensor(o[7])};
  for (const Tensor *t : {g.xs, g.xz, g.w, g.ws, g.wz, g.ys, g.yz})
    if (!t) return std::nullopt;
  for (const Tensor *t : {g.xs, g.ws, g.ys})
    if (t->dtype() != DType::f32) return std::nullopt;
  if (g.xs->numel() != 1 || g.xz->numel() != 1 || g.ys->numel() != 1 || g.yz->numel() != 1)
    return std::nullopt;
  if (o.size() > 8 && o[8]) {
    g.bias = pattern::constant_tensor(o[8]);
    if (!g.bias) return std::nullopt;
  }
  return g;
}

// The widest |x - x_zp| of x's 8-bit type.
double widest_x(DType t, int64_t zp) {
  const double lo = t == DType::u8 ? 0 : -128, hi = t == DType::u8 ? 255 : 127;
  return std::max(std::fabs(lo - static_cast<double>(zp)), std::fabs(hi - static_cast<double>(zp)));
}

// Weights minus their zero points as f32, and whether every channel's accumulator is exact in
// f32. Channel c of `channels` (conv: dim 0 of [M, ...]; matmul: dim 1 of [K, N]); `per_row`:
// the channel index is i / per_row (conv) or i % channels (matmul).
std::optional<Tensor> centred_weights(const Group &g, int64_t channels, bool conv_layout,
                                      double xmax) {
  const Tensor &w = *g.w;
  Tensor out(DType::f32, w.shape());
  std::vector<double> sum(static_cast<size_t>(channels), 0.0);
  const int64_t per = conv_layout ? w.numel() / std::max<int64_t>(channels, 1) : 1;
  for (int64_t i = 0; i < w.numel(); ++i) {
    const int64_t c = conv_layout ? i / per : i % channels;
    const int64_t z = g.wz->get_i64(g.wz->numel() == 1 ? 0 : c);
    const int64_t v = w.get_i64(i) - z;
    out.set_f64(i, static_cast<double>(v));
    sum[static_cast<size_t>(c)] += std::fabs(static_cast<double>(v));
  }
  for (int64_t c = 0; c < channels; ++c) {
    const double b = g.bias ? std::fabs(static_cast<double>(g.bias->get_i64(c))) : 0.0;
    if (xmax * sum[static_cast<size_t>(c)] + b >= 16777216.0) return std::nullopt;
  }
  return out;
}

// m = f32(f32(xs * ws[c]) / ys) per channel, as requant_multiplier rounds f32 scales, shaped to
// broadcast over the result's channel axis `axis` of rank `rank`.
Tensor multipliers(const Group &g, int64_t channels, int64_t rank, int64_t axis) {
  Shape s(static_cast<size_t>(rank), 1);
  s[static_cast<size_t>(axis)] = channels;
  std::vector<float> m(static_cast<size_t>(channels));
  const float xs = static_cast<float>(g.xs->get_f64(0)), ys = static_cast<float>(g.ys->get_f64(0));
  for (int64_t c = 0; c < channels; ++c) {
    const float p = xs * static_cast<float>(g.ws->get_f64(g.ws->numel() == 1 ? 0 : c));
    m[static_cast<size_t>(c)] = p / ys;
  }
  return Tensor::from_f32s(m, s);
}

// Builds the float group for `op` at the end of `g`; returns its result, or nullptr when the op
// stays integer.
// x - x_zp as f32, one per (x, zero point) value: convolutions that read the same activation
// (a fire module's two expand convolutions) share one kernel.
using Centred = std::map<std::pair<const Value *, int64_t>, Value *>;

Result<Value *> expand(Builder &b, const Op &op, Centred &centred) {
  const bool conv = op.name() == "kiln.qlinear_conv";
  if (op.attr_str("requant", "f64") != "f32") return nullptr;
  const Value *y = op.results[0];
  if (!y->type.ranked || !y->type.is_static() || y->type.rank() < 2) return nullptr;
  auto grp = constant_group(op);
  if (!grp) return nullptr;
  const Shape &wd = grp->w->shape();
  if (wd.size() < 2 || (!conv && wd.size() != 2)) return nullptr;
  const int64_t channels = conv ? wd[0] : wd[1];
  const double xmax = widest_x(op.operands[0]->type.dtype, grp->xz->get_i64(0));
  auto w = centred_weights(*grp, channels, conv, xmax);
  if (!w) return nullptr;
  const int64_t rank = y->type.rank();
  Value *one = b.scalar_f(DType::f32, 1.0);
  Value *yz = b.scalar_i(grp->yz->dtype(), grp->yz->get_i64(0));
  Value *&xf = centred[{op.operands[0], grp->xz->get_i64(0)}];
  if (!xf) {
    Value *xz = b.scalar_i(grp->xz->dtype(), grp->xz->get_i64(0));
    KILN_ASSIGN(xf, b.create1("kiln.dequantize_linear", {op.operands[0], one, xz},
                              {{"axis", int64_t(1)}}));
  }
  Value *wc = b.constant(std::move(*w));
  Value *acc = nullptr;
  if (conv) {
    std::vector<Value *> ops{xf, wc};
    if (grp->bias) {
      Tensor bf(DType::f32, {channels});
      for (int64_t c = 0; c < channels; ++c)
        bf.set_f64(c, static_cast<double>(grp->bias->get_i64(c)));
      ops.push_back(b.constant(std::move(bf)));
    }
    AttrMap a;
    for (const char *k : {"group", "strides", "dilations", "pads", "auto_pad"})
      if (auto it = op.attrs.find(k); it != op.attrs.end()) a[k] = it->second;
    KILN_ASSIGN(acc, b.create1("kiln.conv", std::move(ops), std::move(a)));
  } else {
    KILN_ASSIGN(acc, b.create1("kiln.matmul", {xf, wc}));
  }
  Value *mc = b.constant(multipliers(*grp, channels, rank, conv ? 1 : rank - 1));
  KILN_ASSIGN(Value * real, b.create1("kiln.mul", {acc, mc}));
  KILN_ASSIGN(Value * out, b.create1("kiln.quantize_linear", {real, one, yz},
                                     {{"axis", int64_t(1)}}));
  if (!(out->type == y->type)) return Status::error(op.describe() + ": expand-qlinear changed the type");
  return out;
}

Status expand_graph(Graph &g) {
  Builder b(core_ops(), g);
  Centred centred;
  b.set_fold_limit(0);
  for (size_t k = 0; k < g.ops.size(); ++k) {
    Op &op = *g.ops[k];
    for (auto &r : op.regions) KILN_TRY(expand_graph(*r));
    if (op.name() != "kiln.qlinear_conv" && op.name() != "kiln.qlinear_matmul") continue;
    const size_t before = g.ops.size();
    b.set_loc(op.loc);
    KILN_ASSIGN(Value * out, expand(b, op, centred));
    if (!out) {
      g.ops.resize(before); // nothing built is used
      continue;
    }
    // The new ops move from the end to just before `op`, which dce removes.
    const size_t added = g.ops.size() - before;
    std::rotate(g.ops.begin() + static_cast<long>(k), g.ops.begin() + static_cast<long>(before),
                g.ops.end());
    Value *old = op.results[0];
    out->name = std::move(old->name);
    old->name.clear();
    g.replace_uses(old, out);
    k += added;
  }
  return Status::ok();
}

} // namespace

Status run_expand_qlinear(Module &m) {
  for (auto &f : m.functions) KILN_TRY(expand_graph(f->body));
  return run_dce(m);
}

} // namespace kiln
