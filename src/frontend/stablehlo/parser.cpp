// StableHLO text parser: module, functions, regions, SSA names, the generic op form and type
// signatures. Recursive descent with one token of lookahead; the first error stops parsing.
//
// Grammar (MLIR as JAX prints it; `loc(...)` may follow any token and is dropped):
//   top        := (alias | module | func)*            alias := '#' name '=' (loc | attr)
//   module     := ('module' | 'builtin.module') symbol? ('attributes' dict)? '{' func* '}'
//               | '"builtin.module"' '(' ')' props? '(' '{' func* '}' ')' dict? ':' '(' ')' '->' '(' ')'
//   func       := 'func.func' ('public' | 'private')? symbol '(' (%arg ':' type dict?)* ')'
//                 ('->' (type | '(' (type dict?)* ')'))? ('attributes' dict)? region
//               | '"func.func"' generic-rest   (sym_name, sym_visibility, function_type)
//   op         := (result (',' result)* '=')? (generic | pretty)    result := %name (':' N)?
//   generic    := string '(' operands ')' ('<' dict '>')? ('(' region (',' region)* ')')? dict?
//                 ':' '(' types ')' '->' (type | '(' types ')')
//   region     := '{' ('^' name ('(' (%arg ':' type)* ')')? ':')? op* '}'
// The pretty forms are in parser_ops.cpp, types and attributes in parser_attrs.cpp.
#include "frontend/stablehlo/parser_impl.h"

#include <fmt/format.h>

namespace kiln::stablehlo_fe {

Parser::Parser(std::string_view text, const std::string &file, const ParseOptions &opt)
    : lex_(text), file_(file), opt_(opt) {
  bump();
}

// ---- tokens and errors ----

void Parser::bump() {
  skipped_loc_ = false;
  cur_ = lex_.next();
  while (cur_.kind == Tok::loc) {
    skipped_loc_ = true;
    cur_ = lex_.next();
  }
}

Token Parser::peek_token() {
  Lexer::State s = lex_.save();
  Token t = lex_.next();
  while (t.kind == Tok::loc) t = lex_.next();
  lex_.restore(s);
  return t;
}

Status Parser::error_at(int line, int col, const std::string &msg) const {
  return Status::error(fmt::format("{}:{}:{}: {}", file_, line, col, msg));
}

Status Parser::error(const Token &t, const std::string &msg) const {
  return error_at(t.line, t.col, msg);
}

std::string Parser::spelling(const Token &t) {
  std::string s;
  switch (t.kind) {
  case Tok::eof: return "end of input";
  case Tok::value_id: s = "%" + t.text; break;
  case Tok::symbol: s = "@" + t.text; break;
  case Tok::caret_id: s = "^" + t.text; break;
  case Tok::hash_id: s = "#" + t.text; break;
  case Tok::bang_id: s = "!" + t.text; break;
  case Tok::string: s = "\"" + t.text + "\""; break;
  default: s = t.text; break;
  }
  if (s.size() > 48) s = s.substr(0, 45) + "...";
  for (char &c : s)
    if (static_cast<unsigned char>(c) < 32) c = ' ';
  return "'" + s + "'";
}

Status Parser::expected(const std::string &what) const {
  if (cur_.kind == Tok::error) return error(cur_, cur_.text);
  return error(cur_, fmt::format("expected {}, got {}", what, spelling(cur_)));
}

Status Parser::expect(Tok k, const char *what) {
  if (cur_.kind != k) return expected(what);
  bump();
  return Status::ok();
}

Status Parser::expect_id(std::string_view word) {
  if (!at_id(word)) return expected(fmt::format("'{}'", word));
  bump();
  return Status::ok();
}

Status Parser::check_depth(const Token &t) const {
  if (depth_ > opt_.max_depth)
    return error(t, fmt::format("nesting deeper than {} levels", opt_.max_depth));
  return Status::ok();
}

// ---- SSA names ----

Status Parser::define(const Token &t, const std::string &name, int count) {
  for (const auto &scope : scopes_)
    if (scope.count(name)) return error(t, fmt::format("redefinition of value '%{}'", name));
  scopes_.back()[name] = count;
  return Status::ok();
}

Result<std::string> Parser::use(const Token &t) {
  if (t.kind != Tok::value_id) return expected("a value");
  std::string base = t.text;
  int64_t index = -1;
  size_t hash = base.find('#');
  if (hash != std::string::npos) {
    std::string digits = base.substr(hash + 1);
    base.resize(hash);
    if (digits.size() > 9) return error(t, fmt::format("result number in '%{}' is too large", t.text));
    index = std::stoll(digits);
  }
  int count = -1;
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(base);
    if (found != it->end()) {
      count = found->second;
      break;
    }
  }
  if (count < 0) return error(t, fmt::format("use of undefined value '%{}'", base));
  if (index >= count)
    return error(t, fmt::format("'%{}' refers to result {} but '%{}' has {} result(s)", t.text,
                                index, base, count));
  bump();
  if (count == 1) return base;
  return fmt::format("{}#{}", base, index < 0 ? 0 : index);
}

