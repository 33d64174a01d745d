// fuse-qdq: runs the quantised groups of a QDQ model as integer ops, the way ONNX Runtime and
// every int8 deployment run them. A group is
//   y_q = QuantizeLinear(Conv(DequantizeLinear(x_q), DequantizeLinear(w_q), [DequantizeLinear(b_q)]))
//   y_q = QuantizeLinear(MatMul(DequantizeLinear(a_q), DequantizeLinear(b_q)))
// and becomes kiln.qlinear_conv / kiln.qlinear_matmul on the quantised operands: an exact int32
// accumulation requantised once, instead of a float accumulation of dequantised values rounded
// once more. Float accumulation orders differ between devices and runtimes, so a value near a
// rounding boundary lands on either side; in a deep network those one-step differences grow
// from layer to layer (mobilenet_v2 quantised by `kiln quantize`: ONNX Runtime's integer
// kernels and kiln's float ones agreed on 24% of a late layer's values). Integer groups agree.
//
// A Relu between the float op and the QuantizeLinear is part of the group when the output zero
// point is the type's lowest value (the saturation then clamps as the Relu did; ONNX Runtime
// drops such a Relu too). Conditions (anything else stays as it is, in float): the float op's
// result feeds only the QuantizeLinear (or that Relu); x / a and y are 8-bit, quantised per tensor (constant scale and zero point);
// the weights are 8-bit, per tensor or per output channel (conv: axis 0; matmul: the last axis
// of a 2-D b) with constant parameters and no block size; a conv bias is a DequantizeLinear of
// int32 with zero point 0 whose values are integer multiples of x_scale * w_scale (ONNX Runtime's
// quantiser writes that scale; a bias of zeros fits whatever its scale; anything else keeps the
// group in float). The QuantizeLinear saturates (the default) and has no output_dtype different
// from its zero point.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "passes/pattern.h"

#include <cmath>

namespace kiln {

namespace {

bool is_q8(DType t) { return t == DType::u8 || t == DType::i8; }

// A DequantizeLinear feeding a float op: its quantised input, scale and zero point (absent:
// zero).
struct Dq {
  Value *q = nullptr, *scale = nullptr, *zp = nullptr;
  const Tensor *scale_c = nullptr;
};

// `v` as a DequantizeLinear of an 8-bit tensor (or int32 for a bias) with a constant scale that
// has one value (`per_axis` < 0) or one per element of axis `per_axis` of the quantised tensor.
std::optional<Dq> match_dq(Value *v, int64_t per_axis, bool bias = false) {
  if (!v || !v->def || v->def->name() != "kiln.dequantize_linear") return std::nullopt;
  const Op &op = *v->def;
  if (op.has_attr("block_size") && op.attr_int("block_size", 0) != 0) return std::nullopt;
  Dq d{op.operands[0], op.operands[1], op.operands.size() > 2 ? op.operands[2] : nullptr};
  const TensorType &qt = d.q->type;
  if (!qt.ranked || !qt.is_static()) return std::nullopt;
  if (bias ? qt.dtype != DType::i32 : !is_q8(qt.dtype)) return std::nullopt;
  d.scale_c = pattern::constant_tensor(d.scale);
  if (!d.scale_c || !is_float(d.scale_c->dtype())) return std::nullopt;
  const Tensor *z = d.zp ? pattern::constant_tensor(d.zp) : nullptr;
  if (d.zp && (!z || z->numel() != d.scale_c->numel())) return std::nullopt;
  if (d.scale_c->numel() != 1) {
    int64_t axis = op.attr_int("axis", 1);
    if (axis < 0) axis += qt.rank();
    if (per_axis < 0 || axis != per_axis || d.scale_c->rank() != 1 ||
        d.scale_c->numel() != qt.dims[static_cast<size_t>(axis)])
      return std::nullopt;
  }
  if (bias && z)
    for (int64_t i = 0; i < z->numel(); ++i)
      if (z->get_i64(i) != 0) return std::nullopt;
  return d;
}

class Fuser {
public:
  explicit Fuser(Graph &g) : g_(g) {
    pattern::count_uses(g, uses_);
  }

