// run_pipeline: runs named passes in order, with IR printing, timing and verification after
// each pass (PassInstrumentation).
#include "ir/op_registry.h"
#include "ir/text.h"
#include "passes/pass.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <ostream>

namespace kiln {

const std::vector<std::string> &default_pipeline() {
  static const std::vector<std::string> names = {"fold-constants", "fold-batch-norm", "canonicalize",
                                                "cse", "fuse-composites", "fuse-attention",
                                                "dce"};
  return names;
}

namespace {

Status check_names(const std::vector<std::string> &passes, const PassInstrumentation &pi) {
  for (const auto &n : passes)
    if (!find_pass(n)) return Status::error(fmt::format("unknown pass '{}'", n));
  for (const auto &n : pi.print_after)
    if (!find_pass(n)) return Status::error(fmt::format("unknown pass '{}' (print-ir-after)", n));
  return Status::ok();
}

bool prints_after(const PassInstrumentation &pi, const std::string &name) {
  return pi.ir_out && (pi.print_after_all || std::find(pi.print_after.begin(),
                                                       pi.print_after.end(),
                                                       name) != pi.print_after.end());
}

} // namespace

Status run_pipeline(Module &m, const std::vector<std::string> &passes,
                    const PassInstrumentation &pi) {
  KILN_TRY(check_names(passes, pi));
  for (const auto &name : passes) {
    const Pass *p = find_pass(name);
    auto start = std::chrono::steady_clock::now();
    KILN_TRY(p->run(m).with_context("pass " + name));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (pi.timings) pi.timings->push_back({name, secs});
    if (pi.verify_each)
      for (auto &f : m.functions) KILN_TRY(verify_function(*f).with_context("after pass " + name));
    if (prints_after(pi, name)) *pi.ir_out << "// IR after " << name << "\n" << print_module(m);
  }
  return Status::ok();
}

Status run_pipeline(Module &m, const PassInstrumentation &pi) {
  return run_pipeline(m, default_pipeline(), pi);
}

} // namespace kiln
