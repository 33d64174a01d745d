// kiln quantize: the ONNX rewrite (quantize.h).
#include "frontend/onnx/quantize.h"

#include "frontend/onnx/importer.h"
#include "frontend/onnx/tensor_proto.h"

#include "support/narrow.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>

namespace kiln::onnx_fe {

namespace {

namespace fs = std::filesystem;
using onnx::GraphProto;
using onnx::ModelProto;
using onnx::NodeProto;
using onnx::TensorProto;

int onnx_code(DType t) {
  switch (t) {
  case DType::u8: return TensorProto::UINT8;
  case DType::i8: return TensorProto::INT8;
  case DType::i32: return TensorProto::INT32;
  case DType::i4: return 22; // INT4 (onnx 1.16+; Debian's 1.12 headers lack the name)
  default: return TensorProto::FLOAT;
  }
}

bool default_domain(const std::string &d) { return d.empty() || d == "ai.onnx"; }

int64_t opset_of(const ModelProto &m) {
  for (const auto &o : m.opset_import())
    if (default_domain(o.domain())) return o.version();
  return 0;
}

const onnx::AttributeProto *find_attr(const NodeProto &n, const std::string &name) {
  for (const auto &a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t attr_int(const NodeProto &n, const std::string &name, int64_t dflt) {
  const auto *a = find_attr(n, name);
  return a ? a->i() : dflt;
}
float attr_float(const NodeProto &n, const std::string &name, float dflt) {
  const auto *a = find_attr(n, name);
  return a ? a->f() : dflt;
}
void set_attr_int(NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

std::string node_label(const NodeProto &n) {
  return n.name().empty() ? (n.output_size() ? n.output(0) : n.op_type()) : n.name();
}

// A node to quantise: its activation input x, weight w (an initializer, or a second
// activation for a MatMul of two activations), optional bias and output.
struct Site {
  int node = 0;
  std::string x, w, bias;
  bool w_const = true;
  int64_t channel_axis = 0, reduce_axis = 1; // of w
  std::string out;                           // the tensor quantised after the node (static)
};

struct Plan {
  std::vector<Site> sites;
  std::vector<std::string> acts; // static: activations given a Q/DQ pair, in order
  std::vector<std::string> skipped;
};

// The model's graph seen by the planner.
struct Index {
  const GraphProto &g;
  std::unordered_map<std::string, int> init;                  // initializer -> index
  std::unordered_map<std::string, std::vector<int>> consumers; // tensor -> nodes reading it
  std::unordered_set<std::string> outputs;                     // graph outputs

  std::unordered_map<std::string, int> producer;               // tensor -> node writing it

  explicit Index(const GraphProto &graph) : g(graph) {
    for (int i = 0; i < g.initializer_size(); ++i) init.emplace(g.initializer(i).name(), i);
    for (int i = 0; i < g.node_size(); ++i) {
      for (const auto &in : g.node(i).input())
        if (!in.empty()) consumers[in].push_back(i);
      for (const auto &o : g.node(i).output()) producer.emplace(o, i);
    }
    for (const auto &o : g.output()) outputs.insert(o.name());
  }
  // The constant a tensor name holds: an initializer, possibly through Identity nodes (PyTorch
  // exports share equal parameters that way), or a Constant node's `value`.
  const TensorProto *initializer(std::string name) const {
    for (int hop = 0; hop < 16; ++hop) {
      if (auto it = init.find(name); it != init.end()) return &g.initializer(it->second);
      auto p = producer.find(name);
      if (p == producer.end()) return nullptr;
      const NodeProto &n = g.node(p->second);
      if (!default_domain(n.domain())) return nullptr;
      if (n.op_type() == "Constant") {
        const auto *v = find_attr(n, "value");
        return v && v->has_t() ? &v->t() : nullptr;
      }
      if (n.op_type() != "Identity" || n.input_size() < 1) return nullptr;
      name = n.input(0);
    }
    return nullptr;
  }
};

// Why node `n` cannot be quantised (empty: it can, and `s` says how).
std::string plan_site(const Index &ix, const NodeProto &n, const QuantizeOptions &o, Site &s) {
  if (n.input_size() < 2 || n.output_size() < 1) return "fewer than two inputs";
  s.x = n.input(0);
  s.w = n.input(1);
  const TensorProto *w = ix.initializer(s.w);
  if (!w) {
    if (n.op_type() != "MatMul" || o.mode != QuantMode::static_qdq)
      return "its weight (input 1) is not an initializer";
    s.w_const = false; // a product of two activations: both get a Q/DQ pair
  } else if (w->data_type() != TensorProto::FLOAT) {
    return "its weight is not float32";
  }
  if (ix.initializer(s.x)) return "its input 0 is an initializer";
  const int64_t wr = w ? w->dims_size() : 0;
  if (n.op_type() == "Conv") {
    if (wr < 3) return "its weight has rank < 3";
    s.channel_axis = 0, s.reduce_axis = 1;
  } else if (n.op_type() == "MatMul") {
    if (w && wr < 2) return "its weight has rank < 2";
    s.channel_axis = wr - 1, s.reduce_axis = wr - 2;
  } else if (n.op_type() == "Gemm") {
    if (wr != 2) return "its weight is not 2-D";
    if (attr_int(n, "transA", 0) != 0) return "transA is set";
    const bool tb = attr_int(n, "transB", 0) != 0;
    s.channel_axis = tb ? 0 : 1, s.reduce_axis = tb ? 1 : 0;
  } else {
    return "not a Conv, MatMul or Gemm";
  }
  if (o.block_size > 0 && w && w->dims(static_cast<int>(s.reduce_axis)) < 1)
    return "its reduction axis is empty";
  // A bias quantised as int32 (static mode, Conv / Gemm with alpha = beta = 1, 1-D float32).
  if (n.input_size() > 2 && !n.input(2).empty() && o.mode == QuantMode::static_qdq && w) {
    const TensorProto *b = ix.initializer(n.input(2));
    const bool plain = n.op_type() == "Conv" ||
                       (attr_float(n, "alpha", 1) == 1 && attr_float(n, "beta", 1) == 1);
    if (b && b->data_type() == TensorProto::FLOAT && b->dims_size() == 1 &&
        b->dims(0) == w->dims(static_cast<int>(s.channel_axis)) && plain)
      s.bias = n.input(2);
  }
  // The output: after a Relu that is its only reader.
  s.out = n.output(0);
  auto it = ix.consumers.find(s.out);
  if (!ix.outputs.count(s.out) && it != ix.consumers.end() && it->second.size() == 1 &&
      ix.g.node(it->second[0]).op_type() == "Relu" &&
      default_domain(ix.g.node(it->second[0]).domain()))
    s.out = ix.g.node(it->second[0]).output(0);
  return "";
}

Plan make_plan(const GraphProto &g, const QuantizeOptions &o) {
  Index ix(g);
  Plan p;
  std::unordered_set<std::string> seen;
  auto act = [&](const std::string &t) {
    if (seen.insert(t).second) p.acts.push_back(t);
  };
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto &n = g.node(i);
    if (!default_domain(n.domain()) || !o.op_types.count(n.op_type())) continue;
    const std::string label = node_label(n);
    if (o.exclude.count(label) || (n.output_size() && o.exclude.count(n.output(0)))) continue;
    Site s;
    s.node = i;
    const std::string why = plan_site(ix, n, o, s);
    if (!why.empty()) {
      p.skipped.push_back(fmt::format("{} ({}): {}", label, n.op_type(), why));
      continue;
    }
    if (o.mode == QuantMode::static_qdq) {
      act(s.x);
      if (!s.w_const) act(s.w);
      act(s.out);
    }
    p.sites.push_back(s);
  }
  return p;
}

// Quantisation parameters of one tensor: scales and zero points per group.
struct QParams {
  std::vector<float> scale;
  std::vector<int32_t> zp;
};

int32_t qmin(DType t) { return t == DType::u8 ? 0 : t == DType::i4 ? -7 : -127; }
int32_t qmax(DType t) { return t == DType::u8 ? 255 : t == DType::i4 ? 7 : 127; }

// Scale and zero point for values in [lo, hi]: symmetric for signed types (zero point 0),
// asymmetric for u8; a range that is all zero gets scale 1.
void params_for(double lo, double hi, DType t, float &scale, int32_t &zp) {
  lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
  if (t == DType::u8) {
    scale = static_cast<float>((hi - lo) / 255.0);
    if (!(scale > 0) || !std::isfinite(scale)) scale = 1;
    zp = static_cast<int32_t>(std::clamp(std::nearbyint(-lo / scale), 0.0, 255.0));
  } else {
    scale = static_cast<float>(std::max(-lo, hi) / qmax(t));
    if (!(scale > 0) || !std::isfinite(scale)) scale = 1;
    zp = 0;
  }
}

int32_t quantize_value(float v, float scale, int32_t zp, DType t) {
  const float q = std::nearbyint(v / scale) + static_cast<float>(zp);
  return static_cast<int32_t>(std::clamp(q, static_cast<float>(qmin(t)), static_cast<float>(qmax(t))));
}

TensorProto make_tensor(const std::string &name, int code, const std::vector<int64_t> &dims,
                        const void *data, size_t bytes) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(code);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char *>(data), bytes));
  return t;
}

// A tensor of `t` from one int32 value per element (narrow types packed as ONNX stores them).
TensorProto int_tensor(const std::string &name, DType t, const std::vector<int64_t> &dims,
                       const std::vector<int32_t> &v) {
  if (t == DType::i32) return make_tensor(name, onnx_code(t), dims, v.data(), v.size() * 4);
  std::vector<uint8_t> bytes(v.size());
  for (size_t i = 0; i < v.size(); ++i) bytes[i] = static_cast<uint8_t>(v[i]);
  if (t == DType::i4) bytes = pack_narrow(t, bytes.data(), static_cast<int64_t>(v.size()));
  return make_tensor(name, onnx_code(t), dims, bytes.data(), bytes.size());
}

// The model being rewritten: unique names, the new initializers and nodes around old ones.
struct Rewriter {
  ModelProto &m;
  GraphProto &g;
  std::unordered_set<std::string> names;
  std::unordered_map<int, std::vector<NodeProto>> before, after; // by original node index
  std::vector<NodeProto> front;                                  // before every node

