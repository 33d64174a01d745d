// kiln opt on kernel-IR text (FILE.kir, or any input with --kir-pass): parse every kernel,
// run the named kernel-IR passes in order on each, print the results.
#include "kir/kir_parser.h"
#include "kir/kir_pass.h"
#include "tools/tools.h"

#include <fmt/format.h>

namespace kiln::tools {

bool is_kir_input(const std::string &file, const std::vector<std::string> &kir_passes) {
  return !kir_passes.empty() ||
         (file.size() > 4 && file.compare(file.size() - 4, 4, ".kir") == 0);
}

std::string kir_pass_help() {
  std::string help = "kernel-IR passes to run in order (comma-separated, repeatable):";
  for (const kir::KirPass &p : kir::all_kir_passes())
    help += fmt::format(" {} ({})", p.name, p.description);
  return help;
}

Result<std::string> process_kir(const std::string &file, const std::string &text,
                                const std::vector<std::string> &passes, bool verify_only) {
  std::vector<const kir::KirPass *> pipeline;
  for (const std::string &name : passes) {
    const kir::KirPass *p = kir::find_kir_pass(name);
    if (!p) return Status::error(fmt::format("unknown kernel-IR pass '{}'", name));
    pipeline.push_back(p);
  }
  KILN_ASSIGN(std::vector<kir::Kernel> kernels, kir::parse_kernels(text, file));
  std::string out;
  for (kir::Kernel &k : kernels) {
    auto r = kir::run_kir_passes(std::move(k), pipeline);
    if (!r) return r.status();
    if (!verify_only) out += kir::print(*r);
  }
  return out;
}

} // namespace kiln::tools
