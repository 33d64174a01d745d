// Printer of the textual IR (grammar in parser.cpp).
//
// Values print as %name when their name is an identifier and unique in the function, else as
// %N with N counting the other values in textual order (parameters, then per op its results
// before its regions). Since the parser keeps exactly the printed names, printing what it
// parsed gives the same text.
#include "ir/text.h"
#include "ir/text_internal.h"

#include <cstring>
#include <fmt/format.h>
#include <unordered_map>

namespace kiln {

namespace {

using text::format_double;
using text::format_element;
using text::quote;

void walk_defs(const Graph &g, const std::function<void(const Value *)> &f) {
  for (const Value *p : g.params) f(p);
  for (auto &op : g.ops) {
    for (const Value *r : op->results) f(r);
    for (auto &region : op->regions) walk_defs(*region, f);
  }
}

// Element literals of `t` when each reads back to the same bytes, else false (NaN payloads,
// bool bytes other than 0/1): then the hex form keeps the tensor exact.
bool dense_elements(const Tensor &t, std::vector<std::string> &out) {
  const size_t esize = dtype_size(t.dtype());
  std::byte buf[8];
  for (int64_t i = 0; i < t.numel(); ++i) {
    std::string s = format_element(t, i);
    if (!text::encode_element(t.dtype(), s, buf).empty()) return false;
    if (std::memcmp(buf, t.raw() + i * esize, esize) != 0) return false;
    out.push_back(std::move(s));
  }
  return true;
}

void nest_elements(const Shape &shape, size_t dim, const std::vector<std::string> &elems,
                   int64_t &next, std::string &out) {
  if (dim == shape.size()) {
    out += elems[next++];
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i) out += ", ";
    nest_elements(shape, dim + 1, elems, next, out);
  }
  out += ']';
}

std::string format_tensor(const Tensor &t) {
  std::string type = TensorType::of(t).str();
  std::vector<std::string> elems;
  if (t.numel() <= text::kDenseMaxElements && dense_elements(t, elems)) {
    std::string body;
    int64_t next = 0;
    nest_elements(t.shape(), 0, elems, next, body);
    return fmt::format("dense<{}> : {}", body, type);
  }
  std::string hex(2 + t.nbytes() * 2, '0');
  hex[1] = 'x';
  static constexpr char digits[] = "0123456789ABCDEF";
  for (size_t i = 0; i < t.nbytes(); ++i) {
    auto b = static_cast<unsigned>(t.raw()[i]);
    hex[2 + 2 * i] = digits[b >> 4];
    hex[3 + 2 * i] = digits[b & 15];
  }
  return fmt::format("dense_hex<\"{}\"> : {}", hex, type);
}

template <class T, class F> std::string format_array(const char *kind, const std::vector<T> &v, F f) {
  std::string s = fmt::format("array<{}", kind);
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : ": ") + f(v[i]);
  return s + ">";
}

std::string format_attr(const AttrValue &a) {
  struct Visitor {
    std::string operator()(int64_t v) const { return fmt::format("{}", v); }
    std::string operator()(double v) const { return format_double(v); }
    std::string operator()(const std::string &v) const { return quote(v); }
    std::string operator()(const std::vector<int64_t> &v) const {
      return format_array("i64", v, [](int64_t x) { return fmt::format("{}", x); });
    }
    std::string operator()(const std::vector<double> &v) const {
      return format_array("f64", v, format_double);
    }
    std::string operator()(const std::vector<std::string> &v) const {
      return format_array("str", v, [](const std::string &x) { return quote(x); });
    }
    std::string operator()(const Tensor &t) const { return format_tensor(t); }
    std::string operator()(DType d) const { return fmt::format("dtype<{}>", dtype_name(d)); }
  };
  return std::visit(Visitor{}, a);
}