Status Parser::operand_list(Operation &o) {
  if (!at(Tok::value_id)) return Status::ok();
  for (;;) {
    KILN_ASSIGN(std::string name, use(cur_));
    o.operands.push_back(std::move(name));
    if (!at(Tok::comma)) return Status::ok();
    bump();
    if (!at(Tok::value_id)) return expected("a value");
  }
}

// ---- attribute dictionaries ----

Status Parser::attr_dict_into(std::vector<NamedAttr> &attrs) {
  DepthGuard guard(*this);
  KILN_TRY(check_depth(cur_));
  KILN_TRY(expect(Tok::lbrace, "'{'"));
  if (at(Tok::rbrace)) {
    bump();
    return Status::ok();
  }
  for (;;) {
    if (!at(Tok::bare_id) && !at(Tok::string)) return expected("an attribute name");
    Token key = cur_;
    bump();
    Attr value;
    if (at(Tok::equal)) {
      bump();
      KILN_ASSIGN(value, attr());
    }
    for (const auto &[k, v] : attrs)
      if (k == key.text) return error(key, fmt::format("duplicate attribute '{}'", key.text));
    attrs.emplace_back(key.text, std::move(value));
    if (at(Tok::rbrace)) {
      bump();
      return Status::ok();
    }
    KILN_TRY(expect(Tok::comma, "',' or '}'"));
  }
}

// ---- signatures ----

Status Parser::signature(Signature &sig) {
  sig.at = cur_;
  auto type_list = [&](std::vector<Type> &out, Tok close) -> Status {
    if (at(close)) return Status::ok();
    for (;;) {
      KILN_ASSIGN(Type t, type());
      out.push_back(std::move(t));
      if (!at(Tok::comma)) return Status::ok();
      bump();
    }
  };
  if (at(Tok::lparen)) {
    sig.parens = true;
    bump();
    KILN_TRY(type_list(sig.ins, Tok::rparen));
    KILN_TRY(expect(Tok::rparen, "')'"));
  } else {
    KILN_TRY(type_list(sig.ins, Tok::eof));
  }
  if (!at(Tok::arrow)) return Status::ok();
  sig.arrow = true;
  bump();
  if (at(Tok::lparen)) {
    bump();
    KILN_TRY(type_list(sig.outs, Tok::rparen));
    return expect(Tok::rparen, "')'");
  }
  KILN_ASSIGN(Type t, type());
  sig.outs.push_back(std::move(t));
  return Status::ok();
}

Status Parser::apply_signature(Operation &o, const Signature &sig, SigForm form) {
  const size_t n = o.operands.size();
  auto count_error = [&](size_t got) {
    return error(sig.at, fmt::format("op '{}' has {} operand(s) but its type lists {}", o.name, n,
                                     got));
  };
  if (!sig.arrow) {
    if (form == SigForm::same && !sig.parens && sig.ins.size() == 1) {
      o.operand_types.assign(n, sig.ins[0]);
      o.result_types = {sig.ins[0]};
      return Status::ok();
    }
    if (form == SigForm::select && !sig.parens && sig.ins.size() == 2 && n == 3) {
      o.operand_types = {sig.ins[0], sig.ins[1], sig.ins[1]};
      o.result_types = {sig.ins[1]};
      return Status::ok();
    }
    if (form == SigForm::pairwise && !sig.parens) {
      if (sig.ins.size() != n) return count_error(sig.ins.size());
      o.operand_types = sig.ins;
      o.result_types = sig.ins;
      return Status::ok();
    }
    if (form == SigForm::same)
      return error(sig.at, fmt::format("op '{}' expects one type or a function type", o.name));
    if (form == SigForm::select)
      return error(sig.at, fmt::format("op '{}' expects 'pred-type, type' or a function type",
                                       o.name));
    return error(sig.at, fmt::format("op '{}' expects a function type '(...) -> ...'", o.name));
  }
  if (form == SigForm::pairwise)
    return error(sig.at, fmt::format("op '{}' expects a list of types, not a function type",
                                     o.name));
  if (!sig.parens && form != SigForm::arrow)
    return error(sig.at, fmt::format("op '{}': expected '(' before the operand types", o.name));
  if (sig.ins.size() != n) return count_error(sig.ins.size());
  o.operand_types = sig.ins;
  o.result_types = sig.outs;
  return Status::ok();
}