  void run() {
    for (size_t k = 0; k < g_.ops.size(); ++k) {
      Op &q = *g_.ops[k];
      for (auto &r : q.regions) Fuser(*r).run();
      if (q.name() != "kiln.quantize_linear") continue;
      std::unique_ptr<Op> fused = match(q);
      if (!fused) continue;
      pattern::adopt_result(g_, q, *fused, dead_, uses_);
      // Constants made for absent zero points go before the fused op.
      for (auto &c : made_) g_.ops.insert(g_.ops.begin() + static_cast<long>(k++), std::move(c));
      made_.clear();
      g_.ops.insert(g_.ops.begin() + static_cast<long>(k + 1), std::move(fused));
      ++k;
    }
  }

private:
  // The output's parameters: a per-tensor, saturating QuantizeLinear to 8 bits.
  bool output_ok(const Op &q) const {
    if (q.operands.size() < 3 || !q.operands[2]) return false; // y's dtype from the zero point
    const Tensor *s = pattern::constant_tensor(q.operands[1]), *z = pattern::constant_tensor(q.operands[2]);
    if (!s || !z || s->numel() != 1 || z->numel() != 1 || !is_float(s->dtype())) return false;
    if (!is_q8(z->dtype()) || q.results[0]->type.dtype != z->dtype()) return false;
    if (q.attr_int("saturate", 1) != 1 || q.has_attr("block_size")) return false;
    return single_use(q.operands[0]);
  }

  bool single_use(const Value *v) const {
    auto it = uses_.find(v);
    return v->def && v->owner == &g_ && it != uses_.end() && it->second == 1;
  }

  // A Relu between the float op and the QuantizeLinear, when the zero point is the type's
  // lowest value: the saturation does what the Relu did (ONNX Runtime drops it the same way).
  const Op *skip_relu(const Op &q, const Op &f) const {
    if (f.name() != "kiln.relu" || !single_use(f.operands[0])) return nullptr;
    const Tensor &z = *pattern::constant_tensor(q.operands[2]);
    const int64_t lowest = z.dtype() == DType::u8 ? 0 : -128;
    return z.get_i64(0) == lowest ? f.operands[0]->def : nullptr;
  }

  // A zero point operand: the DequantizeLinear's, or a new zero constant of dtype `t` with the
  // scale's element count.
  Value *zero_point(const Dq &d) {
    if (d.zp) return d.zp;
    Tensor t(d.q->type.dtype, d.scale_c->numel() == 1 ? Shape{} : Shape{d.scale_c->numel()});
    for (int64_t i = 0; i < t.numel(); ++i) t.set_i64(i, 0);
    return new_constant(std::move(t));
  }

  // A new kiln.constant, inserted before the fused op.
  Value *new_constant(Tensor t) {
    made_.push_back(pattern::new_constant(g_, std::move(t), ""));
    return made_.back()->results[0];
  }

  std::unique_ptr<Op> new_op(const char *name, std::vector<Value *> operands, const Op &from) {
    auto op = std::make_unique<Op>();
    op->def = core_ops().find(name);
    KILN_ASSERT(op->def, "fuse-qdq: op not registered");
    op->operands = std::move(operands);
    op->loc = from.loc;
    return op;
  }

  std::unique_ptr<Op> match(const Op &q) {
    if (!output_ok(q)) return nullptr;
    const Op *f = q.operands[0]->def;
    dead_ = {const_cast<Op *>(&q), const_cast<Op *>(f)};
    if (const Op *inner = skip_relu(q, *f)) {
      f = inner;
      dead_.push_back(const_cast<Op *>(f));
    }
    if (f->name() == "kiln.conv") return match_conv(q, *f);
    if (f->name() == "kiln.matmul") return match_matmul(q, *f);
    return nullptr;
  }

