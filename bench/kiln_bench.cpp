// kiln_bench: loads a .kiln artifact with the runtime only (no compiler code), runs it on
// .npy inputs, checks outputs against golden .npy files, and reports timing and host memory.
//
//   kiln_bench ARTIFACT --device vulkan --input NAME=FILE.npy ... [--golden NAME=FILE.npy ...]
//              [--warmup N] [--warmup-seconds S] [--iters N] [--rtol R] [--atol A] [--profile N]
//
// --profile N also prints the N commands with the largest median device time (name,
// workgroups, bytes bound, share of the total), for finding where a model's time goes.
// Prints: the max error per output (outputs are poisoned with NaN before every run), the
// median host time and device span per call (plain calls: no per-command timestamps), the
// median summed device time per call (a second set of calls timing each command), and the
// CPU time per call (all threads: on lavapipe, the kernels' work), and the peak resident set size after loading, after the first run and after all runs (so growth
// across repeated calls is visible). Exit status 1 on a mismatch or error.
// Links libkiln_runtime and the .npy reader only: it runs where the compiler cannot (the GPU
// machine), and is linked with static libstdc++ for that reason.
#include "kiln/kiln.h"
#include "support/half.h"
#include "support/npy.h"
#include "tools/bench_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

using kiln::bench::median;
using kiln::bench::peak_rss_kib;

int fail(kiln_status st, const char *what) {
  std::fprintf(stderr, "error: %s: %s\n", what, kiln_status_message(st));
  kiln_status_free(st);
  return 1;
}

