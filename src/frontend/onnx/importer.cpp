#include "frontend/onnx/importer.h"

#include "frontend/onnx/convert.h"
#include "frontend/onnx/tensor_proto.h"
#include "ops/ops.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace kiln::onnx_fe {

namespace fs = std::filesystem;

// Attributes of one node, with function attribute references already resolved.
class NodeAttrs {
public:
  std::map<std::string, const onnx::AttributeProto *, std::less<>> by_name;
  const onnx::AttributeProto *find(std::string_view n) const {
    auto it = by_name.find(n);
    return it == by_name.end() ? nullptr : it->second;
  }
  std::string base_dir;
};

// ---- NodeCtx ---------------------------------------------------------------------------------

const Tensor *NodeCtx::const_input(size_t i) const {
  return i < in.size() ? Builder::constant_value(in[i]) : nullptr;
}
bool NodeCtx::has_attr(std::string_view n) const { return attrs->find(n) != nullptr; }
int64_t NodeCtx::attr_int(std::string_view n, int64_t dflt) const {
  auto *a = attrs->find(n);
  return a ? a->i() : dflt;
}
double NodeCtx::attr_float(std::string_view n, double dflt) const {
  auto *a = attrs->find(n);
  return a ? a->f() : dflt;
}
std::string NodeCtx::attr_str(std::string_view n, std::string dflt) const {
  auto *a = attrs->find(n);
  return a ? a->s() : dflt;
}
std::vector<int64_t> NodeCtx::attr_ints(std::string_view n, std::vector<int64_t> dflt) const {
  auto *a = attrs->find(n);
  if (!a) return dflt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
std::vector<double> NodeCtx::attr_floats(std::string_view n, std::vector<double> dflt) const {
  auto *a = attrs->find(n);
  if (!a) return dflt;
  return std::vector<double>(a->floats().begin(), a->floats().end());
}
std::vector<std::string> NodeCtx::attr_strs(std::string_view n) const {
  auto *a = attrs->find(n);
  if (!a) return {};
  return std::vector<std::string>(a->strings().begin(), a->strings().end());
}
Result<Tensor> NodeCtx::attr_tensor(std::string_view n) const {
  auto *a = attrs->find(n);
  if (!a || !a->has_t()) return error(fmt::format("attribute '{}' is missing", n));
  auto r = decode_tensor(a->t(), attrs->base_dir, limits().max_tensor_bytes);
  if (!r) return error(r.status().message());
  return r;
}
Result<DType> NodeCtx::attr_dtype(std::string_view n, std::optional<int64_t> dflt) const {
  auto *a = attrs->find(n);
  if (!a && !dflt) return error(fmt::format("attribute '{}' is missing", n));
  int64_t code = a ? a->i() : *dflt;
  auto dt = dtype_from_onnx(code);
  if (!dt)
    return error(fmt::format("dtype {} (attribute '{}') is not supported", onnx_dtype_name(code), n));
  return *dt;
}
Status NodeCtx::error(const std::string &msg) const {
  return Status::error(fmt::format("node '{}' ({}{}{}, opset {}): {}", name, domain,
                                   domain.empty() ? "" : ".", op_type, opset, msg));
}
Result<Value *> NodeCtx::op(std::string_view opname, std::vector<Value *> operands, AttrMap a) {
  auto r = b->create1(opname, std::move(operands), std::move(a));
  if (!r) return error(r.status().message());
  return r;
}
Result<std::vector<Value *>> NodeCtx::op_n(std::string_view opname, std::vector<Value *> operands,
                                           AttrMap a, int num_results) {
  auto r = b->create(opname, std::move(operands), std::move(a), num_results);
  if (!r) return error(r.status().message());
  return r;
}

void ConverterTable::add(std::string domain, std::string op_type, ConvertFn fn) {
  if (domain == "ai.onnx") domain.clear();
  table_[{std::move(domain), std::move(op_type)}] = std::move(fn);
}
const ConvertFn *ConverterTable::find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") domain = "";
  auto it = table_.find(std::pair<std::string, std::string>(domain, op_type));
  return it == table_.end() ? nullptr : &it->second;
}

