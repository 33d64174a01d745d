// NNEF standard operations -> core ops, one converter per operation (or family), looked up
// through standard_ops() with the operation's NNEF parameter names.
#include "frontend/nnef/call.h"
#include "frontend/nnef/tensor_file.h"
#include "support/limits.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

namespace kiln::nnef_fe {

namespace fs = std::filesystem;

namespace {

const std::map<std::string, const char *, std::less<>> kUnary = {
    {"relu", "kiln.relu"}, {"sigmoid", "kiln.sigmoid"}, {"tanh", "kiln.tanh"},
    {"exp", "kiln.exp"},   {"log", "kiln.log"},         {"abs", "kiln.abs"},
    {"neg", "kiln.neg"},   {"sqrt", "kiln.sqrt"},       {"rcp", "kiln.reciprocal"},
    {"sign", "kiln.sign"}, {"floor", "kiln.floor"},     {"ceil", "kiln.ceil"},
    {"round", "kiln.round"}, {"sin", "kiln.sin"},       {"cos", "kiln.cos"},
    {"softplus", "kiln.softplus"}};
const std::map<std::string, const char *, std::less<>> kBinary = {
    {"add", "kiln.add"}, {"sub", "kiln.sub"}, {"mul", "kiln.mul"}, {"div", "kiln.div"},
    {"pow", "kiln.pow"}, {"min", "kiln.min"}, {"max", "kiln.max"}};

// Window sizes, strides, dilations, paddings and upsampling factors beyond this are refused
// before any arithmetic on them can overflow.
constexpr int64_t kMaxWindow = int64_t(1) << 24;

Outs one(Result<Value *> r) {
  if (!r) return r.status();
  return std::vector<Value *>{r.value()};
}

Shape trailing_ones(const Shape &s, size_t rank) {
  Shape r = s;
  while (r.size() < rank) r.push_back(1);
  return r;
}

// NNEF broadcasting: the operand of lower rank gets trailing unit dimensions.
Result<std::pair<Value *, Value *>> align(const Call &c, Value *a, Value *b) {
  const size_t ra = a->type.dims.size(), rb = b->type.dims.size();
  if (ra && rb && ra < rb) {
    KILN_ASSIGN(a, c.op("kiln.reshape", {a, c.b->i64s(trailing_ones(a->type.dims, rb))}));
  } else if (ra && rb && rb < ra) {
    KILN_ASSIGN(b, c.op("kiln.reshape", {b, c.b->i64s(trailing_ones(b->type.dims, ra))}));
  }
  return std::make_pair(a, b);
}

Result<Value *> binary(const Call &c, const char *op, Value *a, Value *b) {
  KILN_ASSIGN(auto ab, align(c, a, b));
  return c.op(op, {ab.first, ab.second});
}

Result<DType> generic_dtype(const Call &c) {
  const std::string &g = c.e->generic;
  if (g.empty() || g == "scalar") return DType::f32;
  if (g == "integer") return DType::i32;
  if (g == "logical") return DType::boolean;
  return c.error(fmt::format("type '{}' is not supported", g));
}

Result<Shape> shape_arg(const Call &c) {
  KILN_ASSIGN(auto s, c.ints("shape", {}));
  if (s.size() > 16) return c.error(fmt::format("rank {} exceeds 16", s.size()));
  int64_t numel = 1;
  for (int64_t d : s) {
    if (d < 0) return c.error(fmt::format("shape [{}] has a negative extent", fmt::join(s, ",")));
    if (d && numel > limits().max_tensor_bytes / d) return c.error("shape is too large");
    numel *= d;
  }
  if (numel * 4 > limits().max_tensor_bytes) return c.error("shape is too large (KILN_MAX_TENSOR_BYTES)");
  return s;
}

Outs op_variable(Call &c) {
  KILN_ASSIGN(Shape shape, shape_arg(c));
  KILN_ASSIGN(std::string label, c.str("label", ""));
  if (label.empty()) return c.error("label is empty");
  const std::string &folder_ = *c.folder;
  if (folder_.empty() && !c.archive) return c.error("variables cannot be read here (no model folder)");
  const fs::path rel = fs::path(label + ".dat").lexically_normal();
  if (rel.is_absolute() || rel.has_root_name() || rel.empty() || *rel.begin() == "..")
    return c.error(fmt::format("label '{}' leaves the model folder", label));
  KILN_ASSIGN(DType want, generic_dtype(c));
  auto widen = [&](Tensor v) -> Outs {
    if (want == DType::f32 && v.dtype() != DType::f32) v = v.cast(DType::f32);
    return std::vector<Value *>{c.b->constant(std::move(v), label)};
  };
  if (c.archive) {
    auto it = c.archive->find(rel.generic_string());
    if (it == c.archive->end())
      return c.error(fmt::format("the archive has no tensor file '{}'", rel.generic_string()));
    auto t = parse_tensor_file(it->second.data(), it->second.size(), shape, rel.generic_string());
    if (!t) return c.error(t.status().message());
    return widen(std::move(t).value());
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::path(folder_), ec);
  const fs::path file = fs::weakly_canonical(fs::path(folder_) / rel, ec);
  if (ec) return c.error(fmt::format("cannot resolve the tensor file for label '{}'", label));
  auto [ri, fi] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (ri != root.end()) return c.error(fmt::format("label '{}' leaves the model folder (through a link)", label));
  auto t = read_tensor_file(file.string(), shape);
  if (!t) return c.error(t.status().message());
  return widen(std::move(t).value());
}

Result<std::vector<int64_t>> auto_or_explicit_pads(const Call &c, const Shape &xs, size_t first,
                                                   const std::vector<int64_t> &k,
                                                   const std::vector<int64_t> &s,
                                                   const std::vector<int64_t> &d) {
  // Pads for dims [first, rank): {begins..., ends...}.
  KILN_ASSIGN(auto pp, c.pairs("padding"));
  const size_t n = xs.size() - first;
  std::vector<int64_t> pads(2 * n, 0);
  if (pp.empty()) {
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = xs[first + i], eff = (k[i] - 1) * d[i] + 1;
      const int64_t out = (in + s[i] - 1) / s[i];
      const int64_t total = std::max<int64_t>((out - 1) * s[i] + eff - in, 0);
      pads[i] = total / 2;
      pads[n + i] = total - total / 2;
    }
    return pads;
  }
  if (pp.size() != n) return c.error(fmt::format("padding has {} pairs, expected {}", pp.size(), n));
  for (size_t i = 0; i < n; ++i) {
    if (pp[i].first < 0 || pp[i].second < 0) return c.error("negative padding is not supported");
    pads[i] = pp[i].first;
    pads[n + i] = pp[i].second;
  }
  return pads;
}

Result<std::vector<int64_t>> positive_list(const Call &c, const char *name, size_t n) {
  KILN_ASSIGN(auto v, c.ints(name, {}));
  if (v.empty()) v.assign(n, 1);
  if (v.size() != n) return c.error(fmt::format("{} has {} entries, expected {}", name, v.size(), n));
  for (int64_t x : v)
    if (x <= 0 || x > kMaxWindow) return c.error(fmt::format("{} entries must be in [1, {}]", name, kMaxWindow));
  return v;
}

Result<Value *> conv(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(Value * w, c.tensor("filter"));
  if (x->type.rank() < 3 || w->type.rank() != x->type.rank())
    return c.error(fmt::format("input {} and filter {} must have the same rank (3 or more)", x->type.str(), w->type.str()));
  KILN_ASSIGN(std::string border, c.str("border", "constant"));
  if (border != "constant") return c.error(fmt::format("border '{}' is not supported", border));
  const size_t ns = x->type.dims.size() - 2;
  KILN_ASSIGN(auto stride, positive_list(c, "stride", ns));
  KILN_ASSIGN(auto dil, positive_list(c, "dilation", ns));
  std::vector<int64_t> k(w->type.dims.begin() + 2, w->type.dims.end());
  KILN_ASSIGN(auto pads, auto_or_explicit_pads(c, x->type.dims, 2, k, stride, dil));
  KILN_ASSIGN(int64_t groups, c.integer("groups", 1));
  if (groups == 0) groups = x->type.dims[1];
  if (groups < 0) return c.error("groups must not be negative");
  AttrMap a{{"kernel_shape", k}, {"strides", stride}, {"dilations", dil}, {"pads", pads}, {"group", groups}};
  std::vector<Value *> operands{x, w};
  Value *add_after = nullptr;
  if (c.has("bias")) {
    KILN_ASSIGN(Value * bias, c.tensor("bias"));
    const Tensor *bc = Builder::constant_value(bias);
    const int64_t o = w->type.dims[0], n = shape_numel(bias->type.dims);
    if (bc && bc->numel() == 1 && bc->get_f64(0) == 0.0) {
      // no bias
    } else if (n == o) {
      KILN_ASSIGN(bias, c.op("kiln.reshape", {bias, c.b->i64s({o})}));
      operands.push_back(bias);
    } else if (n == 1) {
      add_after = bias;
    } else {
      return c.error(fmt::format("bias {} does not match {} output channels", bias->type.str(), o));
    }
  }
  KILN_ASSIGN(Value * y, c.op("kiln.conv", operands, std::move(a)));
  if (add_after) return binary(c, "kiln.add", y, add_after);
  return y;
}

Result<Value *> pool(Call &c, bool is_max) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  const size_t rank = x->type.dims.size();
  if (rank < 3) return c.error(fmt::format("input {} must have rank 3 or more", x->type.str()));
  KILN_ASSIGN(auto size, c.ints("size", {}));
  if (size.size() != rank) return c.error(fmt::format("size has {} entries, expected {}", size.size(), rank));
  for (int64_t k : size)
    if (k <= 0 || k > kMaxWindow) return c.error(fmt::format("size entries must be in [1, {}]", kMaxWindow));
  KILN_ASSIGN(auto stride, positive_list(c, "stride", rank));
  KILN_ASSIGN(auto dil, positive_list(c, "dilation", rank));
  KILN_ASSIGN(auto pads, auto_or_explicit_pads(c, x->type.dims, 0, size, stride, dil));
  for (size_t i = 0; i < 2; ++i)
    if (size[i] != 1 || stride[i] != 1 || dil[i] != 1 || pads[i] != 0 || pads[rank + i] != 0)
      return c.error("pooling over the batch or channel dimension is not supported");
  KILN_ASSIGN(std::string border, c.str("border", "constant"));
  const size_t ns = rank - 2;
  std::vector<int64_t> sp;
  for (size_t i = 2; i < rank; ++i) sp.push_back(pads[i]);
  for (size_t i = 2; i < rank; ++i) sp.push_back(pads[rank + i]);
  bool any_pad = false;
  for (int64_t p : sp) any_pad = any_pad || p != 0;
  AttrMap a{{"kernel_shape", std::vector<int64_t>(size.begin() + 2, size.end())},
            {"strides", std::vector<int64_t>(stride.begin() + 2, stride.end())}};
  bool dilated = false;
  for (size_t i = 2; i < rank; ++i) dilated = dilated || dil[i] != 1;
  if (dilated) a["dilations"] = std::vector<int64_t>(dil.begin() + 2, dil.end());
  if (border == "ignore") {
    a["pads"] = sp;
    if (!is_max) a["count_include_pad"] = int64_t(0);
  } else if (border == "constant") {
    if (is_max && any_pad) {
      // Zeros take part in the maximum: pad explicitly, then pool without padding.
      std::vector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < ns; ++i) full[2 + i] = sp[i], full[rank + 2 + i] = sp[ns + i];
      KILN_ASSIGN(x, c.op("kiln.pad", {x, c.b->i64s(full), c.b->scalar_f(x->type.dtype, 0.0)},
                          {{"mode", std::string("constant")}}));
      a["pads"] = std::vector<int64_t>(2 * ns, 0);
    } else {
      a["pads"] = sp;
      if (!is_max) a["count_include_pad"] = int64_t(1);
    }
  } else {
    return c.error(fmt::format("border '{}' is not supported", border));
  }
  (void)ns;
  return c.op(is_max ? "kiln.max_pool" : "kiln.avg_pool", {x}, std::move(a));
}