double f32_at(const kiln_tensor_info &info, const void *data, size_t i) {
  if (info.dtype == KILN_F32) return static_cast<const float *>(data)[i];
  if (info.dtype == KILN_F64) return static_cast<const double *>(data)[i];
  if (info.dtype == KILN_I64) return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  if (info.dtype == KILN_I32) return static_cast<const int32_t *>(data)[i];
  if (info.dtype == KILN_F16) return kiln::f16_to_f32(static_cast<const uint16_t *>(data)[i]);
  if (info.dtype == KILN_BF16) return kiln::bf16_to_f32(static_cast<const uint16_t *>(data)[i]);
  return NAN;  // a dtype the comparison does not read: reported as a mismatch, never as a pass
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kiln_bench ARTIFACT [--device D] [--input N=F.npy]... "
                         "[--golden N=F.npy]... [--warmup N] [--warmup-seconds S] [--iters N] [--rtol R] "
                         "[--atol A] [--profile N]\n");
    return 2;
  }
  std::string artifact = argv[1], device = "vulkan";
  std::map<std::string, std::string> inputs, golden;
  int warmup = 3, iters = 20;
  // Warm-up also lasts at least this long: a GPU's driver raises its clock only after some
  // hundreds of ms of load, so a count of short calls can end while it still idles.
  double warmup_seconds = 0;
  double rtol = 1e-4, atol = 1e-5;
  int profile = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    auto split = [&](std::map<std::string, std::string> &m) {
      auto p = v.find('=');
      if (p != std::string::npos) m[v.substr(0, p)] = v.substr(p + 1);
    };
    if (k == "--device") device = v;
    else if (k == "--input") split(inputs);
    else if (k == "--golden") split(golden);
    else if (k == "--warmup") warmup = std::atoi(v.c_str());
    else if (k == "--warmup-seconds") warmup_seconds = std::atof(v.c_str());
    else if (k == "--iters") iters = std::atoi(v.c_str());
    else if (k == "--rtol") rtol = std::atof(v.c_str());
    else if (k == "--atol") atol = std::atof(v.c_str());
    else if (k == "--profile") profile = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  long rss_start = peak_rss_kib();
  kiln_device *dev = nullptr;
  if (kiln_status st = kiln_device_open(device.c_str(), &dev)) return fail(st, "open device");
  long rss_device = peak_rss_kib();
  kiln_device_info dinfo{};
  if (kiln_status st = kiln_device_info_get(dev, &dinfo)) return fail(st, "device info");
  kiln_module *mod = nullptr;
  if (kiln_status st = kiln_module_load_file(dev, artifact.c_str(), &mod)) return fail(st, "load");
  long rss_loaded = peak_rss_kib();

  std::vector<kiln::NpyArray> in_data(kiln_module_input_count(mod));
  std::vector<kiln_tensor> in(in_data.size());
  for (size_t i = 0; i < in.size(); ++i) {
    kiln_tensor_info info{};
    if (kiln_status st = kiln_module_input_info(mod, i, &info)) return fail(st, "input info");
    auto it = inputs.find(info.name);
    if (it == inputs.end()) {
      std::fprintf(stderr, "error: input '%s' is missing\n", info.name);
      return 1;
    }
    auto a = kiln::read_npy(it->second);
    if (!a) {
      std::fprintf(stderr, "error: %s\n", a.status().message().c_str());
      return 1;
    }
    in_data[i] = std::move(a).value();
    in[i] = kiln_tensor{static_cast<kiln_dtype>(in_data[i].dtype),
                        static_cast<uint32_t>(in_data[i].shape.size()), in_data[i].shape.data(),
                        in_data[i].bytes.data(), in_data[i].bytes.size()};
  }
  size_t n_out = kiln_module_output_count(mod);
  std::vector<kiln_tensor_info> out_info(n_out);
  std::vector<std::vector<uint8_t>> out_data(n_out);
  std::vector<kiln_tensor> out(n_out);
  for (size_t i = 0; i < n_out; ++i) {
    if (kiln_status st = kiln_module_output_info(mod, i, &out_info[i])) return fail(st, "output info");
    out_data[i].resize(out_info[i].bytes);
    out[i] = kiln_tensor{out_info[i].dtype, out_info[i].rank, out_info[i].shape,
                         out_data[i].data(), out_data[i].size()};
  }
  // Two timed phases of `iters` calls: plain calls (host time, span: what an application
  // gets, no per-command timestamps recorded), then calls that also time each command
  // (device time, the profile, and the span with those timestamps in it); bench_core.h.
  kiln::bench::Options options;
  options.warmup = warmup;
  options.warmup_seconds = warmup_seconds;
  options.iterations = iters;
  kiln::bench::Samples samples;
  if (kiln_status st = kiln::bench::measure(mod, in.data(), in.size(), out.data(), out.size(),
                                            options, &samples))
    return fail(st, "run");
  const size_t n_commands = kiln_module_command_count(mod);
  const std::vector<std::vector<double>> &per_cmd_ms = samples.command_ms;
  const long rss_first = samples.rss_after_first_kib;
  const double cpu_ms = samples.cpu_ms_per_call;
  const int calls = samples.calls;
  long rss_end = peak_rss_kib();

  int rc = 0;
  for (size_t i = 0; i < n_out; ++i) {
    auto g = golden.find(out_info[i].name);
    if (g == golden.end()) continue;
    auto want = kiln::read_npy(g->second);
    if (!want || want->bytes.size() != out_data[i].size() ||
        static_cast<kiln_dtype>(want->dtype) != out_info[i].dtype) {
      std::fprintf(stderr, "error: golden '%s' does not match the output's dtype/size\n",
                   g->second.c_str());
      return 1;
    }
    double max_abs = 0;
    bool ok = true;
    size_t n = out_info[i].bytes / kiln_dtype_size(out_info[i].dtype);
    for (size_t k = 0; k < n; ++k) {
      double a = f32_at(out_info[i], out_data[i].data(), k);
      double b = f32_at(out_info[i], want->bytes.data(), k);
      double err = std::fabs(a - b);
      if (!(err <= atol + rtol * std::fabs(b))) ok = false;
      if (err > max_abs || std::isnan(err)) max_abs = std::isnan(err) ? INFINITY : err;
    }
    std::printf("output '%s': max abs err %.3g vs golden (rtol %g, atol %g): %s\n",
                out_info[i].name, max_abs, rtol, atol, ok ? "OK" : "MISMATCH");
    if (!ok) rc = 1;
  }
  if (profile > 0 && iters > 0) {
    std::vector<std::pair<double, size_t>> by_time;
    double total = 0;
    for (size_t c = 0; c < per_cmd_ms.size(); ++c) {
      by_time.emplace_back(median(per_cmd_ms[c]), c);
      total += by_time.back().first;
    }
    std::sort(by_time.rbegin(), by_time.rend());
    std::printf("profile: top %d of %zu commands by median device ms (sum of medians %.3f)\n",
                profile, by_time.size(), total);
    for (size_t r = 0; r < by_time.size() && r < static_cast<size_t>(profile); ++r) {
      kiln_command_info ci{};
      if (kiln_status st = kiln_module_command_info(mod, by_time[r].second, &ci))
        return fail(st, "command info");
      std::printf("  #%-4zu %8.3f ms %5.1f%%  %-40s wg %ux%ux%u  %.1f MiB\n", by_time[r].second,
                  by_time[r].first, total > 0 ? 100 * by_time[r].first / total : 0.0, ci.name,
                  ci.workgroups[0], ci.workgroups[1], ci.workgroups[2],
                  static_cast<double>(ci.bytes) / (1 << 20));
    }
  }
  std::printf("device: %s\n", dinfo.name);
  // device: the commands' own times summed; span: first start to last end, barriers and gaps
  // between commands included.
  std::printf("timed calls (per-command timestamps on): span %.3f ms\n",
              median(samples.span_timed_ms));
  std::printf("commands: %zu; median of %d calls: host %.3f ms, device %.3f ms, span %.3f ms\n",
              n_commands, iters, median(samples.host_ms), median(samples.device_ms),
              median(samples.span_ms));
  // CPU time per call: on a CPU device (lavapipe) the work itself, and comparable between
  // runs on a loaded machine where wall time is not.
  std::printf("cpu: %.3f ms per call (all threads, mean of %d calls)\n", cpu_ms, iters);
  std::printf("peak RSS KiB: start %ld, device open %ld, after load %ld, after first run %ld, "
              "after %d runs %ld\n",
              rss_start, rss_device, rss_loaded, rss_first, calls, rss_end);
  kiln_module_release(mod);
  kiln_device_release(dev);
  return rc;
}