// ---- Importer --------------------------------------------------------------------------------

namespace {

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    register_onnx_elementwise(t);
    register_onnx_reduce(t);
    register_onnx_shape(t);
    register_onnx_nn(t);
    register_onnx_misc(t);
    register_onnx_control(t);
    return t;
  }();
  return table;
}

std::string norm_domain(const std::string &d) { return d == "ai.onnx" ? std::string() : d; }

using OpsetMap = std::map<std::string, int, std::less<>>;

// Newest ai.onnx opset accepted: onnx 1.23's. Converters implement every versioned change up
// to 23; the changes in 24 to 28 that the test suite exercises are dtype additions (handled by
// the dtype checks) plus the converters' explicit opset checks.
constexpr int kMaxOpset = 28;

struct Scope {
  const Scope *parent = nullptr;
  std::unordered_map<std::string, Value *> names;
  Value *find(const std::string &n) const {
    for (const Scope *s = this; s; s = s->parent) {
      auto it = s->names.find(n);
      if (it != s->names.end()) return it->second;
    }
    return nullptr;
  }
};

// Reads opset_import entries; versions outside 1..INT32_MAX (and ai.onnx past kMaxOpset) are
// refused before they are narrowed to int.
template <class Ids> Status read_opsets(const Ids &ids, OpsetMap &opsets) {
  for (const auto &o : ids) {
    const std::string domain = norm_domain(o.domain());
    const int64_t v = o.version();
    if (domain.empty() && v > kMaxOpset)
      return Status::error(
          fmt::format("ONNX opset {} is newer than kiln supports (7 to {})", v, kMaxOpset));
    if (v < 1 || v > INT32_MAX)
      return Status::error(fmt::format("opset version {} of domain '{}' is not valid", v,
                                       domain.empty() ? "ai.onnx" : domain));
    opsets[domain] = static_cast<int>(v);
  }
  return Status::ok();
}

// Refuses declared dims that are negative (value_info and graph outputs are not otherwise
// used, but a model that declares them is malformed).
Status check_declared_dims(const onnx::ValueInfoProto &v, const char *what) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return Status::ok();
  for (const auto &d : v.type().tensor_type().shape().dim())
    if (d.has_dim_value() && d.dim_value() < 0)
      return Status::error(
          fmt::format("{} '{}': negative dimension {}", what, v.name(), d.dim_value()));
  return Status::ok();
}

// The type of a value a node produced: every static dim valid and the size within the tensor
// limit, so that nothing later (executor, memory plan) sizes a buffer from an overflowed shape.
Status check_result_size(const TensorType &t, int64_t max_bytes) {
  if (!t.ranked) return Status::ok();
  const int64_t max_elems = max_bytes / static_cast<int64_t>(dtype_size(t.dtype));
  int64_t n = 1;
  for (int64_t d : t.dims) {
    if (d == kDynamic) continue;
    if (d < 0)
      return Status::error(fmt::format("result has dimension {} (its shape computation "
                                       "overflowed or is invalid)",
                                       d));
    if (d != 0 && n > max_elems / d) n = max_elems + 1;
    else n *= d;
  }
  if (n > max_elems)
    return Status::error(fmt::format("result {} is larger than the {}-byte tensor limit "
                                     "(KILN_MAX_TENSOR_BYTES)",
                                     t.str(), max_bytes));
  return Status::ok();
}

Result<TensorType> type_from_proto(const onnx::TypeProto &tp, const std::string &what) {
  if (!tp.has_tensor_type())
    return Status::error(fmt::format("{}: only tensor types are supported (sequence, map and "
                                     "optional types are not)",
                                     what));
  const auto &tt = tp.tensor_type();
  auto dt = dtype_from_onnx(tt.elem_type());
  if (!dt)
    return Status::error(
        fmt::format("{}: dtype {} is not supported", what, onnx_dtype_name(tt.elem_type())));
  TensorType t;
  t.dtype = *dt;
  if (!tt.has_shape()) {
    t.ranked = false;
    return t;
  }
  for (const auto &d : tt.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return Status::error(fmt::format("{}: negative dimension {}", what, d.dim_value()));
      t.dims.push_back(d.dim_value());
    } else {
      t.dims.push_back(kDynamic);
    }
  }
  return t;
}

