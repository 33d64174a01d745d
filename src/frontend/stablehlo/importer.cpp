// StableHLO import: walks the syntax tree of the public function (parser.cpp) and converts
// every op through the converter table; func.call (and stablehlo.composite) inline their callee,
// regions are converted by the ops that own them (convert_control.cpp, convert_reduce.cpp).
#include "frontend/stablehlo/importer.h"

#include "frontend/stablehlo/convert.h"
#include "ops/ops.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>

namespace kiln::stablehlo_fe {

namespace fs = std::filesystem;

std::string ImportState::format(Loc loc, const std::string &msg) const {
  std::string_view src;
  if (loc.line >= 1 && static_cast<size_t>(loc.line) <= lines.size()) src = lines[loc.line - 1];
  while (!src.empty() && (src.front() == ' ' || src.front() == '\t')) src.remove_prefix(1);
  while (!src.empty() && (src.back() == ' ' || src.back() == '\t' || src.back() == '\r'))
    src.remove_suffix(1);
  std::string quoted(src.substr(0, 240));
  if (src.size() > 240) quoted += " ...";
  return fmt::format("{}:{}:{}: {}{}{}", file, loc.line, loc.col, msg, quoted.empty() ? "" : ": ",
                     quoted);
}

namespace {

constexpr int kMaxDepth = 64; // nested calls and regions

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

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    register_elementwise(t);
    register_shape(t);
    register_gather(t);
    register_nn(t);
    register_reduce(t);
    register_control(t);
    return t;
  }();
  return table;
}

TensorType to_kiln(const Type &t) { return TensorType{t.dtype, t.dims, true}; }

std::string type_str(const Type &t) { return to_kiln(t).str(); }

bool is_terminator(const std::string &n) { return n == "func.return" || n == "stablehlo.return"; }

// Operand and result counts of the converted ops (converters rely on them); -1: any.
struct Arity {
  int min_in, max_in, results;
};

