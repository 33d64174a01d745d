// lower-precision-fp16 / lower-precision-bf16: stores the f32 tensors of ops that are safe in
// half precision as f16 / bf16 (`kiln compile --precision`). Run after the default pipeline, so
// it sees folded constants and fused composites (softmax, layer norm, ...).
//
// Per op, the policy table below (THE keep-list: the only place that decides) says:
//   half: every f32 operand and result of the op becomes the half dtype. Such ops either move
//         data (exact in any dtype), compare, or are cheap arithmetic whose result has the range
//         of its operands; contractions (matmul, gemm, conv) and pooling accumulate in f32 in
//         both compiled backends (families/matmul.cpp, conv.cpp, pool.cpp: acc_type) and round
//         once when they store.
//   f32:  the op stays f32 for numerics: softmax / log-softmax, normalisation statistics,
//         reductions, and ops whose range or accuracy needs f32 (exp, log, pow, sqrt,
//         reciprocal, the transcendentals). Every op that is not listed stays f32 as well: its
//         half kernels are unchecked, so it is not trusted with them.
// An op is rewritten only when its source node is not in Module::keep_f32 (--precision auto),
// it has no regions and all of its float operands and results are f32 (f64 and existing f16 /
// bf16 ops are left alone). Its f32 constant operands are
// converted (once per constant: weights are stored in half precision in the artifact); any
// other f32 operand gets a kiln.cast to the half dtype (once per value). An f32 op, or a region,
// that reads a value this pass made half reads a kiln.cast back to f32 (once per value), and a
// graph result that became half is cast back to f32 under the result's name, so the
// function's signature is unchanged (f32 in, f32 out). Unused originals are left for dce.
#include "ir/op_registry.h"
#include "ops/ops.h"
#include "passes/pass.h"

#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace kiln {