class Importer {
public:
  Importer(const onnx::ModelProto &m, std::string base_dir, const ImportOptions &opt)
      : model_(m), base_dir_(std::move(base_dir)), opt_(opt) {
    for (const auto &f : m.functions()) functions_[{norm_domain(f.domain()), f.name()}] = &f;
  }

  Result<std::unique_ptr<Module>> run() {
    OpsetMap opsets;
    KILN_TRY(read_opsets(model_.opset_import(), opsets));
    for (const auto &f : model_.functions()) {
      OpsetMap fops;
      KILN_TRY(read_opsets(f.opset_import(), fops).with_context(fmt::format("function {}", f.name())));
    }
    if (!opsets.count("")) opsets[""] = 1;
    KILN_ASSIGN(int64_t num_nodes, expanded_size(model_.graph().node(), 0));
    if (num_nodes > opt_.max_nodes)
      return Status::error(fmt::format("the model has more than {} nodes once its functions are "
                                       "inlined (KILN_MAX_NODES)",
                                       opt_.max_nodes));

    std::vector<std::string> missing;
    scan_unsupported(model_.graph(), opsets, missing);
    if (missing.size() == 1) return Status::error(missing[0]);
    if (!missing.empty()) {
      std::string msg = fmt::format("{} node(s) cannot be imported:", missing.size());
      for (auto &s : missing) msg += "\n  " + s;
      return Status::error(msg);
    }

    auto module = std::make_unique<Module>();
    auto fn = std::make_unique<Function>();
    fn->name = "main";
    Builder b(core_ops(), fn->body);
    Scope scope;
    const auto &g = model_.graph();
    std::unordered_map<std::string, const onnx::TensorProto *> inits;
    for (const auto &t : g.initializer())
      if (!inits.emplace(t.name(), &t).second)
        return Status::error(fmt::format("initializer '{}' is defined twice", t.name()));
    for (const auto &t : g.sparse_initializer())
      return Status::error(fmt::format("sparse initializer '{}' is not supported", t.values().name()));
    KILN_TRY(check_graph_decls(g));
    for (const auto &in : g.input()) {
      if (inits.count(in.name())) continue;
      if (scope.names.count(in.name()))
        return Status::error(fmt::format("graph input '{}' is declared twice", in.name()));
      KILN_ASSIGN(TensorType t, type_from_proto(in.type(), fmt::format("graph input '{}'", in.name())));
      scope.names[in.name()] = fn->body.add_param(t, in.name());
    }
    for (const auto &t : g.initializer()) {
      auto r = decode_tensor(t, base_dir_, opt_.max_tensor_bytes);
      if (!r) return r.status().with_context("initializer");
      scope.names[t.name()] = b.constant(std::move(r).value(), t.name());
    }
    KILN_TRY(convert_nodes(g, scope, b, opsets, nullptr));
    for (const auto &out : g.output()) {
      Value *v = scope.find(out.name());
      if (!v) return Status::error(fmt::format("graph output '{}' is never produced", out.name()));
      fn->body.results.push_back(v);
      if (v->name.empty()) v->name = out.name();
    }
    module->functions.push_back(std::move(fn));
    return module;
  }

private:
  const onnx::ModelProto &model_;
  std::string base_dir_;
  ImportOptions opt_;
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *> functions_;
  int depth_ = 0;
  std::map<const onnx::FunctionProto *, int64_t> fn_size_; // -1 while being counted
  std::set<const onnx::FunctionProto *> scanned_;

  bool has_converter(const onnx::NodeProto &n) const {
    return (n.op_type() == "Constant" && norm_domain(n.domain()).empty()) ||
           converters().find(norm_domain(n.domain()), n.op_type());
  }

