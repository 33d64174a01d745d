// The measuring part shared by `kiln bench` (bench_cmd.cpp) and bench/kiln_bench: runs a loaded
// module through the C API for a warm-up and two timed phases, and keeps every sample. Uses
// only the runtime's C API and the standard library, so kiln_bench stays free of compiler code.
#pragma once

#include "kiln/kiln.h"

#include <cstddef>
#include <functional>
#include <vector>

namespace kiln::bench {

// Middle element of the sorted samples (the upper one of an even count); 0 when empty.
double median(std::vector<double> v);
// Nearest-rank percentile `p` in (0, 100] of the samples; 0 when empty.
double percentile(std::vector<double> v, double p);
// CPU seconds (user + system, every thread of the process) used so far.
double cpu_seconds();
// Peak resident set size of the process so far, in KiB.
long peak_rss_kib();

struct Options {
  int warmup = 3;            // untimed calls first
  double warmup_seconds = 0; // warm-up also lasts at least this long (GPU clocks ramp up)
  int iterations = 20;       // calls per timed phase
  // Called after every call with the calls made and the calls the run will make at least
  // (warm-up by count, both phases and the one untimed re-recording call); may be empty.
  std::function<void(int done, int total)> progress;
};

// Samples of one measurement; every vector of times has `iterations` entries.
struct Samples {
  // Phase 1, plain calls (no per-command timestamps): wall time of kiln_module_run_with_options
  // on the host, and the device span (0 when the device has no timestamps).
  std::vector<double> host_ms, span_ms;
  // Phase 2, calls with per-command timestamps: the commands' device times summed, the span,
  // and per command (index = command index) its time in each call. Commands that run together
  // share one time, reported on the first of them (kiln_run_options).
  std::vector<double> device_ms, span_timed_ms;
  std::vector<std::vector<double>> command_ms;
  double cpu_ms_per_call = 0; // phase 1, all threads, mean
  long rss_after_first_kib = 0;
  int calls = 0; // every call made, warm-up included
};

// Runs `module` (warm-up, then `iterations` plain calls, then one untimed call that records
// the frame again with timers, then `iterations` calls with per-command timestamps). Outputs
// are poisoned (0xff bytes: NaN for floats) before every call. On failure returns the
// runtime's status (the caller frees it) and `out` holds the samples so far.
kiln_status measure(kiln_module *module, const kiln_tensor *inputs, size_t input_count,
                    kiln_tensor *outputs, size_t output_count, const Options &options,
                    Samples *out);

} // namespace kiln::bench