Result<int64_t> axis_in(const Call &c, int64_t a, int64_t rank) {
  if (a < 0 || a >= rank) return c.error(fmt::format("axis {} is out of range for rank {}", a, rank));
  return a;
}

Result<Value *> reshape_to(const Call &c, Value *x, const Shape &s) {
  return c.op("kiln.reshape", {x, c.b->i64s(s)});
}

Outs op_copy(Call &c) { return one(c.tensor("x")); }
Outs op_conv(Call &c) { return one(conv(c)); }
Outs op_pool(Call &c) { return one(pool(c, c.e->str == "max_pool")); }

Outs op_external(Call &c) {
  KILN_ASSIGN(Shape shape, shape_arg(c));
  KILN_ASSIGN(DType dt, generic_dtype(c));
  return std::vector<Value *>{c.fn->body.add_param({dt, shape, true}, "")};
}

Outs op_constant(Call &c) {
  KILN_ASSIGN(Shape shape, shape_arg(c));
  KILN_ASSIGN(DType dt, generic_dtype(c));
  const Env *en;
  KILN_ASSIGN(const Expr *v, c.get("value", &en));
  std::vector<double> vals;
  auto push = [&](const Expr &x) -> Status {
    if (x.kind == Expr::Kind::number) vals.push_back(x.num);
    else if (x.kind == Expr::Kind::boolean) vals.push_back(x.flag);
    else return c.error("value must hold numbers or logicals");
    return Status::ok();
  };
  if (v->kind == Expr::Kind::array) {
    for (const Expr &x : v->items) KILN_TRY(push(x));
  } else {
    KILN_TRY(push(*v));
  }
  const int64_t n = shape_numel(shape);
  if (vals.size() != 1 && static_cast<int64_t>(vals.size()) != n)
    return c.error(fmt::format("{} values for shape [{}]", vals.size(), shape_str(shape)));
  Tensor t(dt, shape);
  for (int64_t i = 0; i < n; ++i) t.set_f64(i, vals.size() == 1 ? vals[0] : vals[i]);
  return std::vector<Value *>{c.b->constant(std::move(t))};
}