  // Nodes of `nodes` once local functions are inlined (subgraphs included), saturating just above
  // the node limit so that it never overflows. Recursive functions, which could never be
  // inlined, and function chains deeper than the depth limit are refused here, before anything
  // is converted.
  template <class Nodes> Result<int64_t> expanded_size(const Nodes &nodes, int depth) {
    int64_t total = 0;
    for (const auto &n : nodes) {
      int64_t cost = 1;
      for (const auto &a : n.attribute()) {
        if (a.has_g()) {
          KILN_ASSIGN(int64_t c, expanded_size(a.g().node(), depth + 1));
          cost += c;
        }
        for (const auto &sg : a.graphs()) {
          KILN_ASSIGN(int64_t c, expanded_size(sg.node(), depth + 1));
          cost += c;
        }
      }
      if (!has_converter(n))
        if (const auto *f = local_function(n)) {
          KILN_ASSIGN(int64_t c, function_size(*f, depth + 1));
          cost += c - 1; // the call itself is replaced by the function's nodes
        }
      total = std::min(total + cost, opt_.max_nodes + 1);
    }
    return total;
  }

  Result<int64_t> function_size(const onnx::FunctionProto &f, int depth) {
    auto it = fn_size_.find(&f);
    if (it != fn_size_.end() && it->second < 0)
      return Status::error(fmt::format("function {}.{} calls itself (directly or through other "
                                       "functions); ONNX functions cannot be recursive",
                                       f.domain(), f.name()));
    if (it != fn_size_.end()) return it->second;
    if (depth > opt_.max_graph_depth)
      return Status::error(fmt::format("functions are nested more than {} deep "
                                       "(KILN_MAX_GRAPH_DEPTH)",
                                       opt_.max_graph_depth));
    fn_size_[&f] = -1;
    KILN_ASSIGN(int64_t n, expanded_size(f.node(), depth));
    fn_size_[&f] = n;
    return n;
  }

  const onnx::FunctionProto *local_function(const onnx::NodeProto &n) const {
    auto it = functions_.find({norm_domain(n.domain()), n.op_type()});
    return it == functions_.end() ? nullptr : it->second;
  }

  // Declared types of value_info entries and outputs, and unique input names.
  static Status check_graph_decls(const onnx::GraphProto &g) {
    for (const auto &v : g.value_info()) KILN_TRY(check_declared_dims(v, "value_info"));
    for (const auto &v : g.output()) KILN_TRY(check_declared_dims(v, "graph output"));
    return Status::ok();
  }

  static int opset_of(const OpsetMap &opsets, const std::string &domain) {
    auto it = opsets.find(norm_domain(domain));
    return it == opsets.end() ? 1 : it->second;
  }

  void scan_unsupported(const onnx::GraphProto &g, const OpsetMap &opsets,
                        std::vector<std::string> &missing) {
    for (const auto &n : g.node()) {
      for (const auto &a : n.attribute()) {
        if (a.has_g()) scan_unsupported(a.g(), opsets, missing);
        for (const auto &sg : a.graphs()) scan_unsupported(sg, opsets, missing);
      }
      if (n.op_type() == "Constant" && norm_domain(n.domain()).empty()) continue;
      if (converters().find(norm_domain(n.domain()), n.op_type())) continue;
      if (const auto *f = local_function(n)) {
        if (!scanned_.insert(f).second) continue; // each function body is scanned once
        OpsetMap fops = opsets;
        (void)read_opsets(f->opset_import(), fops); // checked in run()
        onnx::GraphProto body;
        for (const auto &fn : f->node()) *body.add_node() = fn;
        scan_unsupported(body, fops, missing);
        continue;
      }
      std::string dom = n.domain().empty() ? "ai.onnx" : n.domain();
      missing.push_back(fmt::format("node '{}': op {} (domain {}, opset {}) is not supported",
                                    n.name(), n.op_type(), dom, opset_of(opsets, n.domain())));
    }
  }

