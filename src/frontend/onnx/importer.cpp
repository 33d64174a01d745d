#include "frontend/onnx/importer.h"

#include "frontend/onnx/convert.h"
#include "frontend/onnx/tensor_proto.h"
#include "ops/ops.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
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
  auto r = decode_tensor(a->t(), attrs->base_dir, int64_t(1) << 32);
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
    for (const auto &o : model_.opset_import()) opsets[norm_domain(o.domain())] = static_cast<int>(o.version());
    if (!opsets.count("")) opsets[""] = 1;
    if (opsets[""] > kMaxOpset)
      return Status::error(fmt::format("ONNX opset {} is newer than kiln supports (7 to {})",
                                       opsets[""], kMaxOpset));

    std::vector<std::string> missing;
    scan_unsupported(model_.graph(), opsets, missing);
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
    for (const auto &t : g.initializer()) inits[t.name()] = &t;
    for (const auto &t : g.sparse_initializer())
      return Status::error(fmt::format("sparse initializer '{}' is not supported", t.values().name()));
    for (const auto &in : g.input()) {
      if (inits.count(in.name())) continue;
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

  const onnx::FunctionProto *local_function(const onnx::NodeProto &n) const {
    auto it = functions_.find({norm_domain(n.domain()), n.op_type()});
    return it == functions_.end() ? nullptr : it->second;
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
        OpsetMap fops = opsets;
        for (const auto &o : f->opset_import()) fops[norm_domain(o.domain())] = static_cast<int>(o.version());
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
    for (const auto &n : g.node()) KILN_TRY(convert_node(n, scope, b, opsets, fn_attrs));
    return Status::ok();
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
      scope.names[n.output(i)] = outs[i];
      if (outs[i]->name.empty()) outs[i]->name = n.output(i);
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Graph>> import_subgraph(const onnx::GraphProto &g, const Scope &outer,
                                                 Builder &b, const OpsetMap &opsets,
                                                 const NodeAttrs *fn_attrs,
                                                 const std::vector<TensorType> &hints) {
    if (++depth_ > 64) return Status::error("subgraphs are nested too deeply (limit 64)");
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
    if (++depth_ > 64) return Status::error("functions are nested too deeply (limit 64)");
    OpsetMap fops = outer_opsets;
    for (const auto &o : f.opset_import()) fops[norm_domain(o.domain())] = static_cast<int>(o.version());
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
  if (!m.ParseFromString(bytes)) return Status::error("not a valid ONNX model (protobuf parse failed)");
  if (!m.has_graph()) return Status::error("ONNX model has no graph");
  Importer imp(m, base_dir, opt);
  return imp.run();
}

Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &opt) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return Status::error(fmt::format("{}: cannot read", path));
  if (size > (uint64_t(2) << 30)) return Status::error(fmt::format("{}: file is larger than 2 GiB", path));
  std::ifstream f(path, std::ios::binary);
  std::string bytes(size, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!f) return Status::error(fmt::format("{}: read failed", path));
  auto r = import_bytes(bytes, fs::path(path).parent_path().string(), opt);
  if (!r) return r.status().with_context(path);
  return r;
}

} // namespace kiln::onnx_fe