Outs op_unary(Call &c) {
  auto it = kUnary.find(c.e->str);
  KILN_ASSIGN(Value * x, c.tensor("x"));
  return one(c.op(it->second, {x}));
}

Outs op_rsqrt(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(Value * s, c.op("kiln.sqrt", {x}));
  return one(c.op("kiln.reciprocal", {s}));
}

Outs op_binary(Call &c) {
  auto it = kBinary.find(c.e->str);
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(Value * y, c.tensor("y"));
  return one(binary(c, it->second, x, y));
}

Outs op_clamp(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(Value * lo, c.tensor("a"));
  KILN_ASSIGN(Value * hi, c.tensor("b"));
  KILN_ASSIGN(Value * m, binary(c, "kiln.min", x, hi));
  return one(binary(c, "kiln.max", m, lo));
}

Outs op_prelu(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(Value * al, c.tensor("alpha"));
  return one(binary(c, "kiln.prelu", x, al));
}

Outs op_leaky_elu(Call &c) {
  const std::string &name = c.e->str;
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(double alpha, c.number("alpha", name == "elu" ? 1.0 : 0.0));
  if (name == "leaky_relu" && !c.has("alpha")) return c.error("argument 'alpha' is missing");
  return one(c.op(name == "elu" ? "kiln.elu" : "kiln.leaky_relu", {x}, {{"alpha", alpha}}));
}