  Status convert_nodes(const onnx::GraphProto &g, Scope &scope, Builder &b, const OpsetMap &opsets,
                       const NodeAttrs *fn_attrs) {
    for (int k = 0; k < g.node_size(); ++k) {
      Status st = convert_node(g.node(k), scope, b, opsets, fn_attrs);
      if (!st) return explain_undefined(g, k, scope, st);
    }
    return Status::ok();
  }

  // When node k failed because an input is produced by node k itself or a later node, says so:
  // the graph has a cycle or is not topologically sorted. Otherwise returns `st`.
  static Status explain_undefined(const onnx::GraphProto &g, int k, const Scope &scope,
                                  Status st) {
    const onnx::NodeProto &n = g.node(k);
    for (const auto &iname : n.input()) {
      if (iname.empty() || scope.find(iname)) continue;
      for (int j = k; j < g.node_size(); ++j)
        for (const auto &o : g.node(j).output()) {
          if (o != iname) continue;
          const std::string label = n.name().empty() ? n.op_type() : n.name();
          if (j == k)
            return Status::error(fmt::format("node '{}' ({}): input '{}' is its own output: the "
                                             "graph has a cycle",
                                             label, n.op_type(), iname));
          return Status::error(fmt::format(
              "node '{}' ({}): input '{}' is produced later, by node '{}' ({}): the graph has a "
              "cycle or is not topologically sorted",
              label, n.op_type(), iname,
              g.node(j).name().empty() ? g.node(j).op_type() : g.node(j).name(),
              g.node(j).op_type()));
        }
    }
    return st;
  }

  Result<Value *> constant_node(const onnx::NodeProto &n, const NodeAttrs &attrs, Builder &b) {
    for (auto &[name, a] : attrs.by_name) {
      if (name == "value") {
        auto r = decode_tensor(a->t(), base_dir_, opt_.max_tensor_bytes);
        if (!r) return r.status();
        return b.constant(std::move(r).value());
      }
      if (name == "value_float") return b.scalar_f(DType::f32, a->f());
      if (name == "value_int") return b.scalar_i(DType::i64, a->i());
      if (name == "value_floats") {
        std::vector<float> v(a->floats().begin(), a->floats().end());
        return b.constant(Tensor::from_f32s(v, {static_cast<int64_t>(v.size())}));
      }
      if (name == "value_ints")
        return b.constant(Tensor::from_i64s(std::vector<int64_t>(a->ints().begin(), a->ints().end())));
      return Status::error(fmt::format("Constant attribute '{}' is not supported", name));
    }
    return Status::error("Constant node without a value");
  }

