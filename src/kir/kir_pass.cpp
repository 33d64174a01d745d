// The kernel-IR pass registry and pipeline runner.
#include "kir/kir_pass.h"

#include <fmt/format.h>

namespace kiln::kir {

namespace {

Result<Kernel> run_simplify(const Kernel &k) { return simplify(k); }
Result<Kernel> run_unroll(const Kernel &k) { return unroll_long_loops(k); }
Result<Kernel> run_verify(const Kernel &k) {
  KILN_TRY(verify(k));
  return k;
}

} // namespace

const std::vector<KirPass> &all_kir_passes() {
  static const std::vector<KirPass> passes = {
      {"simplify", "constant folding and algebraic identities", run_simplify},
      {"unroll-long-loops", "unroll innermost constant loops of >= 1024 iterations by 8",
       run_unroll},
      {"verify", "check types, scopes, buffers and permissions", run_verify},
  };
  return passes;
}

const KirPass *find_kir_pass(std::string_view name) {
  for (const KirPass &p : all_kir_passes())
    if (name == p.name) return &p;
  return nullptr;
}

std::vector<const KirPass *> default_kir_pipeline(bool verify) {
  // Long innermost loops are unrolled: fewer back-edges per invocation (llvmpipe caps them);
  // simplify before, to make extents constant, and after, to fold the unrolled indices.
  std::vector<const KirPass *> p = {find_kir_pass("simplify"), find_kir_pass("unroll-long-loops"),
                                    find_kir_pass("simplify")};
  if (verify) p.push_back(find_kir_pass("verify"));
  return p;
}

Result<Kernel> run_kir_passes(Kernel k, const std::vector<const KirPass *> &passes,
                              const KirPassHook &after_each) {
  for (const KirPass *p : passes) {
    KILN_ASSERT(p != nullptr, "kir: null pass in a pipeline");
    auto out = p->run(k);
    if (!out) return out.status().with_context(fmt::format("pass {}", p->name));
    k = std::move(*out);
    if (after_each) KILN_TRY(after_each(p->name, k));
  }
  return k;
}

} // namespace kiln::kir