Outs op_transpose(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto axes, c.ints("axes", {}));
  const int64_t rank = x->type.rank();
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank || seen[a]) return c.error(fmt::format("axes [{}] are not a permutation", fmt::join(axes, ",")));
    seen[a] = true;
  }
  for (int64_t i = static_cast<int64_t>(axes.size()); i < rank; ++i) {
    if (seen[i]) return c.error(fmt::format("axes [{}] are not a permutation", fmt::join(axes, ",")));
    axes.push_back(i);
  }
  return one(c.op("kiln.transpose", {x}, {{"perm", axes}}));
}

Outs op_reshape(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto shape, c.ints("shape", {}));
  KILN_ASSIGN(const int64_t start, c.integer("axis_start", 0));
  KILN_ASSIGN(int64_t count, c.integer("axis_count", -1));
  const Shape &xs = x->type.dims;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (count == -1) count = rank - start;
  if (start < 0 || count < 0 || start + count > rank) return c.error("axis_start / axis_count are out of range");
  Shape out(xs.begin(), xs.begin() + start);
  int64_t infer = -1, known = 1, span = 1;
  for (int64_t i = start; i < start + count; ++i) span *= xs[i];
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d == 0) {
      if (start + static_cast<int64_t>(i) >= rank) return c.error("shape 0 refers past the input's rank");
      d = xs[start + i];
    }
    if (d == -1) {
      if (infer >= 0) return c.error("shape has two -1 entries");
      infer = static_cast<int64_t>(out.size());
      out.push_back(1);
      continue;
    }
    if (d < 0) return c.error(fmt::format("shape entry {} is invalid", d));
    if (d && known > INT64_MAX / d) return c.error("shape is too large");
    known *= d;
    out.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || span % known != 0) return c.error("shape cannot be inferred");
    out[infer] = span / known;
  }
  out.insert(out.end(), xs.begin() + start + count, xs.end());
  return one(reshape_to(c, x, out));
}