  Status convert_node(const onnx::NodeProto &n, Scope &scope, Builder &b, const OpsetMap &opsets,
                      const NodeAttrs *fn_attrs) {
    NodeAttrs attrs;
    attrs.base_dir = base_dir_;
    for (const auto &a : n.attribute()) {
      if (!a.ref_attr_name().empty()) {
        const onnx::AttributeProto *ref = fn_attrs ? fn_attrs->find(a.ref_attr_name()) : nullptr;
        if (ref) attrs.by_name[a.name()] = ref;
        continue;
      }
      attrs.by_name[a.name()] = &a;
    }
    const std::string domain = norm_domain(n.domain());
    const int opset = opset_of(opsets, domain);
    const std::string label = n.name().empty() ? (n.output_size() ? n.output(0) : n.op_type()) : n.name();
    b.set_loc(label);

    std::vector<Value *> ins;
    for (const auto &iname : n.input()) {
      if (iname.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      Value *v = scope.find(iname);
      if (!v)
        return Status::error(fmt::format("node '{}' ({}): input '{}' is not defined", label,
                                         n.op_type(), iname));
      ins.push_back(v);
    }

    std::vector<Value *> outs;
    if (domain.empty() && n.op_type() == "Constant") {
      auto r = constant_node(n, attrs, b);
      if (!r) return r.status().with_context(fmt::format("node '{}' (Constant)", label));
      outs.push_back(r.value());
    } else if (const ConvertFn *fn = converters().find(domain, n.op_type())) {
      NodeCtx ctx;
      ctx.op_type = n.op_type();
      ctx.domain = domain;
      ctx.name = label;
      ctx.opset = opset;
      ctx.in = ins;
      ctx.num_outputs = static_cast<size_t>(n.output_size());
      for (const auto &o : n.output()) ctx.output_used.push_back(!o.empty());
      ctx.b = &b;
      ctx.attrs = &attrs;
      ctx.import_subgraph = [&](std::string_view attr, const std::vector<TensorType> &hints)
          -> Result<std::unique_ptr<Graph>> {
        const auto *a = attrs.find(attr);
        if (!a || !a->has_g()) return ctx.error(fmt::format("graph attribute '{}' is missing", attr));
        return import_subgraph(a->g(), scope, b, opsets, fn_attrs, hints);
      };
      KILN_ASSIGN(outs, (*fn)(ctx));
    } else if (const auto *f = local_function(n)) {
      KILN_ASSIGN(outs, inline_function(*f, n, ins, attrs, b, opsets));
      // Values made inside the function carry its internal names; outside they are the call's
      // outputs (so that a graph output keeps the graph's name).
      for (size_t i = 0; i < outs.size() && i < static_cast<size_t>(n.output_size()); ++i)
        if (!n.output(static_cast<int>(i)).empty() &&
            std::find(ins.begin(), ins.end(), outs[i]) == ins.end())
          outs[i]->name = n.output(static_cast<int>(i));
    } else {
      return Status::error(fmt::format("node '{}': op {} is not supported", label, n.op_type()));
    }
    if (outs.size() < static_cast<size_t>(n.output_size())) {
      for (int i = static_cast<int>(outs.size()); i < n.output_size(); ++i)
        if (!n.output(i).empty())
          return Status::error(fmt::format("node '{}' ({}): output {} ('{}') is not supported",
                                           label, n.op_type(), i, n.output(i)));
    }
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      if (scope.names.count(n.output(i)))
        return Status::error(fmt::format("node '{}' ({}): output '{}' is already defined (each "
                                         "value of an ONNX graph has one producer)",
                                         label, n.op_type(), n.output(i)));
      if (Status st = check_result_size(outs[i]->type, opt_.max_tensor_bytes); !st)
        return st.with_context(fmt::format("node '{}' ({}): output '{}'", label, n.op_type(),
                                           n.output(i)));
      scope.names[n.output(i)] = outs[i];
      if (outs[i]->name.empty()) outs[i]->name = n.output(i);
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Graph>> import_subgraph(const onnx::GraphProto &g, const Scope &outer,
                                                 Builder &b, const OpsetMap &opsets,
                                                 const NodeAttrs *fn_attrs,
                                                 const std::vector<TensorType> &hints) {
    if (++depth_ > opt_.max_graph_depth)
      return Status::error(fmt::format("subgraphs are nested more than {} deep "
                                       "(KILN_MAX_GRAPH_DEPTH)",
                                       opt_.max_graph_depth));
    KILN_TRY(check_graph_decls(g));
    auto graph = std::make_unique<Graph>();
    Scope scope;
    scope.parent = &outer;
    for (int i = 0; i < g.input_size(); ++i) {
      const auto &in = g.input(i);
      TensorType t;
      const bool untyped = in.type().value_case() == onnx::TypeProto::VALUE_NOT_SET;
      if ((untyped || (in.type().has_tensor_type() && !in.type().tensor_type().has_shape())) &&
          i < static_cast<int>(hints.size())) {
        t = hints[i];
      } else {
        KILN_ASSIGN(t, type_from_proto(in.type(), fmt::format("subgraph input '{}'", in.name())));
      }
      scope.names[in.name()] = graph->add_param(t, in.name());
    }
    Graph *saved = &b.graph();
    std::string saved_loc = b.loc();
    b.set_graph(*graph);
    for (const auto &t : g.initializer()) {
      auto r = decode_tensor(t, base_dir_, opt_.max_tensor_bytes);
      if (!r) {
        b.set_graph(*saved);
        return r.status();
      }
      scope.names[t.name()] = b.constant(std::move(r).value(), t.name());
    }
    Status st = convert_nodes(g, scope, b, opsets, fn_attrs);
    b.set_graph(*saved);
    b.set_loc(saved_loc);
    --depth_;
    KILN_TRY(st);
    for (const auto &out : g.output()) {
      Value *v = scope.find(out.name());
      if (!v) return Status::error(fmt::format("subgraph output '{}' is never produced", out.name()));
      graph->results.push_back(v);
    }
    return graph;
  }

  Result<std::vector<Value *>> inline_function(const onnx::FunctionProto &f,
                                               const onnx::NodeProto &call,
                                               const std::vector<Value *> &ins,
                                               const NodeAttrs &call_attrs, Builder &b,
                                               const OpsetMap &outer_opsets) {
    if (++depth_ > opt_.max_graph_depth)
      return Status::error(fmt::format("functions are nested more than {} deep "
                                       "(KILN_MAX_GRAPH_DEPTH)",
                                       opt_.max_graph_depth));
    OpsetMap fops = outer_opsets;
    KILN_TRY(read_opsets(f.opset_import(), fops));
    Scope scope; // functions see only their inputs
    for (int i = 0; i < f.input_size(); ++i)
      if (i < static_cast<int>(ins.size()) && ins[i]) scope.names[f.input(i)] = ins[i];
    for (const auto &n : f.node()) KILN_TRY(convert_node(n, scope, b, fops, &call_attrs));
    std::vector<Value *> outs;
    for (const auto &o : f.output()) {
      Value *v = scope.find(o);
      if (!v) return Status::error(fmt::format("function {} output '{}' is never produced", f.name(), o));
      outs.push_back(v);
    }
    --depth_;
    return outs;
  }
};

} // namespace

Result<std::unique_ptr<Module>> import_bytes(const std::string &bytes, const std::string &base_dir,
                                             const ImportOptions &opt) {
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes))
    return Status::error("not a valid ONNX model (protobuf parse failed: truncated, corrupt, or "
                         "messages nested more than 100 deep)");
  if (!m.has_graph()) return Status::error("ONNX model has no graph");
  Importer imp(m, base_dir, opt);
  return imp.run();
}