// ---- ops and regions ----

Status Parser::block_ops(Block &b) {
  while (!at(Tok::rbrace) && !at(Tok::eof) && !at(Tok::caret_id) && !at(Tok::error))
    KILN_TRY(op(b));
  return Status::ok();
}

Status Parser::region(Block &b, const std::vector<std::string> *names,
                      const std::vector<Type> *types) {
  DepthGuard guard(*this);
  KILN_TRY(check_depth(cur_));
  Token open = cur_;
  KILN_TRY(expect(Tok::lbrace, "'{'"));
  b.loc = {open.line, open.col};
  scopes_.emplace_back();
  if (names) {
    for (size_t i = 0; i < names->size(); ++i) KILN_TRY(define(open, (*names)[i], 1));
    b.arg_names = *names;
    b.arg_types = *types;
  }
  if (at(Tok::caret_id)) {
    if (names) return error(cur_, "this region's arguments are already given before it");
    bump();
    if (at(Tok::lparen)) {
      bump();
      while (!at(Tok::rparen)) {
        if (!at(Tok::value_id) || cur_.text.find('#') != std::string::npos)
          return expected("a block argument '%name'");
        Token arg = cur_;
        bump();
        KILN_TRY(expect(Tok::colon, "':'"));
        KILN_ASSIGN(Type t, type());
        KILN_TRY(define(arg, arg.text, 1));
        b.arg_names.push_back(arg.text);
        b.arg_types.push_back(std::move(t));
        if (at(Tok::comma)) {
          bump();
          if (!at(Tok::value_id)) return expected("a block argument '%name'");
        } else if (!at(Tok::rparen)) {
          return expected("',' or ')'");
        }
      }
      bump();
    }
    KILN_TRY(expect(Tok::colon, "':' after the block label"));
  }
  KILN_TRY(block_ops(b));
  if (at(Tok::caret_id)) return error(cur_, "regions with several blocks are not supported");
  KILN_TRY(expect(Tok::rbrace, "'}'"));
  scopes_.pop_back();
  return Status::ok();
}

Status Parser::op(Block &b) {
  struct Def {
    Token tok;
    int count;
  };
  std::vector<Def> defs;
  size_t total = 0;
  if (at(Tok::value_id)) {
    for (;;) {
      if (!at(Tok::value_id) || cur_.text.find('#') != std::string::npos)
        return expected("a result name '%name'");
      Def d{cur_, 1};
      bump();
      if (at(Tok::colon)) {
        bump();
        if (!at(Tok::integer) || cur_.text.size() > 5 || cur_.text[0] == '0' ||
            std::stoi(cur_.text) > 4096)
          return expected("a result count (1 to 4096)");
        d.count = std::stoi(cur_.text);
        bump();
      }
      total += static_cast<size_t>(d.count);
      defs.push_back(std::move(d));
      if (!at(Tok::comma)) break;
      bump();
    }
    KILN_TRY(expect(Tok::equal, "'='"));
  }
  Operation o;
  Token name = cur_;
  o.loc = {name.line, name.col};
  for (const Def &d : defs) {
    if (d.count == 1 && d.tok.text.find('#') == std::string::npos) {
      o.results.push_back(d.tok.text);
    } else {
      for (int i = 0; i < d.count; ++i) o.results.push_back(fmt::format("{}#{}", d.tok.text, i));
    }
  }
  if (at(Tok::string)) {
    KILN_TRY(generic_op(o, false));
  } else if (at(Tok::bare_id)) {
    KILN_TRY(pretty_op(o, name));
  } else {
    return expected("an op");
  }
  if (o.result_types.size() != total)
    return error(name, fmt::format("op '{}' defines {} result(s) but its type gives {}", o.name,
                                   total, o.result_types.size()));
  for (const Def &d : defs) KILN_TRY(define(d.tok, d.tok.text, d.count));
  b.ops.push_back(std::move(o));
  return Status::ok();
}

