#include "ir/graph.h"

#include "ir/op_registry.h"

#include <fmt/format.h>

namespace kiln {

bool TensorType::is_static() const {
  if (!ranked) return false;
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

std::string TensorType::str() const {
  std::string s = "tensor<";
  if (!ranked) {
    s += "*x";
  } else {
    for (int64_t d : dims) s += (d < 0 ? std::string("?") : std::to_string(d)) + "x";
  }
  s += dtype_name(dtype);
  s += ">";
  return s;
}

std::string_view Op::name() const { return def ? std::string_view(def->name) : "<null>"; }

int64_t Op::attr_int(std::string_view key, int64_t dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<int64_t>(&it->second)) return *p;
  if (auto p = std::get_if<double>(&it->second)) return static_cast<int64_t>(*p);
  return dflt;
}
double Op::attr_float(std::string_view key, double dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<double>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return static_cast<double>(*p);
  return dflt;
}
std::string Op::attr_str(std::string_view key, std::string dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<std::string>(&it->second)) return *p;
  return dflt;
}
std::vector<int64_t> Op::attr_ints(std::string_view key, std::vector<int64_t> dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<std::vector<int64_t>>(&it->second)) return *p;
  if (auto p = std::get_if<int64_t>(&it->second)) return {*p};
  return dflt;
}
std::vector<double> Op::attr_floats(std::string_view key, std::vector<double> dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<std::vector<double>>(&it->second)) return *p;
  if (auto p = std::get_if<std::vector<int64_t>>(&it->second))
    return std::vector<double>(p->begin(), p->end());
  if (auto p = std::get_if<double>(&it->second)) return {*p};
  return dflt;
}
const Tensor *Op::attr_tensor(std::string_view key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return nullptr;
  return std::get_if<Tensor>(&it->second);
}
DType Op::attr_dtype(std::string_view key, DType dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto p = std::get_if<DType>(&it->second)) return *p;
  return dflt;
}

std::string Op::describe() const {
  if (loc.empty()) return fmt::format("op '{}'", name());
  return fmt::format("op '{}' (node '{}')", name(), loc);
}

Value *Graph::new_value(TensorType type, std::string name) {
  auto v = std::make_unique<Value>();
  v->type = std::move(type);
  v->name = std::move(name);
  v->owner = this;
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value *Graph::add_param(TensorType type, std::string name) {
  Value *v = new_value(std::move(type), std::move(name));
  params.push_back(v);
  return v;
}

Op *Graph::append(const OpDef *def, std::vector<Value *> operands,
                  std::vector<TensorType> result_types, AttrMap attrs) {
  auto op = std::make_unique<Op>();
  op->def = def;
  op->operands = std::move(operands);
  op->attrs = std::move(attrs);
  for (size_t i = 0; i < result_types.size(); ++i) {
    Value *v = new_value(std::move(result_types[i]), {});
    v->def = op.get();
    v->result_index = static_cast<int>(i);
    op->results.push_back(v);
  }
  ops.push_back(std::move(op));
  return ops.back().get();
}

void Graph::erase_ops_if(const std::function<bool(const Op &)> &pred) {
  std::vector<std::unique_ptr<Op>> kept;
  kept.reserve(ops.size());
  for (auto &op : ops)
    if (!pred(*op)) kept.push_back(std::move(op));
  ops = std::move(kept);
  // Values of erased ops stay allocated (owned here) but unreachable; harmless.
}

void Graph::replace_uses(const Value *from, Value *to) {
  for (auto &op : ops) {
    for (Value *&v : op->operands)
      if (v == from) v = to;
    for (auto &r : op->regions) r->replace_uses(from, to);
  }
  for (Value *&v : results)
    if (v == from) v = to;
}

Function *Module::find(std::string_view name) const {
  for (auto &f : functions)
    if (f->name == name) return f.get();
  return nullptr;
}

static void renumber_graph(Graph &g, int &next) {
  for (Value *p : g.params) p->id = next++;
  for (auto &op : g.ops) {
    for (auto &r : op->regions) renumber_graph(*r, next);
    for (Value *r : op->results) r->id = next++;
  }
}

void renumber(Function &f) {
  int next = 0;
  renumber_graph(f.body, next);
}

} // namespace kiln