Result<std::string> read_model_bytes(const std::string &path, const ImportOptions &opt) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return Status::error(fmt::format("{}: cannot read", path));
  if (size > static_cast<uint64_t>(opt.max_model_bytes))
    return Status::error(fmt::format("{}: {} bytes is larger than the {}-byte model limit "
                                     "(KILN_MAX_MODEL_BYTES)",
                                     path, size, opt.max_model_bytes));
  if (size >= (uint64_t(2) << 30))
    return Status::error(fmt::format("{}: file is larger than 2 GiB (protobuf's limit)", path));
  std::ifstream f(path, std::ios::binary);
  std::string bytes(size, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!f) return Status::error(fmt::format("{}: read failed", path));
  return bytes;
}

Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &opt) {
  KILN_ASSIGN(std::string bytes, read_model_bytes(path, opt));
  auto r = import_bytes(bytes, fs::path(path).parent_path().string(), opt);
  if (!r) return r.status().with_context(path);
  return r;
}

Result<std::map<std::string, std::string>> node_op_types(const std::string &path,
                                                         const ImportOptions &opt) {
  KILN_ASSIGN(std::string bytes, read_model_bytes(path, opt));
  onnx::ModelProto m;
  if (!m.ParseFromString(bytes) || !m.has_graph())
    return Status::error(fmt::format("{}: not a valid ONNX model", path));
  std::map<std::string, std::string> types;
  for (const auto &n : m.graph().node()) {
    // The label convert_node gives the node.
    const std::string label =
        n.name().empty() ? (n.output_size() ? n.output(0) : n.op_type()) : n.name();
    const std::string domain = norm_domain(n.domain());
    types.emplace(label, domain.empty() ? n.op_type() : domain + "." + n.op_type());
  }
  return types;
}

} // namespace kiln::onnx_fe