Outs op_squeeze(Call &c) {
  const std::string &name = c.e->str;
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto axes, c.ints("axes", {}));
  Shape s = x->type.dims;
  if (name == "squeeze") {
    std::sort(axes.begin(), axes.end());
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
      if (*it < 0 || *it >= static_cast<int64_t>(s.size()) || s[*it] != 1)
        return c.error(fmt::format("axis {} is not a unit dimension of {}", *it, x->type.str()));
      s.erase(s.begin() + *it);
    }
  } else {
    std::sort(axes.begin(), axes.end());
    for (int64_t a : axes) {
      if (a < 0 || a > static_cast<int64_t>(s.size())) return c.error(fmt::format("axis {} is out of range", a));
      s.insert(s.begin() + a, 1);
    }
  }
  return one(reshape_to(c, x, s));
}

Outs op_concat(Call &c) {
  KILN_ASSIGN(auto vs, c.tensors("values"));
  if (vs.empty()) return c.error("values is empty");
  KILN_ASSIGN(int64_t ax, c.integer("axis", 0));
  KILN_ASSIGN(int64_t axis, axis_in(c, ax, vs[0]->type.rank()));
  return one(c.op("kiln.concat", vs, {{"axis", axis}}));
}

Outs op_pad(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto pp, c.pairs("padding"));
  const size_t rank = x->type.dims.size();
  if (pp.size() != rank) return c.error(fmt::format("padding has {} pairs, expected {}", pp.size(), rank));
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    if (pp[i].first < 0 || pp[i].second < 0) return c.error("negative padding is not supported");
    pads[i] = pp[i].first, pads[rank + i] = pp[i].second;
  }
  KILN_ASSIGN(std::string border, c.str("border", "constant"));
  std::string mode = border == "constant" ? "constant" : border == "reflect" ? "reflect" : border == "replicate" ? "edge" : "";
  if (mode.empty()) return c.error(fmt::format("border '{}' is not supported", border));
  KILN_ASSIGN(double value, c.number("value", 0.0));
  return one(c.op("kiln.pad", {x, c.b->i64s(pads), c.b->scalar_f(x->type.dtype, value)}, {{"mode", mode}}));
}