namespace {

struct PolicyRow {
  const char *op; // core op name
  PrecisionPolicy policy;
  const char *why;
};

// The keep-list (and its complement). Sorted by policy, then family.
constexpr PolicyRow kPolicies[] = {
    // Contractions and pooling: half operands, f32 accumulation, one rounding at the store.
    {"kiln.matmul", PrecisionPolicy::half, "f32 accumulation"},
    {"kiln.gemm", PrecisionPolicy::half, "f32 accumulation"},
    {"kiln.conv", PrecisionPolicy::half, "f32 accumulation"},
    {"kiln.max_pool", PrecisionPolicy::half, "exact"},
    {"kiln.avg_pool", PrecisionPolicy::half, "f32 accumulation"},
    {"kiln.global_pool", PrecisionPolicy::half, "f32 accumulation"},
    // Data movement: exact in any dtype.
    {"kiln.reshape", PrecisionPolicy::half, "exact"},
    {"kiln.flatten", PrecisionPolicy::half, "exact"},
    {"kiln.squeeze", PrecisionPolicy::half, "exact"},
    {"kiln.unsqueeze", PrecisionPolicy::half, "exact"},
    {"kiln.transpose", PrecisionPolicy::half, "exact"},
    {"kiln.concat", PrecisionPolicy::half, "exact"},
    {"kiln.split", PrecisionPolicy::half, "exact"},
    {"kiln.slice", PrecisionPolicy::half, "exact"},
    {"kiln.gather", PrecisionPolicy::half, "exact"},
    {"kiln.expand", PrecisionPolicy::half, "exact"},
    {"kiln.tile", PrecisionPolicy::half, "exact"},
    {"kiln.pad", PrecisionPolicy::half, "exact"},
    {"kiln.where", PrecisionPolicy::half, "exact"},
    {"kiln.dropout", PrecisionPolicy::half, "identity at inference"},
    // Elementwise ops whose result has the range of their operands (one rounding each).
    {"kiln.add", PrecisionPolicy::half, "one rounding"},
    {"kiln.sub", PrecisionPolicy::half, "one rounding"},
    {"kiln.mul", PrecisionPolicy::half, "one rounding"},
    {"kiln.max", PrecisionPolicy::half, "exact"},
    {"kiln.min", PrecisionPolicy::half, "exact"},
    {"kiln.neg", PrecisionPolicy::half, "exact"},
    {"kiln.abs", PrecisionPolicy::half, "exact"},
    {"kiln.relu", PrecisionPolicy::half, "exact"},
    {"kiln.leaky_relu", PrecisionPolicy::half, "one rounding"},
    {"kiln.prelu", PrecisionPolicy::half, "one rounding"},
    {"kiln.sigmoid", PrecisionPolicy::half, "bounded result"},
    {"kiln.tanh", PrecisionPolicy::half, "bounded result"},
    {"kiln.hard_sigmoid", PrecisionPolicy::half, "bounded result"},
    {"kiln.hard_swish", PrecisionPolicy::half, "one rounding"},
    // Softmax and normalisation statistics: sums of exponentials and of squares.
    {"kiln.softmax", PrecisionPolicy::f32, "softmax / log-softmax"},
    {"kiln.normalize", PrecisionPolicy::f32, "normalisation statistics (layer / rms norm, mvn)"},
    {"kiln.group_norm", PrecisionPolicy::f32, "normalisation statistics (group / instance norm)"},
    {"kiln.batch_norm", PrecisionPolicy::f32, "normalisation (when not folded into a conv)"},
    {"kiln.lp_norm", PrecisionPolicy::f32, "normalisation statistics"},
    {"kiln.lrn", PrecisionPolicy::f32, "normalisation statistics"},
    // Reductions.
    {"kiln.reduce", PrecisionPolicy::f32, "reduction (sum, mean, prod, l2, log-sum-exp, ...)"},
    {"kiln.cumulative", PrecisionPolicy::f32, "running sum"},
    {"kiln.einsum", PrecisionPolicy::f32, "reduction"},
    // Range or accuracy: f16 overflows at 65504 (exp(11.1)), bf16 keeps 8 bits of mantissa.
    {"kiln.div", PrecisionPolicy::f32, "range: small divisors overflow"},
    {"kiln.exp", PrecisionPolicy::f32, "range: overflows above 11 in f16"},
    {"kiln.log", PrecisionPolicy::f32, "accuracy near 1; range of its operand"},
    {"kiln.pow", PrecisionPolicy::f32, "range"},
    {"kiln.sqrt", PrecisionPolicy::f32, "range of its operand (sums of squares)"},
    {"kiln.reciprocal", PrecisionPolicy::f32, "range"},
    {"kiln.softplus", PrecisionPolicy::f32, "exp inside"},
    {"kiln.gelu", PrecisionPolicy::f32, "erf accuracy"},
    {"kiln.gelu_tanh", PrecisionPolicy::f32, "cubic term overflows"},
    {"kiln.erf", PrecisionPolicy::f32, "accuracy"},
    {"kiln.cast", PrecisionPolicy::f32, "its declared dtypes are the model's"},
};

const OpDef *core(std::string_view name) {
  const OpDef *d = core_ops().find(name);
  KILN_ASSERT(d, "core op is not registered");
  return d;
}

bool is_constant(const Value *v) { return v && v->def && v->def->name() == "kiln.constant"; }

// Whether `op` is rewritten: policy half, no regions, every float operand and result f32 (an
// operand this pass already made half counts as f32) and at least one f32 result.
bool rewrites(const Op &op, const std::unordered_set<const Value *> &made_half,
              const std::set<std::string> &keep) {
  if (precision_policy(op.name()) != PrecisionPolicy::half || !op.regions.empty() ||
      (!op.loc.empty() && keep.count(op.loc)))
    return false;
  bool any = false;
  for (const Value *v : op.results) {
    if (is_float(v->type.dtype) && v->type.dtype != DType::f32) return false;
    any |= v->type.dtype == DType::f32;
  }
  for (const Value *v : op.operands)
    if (v && is_float(v->type.dtype) && v->type.dtype != DType::f32 && !made_half.count(v))
      return false;
  return any;
}

class Rewriter {
public:
  Rewriter(Graph &g, DType half, const std::set<std::string> &keep)
      : g_(g), half_(half), keep_(keep) {}