  std::unique_ptr<Op> match_conv(const Op &q, const Op &conv) {
    auto x = match_dq(conv.operands[0], -1);
    auto w = match_dq(conv.operands[1], 0);
    if (!x || !w || !pattern::constant_tensor(w->q) || (x->zp && !pattern::constant_tensor(x->zp))) return nullptr;
    if (conv.has_attr("kernel_shape")) {
      // qlinear_conv takes the kernel's shape from the weights; a different one is not a group.
      const Shape &wd = w->q->type.dims;
      if (conv.attr_ints("kernel_shape") != Shape(wd.begin() + 2, wd.end())) return nullptr;
    }
    made_.clear();
    Value *bias = nullptr;
    if (conv.operands.size() > 2 && conv.operands[2]) {
      auto b = match_dq(conv.operands[2], 0, true);
      if (!b || !(bias = accumulator_bias(*x, *w, *b))) {
        made_.clear();
        return nullptr;
      }
    }
    std::vector<Value *> ops{x->q, x->scale, zero_point(*x), w->q, w->scale, zero_point(*w),
                             q.operands[1], q.operands[2]};
    if (bias) ops.push_back(bias);
    auto op = new_op("kiln.qlinear_conv", std::move(ops), conv);
    op->attrs["requant"] = std::string("f32");
    for (const char *a : {"group", "strides", "dilations", "pads", "auto_pad"})
      if (auto it = conv.attrs.find(a); it != conv.attrs.end()) op->attrs[a] = it->second;
    return op;
  }

  // The bias as int32 values on the accumulator's scale x_scale * w_scale[m]: its own
  // quantised values when its scale is that product (to 1e-6, as ONNX Runtime's quantiser writes
  // it), else a new constant when every dequantised value is an integer multiple of the product
  // (zeros, whatever their scale). nullptr: the bias does not fit, the group stays float.
  Value *accumulator_bias(const Dq &x, const Dq &w, const Dq &b) {
    const int64_t m = w.q->type.dims[0];
    const Tensor *bq = pattern::constant_tensor(b.q);
    if (!bq || b.q->type.rank() != 1 || b.q->type.dims[0] != m) return nullptr;
    const Tensor &bs = *b.scale_c, &ws = *w.scale_c;
    if (bs.numel() != 1 && bs.numel() != m) return nullptr;
    const double xs = x.scale_c->get_f64(0);
    bool same = true;
    std::vector<int64_t> k(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) {
      const double want = xs * ws.get_f64(ws.numel() == 1 ? 0 : i);
      const double got = bs.get_f64(bs.numel() == 1 ? 0 : i);
      const double value = static_cast<double>(bq->get_i64(i)) * got; // zero point is 0
      const double r = std::nearbyint(value / want);
      if (!(std::fabs(r * want - value) <= 1e-6 * std::fabs(value)) || std::fabs(r) >= 2147483648.0)
        return nullptr;
      k[static_cast<size_t>(i)] = static_cast<int64_t>(r);
      same = same && k[static_cast<size_t>(i)] == bq->get_i64(i);
    }
    if (same) return b.q;
    Tensor t(DType::i32, {m});
    for (int64_t i = 0; i < m; ++i) t.set_i64(i, k[static_cast<size_t>(i)]);
    return new_constant(std::move(t));
  }

  std::unique_ptr<Op> match_matmul(const Op &q, const Op &mm) {
    const Value *bv = mm.operands[1];
    if (!bv->type.ranked || bv->type.rank() != 2) return nullptr;
    auto a = match_dq(mm.operands[0], -1);
    auto b = match_dq(mm.operands[1], 1);
    if (!a || !b || !pattern::constant_tensor(b->q) || (a->zp && !pattern::constant_tensor(a->zp))) return nullptr;
    if (!a->q->type.ranked || a->q->type.rank() < 2) return nullptr;
    made_.clear();
    auto op = new_op("kiln.qlinear_matmul",
                     {a->q, a->scale, zero_point(*a), b->q, b->scale, zero_point(*b),
                      q.operands[1], q.operands[2]},
                     mm);
    op->attrs["requant"] = std::string("f32");
    return op;
  }

  Graph &g_;
  pattern::UseCounts uses_;
  std::vector<std::unique_ptr<Op>> made_;
  std::vector<Op *> dead_; // the ops a match replaces
};

} // namespace

Status run_fuse_qdq(Module &m) {
  for (auto &f : m.functions) Fuser(f->body).run();
  return run_dce(m);
}

} // namespace kiln