  explicit Rewriter(ModelProto &model) : m(model), g(*model.mutable_graph()) {
    for (const auto &t : g.initializer()) names.insert(t.name());
    for (const auto &v : g.input()) names.insert(v.name());
    for (const auto &n : g.node()) {
      names.insert(n.name());
      for (const auto &o : n.output()) names.insert(o);
    }
  }
  std::string fresh(const std::string &base) {
    std::string n = base;
    for (int i = 1; names.count(n); ++i) n = fmt::format("{}_{}", base, i);
    names.insert(n);
    return n;
  }
  std::string add_init(TensorProto t) {
    t.set_name(fresh(t.name()));
    std::string n = t.name();
    *g.add_initializer() = std::move(t);
    return n;
  }
  NodeProto node(const std::string &op, const std::vector<std::string> &in,
                 const std::vector<std::string> &out, const std::string &name) {
    NodeProto n;
    n.set_op_type(op);
    n.set_name(fresh(name));
    for (const auto &i : in) n.add_input(i);
    for (const auto &o : out) n.add_output(o);
    return n;
  }
};

// A float32 initializer's values.
Result<std::vector<float>> floats_of(const TensorProto &t, const std::string &base_dir) {
  KILN_ASSIGN(Tensor v, decode_tensor(t, base_dir, int64_t(1) << 34));
  if (v.dtype() != DType::f32) return Status::error(fmt::format("'{}' is not float32", t.name()));
  const float *p = v.data<float>();
  return std::vector<float>(p, p + v.numel());
}

struct WeightResult {
  std::string dq;           // the dequantised weight's name
  std::vector<float> scale; // per channel (or one) scale, for the bias
  int64_t bytes_before = 0, bytes_after = 0;
};

// Replaces weight `name` (float32 initializer) by an integer one and its DequantizeLinear.
Result<WeightResult> quantize_weight(Rewriter &rw, const TensorProto &w, const Site &s,
                                     const QuantizeOptions &o, const std::string &base_dir,
                                     std::vector<NodeProto> &nodes) {
  KILN_ASSIGN(auto vals, floats_of(w, base_dir));
  std::vector<int64_t> dims(w.dims().begin(), w.dims().end());
  const int64_t rank = static_cast<int64_t>(dims.size());
  // Groups: one (per tensor), one per output channel, or blocks along the reduction axis.
  std::vector<int64_t> sdims; // the scale's shape (empty: a scalar)
  int64_t axis = -1, block = 0;
  if (o.block_size > 0) {
    axis = s.reduce_axis, block = o.block_size;
    sdims = dims;
    sdims[static_cast<size_t>(axis)] = (dims[static_cast<size_t>(axis)] + block - 1) / block;
  } else if (o.per_channel) {
    axis = s.channel_axis;
    sdims = {dims[static_cast<size_t>(axis)]};
  }
  int64_t groups = 1;
  for (int64_t d : sdims) groups *= d;
  // The group of each element.
  const auto group_of = [&](int64_t i) -> int64_t {
    if (axis < 0) return 0;
    int64_t g = 0, rem = i, stride = 1;
    std::vector<int64_t> coord(static_cast<size_t>(rank));
    for (int64_t d = rank - 1; d >= 0; --d) {
      coord[static_cast<size_t>(d)] = rem % dims[static_cast<size_t>(d)];
      rem /= dims[static_cast<size_t>(d)];
    }
    if (block == 0) return coord[static_cast<size_t>(axis)];
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t c = coord[static_cast<size_t>(d)];
      if (d == axis) c /= block;
      g += c * stride;
      stride *= sdims[static_cast<size_t>(d)];
    }
    return g;
  };
  std::vector<int64_t> gid(vals.size());
  std::vector<double> lo(static_cast<size_t>(groups), 0), hi(static_cast<size_t>(groups), 0);
  for (size_t i = 0; i < vals.size(); ++i) {
    if (!std::isfinite(vals[i]))
      return Status::error(fmt::format("weight '{}' has a non-finite value at {}", w.name(), i));
    gid[i] = group_of(static_cast<int64_t>(i));
    lo[static_cast<size_t>(gid[i])] = std::min<double>(lo[static_cast<size_t>(gid[i])], vals[i]);
    hi[static_cast<size_t>(gid[i])] = std::max<double>(hi[static_cast<size_t>(gid[i])], vals[i]);
  }
  QParams q;
  q.scale.resize(static_cast<size_t>(groups));
  q.zp.resize(static_cast<size_t>(groups));
  for (size_t k = 0; k < q.scale.size(); ++k) params_for(lo[k], hi[k], o.weights, q.scale[k], q.zp[k]);
  std::vector<int32_t> qv(vals.size());
  for (size_t i = 0; i < vals.size(); ++i) {
    const auto k = static_cast<size_t>(gid[i]);
    qv[i] = quantize_value(vals[i], q.scale[k], q.zp[k], o.weights);
  }
  WeightResult r;
  r.scale = q.scale;
  r.bytes_before = static_cast<int64_t>(vals.size()) * 4;
  const std::string qn = rw.add_init(int_tensor(w.name() + "_quantized", o.weights, dims, qv));
  const std::string sn = rw.add_init(
      make_tensor(w.name() + "_scale", TensorProto::FLOAT, sdims, q.scale.data(), q.scale.size() * 4));
  std::vector<std::string> in = {qn, sn};
  if (o.weights != DType::i4) // an int4 weight is symmetric: its zero point is left out
    in.push_back(rw.add_init(int_tensor(w.name() + "_zero_point", o.weights, sdims, q.zp)));
  r.bytes_after = static_cast<int64_t>(packed_bytes(o.weights, static_cast<int64_t>(qv.size()))) +
                  groups * (o.weights == DType::i4 ? 4 : 5);
  r.dq = rw.fresh(w.name() + "_dequantized");
  NodeProto dq = rw.node("DequantizeLinear", in, {r.dq}, w.name() + "_DequantizeLinear");
  if (axis >= 0) set_attr_int(dq, "axis", axis);
  if (block > 0) set_attr_int(dq, "block_size", block);
  nodes.push_back(std::move(dq));
  return r;
}