  void run() {
    std::vector<std::unique_ptr<Op>> old = std::move(g_.ops);
    g_.ops.clear();
    for (auto &op : old) {
      if (rewrites(*op, made_half_, keep_)) {
        for (Value *&v : op->operands)
          if (v && v->type.dtype == DType::f32) v = as_half(v);
        for (Value *r : op->results)
          if (r->type.dtype == DType::f32) {
            r->type.dtype = half_;
            made_half_.insert(r);
          }
      } else {
        for (Value *&v : op->operands) v = as_f32(v);
        for (auto &r : op->regions) reroute_captures(*r);
      }
      g_.ops.push_back(std::move(op));
    }
    for (Value *&r : g_.results) {
      if (!made_half_.count(r)) continue;
      Value *f = as_f32(r);
      f->name = r->name; // the function's output keeps its name and its f32 type
      r->name.clear();
      r = f;
    }
  }

private:
  // The half version of the f32 value `v`: a converted constant or a cast, made once.
  Value *as_half(Value *v) {
    auto it = half_of_.find(v);
    if (it != half_of_.end()) return it->second;
    Value *h = nullptr;
    if (is_constant(v)) {
      const Tensor *t = v->def->attr_tensor("value");
      KILN_ASSERT(t, "kiln.constant without a value");
      Tensor half = t->cast(half_); // round to nearest even, once, at compile time
      const TensorType type = TensorType::of(half);
      h = emit(core("kiln.constant"), {}, type, {{"value", std::move(half)}}, v->def->loc);
    } else {
      h = emit(core("kiln.cast"), {v}, {half_, v->type.dims, v->type.ranked}, {{"to", half_}},
               v->def ? v->def->loc : std::string());
    }
    half_of_[v] = h;
    return h;
  }

  // `v` as f32 when this pass made it half (a cast, made once), else `v`.
  Value *as_f32(Value *v) {
    if (!v || !made_half_.count(v)) return v;
    auto it = f32_of_.find(v);
    if (it != f32_of_.end()) return it->second;
    Value *f = emit(core("kiln.cast"), {v}, {DType::f32, v->type.dims, v->type.ranked},
                    {{"to", DType::f32}}, v->def ? v->def->loc : std::string());
    f32_of_[v] = f;
    return f;
  }

  // Regions read enclosing values directly: those made half are read through their f32 cast.
  void reroute_captures(Graph &region) {
    for (auto &op : region.ops) {
      for (Value *&v : op->operands) v = as_f32(v);
      for (auto &r : op->regions) reroute_captures(*r);
    }
    for (Value *&r : region.results) r = as_f32(r);
  }

  Value *emit(const OpDef *def, std::vector<Value *> operands, TensorType type, AttrMap attrs,
              std::string loc) {
    auto op = std::make_unique<Op>();
    op->def = def;
    op->operands = std::move(operands);
    op->attrs = std::move(attrs);
    op->loc = std::move(loc);
    Value *r = g_.new_value(std::move(type), "");
    r->def = op.get();
    op->results.push_back(r);
    g_.ops.push_back(std::move(op));
    return r;
  }

  Graph &g_;
  DType half_;
  const std::set<std::string> &keep_; // Module::keep_f32
  std::unordered_set<const Value *> made_half_;
  std::unordered_map<const Value *, Value *> half_of_, f32_of_;
};

Status run_lower_precision(Module &m, DType half) {
  for (auto &f : m.functions) Rewriter(f->body, half, m.keep_f32).run();
  return Status::ok();
}

} // namespace

PrecisionPolicy precision_policy(std::string_view op) {
  for (const PolicyRow &r : kPolicies)
    if (op == r.op) return r.policy;
  return PrecisionPolicy::f32;
}

std::string_view precision_policy_reason(std::string_view op) {
  for (const PolicyRow &r : kPolicies)
    if (op == r.op) return r.why;
  return "no checked half-precision kernel";
}

std::vector<std::string_view> precision_policy_ops() {
  std::vector<std::string_view> ops;
  for (const PolicyRow &r : kPolicies) ops.push_back(r.op);
  return ops;
}

std::optional<Precision> parse_precision(std::string_view s) {
  if (s == "fp32") return Precision::fp32;
  if (s == "fp16") return Precision::fp16;
  if (s == "bf16") return Precision::bf16;
  return std::nullopt;
}

std::string_view precision_name(Precision p) {
  switch (p) {
  case Precision::fp32: return "fp32";
  case Precision::fp16: return "fp16";
  case Precision::bf16: return "bf16";
  }
  return "?";
}

std::vector<std::string> precision_pipeline(Precision p) {
  std::vector<std::string> names = default_pipeline();
  if (p != Precision::fp32) {
    names.push_back(p == Precision::fp16 ? "lower-precision-fp16" : "lower-precision-bf16");
    names.push_back("dce");
  }
  // Last: the f32 contractions it builds must stay f32 (expand_qlinear.cpp).
  names.push_back("expand-qlinear");
  return names;
}

Status run_lower_precision_fp16(Module &m) { return run_lower_precision(m, DType::f16); }
Status run_lower_precision_bf16(Module &m) { return run_lower_precision(m, DType::bf16); }

} // namespace kiln
