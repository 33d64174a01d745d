// kiln opt: parses text IR, runs passes, prints text IR.
#include "ir/text.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kiln::tools {

namespace {

struct OptArgs {
  std::string file;
  std::vector<std::string> passes;
  bool verify_only = false;
};

Status opt(const OptArgs &a) {
  std::string text;
  if (a.file == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream f(a.file);
    if (!f) return Status::error(fmt::format("{}: cannot open", a.file));
    std::stringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  KILN_ASSIGN(auto m, parse_module(core_ops(), text, a.file));
  for (auto &fn : m->functions) KILN_TRY(verify_function(*fn));
  for (const auto &name : a.passes) {
    const Pass *p = find_pass(name);
    if (!p) return Status::error(fmt::format("unknown pass '{}'", name));
    KILN_TRY(p->run(*m).with_context(fmt::format("pass {}", name)));
    for (auto &fn : m->functions) KILN_TRY(verify_function(*fn).with_context(fmt::format("after pass {}", name)));
  }
  fmt::print("{}", print_module(*m));
  return Status::ok();
}

} // namespace

void add_opt_command(CLI::App &app) {
  auto a = std::make_shared<OptArgs>();
  auto *cmd = app.add_subcommand("opt", "Parse text IR, run passes, print text IR");
  cmd->add_option("file", a->file, "text IR file (.kgraph) or - for stdin")->required();
  cmd->add_option("--pass", a->passes, "pass to run (repeatable, in order)");
  cmd->callback([a] {
    Status st = opt(*a);
    if (!st) {
      fmt::print(stderr, "error: {}\n", st.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