// The int32 bias of a static Conv / Gemm: scale x_scale * w_scale[c], zero point 0.
Result<std::string> quantize_bias(Rewriter &rw, const TensorProto &b, float x_scale,
                                  const std::vector<float> &w_scale, const std::string &base_dir,
                                  std::vector<NodeProto> &nodes) {
  KILN_ASSIGN(auto vals, floats_of(b, base_dir));
  std::vector<float> scale(vals.size());
  std::vector<int32_t> qv(vals.size()), zero(vals.size(), 0);
  for (size_t c = 0; c < vals.size(); ++c) {
    scale[c] = x_scale * w_scale[w_scale.size() == 1 ? 0 : c];
    const double q = std::nearbyint(static_cast<double>(vals[c]) / scale[c]);
    if (!std::isfinite(q))
      return Status::error(fmt::format("bias '{}' has a non-finite value at {}", b.name(), c));
    qv[c] = static_cast<int32_t>(std::clamp(q, -2147483648.0, 2147483647.0));
  }
  const std::vector<int64_t> dims = {static_cast<int64_t>(vals.size())};
  const std::string qn = rw.add_init(int_tensor(b.name() + "_quantized", DType::i32, dims, qv));
  const std::string sn = rw.add_init(
      make_tensor(b.name() + "_scale", TensorProto::FLOAT, dims, scale.data(), scale.size() * 4));
  const std::string zn = rw.add_init(int_tensor(b.name() + "_zero_point", DType::i32, dims, zero));
  const std::string dqn = rw.fresh(b.name() + "_dequantized");
  NodeProto dq = rw.node("DequantizeLinear", {qn, sn, zn}, {dqn}, b.name() + "_DequantizeLinear");
  set_attr_int(dq, "axis", 0);
  nodes.push_back(std::move(dq));
  return dqn;
}