Status Parser::generic_op(Operation &o, bool isolated) {
  o.name = cur_.text;
  Token name = cur_;
  if (o.name.empty()) return error(name, "empty op name");
  bump();
  KILN_TRY(expect(Tok::lparen, "'('"));
  KILN_TRY(operand_list(o));
  KILN_TRY(expect(Tok::rparen, "')'"));
  if (at(Tok::lbracket)) return error(cur_, "successor blocks are not supported");
  if (at(Tok::less)) {
    bump();
    KILN_TRY(attr_dict_into(o.attrs));
    KILN_TRY(expect(Tok::greater, "'>' after the properties"));
  }
  if (at(Tok::lparen)) {
    bump();
    // Regions of an op isolated from above (func.func) see none of the enclosing names.
    std::vector<std::unordered_map<std::string, int>> outer;
    if (isolated) outer.swap(scopes_);
    for (;;) {
      o.regions.emplace_back();
      Status s = region(o.regions.back(), nullptr, nullptr);
      if (!s) return s;
      if (!at(Tok::comma)) break;
      bump();
    }
    if (isolated) outer.swap(scopes_);
    KILN_TRY(expect(Tok::rparen, "')' after the regions"));
  }
  if (at(Tok::lbrace)) KILN_TRY(attr_dict_into(o.attrs));
  KILN_TRY(expect(Tok::colon, "':'"));
  if (!at(Tok::lparen)) return expected("a function type '(...) -> ...'");
  Signature sig;
  KILN_TRY(signature(sig));
  return apply_signature(o, sig, SigForm::functional);
}

// ---- functions and the module ----

namespace {

bool has_func(const ModuleAst &m, const std::string &name) {
  for (const Function &f : m.funcs)
    if (f.name == name) return true;
  return false;
}

} // namespace