Outs op_linear(Call &c) {
  const std::string &name = c.e->str;
  const bool lin = name == "linear";
  KILN_ASSIGN(Value * a, c.tensor(lin ? "input" : "A"));
  KILN_ASSIGN(Value * b, c.tensor(lin ? "filter" : "B"));
  KILN_ASSIGN(bool ta, c.boolean("transposeA", false));
  KILN_ASSIGN(bool tb, c.boolean("transposeB", lin));
  auto swap_last = [&](Value *v) -> Result<Value *> {
    const int64_t r = v->type.rank();
    if (r < 2) return c.error(fmt::format("operand {} must have rank 2 or more", v->type.str()));
    std::vector<int64_t> perm(r);
    for (int64_t i = 0; i < r; ++i) perm[i] = i;
    std::swap(perm[r - 1], perm[r - 2]);
    return c.op("kiln.transpose", {v}, {{"perm", perm}});
  };
  if (ta) {
    KILN_ASSIGN(a, swap_last(a));
  }
  if (tb) {
    KILN_ASSIGN(b, swap_last(b));
  }
  KILN_ASSIGN(Value * y, c.op("kiln.matmul", {a, b}));
  if (lin && c.has("bias")) {
    KILN_ASSIGN(Value * bias, c.tensor("bias"));
    KILN_ASSIGN(y, binary(c, "kiln.add", y, bias));
  }
  return std::vector<Value *>{y};
}

Outs op_softmax(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("x"));
  KILN_ASSIGN(auto axes, c.ints("axes", {1}));
  if (axes.size() != 1) return c.error("softmax over several axes is not supported");
  KILN_ASSIGN(int64_t axis, axis_in(c, axes[0], x->type.rank()));
  return one(c.op("kiln.softmax", {x}, {{"kind", std::string("softmax")}, {"axis", axis}}));
}

Outs op_reduce(Call &c) {
  const std::string &name = c.e->str;
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto axes, c.ints("axes", {}));
  for (int64_t a : axes) KILN_TRY(axis_in(c, a, x->type.rank()).status());
  const std::string kind = name.substr(0, name.size() - 7);
  // NNEF reductions keep the reduced dimensions as 1.
  return one(c.op("kiln.reduce", {x, c.b->i64s(axes)},
                  {{"kind", kind}, {"keepdims", int64_t(1)}, {"noop_with_empty_axes", int64_t(1)}}));
}

Outs op_upsample(Call &c) {
  const std::string &name = c.e->str;
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(auto factor, c.ints("factor", {}));
  const Shape &xs = x->type.dims;
  if (xs.size() < 3 || factor.size() != xs.size() - 2) return c.error("factor must have one entry per spatial dimension");
  Shape out = xs;
  for (size_t i = 0; i < factor.size(); ++i) {
    if (factor[i] <= 0 || factor[i] > kMaxWindow) return c.error("factor entries must be in [1, 2^24]");
    out[2 + i] *= factor[i];
  }
  AttrMap a;
  if (name == "nearest_upsample") {
    a = {{"mode", std::string("nearest")}, {"coordinate_transformation_mode", std::string("asymmetric")},
         {"nearest_mode", std::string("floor")}};
  } else {
    KILN_ASSIGN(std::string method, c.str("method", "symmetric"));
    KILN_ASSIGN(std::string border, c.str("border", "replicate"));
    if (border != "replicate")
      return c.error(fmt::format("border '{}' is not supported (only 'replicate')", border));
    if (method != "symmetric" && method != "asymmetric")
      return c.error(fmt::format("method '{}' is not supported", method));
    // Symmetric weights with replicated borders are half-pixel linear interpolation.
    a = {{"mode", std::string("linear")},
         {"coordinate_transformation_mode", std::string(method == "symmetric" ? "half_pixel" : "asymmetric")}};
  }
  return one(c.op("kiln.resize", {x, nullptr, nullptr, c.b->i64s(out)}, std::move(a)));
}