// The upgrade of a graph's default-domain nodes from opset `from` to 21 (see quantize.h).
Status upgrade_graph(GraphProto &g, int64_t from, Rewriter *rw_top) {
  static const std::set<std::string> reduce_axes = {"ReduceL1", "ReduceL2", "ReduceLogSum",
                                                     "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                                                     "ReduceMin", "ReduceProd", "ReduceSumSquare"};
  std::unordered_set<std::string> local;
  for (const auto &t : g.initializer()) local.insert(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output()) local.insert(o);
  auto fresh = [&](const std::string &base) {
    if (rw_top) return rw_top->fresh(base);
    std::string n = base;
    for (int i = 1; local.count(n); ++i) n = fmt::format("{}_{}", base, i);
    local.insert(n);
    return n;
  };
  for (auto &n : *g.mutable_node()) {
    for (auto &a : *n.mutable_attribute()) {
      if (a.has_g()) KILN_TRY(upgrade_graph(*a.mutable_g(), from, nullptr));
      for (auto &sg : *a.mutable_graphs()) KILN_TRY(upgrade_graph(sg, from, nullptr));
    }
    if (!default_domain(n.domain())) continue;
    const std::string &op = n.op_type();
    if ((op == "DFT" && from < 20) || (op == "GroupNormalization" && from < 21))
      return Status::error(fmt::format("node '{}' ({}): its meaning changed between opset {} and "
                                       "21; kiln quantize cannot upgrade it (convert the model "
                                       "to opset 21 first)", node_label(n), op, from));
    if (op == "RoiAlign" && from < 16 && !find_attr(n, "coordinate_transformation_mode")) {
      auto *a = n.add_attribute();
      a->set_name("coordinate_transformation_mode");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s("output_half_pixel");
    }
    if (op == "GridSample" && from < 20)
      for (auto &a : *n.mutable_attribute())
        if (a.name() == "mode") a.set_s(a.s() == "bilinear" ? "linear" : a.s() == "bicubic" ? "cubic" : a.s());
    if (reduce_axes.count(op) && from < 18) {
      for (int i = 0; i < n.attribute_size(); ++i) {
        if (n.attribute(i).name() != "axes") continue;
        const auto axes = n.attribute(i).ints();
        std::vector<int64_t> v(axes.begin(), axes.end());
        n.mutable_attribute()->DeleteSubrange(i, 1);
        TensorProto t = make_tensor(fresh(node_label(n) + "_axes"), TensorProto::INT64,
                                    {static_cast<int64_t>(v.size())}, v.data(), v.size() * 8);
        if (n.input_size() < 2) n.add_input(t.name());
        *g.add_initializer() = std::move(t);
        break;
      }
    }
  }
  return Status::ok();
}

Status set_opset(ModelProto &m, int64_t v) {
  for (auto &o : *m.mutable_opset_import())
    if (default_domain(o.domain())) o.set_version(v);
  if (v >= 21 && m.ir_version() < 10) m.set_ir_version(10);
  return Status::ok();
}

// Initializers stored as external data become inline (the output may live elsewhere).
Status inline_external(GraphProto &g, const std::string &base_dir) {
  for (auto &t : *g.mutable_initializer()) {
    if (t.data_location() != TensorProto::EXTERNAL) continue;
    KILN_ASSIGN(Tensor v, decode_tensor(t, base_dir, int64_t(1) << 34));
    if (is_narrow(v.dtype()) || v.dtype() == DType::boolean)
      return Status::error(fmt::format("initializer '{}': external {} data cannot be inlined",
                                       t.name(), dtype_name(v.dtype())));
    t.clear_external_data();
    t.set_data_location(TensorProto::DEFAULT);
    t.set_raw_data(std::string(reinterpret_cast<const char *>(v.raw()), v.nbytes()));
  }
  return Status::ok();
}

// Names read anywhere in a graph (its nodes, their subgraphs, its outputs).
void names_read(const GraphProto &g, std::unordered_set<std::string> &used) {
  for (const auto &n : g.node()) {
    for (const auto &i : n.input()) used.insert(i);
    for (const auto &a : n.attribute()) {
      if (a.has_g()) names_read(a.g(), used);
      for (const auto &sg : a.graphs()) names_read(sg, used);
    }
  }
  for (const auto &o : g.output()) used.insert(o.name());
}

Result<ModelProto> load(const std::string &path) {
  KILN_ASSIGN(std::string bytes, read_model_bytes(path));
  ModelProto m;
  if (!m.ParseFromString(bytes) || !m.has_graph())
    return Status::error(fmt::format("{}: not a valid ONNX model", path));
  return m;
}

Status check_options(const QuantizeOptions &o) {
  if (o.block_size < 0) return Status::error("--block-size must be >= 0");
  if (o.mode == QuantMode::weight_only) {
    if (o.weights != DType::i8 && o.weights != DType::i4)
      return Status::error("weight-only quantisation takes int8 or int4 weights");
  } else {
    if (o.weights != DType::i8 && o.weights != DType::u8)
      return Status::error("static and dynamic quantisation take int8 or uint8 weights (int4: "
                           "--mode weight-only)");
    if (o.block_size > 0) return Status::error("--block-size needs --mode weight-only");
  }
  if (o.activations != DType::u8 && o.activations != DType::i8)
    return Status::error("activations are quantised to uint8 or int8");
  return Status::ok();
}

} // namespace