std::optional<Arity> arity_of(std::string_view name) {
  static const std::unordered_map<std::string_view, Arity> table = [] {
    std::unordered_map<std::string_view, Arity> t;
    for (const char *n :
         {"not", "negate", "abs", "sign", "exponential", "log", "logistic", "sqrt", "tanh", "sine",
          "cosine", "tan", "floor", "ceil", "round_nearest_even", "round_nearest_afz",
          "exponential_minus_one", "log_plus_one", "rsqrt", "cbrt", "is_finite", "popcnt",
          "convert", "bitcast_convert", "reshape", "transpose", "reverse", "broadcast_in_dim",
          "get_dimension_size", "reduce_precision"})
      t[n] = {1, 1, 1};
    for (const char *n : {"add", "subtract", "multiply", "divide", "remainder", "power", "maximum",
                          "minimum", "and", "or", "xor", "atan2", "shift_left",
                          "shift_right_logical", "shift_right_arithmetic", "compare", "dot",
                          "dot_general", "convolution", "pad", "gather"})
      t[n] = {2, 2, 1};
    t["select"] = t["clamp"] = {3, 3, 1};
    t["scatter"] = {3, -1, 1};
    t["constant"] = t["iota"] = {0, 0, 1};
    t["concatenate"] = t["dynamic_slice"] = {1, -1, 1};
    t["dynamic_update_slice"] = {2, -1, 1};
    t["batch_norm_inference"] = {5, 5, 1};
    t["if"] = t["case"] = {1, 1, -1};
    return t;
  }();
  if (name.rfind("chlo.", 0) == 0) {
    if (name == "chlo.top_k") return Arity{1, 1, 2};
    return Arity{1, 1, 1}; // the unary chlo ops kiln converts
  }
  if (name.rfind("stablehlo.", 0) != 0) return std::nullopt;
  auto it = table.find(name.substr(10));
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// Checks counts the converters rely on; reduce / sort / while / barriers take any number of
// operands with matching results, checked here too.
std::string arity_error(const Operation &op) {
  const int in = static_cast<int>(op.operands.size()), out = static_cast<int>(op.results.size());
  if (op.result_types.size() != op.results.size()) return "result types do not match the results";
  if (op.operand_types.size() != op.operands.size()) return "operand types do not match the operands";
  const std::string_view n = op.name;
  if (n == "stablehlo.reduce" || n == "stablehlo.reduce_window") {
    if (in < 2 || in % 2 || out != in / 2) return "expects inputs, as many init values and one result per input";
    return {};
  }
  if (n == "stablehlo.sort" || n == "stablehlo.while" || n == "stablehlo.optimization_barrier") {
    if (out != in || (n == "stablehlo.sort" && in < 1)) return "expects one result per operand";
    return {};
  }
  auto a = arity_of(n);
  if (!a) return {};
  if (in < a->min_in || (a->max_in >= 0 && in > a->max_in))
    return fmt::format("expects {} operands, got {}",
                       a->min_in == a->max_in ? std::to_string(a->min_in)
                                              : fmt::format("at least {}", a->min_in),
                       in);
  if (a->results >= 0 && out != a->results)
    return fmt::format("expects {} result(s), got {}", a->results, out);
  return {};
}

class Importer {
public:
  Importer(const ModuleAst &m, ImportState &st) : m_(m), st_(st) {}

  Result<std::unique_ptr<Module>> run() {
    const Function *entry = pick_entry();
    if (!entry)
      return Status::error(fmt::format("{}: no public function to import (expected @main)", st_.file));
    auto module = std::make_unique<Module>();
    auto fn = std::make_unique<kiln::Function>();
    fn->name = "main";
    Builder b(core_ops(), fn->body);
    std::vector<Value *> args;
    for (size_t i = 0; i < entry->body.arg_types.size(); ++i) {
      const Type &t = entry->body.arg_types[i];
      for (int64_t d : t.dims)
        if (d < 0)
          return Status::error(st_.format(entry->loc, fmt::format("argument {} has the dynamic type "
                                                                  "{}; only static shapes are supported",
                                                                  i, type_str(t))));
      args.push_back(fn->body.add_param(to_kiln(t), fmt::format("arg{}", i)));
    }
    call_stack_.push_back(entry->name);
    KILN_ASSIGN(std::vector<Value *> outs, convert_block(entry->body, nullptr, args, b));
    KILN_TRY(check_results(*entry, outs));
    for (size_t i = 0; i < outs.size(); ++i) {
      Value *v = outs[i];
      // Each result gets its own value named outK (a parameter or a value returned twice gets
      // an identity reshape).
      bool taken = !v->def;
      for (size_t j = 0; j < i; ++j) taken = taken || fn->body.results[j] == v;
      if (taken) {
        auto r = b.create1("kiln.reshape", {v, b.i64s(v->type.dims)});
        if (!r) return r.status();
        v = r.value();
      }
      v->name = fmt::format("out{}", i);
      fn->body.results.push_back(v);
    }
    module->functions.push_back(std::move(fn));
    return module;
  }

private:
  const ModuleAst &m_;
  ImportState &st_;
  std::vector<std::string> call_stack_;
  int depth_ = 0;

  const Function *pick_entry() const {
    const Function *only = nullptr;
    int publics = 0;
    for (const auto &f : m_.funcs) {
      if (!f.is_public) continue;
      if (f.name == "main") return &f;
      only = &f;
      ++publics;
    }
    return publics == 1 ? only : nullptr;
  }

  const Function *find_func(std::string_view name) const {
    for (const auto &f : m_.funcs)
      if (f.name == name) return &f;
    return nullptr;
  }

  Result<std::vector<Value *>> convert_block(const Block &blk, const Scope *parent,
                                             const std::vector<Value *> &args, Builder &b) {
    if (args.size() != blk.arg_names.size())
      return Status::error(st_.format(blk.loc, fmt::format("block takes {} arguments, got {}",
                                                           blk.arg_names.size(), args.size())));
    if (++depth_ > kMaxDepth) {
      --depth_;
      return Status::error(st_.format(blk.loc, fmt::format("regions and calls are nested too "
                                                           "deeply (limit {})",
                                                           kMaxDepth)));
    }
    Scope scope;
    scope.parent = parent;
    for (size_t i = 0; i < args.size(); ++i) scope.names[blk.arg_names[i]] = args[i];
    for (const auto &op : blk.ops) {
      if (is_terminator(op.name)) {
        std::vector<Value *> outs;
        for (size_t i = 0; i < op.operands.size(); ++i) {
          Value *v = scope.find(op.operands[i]);
          Status s = v ? check_operand(op, i, v)
                       : Status::error(st_.format(op.loc, fmt::format("use of undefined value %{}",
                                                                       op.operands[i])));
          if (!s) {
            --depth_;
            return s;
          }
          outs.push_back(v);
        }
        --depth_;
        return outs;
      }
      Status s = convert_op(op, scope, b);
      if (!s) {
        --depth_;
        return s;
      }
    }
    --depth_;
    return Status::error(st_.format(blk.loc, "block has no terminator (return)"));
  }

  Status check_operand(const Operation &op, size_t i, const Value *v) {
    if (i >= op.operand_types.size()) return Status::ok();
    const Type &t = op.operand_types[i];
    if (v->type.dtype != t.dtype || v->type.dims != t.dims)
      return Status::error(st_.format(op.loc, fmt::format("operand %{} has type {} but the op "
                                                          "declares {}",
                                                          op.operands[i], v->type.str(),
                                                          type_str(t))));
    return Status::ok();
  }

  Status convert_op(const Operation &op, Scope &scope, Builder &b) {
    std::vector<Value *> ins;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      Value *v = scope.find(op.operands[i]);
      if (!v)
        return Status::error(st_.format(op.loc, fmt::format("use of undefined value %{}", op.operands[i])));
      KILN_TRY(check_operand(op, i, v));
      ins.push_back(v);
    }
    for (const Type &t : op.result_types)
      for (int64_t d : t.dims)
        if (d < 0)
          return Status::error(st_.format(op.loc, fmt::format("result type {} is dynamic; only "
                                                              "static shapes are supported",
                                                              type_str(t))));
    b.set_loc(fmt::format("{}:{}", st_.file, op.loc.line));
    OpCtx ctx(op, ins, b, st_);
    ctx.inline_block = [this, &scope, &b](const Block &blk, const std::vector<Value *> &args) {
      return convert_block(blk, &scope, args, b);
    };
    if (std::string e = arity_error(op); !e.empty()) return ctx.error(fmt::format("{}: {}", op.name, e));
    Result<std::vector<Value *>> outs = Status::error("not converted");
    if (op.name == "func.call" || op.name == "stablehlo.composite") {
      const char *key = op.name == "func.call" ? "callee" : "decomposition";
      const Attr *callee = op.attr(key);
      if (!callee || callee->kind != Attr::Kind::String)
        return ctx.error(fmt::format("{} without a '{}' function", op.name, key));
      outs = call(ctx, callee->s, ins, b);
    } else if (op.name == "stablehlo.custom_call") {
      const Attr *t = op.attr("call_target_name");
      return ctx.error(fmt::format("unsupported custom_call @{}", t ? t->s : std::string("?")));
    } else if (const ConvertFn *fn = converters().find(op.name)) {
      outs = (*fn)(ctx);
    } else {
      return ctx.error(fmt::format("unsupported op '{}'", op.name));
    }
    if (!outs) {
      const std::string &msg = outs.status().message();
      if (msg.rfind(st_.file + ":", 0) == 0) return outs.status();
      return ctx.error(msg);
    }
    if (outs->size() != op.results.size())
      return ctx.error(fmt::format("internal: converter gave {} results for {}", outs->size(),
                                   op.results.size()));
    for (size_t i = 0; i < op.results.size(); ++i) {
      Value *v = (*outs)[i];
      if (i < op.result_types.size()) {
        const Type &t = op.result_types[i];
        if (v->type.dtype != t.dtype || v->type.dims != t.dims || !v->type.ranked)
          return ctx.error(fmt::format("result {} has type {} by StableHLO's rules but the op "
                                       "declares {}",
                                       i, v->type.str(), type_str(t)));
      }
      scope.names[op.results[i]] = v;
    }
    return Status::ok();
  }

  // The values a function returns against its declared result types.
  Status check_results(const Function &f, const std::vector<Value *> &outs) {
    if (outs.size() != f.result_types.size())
      return Status::error(st_.format(f.loc, fmt::format("@{} returns {} values but declares {} "
                                                         "results",
                                                         f.name, outs.size(), f.result_types.size())));
    for (size_t i = 0; i < outs.size(); ++i) {
      const Type &t = f.result_types[i];
      if (outs[i]->type.dtype != t.dtype || outs[i]->type.dims != t.dims)
        return Status::error(st_.format(f.loc, fmt::format("@{} returns {} as result {} but "
                                                           "declares {}",
                                                           f.name, outs[i]->type.str(), i,
                                                           type_str(t))));
    }
    return Status::ok();
  }

  Result<std::vector<Value *>> call(OpCtx &ctx, const std::string &name,
                                    const std::vector<Value *> &args, Builder &b) {
    const Function *f = find_func(name);
    if (!f) return ctx.error(fmt::format("call of unknown function @{}", name));
    if (std::find(call_stack_.begin(), call_stack_.end(), name) != call_stack_.end())
      return ctx.error(fmt::format("recursive call of @{} is not supported", name));
    if (f->body.arg_types.size() != args.size())
      return ctx.error(fmt::format("@{} takes {} arguments, got {}", name, f->body.arg_types.size(),
                                   args.size()));
    call_stack_.push_back(name);
    auto outs = convert_block(f->body, nullptr, args, b); // functions see only their arguments
    call_stack_.pop_back();
    if (outs) KILN_TRY(check_results(*f, outs.value()));
    return outs;
  }
};

} // namespace

