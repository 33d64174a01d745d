// The kernel-IR stages of LowerCtx::dispatch (kir_stages.h).
#include "compiler/lowering/kir_stages.h"

#include "kir/kir_parser.h"
#include "kir/kir_pass.h"

#include <fmt/format.h>

#include <cstdio>

namespace kiln::compiler {

std::vector<std::string> kir_stage_names() {
  std::vector<std::string> names = {"lower", "split-bindings", "index-ranges"};
  for (const kir::KirPass &p : kir::all_kir_passes()) names.emplace_back(p.name);
  names.emplace_back("all");
  return names;
}

bool is_kir_stage(std::string_view name) {
  for (const std::string &s : kir_stage_names())
    if (s == name) return true;
  return false;
}

Status after_kir_stage(const Op &op, std::string_view stage, const kir::Kernel &k,
                       const CompileOptions &o) {
  if (o.print_kir_after == "all" || o.print_kir_after == stage) {
    // A comment line, so that the dump parses as kernel-IR text (kiln opt FILE.kir).
    const std::string text = kir::print(k);
    fmt::print(stderr, "// kir after {}: {}\n{}", stage, op.describe(), text);
  }
  if (o.check_kir_round_trip) {
    Status s = kir::check_round_trip(k);
    if (!s)
      return Status::error(fmt::format("{}: internal error: kernel '{}' after {}: {}",
                                       op.describe(), k.name, stage, s.message()));
  }
  return Status::ok();
}

Result<kir::Kernel> run_kir_stages(const Op &op, kir::Kernel k, const CompileOptions &o) {
  const std::string name = k.name;
  Status instrumentation;
  auto out = kir::run_kir_passes(std::move(k), kir::default_kir_pipeline(o.verify_kernels),
                                 [&](std::string_view pass, const kir::Kernel &r) {
                                   instrumentation = after_kir_stage(op, pass, r, o);
                                   return instrumentation;
                                 });
  if (!instrumentation) return instrumentation;
  if (!out)
    return Status::error(fmt::format("{}: internal error: generated kernel '{}' is invalid: {}",
                                     op.describe(), name, out.status().message()));
  return out;
}

} // namespace kiln::compiler