Outs op_batch_norm(Call &c) {
  KILN_ASSIGN(Value * x, c.tensor("input"));
  KILN_ASSIGN(Value * mean, c.tensor("mean"));
  KILN_ASSIGN(Value * var, c.tensor("variance"));
  if (!c.has("epsilon")) return c.error("argument 'epsilon' is missing");
  KILN_ASSIGN(double eps, c.number("epsilon", 0));
  KILN_ASSIGN(Value * y, binary(c, "kiln.sub", x, mean));
  KILN_ASSIGN(Value * d, c.op("kiln.add", {var, c.b->scalar_f(var->type.dtype, eps)}));
  KILN_ASSIGN(d, c.op("kiln.sqrt", {d}));
  KILN_ASSIGN(y, binary(c, "kiln.div", y, d));
  if (c.has("scale")) {
    KILN_ASSIGN(Value * s, c.tensor("scale"));
    KILN_ASSIGN(y, binary(c, "kiln.mul", y, s));
  }
  if (c.has("offset")) {
    KILN_ASSIGN(Value * o, c.tensor("offset"));
    KILN_ASSIGN(y, binary(c, "kiln.add", y, o));
  }
  return std::vector<Value *>{y};
}

} // namespace

const std::map<std::string, OpSig, std::less<>> &standard_ops() {
  static const std::map<std::string, OpSig, std::less<>> kOps = [] {
    std::map<std::string, OpSig, std::less<>> m{
        {"external", {{"shape"}, op_external}},
        {"variable", {{"shape", "label"}, op_variable}},
        {"constant", {{"shape", "value"}, op_constant}},
        {"copy", {{"x"}, op_copy}},
        {"rsqrt", {{"x"}, op_rsqrt}},
        {"conv", {{"input", "filter", "bias", "border", "padding", "stride", "dilation", "groups"}, op_conv}},
        {"max_pool", {{"input", "size", "border", "padding", "stride", "dilation"}, op_pool}},
        {"avg_pool", {{"input", "size", "border", "padding", "stride", "dilation"}, op_pool}},
        {"clamp", {{"x", "a", "b"}, op_clamp}},
        {"transpose", {{"input", "axes"}, op_transpose}},
        {"reshape", {{"input", "shape", "axis_start", "axis_count"}, op_reshape}},
        {"squeeze", {{"input", "axes"}, op_squeeze}},
        {"unsqueeze", {{"input", "axes"}, op_squeeze}},
        {"concat", {{"values", "axis"}, op_concat}},
        {"pad", {{"input", "padding", "border", "value"}, op_pad}},
        {"prelu", {{"x", "alpha"}, op_prelu}},
        {"leaky_relu", {{"x", "alpha"}, op_leaky_elu}},
        {"elu", {{"x", "alpha"}, op_leaky_elu}},
        {"linear", {{"input", "filter", "bias"}, op_linear}},
        {"matmul", {{"A", "B", "transposeA", "transposeB"}, op_linear}},
        {"softmax", {{"x", "axes"}, op_softmax}},
        {"multilinear_upsample", {{"input", "factor", "method", "border"}, op_upsample}},
        {"nearest_upsample", {{"input", "factor"}, op_upsample}},
        {"batch_normalization", {{"input", "mean", "variance", "offset", "scale", "epsilon"}, op_batch_norm}},
    };
    for (const auto &[name, core] : kUnary) m[name] = {{"x"}, op_unary};
    for (const auto &[name, core] : kBinary) m[name] = {{"x", "y"}, op_binary};
    for (const char *r : {"sum_reduce", "mean_reduce", "max_reduce", "min_reduce"})
      m[r] = {{"input", "axes"}, op_reduce};
    return m;
  }();
  return kOps;
}

} // namespace kiln::nnef_fe
