// Measurement loop of kiln bench and kiln_bench (bench_core.h).
#include "tools/bench_core.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace kiln::bench {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size())));
  return v[i - 1];
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

kiln_status measure(kiln_module *module, const kiln_tensor *inputs, size_t input_count,
                    kiln_tensor *outputs, size_t output_count, const Options &options,
                    Samples *out) {
  *out = Samples{};
  const int iters = std::max(0, options.iterations);
  std::vector<uint64_t> cmd_ns(kiln_module_command_count(module));
  uint64_t span_ns = 0;
  // Plain calls give what an application gets (no per-command timestamps recorded); timed
  // calls also time each command (the profile), which can add waits on some GPUs.
  const kiln_run_options plain{nullptr, 0, &span_ns};
  const kiln_run_options timed_cmds{cmd_ns.data(), cmd_ns.size(), &span_ns};
  out->command_ms.resize(cmd_ns.size());
  double cpu_start = 0;
  const auto warm_until =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(options.warmup_seconds);
  const int total = std::max(0, options.warmup) + 2 * iters + (iters > 0 ? 1 : 0);
  bool rerecorded = false;
  for (int timed = 0; timed < 2 * iters; ++out->calls) {
    if (options.progress && out->calls > 0) options.progress(out->calls, total);
    const bool warming =
        out->calls < options.warmup || std::chrono::steady_clock::now() < warm_until;
    const bool phase2 = timed >= iters;
    if (!warming && timed == 0) cpu_start = cpu_seconds();
    for (size_t i = 0; i < output_count; ++i) // poison (NaN for floats)
      if (outputs[i].data) std::memset(outputs[i].data, 0xff, outputs[i].bytes);
    const auto t0 = std::chrono::steady_clock::now();
    if (kiln_status st = kiln_module_run_with_options(module, inputs, input_count, outputs,
                                                      output_count, phase2 ? &timed_cmds : &plain))
      return st;
    const auto t1 = std::chrono::steady_clock::now();
    if (out->calls == 0) out->rss_after_first_kib = peak_rss_kib();
    if (warming) continue;
    if (timed == iters - 1) out->cpu_ms_per_call = 1000 * (cpu_seconds() - cpu_start) / iters;
    if (phase2 && !rerecorded) { // this call recorded the frame again (with timers): untimed
      rerecorded = true;
      continue;
    }
    ++timed;
    if (!phase2) {
      out->host_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      out->span_ms.push_back(static_cast<double>(span_ns) / 1e6);
      continue;
    }
    uint64_t ns = 0;
    for (size_t c = 0; c < cmd_ns.size(); ++c) {
      ns += cmd_ns[c];
      out->command_ms[c].push_back(static_cast<double>(cmd_ns[c]) / 1e6);
    }
    out->device_ms.push_back(static_cast<double>(ns) / 1e6);
    out->span_timed_ms.push_back(static_cast<double>(span_ns) / 1e6);
  }
  if (options.progress && out->calls > 0) options.progress(out->calls, out->calls);
  return nullptr;
}

} // namespace kiln::bench