Status Parser::pretty_func(ModuleAst &m) {
  Token start = cur_;
  bump();
  Function f;
  f.loc = {start.line, start.col};
  if (at_id("public") || at_id("private") || at_id("nested")) {
    f.is_public = cur_.text == "public";
    bump();
  }
  if (!at(Tok::symbol)) return expected("a function name '@name'");
  Token fname = cur_;
  f.name = cur_.text;
  if (has_func(m, f.name)) return error(fname, fmt::format("redefinition of function '@{}'", f.name));
  bump();
  KILN_TRY(expect(Tok::lparen, "'('"));
  std::vector<Token> arg_toks;
  while (!at(Tok::rparen)) {
    if (!at(Tok::value_id)) {
      if (at_id("tensor")) return error(fname, fmt::format("function '@{}' has no body", f.name));
      return expected("an argument '%name: type'");
    }
    if (cur_.text.find('#') != std::string::npos) return expected("an argument name");
    arg_toks.push_back(cur_);
    f.body.arg_names.push_back(cur_.text);
    bump();
    KILN_TRY(expect(Tok::colon, "':'"));
    KILN_ASSIGN(Type t, type());
    f.body.arg_types.push_back(std::move(t));
    if (at(Tok::lbrace)) {
      std::vector<NamedAttr> ignored;
      KILN_TRY(attr_dict_into(ignored));
    }
    if (at(Tok::comma)) {
      bump();
      if (!at(Tok::value_id)) return expected("an argument '%name: type'");
    } else if (!at(Tok::rparen)) {
      return expected("',' or ')'");
    }
  }
  bump();
  if (at(Tok::arrow)) {
    bump();
    if (at(Tok::lparen)) {
      bump();
      while (!at(Tok::rparen)) {
        KILN_ASSIGN(Type t, type());
        f.result_types.push_back(std::move(t));
        if (at(Tok::lbrace)) {
          std::vector<NamedAttr> ignored;
          KILN_TRY(attr_dict_into(ignored));
        }
        if (at(Tok::comma)) {
          bump();
        } else if (!at(Tok::rparen)) {
          return expected("',' or ')'");
        }
      }
      bump();
    } else {
      KILN_ASSIGN(Type t, type());
      f.result_types.push_back(std::move(t));
    }
  }
  if (at_id("attributes")) {
    bump();
    std::vector<NamedAttr> ignored;
    KILN_TRY(attr_dict_into(ignored));
  }
  if (!at(Tok::lbrace)) {
    if (at(Tok::eof) || at(Tok::rbrace) || at_id("func.func"))
      return error(fname, fmt::format("function '@{}' has no body", f.name));
    return expected("'{'");
  }
  // Functions are isolated from above: a fresh set of names.
  std::vector<std::unordered_map<std::string, int>> outer;
  outer.swap(scopes_);
  scopes_.emplace_back();
  for (size_t i = 0; i < arg_toks.size(); ++i) KILN_TRY(define(arg_toks[i], arg_toks[i].text, 1));
  std::vector<std::string> names = f.body.arg_names;
  std::vector<Type> types = f.body.arg_types;
  f.body.arg_names.clear();
  f.body.arg_types.clear();
  // The arguments were defined in the scope above the body's own.
  Status s = [&]() -> Status {
    DepthGuard guard(*this);
    Token open = cur_;
    KILN_TRY(expect(Tok::lbrace, "'{'"));
    f.body.loc = {open.line, open.col};
    scopes_.emplace_back();
    KILN_TRY(block_ops(f.body));
    if (at(Tok::caret_id)) return error(cur_, "functions with several blocks are not supported");
    KILN_TRY(expect(Tok::rbrace, "'}'"));
    return Status::ok();
  }();
  outer.swap(scopes_);
  KILN_TRY(s);
  f.body.arg_names = std::move(names);
  f.body.arg_types = std::move(types);
  m.funcs.push_back(std::move(f));
  return Status::ok();
}

Status Parser::generic_func(ModuleAst &m) {
  Token start = cur_;
  Operation o;
  o.loc = {start.line, start.col};
  KILN_TRY(generic_op(o, true));
  if (!o.result_types.empty() || !o.operands.empty())
    return error(start, "'func.func' takes no operands and has no results");
  const Attr *name = o.attr("sym_name");
  const Attr *ftype = o.attr("function_type");
  const Attr *vis = o.attr("sym_visibility");
  if (!name || name->kind != Attr::Kind::String)
    return error(start, "'func.func' needs a string 'sym_name'");
  if (!ftype || ftype->kind != Attr::Kind::Array || ftype->list.size() != 2)
    return error(start, "'func.func' needs a 'function_type' of the form (...) -> ...");
  if (o.regions.size() != 1)
    return error(start, fmt::format("function '@{}' has no body", name->s));
  if (has_func(m, name->s))
    return error(start, fmt::format("redefinition of function '@{}'", name->s));
  Function f;
  f.name = name->s;
  f.loc = o.loc;
  f.is_public = !(vis && vis->kind == Attr::Kind::String && vis->s != "public");
  for (const Attr &t : ftype->list[1].list) f.result_types.push_back(t.type);
  f.body = std::move(o.regions[0]);
  const auto &ins = ftype->list[0].list;
  bool same = ins.size() == f.body.arg_types.size();
  for (size_t i = 0; same && i < ins.size(); ++i)
    same = ins[i].type.dims == f.body.arg_types[i].dims &&
           ins[i].type.dtype == f.body.arg_types[i].dtype;
  if (!same)
    return error(start, fmt::format("function '@{}': its block arguments differ from its "
                                    "function_type",
                                    f.name));
  m.funcs.push_back(std::move(f));
  return Status::ok();
}