class Printer {
public:
  explicit Printer(const Function &f) {
    std::unordered_map<std::string_view, int> count;
    walk_defs(f.body, [&](const Value *v) {
      if (v && text::is_identifier(v->name)) ++count[v->name];
    });
    int next = 0;
    walk_defs(f.body, [&](const Value *v) {
      if (!v) return;
      if (text::is_identifier(v->name) && count[v->name] == 1) names_[v] = "%" + v->name;
      else names_[v] = fmt::format("%{}", next++);
    });
  }

  std::string function(const Function &f) {
    std::string fname = text::is_identifier(f.name) ? f.name : quote(f.name);
    out_ = fmt::format("func @{}({}) -> (", fname, params(f.body));
    for (size_t i = 0; i < f.body.results.size(); ++i) {
      const Value *r = f.body.results[i];
      out_ += (i ? ", " : "") + type_of(r);
    }
    out_ += ") {\n";
    graph_body(f.body, 1);
    out_ += "}\n";
    return std::move(out_);
  }

private:
  std::string ref(const Value *v) const {
    if (!v) return "none";
    auto it = names_.find(v);
    return it == names_.end() ? "%<<undefined>>" : it->second;
  }

  static std::string type_of(const Value *v) { return v ? v->type.str() : "none"; }

  std::string params(const Graph &g) const {
    std::string s;
    for (size_t i = 0; i < g.params.size(); ++i)
      s += fmt::format("{}{}: {}", i ? ", " : "", ref(g.params[i]), type_of(g.params[i]));
    return s;
  }

  void graph_body(const Graph &g, int depth) {
    std::string ind(static_cast<size_t>(depth) * 2, ' ');
    for (auto &op : g.ops) {
      out_ += ind;
      print_op(*op, depth);
      out_ += '\n';
    }
    out_ += ind + "return";
    for (size_t i = 0; i < g.results.size(); ++i) out_ += (i ? ", " : " ") + ref(g.results[i]);
    out_ += '\n';
  }

  void print_op(const Op &op, int depth) {
    for (size_t i = 0; i < op.results.size(); ++i) out_ += (i ? ", " : "") + ref(op.results[i]);
    if (!op.results.empty()) out_ += " = ";
    out_ += op.name();
    for (size_t i = 0; i < op.operands.size(); ++i) out_ += (i ? ", " : " ") + ref(op.operands[i]);
    if (!op.attrs.empty()) {
      out_ += " {";
      bool first = true;
      for (auto &[key, value] : op.attrs) {
        out_ += first ? "" : ", ";
        out_ += text::is_identifier(key) ? key : quote(key);
        out_ += " = " + format_attr(value);
        first = false;
      }
      out_ += '}';
    }
    if (!op.regions.empty()) regions(op, depth);
    out_ += " : (";
    for (size_t i = 0; i < op.operands.size(); ++i)
      out_ += (i ? ", " : "") + type_of(op.operands[i]);
    out_ += ") -> ";
    if (op.results.size() == 1) {
      out_ += type_of(op.results[0]);
      return;
    }
    out_ += '(';
    for (size_t i = 0; i < op.results.size(); ++i)
      out_ += (i ? ", " : "") + type_of(op.results[i]);
    out_ += ')';
  }

  void regions(const Op &op, int depth) {
    std::string ind(static_cast<size_t>(depth) * 2, ' ');
    out_ += " (";
    for (size_t i = 0; i < op.regions.size(); ++i) {
      const Graph &r = *op.regions[i];
      out_ += i ? ", {\n" : "{\n";
      if (!r.params.empty()) out_ += fmt::format("{}^bb0({}):\n", ind, params(r));
      graph_body(r, depth + 1);
      out_ += ind + "}";
    }
    out_ += ')';
  }

  std::unordered_map<const Value *, std::string> names_;
  std::string out_;
};

} // namespace

std::string print_function(const Function &f) { return Printer(f).function(f); }

std::string print_module(const Module &m) {
  std::string s;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    if (i) s += '\n';
    s += print_function(*m.functions[i]);
  }
  return s;
}

} // namespace kiln
