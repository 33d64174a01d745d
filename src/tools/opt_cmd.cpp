// kiln opt: parses text IR, verifies it, runs passes, prints text IR.
//
//   kiln opt FILE [--pass=NAME]... [--verify-only] [--split-input-file]
//   kiln opt FILE.kir [--kir-pass=NAME[,NAME]]... [--split-input-file]
//
// The input is kernel IR (kir/kir_parser.h) when FILE ends in .kir or --kir-pass is given
// (stdin as kernel IR: `kiln opt - --kir-pass=simplify`); its passes run only as named
// (add `verify` to check the kernels).
//
// Diagnostics are "file:line:col: error: message" where a location is known (parse errors and
// ops that fail verification), else "error: message". With --split-input-file the input is
// cut at lines "// -----" and each part is processed on its own (line numbers stay those of
// the whole file); the outputs are joined by "// -----" and the exit status is 1 when any
// part failed.
#include "ir/text.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

namespace kiln::tools {

namespace {

struct OptArgs {
  std::string file;
  std::vector<std::string> passes;
  std::vector<std::string> kir_passes;
  bool verify_only = false;
  bool split_input_file = false;
};

Result<std::string> read_input(const std::string &file) {
  std::stringstream ss;
  if (file == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream f(file, std::ios::binary);
  if (!f) return Status::error(fmt::format("error: {}: cannot open", file));
  ss << f.rdbuf();
  return ss.str();
}

// Parts of `text` between "// -----" lines, each prefixed with blank lines so that its line
// numbers are those of the whole text.
std::vector<std::string> split_input(const std::string &text) {
  std::vector<std::string> parts;
  std::string cur;
  size_t lines_before = 0, line_no = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    size_t next = end == std::string::npos ? text.size() : end + 1;
    std::string_view line(text.data() + pos, next - pos);
    ++line_no;
    auto first = line.find_first_not_of(" \t");
    auto last = line.find_last_not_of(" \t\r\n");
    if (first != std::string_view::npos && line.substr(first, last - first + 1) == "// -----") {
      parts.push_back(std::string(lines_before, '\n') + cur);
      cur.clear();
      lines_before = line_no;
    } else {
      cur += line;
    }
    pos = next;
  }
  parts.push_back(std::string(lines_before, '\n') + cur);
  return parts;
}

// "file:line:col: message" (the parser's form) -> "file:line:col: error: message".
std::string as_diagnostic(const std::string &file, const std::string &msg) {
  if (msg.rfind(file + ":", 0) == 0) {
    size_t p = file.size() + 1;
    size_t colon1 = msg.find(':', p);
    size_t colon2 = colon1 == std::string::npos ? colon1 : msg.find(':', colon1 + 1);
    if (colon2 != std::string::npos && colon2 + 1 < msg.size() && msg[colon2 + 1] == ' ')
      return msg.substr(0, colon2 + 1) + " error:" + msg.substr(colon2 + 1);
  }
  return "error: " + msg;
}


Status check_graph_located(Graph &g) {
  for (auto &op : g.ops) {
    for (auto &r : op->regions) KILN_TRY(check_graph_located(*r));
    // The location goes in front of the message rather than into describe().
    std::string loc = std::exchange(op->loc, {});
    Status st = verify_op_and_types(*op);
    op->loc = loc;
    if (!st) return Status::error(loc.empty() ? "error: " + st.message()
                                              : fmt::format("{}: error: {}", loc, st.message()));
  }
  return Status::ok();
}

Status verify_module(Module &m, const std::string &when) {
  for (auto &fn : m.functions) {
    KILN_TRY(check_graph_located(fn->body));
    Status st = verify_function(*fn);
    if (!st) return Status::error("error: " + (when.empty() ? "" : when + ": ") + st.message());
  }
  return Status::ok();
}

// One input (a whole file or a part of it): parse, verify, run passes; the printed result.
Result<std::string> process(const OptArgs &a, const std::string &text) {
  if (is_kir_input(a.file, a.kir_passes)) {
    if (!a.passes.empty()) return Status::error("error: --pass names a graph pass; use --kir-pass");
    auto out = process_kir(a.file, text, a.kir_passes, a.verify_only);
    if (!out) return Status::error(as_diagnostic(a.file, out.status().message()));
    return out;
  }
  auto parsed = parse_module(core_ops(), text, a.file);
  if (!parsed) return Status::error(as_diagnostic(a.file, parsed.status().message()));
  Module &m = **parsed;
  KILN_TRY(verify_module(m, ""));
  for (const auto &name : a.passes) {
    const Pass *p = find_pass(name);
    if (!p) return Status::error(fmt::format("error: unknown pass '{}'", name));
    Status st = p->run(m);
    if (!st) return Status::error(fmt::format("error: pass {}: {}", name, st.message()));
    KILN_TRY(verify_module(m, "after pass " + name));
  }
  return a.verify_only ? std::string() : print_module(m);
}

bool opt(const OptArgs &a) {
  auto text = read_input(a.file);
  if (!text) {
    fmt::print(stderr, "{}\n", text.status().message());
    return false;
  }
  std::vector<std::string> parts =
      a.split_input_file ? split_input(*text) : std::vector<std::string>{*text};
  bool ok = true;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i && !a.verify_only) fmt::print("// -----\n");
    auto out = process(a, parts[i]);
    if (out) {
      fmt::print("{}", *out);
    } else {
      std::fflush(stdout);
      fmt::print(stderr, "{}\n", out.status().message());
      ok = false;
    }
  }
  return ok;
}

} // namespace

void add_opt_command(CLI::App &app) {
  auto a = std::make_shared<OptArgs>();
  auto *cmd = app.add_subcommand("opt", "Parse text IR, verify it, run passes, print text IR");
  cmd->add_option("file", a->file, "text IR file or - for stdin")->required();
  std::string pass_help = "pass to run (repeatable, in order):";
  for (const Pass &p : all_passes()) pass_help += fmt::format(" {} ({})", p.name, p.description);
  cmd->add_option("--pass", a->passes, pass_help)->allow_extra_args(false);
  cmd->add_option("--kir-pass", a->kir_passes, kir_pass_help())
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("--verify-only", a->verify_only, "parse and verify only; print nothing");
  cmd->add_flag("--split-input-file", a->split_input_file,
                "process each part between '// -----' lines on its own");
  cmd->callback([a] {
    if (!opt(*a)) throw CLI::RuntimeError(1);
  });
}

} // namespace kiln::tools