Status Parser::module_items(ModuleAst &m, bool until_rbrace) {
  for (;;) {
    if (at(Tok::rbrace) && until_rbrace) return Status::ok();
    if (at(Tok::eof)) {
      if (until_rbrace) return expected("'}' closing the module");
      return Status::ok();
    }
    if (at_id("func.func")) {
      KILN_TRY(pretty_func(m));
    } else if (at(Tok::string) && cur_.text == "func.func") {
      KILN_TRY(generic_func(m));
    } else if (!until_rbrace && (at_id("module") || at_id("builtin.module") ||
                                 (at(Tok::string) && cur_.text == "builtin.module") ||
                                 at(Tok::hash_id))) {
      return Status::ok();
    } else if (at(Tok::bare_id) || at(Tok::string)) {
      return error(cur_, fmt::format("cannot parse op '{}' here: expected a 'func.func'", cur_.text));
    } else {
      return expected(until_rbrace ? "'func.func' or '}'" : "'module' or 'func.func'");
    }
  }
}

Status Parser::generic_module(ModuleAst &m) {
  bump();
  KILN_TRY(expect(Tok::lparen, "'('"));
  KILN_TRY(expect(Tok::rparen, "')'"));
  std::vector<NamedAttr> attrs;
  if (at(Tok::less)) {
    bump();
    KILN_TRY(attr_dict_into(attrs));
    KILN_TRY(expect(Tok::greater, "'>'"));
  }
  KILN_TRY(expect(Tok::lparen, "'('"));
  KILN_TRY(expect(Tok::lbrace, "'{'"));
  if (at(Tok::caret_id)) {
    bump();
    KILN_TRY(expect(Tok::colon, "':'"));
  }
  KILN_TRY(module_items(m, true));
  KILN_TRY(expect(Tok::rbrace, "'}'"));
  KILN_TRY(expect(Tok::rparen, "')'"));
  if (at(Tok::lbrace)) KILN_TRY(attr_dict_into(attrs));
  for (const auto &[k, v] : attrs)
    if (k == "sym_name" && v.kind == Attr::Kind::String) m.name = v.s;
  KILN_TRY(expect(Tok::colon, "':'"));
  KILN_TRY(expect(Tok::lparen, "'('"));
  KILN_TRY(expect(Tok::rparen, "')'"));
  KILN_TRY(expect(Tok::arrow, "'->'"));
  KILN_TRY(expect(Tok::lparen, "'('"));
  return expect(Tok::rparen, "')'");
}

Result<ModuleAst> Parser::module() {
  ModuleAst m;
  m.file = file_;
  bool saw_module = false, saw_funcs = false;
  while (!at(Tok::eof)) {
    if (at(Tok::hash_id)) {
      // `#loc3 = loc(...)` (or another attribute alias): dropped.
      Token alias = cur_;
      bump();
      if (!at(Tok::equal)) return expected("'=' after the alias name");
      bump();
      if (!skipped_loc_) {
        KILN_ASSIGN(Attr ignored, attr());
        (void)ignored;
      }
      continue;
    }
    if (at(Tok::bang_id)) return error(cur_, "type aliases ('!name = ...') are not supported");
    bool pretty_mod = at_id("module") || at_id("builtin.module");
    bool generic_mod = at(Tok::string) && cur_.text == "builtin.module";
    if (pretty_mod || generic_mod) {
      if (saw_module || saw_funcs)
        return error(cur_, "expected one module (or functions without a module)");
      saw_module = true;
      if (generic_mod) {
        KILN_TRY(generic_module(m));
        continue;
      }
      bump();
      if (at(Tok::symbol)) {
        m.name = cur_.text;
        bump();
      }
      if (at_id("attributes")) {
        bump();
        std::vector<NamedAttr> ignored;
        KILN_TRY(attr_dict_into(ignored));
      }
      KILN_TRY(expect(Tok::lbrace, "'{'"));
      KILN_TRY(module_items(m, true));
      KILN_TRY(expect(Tok::rbrace, "'}'"));
      continue;
    }
    if (saw_module) return expected("end of input after the module");
    saw_funcs = true;
    size_t before = m.funcs.size();
    KILN_TRY(module_items(m, false));
    if (m.funcs.size() == before && !at(Tok::eof) && !at(Tok::hash_id)) {
      return error(cur_, "expected one module (or functions without a module)");
    }
  }
  if (m.funcs.empty()) return error(cur_, "no functions in the input");
  return m;
}

Result<ModuleAst> parse_module(std::string_view text, const std::string &file,
                               const ParseOptions &opt) {
  Parser p(text, file, opt);
  return p.module();
}

} // namespace kiln::stablehlo_fe