Result<std::optional<std::vector<Tensor>>> eval_block(OpCtx &c, const Block &blk,
                                                      const std::vector<Tensor> &args) {
  Graph scratch;
  Graph &saved = c.b.graph();
  const std::string saved_loc = c.b.loc();
  c.b.set_graph(scratch);
  std::vector<Value *> vs;
  for (const Tensor &t : args) vs.push_back(c.b.constant(t));
  auto r = c.inline_block(blk, vs);
  c.b.set_graph(saved);
  c.b.set_loc(saved_loc);
  for (const auto &v : scratch.values()) c.state.iota_dim.erase(v.get());
  std::optional<std::vector<Tensor>> none;
  if (!r) return none;
  std::vector<Tensor> out;
  for (Value *v : r.value()) {
    const Tensor *t = Builder::constant_value(v);
    if (!t) return none;
    out.push_back(*t);
  }
  return std::optional<std::vector<Tensor>>(std::move(out));
}

std::string single_binary_body(const Block &blk) {
  if (blk.ops.size() != 2 || blk.arg_names.size() != 2) return {};
  const Operation &op = blk.ops[0], &ret = blk.ops[1];
  if (op.operands.size() != 2 || op.results.size() != 1 || !op.regions.empty()) return {};
  if (!is_terminator(ret.name) || ret.operands.size() != 1 || ret.operands[0] != op.results[0])
    return {};
  const auto &a = blk.arg_names;
  const bool ab = op.operands[0] == a[0] && op.operands[1] == a[1];
  const bool ba = op.operands[0] == a[1] && op.operands[1] == a[0];
  return (ab || ba) ? op.name : std::string();
}

Result<std::unique_ptr<Module>> import_text(std::string_view text, const std::string &file,
                                            const ImportOptions &opt) {
  ParseOptions po;
  po.max_constant_bytes = opt.max_constant_bytes;
  KILN_ASSIGN(ModuleAst ast, parse_module(text, file, po));
  ImportState st;
  st.file = file;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    st.lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  Importer imp(ast, st);
  return imp.run();
}

Result<std::unique_ptr<Module>> import_file(const std::string &path, const ImportOptions &opt) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) return Status::error(fmt::format("{}: cannot read", path));
  if (size > (uint64_t(2) << 30)) return Status::error(fmt::format("{}: file is larger than 2 GiB", path));
  std::ifstream f(path, std::ios::binary);
  std::string text(size, '\0');
  f.read(text.data(), static_cast<std::streamsize>(size));
  if (!f) return Status::error(fmt::format("{}: read failed", path));
  return import_text(text, path, opt);
}

} // namespace kiln::stablehlo_fe