Result<std::vector<std::string>> quantize_activation_names(const std::string &model_path,
                                                           const QuantizeOptions &o) {
  KILN_TRY(check_options(o));
  KILN_ASSIGN(ModelProto m, load(model_path));
  return make_plan(m.graph(), o).acts;
}

Result<QuantizeSummary> quantize_file(const std::string &model_path, const std::string &out_path,
                                      const QuantizeOptions &o,
                                      const std::map<std::string, ActRange> &ranges) {
  KILN_TRY(check_options(o));
  KILN_ASSIGN(ModelProto m, load(model_path));
  const std::string base_dir = fs::path(model_path).parent_path().string();
  QuantizeSummary sum;
  sum.opset_from = opset_of(m);
  const bool needs21 = o.weights == DType::i4 || o.block_size > 0;
  sum.opset_to = needs21 ? std::max<int64_t>(sum.opset_from, 21) : sum.opset_from;
  if (sum.opset_from < 13)
    return Status::error(fmt::format("{}: ai.onnx opset {}; kiln quantize needs opset >= 13 "
                                     "(per-axis DequantizeLinear): convert the model first",
                                     model_path, sum.opset_from));
  KILN_TRY(inline_external(*m.mutable_graph(), base_dir));
  const Plan plan = make_plan(m.graph(), o);
  sum.skipped = plan.skipped;
  Rewriter rw(m);
  GraphProto &g = rw.g;
  const Index ix(g); // of the graph as it was: nodes and initializers are only appended to

  // Activation parameters (static).
  std::map<std::string, std::pair<float, int32_t>> act;
  for (const auto &t : plan.acts) {
    auto it = ranges.find(t);
    if (it == ranges.end())
      return Status::error(fmt::format("no calibration range for activation '{}'", t));
    if (!std::isfinite(it->second.lo) || !std::isfinite(it->second.hi))
      return Status::error(fmt::format("activation '{}': calibration range [{}, {}] is not "
                                       "finite", t, it->second.lo, it->second.hi));
    float s;
    int32_t z;
    params_for(it->second.lo, it->second.hi, o.activations, s, z);
    act[t] = {s, z};
  }

  // Weights, biases and dynamic activations, in front of each site.
  std::map<std::string, WeightResult> weights; // by float weight name: shared weights once
  std::map<std::string, std::string> dynamic;  // activation -> its dequantised name
  for (const Site &s : plan.sites) {
    NodeProto &n = *g.mutable_node(s.node);
    auto &pre = rw.before[s.node];
    if (s.w_const) {
      auto it = weights.find(s.w);
      if (it == weights.end()) {
        const TensorProto wcopy = *ix.initializer(s.w);
        KILN_ASSIGN(WeightResult r, quantize_weight(rw, wcopy, s, o, base_dir, pre));
        sum.weight_bytes_before += r.bytes_before;
        sum.weight_bytes_after += r.bytes_after;
        ++sum.weights;
        it = weights.emplace(s.w, std::move(r)).first;
      }
      n.set_input(1, it->second.dq);
      if (!s.bias.empty()) {
        const TensorProto bcopy = *ix.initializer(s.bias);
        KILN_ASSIGN(std::string bq, quantize_bias(rw, bcopy, act.at(s.x).first, it->second.scale,
                                                  base_dir, pre));
        n.set_input(2, bq);
      }
    }
    if (o.mode == QuantMode::dynamic) {
      auto it = dynamic.find(s.x);
      if (it == dynamic.end()) {
        const std::string q = rw.fresh(s.x + "_quantized"), sc = rw.fresh(s.x + "_scale"),
                          zp = rw.fresh(s.x + "_zero_point"), dq = rw.fresh(s.x + "_dequantized");
        pre.push_back(rw.node("DynamicQuantizeLinear", {s.x}, {q, sc, zp}, s.x + "_DynamicQuantizeLinear"));
        pre.push_back(rw.node("DequantizeLinear", {q, sc, zp}, {dq}, s.x + "_DequantizeLinear"));
        it = dynamic.emplace(s.x, dq).first;
        ++sum.activations;
      }
      n.set_input(0, it->second);
    }
    ++sum.nodes;
  }

  // Static activations: the producer's output is renamed and a Q/DQ pair gives the name back,
  // so every reader (graph outputs included) sees the quantised value.
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i)
    for (int k = 0; k < g.node(i).output_size(); ++k) producer.emplace(g.node(i).output(k), i);
  for (const auto &t : plan.acts) {
    const auto [scale, zp] = act.at(t);
    const std::string sn = rw.add_init(make_tensor(t + "_scale", TensorProto::FLOAT, {}, &scale, 4));
    const std::string zn = rw.add_init(int_tensor(t + "_zero_point", o.activations, {}, {zp}));
    const std::string qn = rw.fresh(t + "_quantized");
    auto p = producer.find(t);
    if (p != producer.end()) {
      NodeProto &src = *g.mutable_node(p->second);
      const std::string fl = rw.fresh(t + "_float");
      for (int k = 0; k < src.output_size(); ++k)
        if (src.output(k) == t) src.set_output(k, fl);
      auto &post = rw.after[p->second];
      post.push_back(rw.node("QuantizeLinear", {fl, sn, zn}, {qn}, t + "_QuantizeLinear"));
      post.push_back(rw.node("DequantizeLinear", {qn, sn, zn}, {t}, t + "_DequantizeLinear"));
    } else { // a graph input: its readers in the main graph read the pair's result
      const std::string dq = rw.fresh(t + "_dequantized");
      for (auto &n : *g.mutable_node())
        for (int k = 0; k < n.input_size(); ++k)
          if (n.input(k) == t) n.set_input(k, dq);
      rw.front.push_back(rw.node("QuantizeLinear", {t, sn, zn}, {qn}, t + "_QuantizeLinear"));
      rw.front.push_back(rw.node("DequantizeLinear", {qn, sn, zn}, {dq}, t + "_DequantizeLinear"));
    }
    ++sum.activations;
  }

  // The node list with the new nodes in place.
  google::protobuf::RepeatedPtrField<NodeProto> nodes;
  for (auto &n : rw.front) *nodes.Add() = std::move(n);
  for (int i = 0; i < g.node_size(); ++i) {
    for (auto &n : rw.before[i]) *nodes.Add() = std::move(n);
    *nodes.Add() = g.node(i);
    for (auto &n : rw.after[i]) *nodes.Add() = std::move(n);
  }
  g.mutable_node()->Swap(&nodes);

  // Float weights nothing reads any more go.
  std::unordered_set<std::string> used;
  names_read(g, used);
  auto *inits = g.mutable_initializer();
  for (int i = inits->size(); i-- > 0;)
    if (weights.count(inits->Get(i).name()) && !used.count(inits->Get(i).name()))
      inits->DeleteSubrange(i, 1);
  auto *ins = g.mutable_input(); // IR < 4 lists initializers among the inputs too
  for (int i = ins->size(); i-- > 0;)
    if (weights.count(ins->Get(i).name()) && !used.count(ins->Get(i).name()))
      ins->DeleteSubrange(i, 1);

  if (sum.opset_to != sum.opset_from) {
    KILN_TRY(upgrade_graph(g, sum.opset_from, &rw));
    KILN_TRY(set_opset(m, sum.opset_to));
  }

  std::string bytes;
  if (m.ByteSizeLong() >= (size_t(2) << 30) || !m.SerializeToString(&bytes))
    return Status::error("the quantised model is larger than 2 GiB (protobuf's limit)");
  const std::string tmp = fmt::format("{}.tmp{}", out_path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f.good()) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return Status::error(fmt::format("{}: cannot write", out_path));
    }
  }
  std::error_code ec;
  fs::rename(tmp, out_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Status::error(fmt::format("{}: cannot write", out_path));
  }
  return sum;
}

} // namespace kiln::onnx_fe
