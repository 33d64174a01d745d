// kiln bench: latency of an artifact on a device through the runtime's C API: median and p90
// of the host time per call after a warm-up, the device time from per-command timestamps, and
// a per-command table (kernel, the graph ops fused into it, workgroups, median device time
// and its share). Inputs: --input NAME=FILE.npy, others seeded random (or zero) data of the
// artifact's signature. The measuring loop is bench_core (shared with bench/kiln_bench).
#include "ir/graph.h"
#include "kiln/artifact/kiln_generated.h"
#include "kiln/kiln.h"
#include "tools/bench_core.h"
#include "tools/progress.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

namespace kiln::tools {

namespace {

struct BenchArgs {
  std::string artifact, device = "vulkan", fill = "random";
  std::vector<std::string> inputs;
  int warmup = 3, iterations = 20;
  double warmup_seconds = 0;
  bool json = false;
};

struct Released {
  void operator()(kiln_device *d) const { kiln_device_release(d); }
  void operator()(kiln_module *m) const { kiln_module_release(m); }
};

Status from_runtime(kiln_status s, const std::string &what) {
  if (!s) return Status::ok();
  std::string message = fmt::format("{}: {}", what, kiln_status_message(s));
  kiln_status_free(s);
  return Status::error(message);
}

// One row of the table.
struct CommandRow {
  kiln_command_info info{};
  std::vector<std::string> ops;
  size_t group_head = 0;                 // the command whose time includes this one's
  std::optional<double> device_ms, share; // none without device time, or when grouped
};

std::vector<std::string> split_ops(const char *ops) {
  std::vector<std::string> out;
  std::string cur;
  for (const char *p = ops ? ops : ""; *p; ++p) {
    if (*p != ',') {
      cur += *p;
      continue;
    }
    out.push_back(cur);
    cur.clear();
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string join(const std::vector<std::string> &v, std::string_view sep) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

// Input tensors: the files named by --input, seeded random or zero data for the others.
Status make_inputs(const BenchArgs &a, kiln_module *m, std::vector<Tensor> *out) {
  std::map<std::string, std::string> files;
  for (const auto &s : a.inputs) {
    auto p = s.find('=');
    if (p == std::string::npos) return Status::error(fmt::format("--input '{}' is not NAME=FILE", s));
    files[s.substr(0, p)] = s.substr(p + 1);
  }
  for (size_t i = 0; i < kiln_module_input_count(m); ++i) {
    kiln_tensor_info info{};
    KILN_TRY(from_runtime(kiln_module_input_info(m, i, &info), "input info"));
    auto it = files.find(info.name);
    if (it != files.end()) {
      KILN_ASSIGN(Tensor t, load_tensor_file(it->second));
      out->push_back(std::move(t));
      files.erase(it);
      continue;
    }
    TensorType t{static_cast<DType>(info.dtype), Shape(info.shape, info.shape + info.rank), true};
    if (a.fill == "zero") out->emplace_back(t.dtype, t.dims); // zero-initialised
    else out->push_back(random_input(t, 1234 + static_cast<uint32_t>(i)));
  }
  if (!files.empty())
    return Status::error(fmt::format("the artifact has no input named '{}'", files.begin()->first));
  return Status::ok();
}

// Per command: info, fused ops, the head of its group (commands without a barrier before them
// run together and share the time reported on the group's first command), its median time.
Result<std::vector<CommandRow>> command_rows(kiln_module *m, const fb::Model &model,
                                             const bench::Samples &s, bool device_time) {
  std::vector<CommandRow> rows(kiln_module_command_count(m));
  double total = 0;
  for (size_t c = 0; c < rows.size(); ++c) {
    CommandRow &r = rows[c];
    KILN_TRY(from_runtime(kiln_module_command_info(m, c, &r.info), "command info"));
    r.ops = split_ops(r.info.ops);
    const fb::CommandEntry *e = model.commands() ? model.commands()->Get(c) : nullptr;
    const bool waits = !e || e->waits() || c == 0;
    r.group_head = waits ? c : rows[c - 1].group_head;
    if (device_time && r.group_head == c) {
      r.device_ms = bench::median(s.command_ms[c]);
      total += *r.device_ms;
    }
  }
  for (CommandRow &r : rows)
    if (r.device_ms) r.share = total > 0 ? *r.device_ms / total : 0.0;
  return rows;
}

std::string workgroups_str(const kiln_command_info &i) {
  if (i.kind == KILN_COMMAND_COPY) return "-";
  return fmt::format("{}x{}x{}", i.workgroups[0], i.workgroups[1], i.workgroups[2]);
}

nlohmann::json stat_json(const std::vector<double> &v, bool available) {
  if (!available) return nullptr;
  return {{"median", bench::median(v)}, {"p90", bench::percentile(v, 90)}};
}

void print_json(const BenchArgs &a, const kiln_device_info &d, const fb::Model &model,
                const bench::Samples &s, bool device_time, const std::vector<CommandRow> &rows) {
  nlohmann::json cmds = nlohmann::json::array();
  for (size_t c = 0; c < rows.size(); ++c) {
    const CommandRow &r = rows[c];
    nlohmann::json j = {
        {"index", c},
        {"kind", r.info.kind == KILN_COMMAND_COPY ? "copy" : "dispatch"},
        {"kernel", r.info.name},
        {"ops", r.ops},
        {"workgroups", {r.info.workgroups[0], r.info.workgroups[1], r.info.workgroups[2]}},
        {"bytes", r.info.bytes},
        {"device_ms", r.device_ms ? nlohmann::json(*r.device_ms) : nlohmann::json(nullptr)},
        {"share", r.share ? nlohmann::json(*r.share) : nlohmann::json(nullptr)},
        {"runs_with", r.group_head == c ? nlohmann::json(nullptr) : nlohmann::json(r.group_head)}};
    cmds.push_back(std::move(j));
  }
  nlohmann::json out = {
      {"artifact", a.artifact},
      {"target", model.target() ? model.target()->str() : ""},
      {"device",
       {{"uri", std::string(d.uri)},
        {"name", std::string(d.name)},
        {"driver", std::string(d.driver)},
        {"timestamps", d.timestamps != 0}}},
      {"warmup", a.warmup},
      {"iterations", a.iterations},
      {"calls", s.calls},
      {"host_ms", stat_json(s.host_ms, true)},
      {"device_ms", stat_json(s.device_ms, device_time)},
      {"span_ms", stat_json(s.span_ms, device_time)},
      {"cpu_ms_per_call", s.cpu_ms_per_call},
      {"commands", std::move(cmds)}};
  fmt::print("{}\n", out.dump(1));
}

std::string ms_or_na(const std::vector<double> &v, bool available, double pct) {
  if (!available) return "n/a";
  return fmt::format("{:.3f} ms", pct == 50 ? bench::median(v) : bench::percentile(v, pct));
}

void print_text(const BenchArgs &a, const kiln_device_info &d, const fb::Model &model,
                const bench::Samples &s, bool device_time, const std::vector<CommandRow> &rows) {
  fmt::print("artifact: {} (target {})\n", a.artifact,
             model.target() ? model.target()->str() : "?");
  fmt::print("device: {} ({}, {})\n", d.uri, d.name, d.driver);
  fmt::print("calls: {} warm-up, {} timed, {} timed with per-command timestamps\n",
             s.calls - 2 * a.iterations - (a.iterations > 0 ? 1 : 0), a.iterations, a.iterations);
  fmt::print("host time:   median {}, p90 {}\n", ms_or_na(s.host_ms, true, 50),
             ms_or_na(s.host_ms, true, 90));
  fmt::print("device time: median {}, p90 {}{}\n", ms_or_na(s.device_ms, device_time, 50),
             ms_or_na(s.device_ms, device_time, 90),
             device_time ? " (commands' own times summed)" : " (the device records no timestamps)");
  if (device_time)
    fmt::print("device span: median {}, p90 {} (first command's start to last one's end)\n",
               ms_or_na(s.span_ms, true, 50), ms_or_na(s.span_ms, true, 90));
  fmt::print("cpu time: {:.3f} ms per call (all threads)\n", s.cpu_ms_per_call);
  size_t kw = 6, ww = 10;
  for (const CommandRow &r : rows) {
    kw = std::max(kw, std::string_view(r.info.name).size());
    ww = std::max(ww, workgroups_str(r.info).size());
  }
  fmt::print("\n{:>5}  {:<{}}  {:<{}}  {:>10}  {:>6}  {}\n", "cmd", "kernel", kw, "workgroups", ww,
             "device ms", "share", "ops");
  for (size_t c = 0; c < rows.size(); ++c) {
    const CommandRow &r = rows[c];
    std::string ms = "n/a", share = "n/a";
    if (r.group_head != c) {
      ms = fmt::format("with #{}", r.group_head);
      share = "";
    } else if (r.device_ms) {
      ms = fmt::format("{:.3f}", *r.device_ms);
      share = fmt::format("{:.1f}%", 100 * *r.share);
    }
    std::string ops = r.info.kind == KILN_COMMAND_COPY ? "-" : join(r.ops, ",");
    fmt::print("{:>5}  {:<{}}  {:<{}}  {:>10}  {:>6}  {}\n", c, r.info.name, kw,
               workgroups_str(r.info), ww, ms, share, ops.empty() ? "(not recorded)" : ops);
  }
  if (device_time && std::any_of(rows.begin(), rows.end(), [&](const CommandRow &r) {
        return &r != &rows[r.group_head];
      }))
    fmt::print("(\"with #N\": runs together with command N, no barrier between them; its time "
               "is part of N's)\n");
}

Status bench(const BenchArgs &a) {
  if (a.iterations < 1) return Status::error("--iterations must be at least 1");
  if (a.warmup < 0) return Status::error("--warmup must not be negative");
  std::ifstream in(a.artifact, std::ios::binary);
  if (!in) return Status::error(fmt::format("cannot open '{}'", a.artifact));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  kiln_device *dev = nullptr;
  KILN_TRY(from_runtime(kiln_device_open(a.device.c_str(), &dev),
                        fmt::format("device '{}'", a.device)));
  std::unique_ptr<kiln_device, Released> device(dev);
  kiln_device_info dinfo{};
  KILN_TRY(from_runtime(kiln_device_info_get(dev, &dinfo), "device info"));
  kiln_module *m = nullptr;
  KILN_TRY(from_runtime(kiln_module_load_memory(dev, bytes.data(), bytes.size(), &m), a.artifact));
  std::unique_ptr<kiln_module, Released> module(m);
  const fb::Model &model = *fb::GetModel(bytes.data()); // verified by the load

  std::vector<Tensor> inputs;
  KILN_TRY(make_inputs(a, m, &inputs));
  std::vector<kiln_tensor> in_t;
  for (Tensor &t : inputs)
    in_t.push_back(kiln_tensor{static_cast<kiln_dtype>(t.dtype()), static_cast<uint32_t>(t.rank()),
                               t.shape().data(), t.raw_mut(), t.nbytes()});
  std::vector<std::vector<uint8_t>> out_data(kiln_module_output_count(m));
  std::vector<kiln_tensor> out_t;
  for (size_t i = 0; i < out_data.size(); ++i) {
    kiln_tensor_info info{};
    KILN_TRY(from_runtime(kiln_module_output_info(m, i, &info), "output info"));
    out_data[i].resize(info.bytes);
    out_t.push_back(kiln_tensor{info.dtype, info.rank, info.shape, out_data[i].data(), info.bytes});
  }

  ProgressLine progress(std::chrono::milliseconds(500));
  bench::Options options;
  options.warmup = a.warmup;
  options.warmup_seconds = a.warmup_seconds;
  options.iterations = a.iterations;
  options.progress = [&](int done, int total) {
    progress.update(fmt::format("kiln bench: {} of {} calls", done, std::max(done, total)));
  };
  bench::Samples s;
  KILN_TRY(from_runtime(
      bench::measure(m, in_t.data(), in_t.size(), out_t.data(), out_t.size(), options, &s),
      "run"));
  progress.clear();
  // Device time only where the device has timestamps and reported some: never a made-up 0.
  const bool device_time =
      dinfo.timestamps != 0 &&
      std::any_of(s.device_ms.begin(), s.device_ms.end(), [](double v) { return v > 0; });
  KILN_ASSIGN(auto rows, command_rows(m, model, s, device_time));
  if (a.json) print_json(a, dinfo, model, s, device_time, rows);
  else print_text(a, dinfo, model, s, device_time, rows);
  return Status::ok();
}

} // namespace

void add_bench_command(CLI::App &app) {
  auto a = std::make_shared<BenchArgs>();
  auto *cmd = app.add_subcommand(
      "bench", "Time an artifact on a device: host and device latency, per-dispatch profile");
  cmd->add_option("artifact", a->artifact, "compiled artifact (.kiln)")->required();
  cmd->add_option("--device", a->device, "vulkan, vulkan:N, cpu or null (default vulkan)");
  cmd->add_option("--input", a->inputs,
                  "NAME=FILE.npy (repeatable); other inputs get seeded data (--fill)");
  cmd->add_option("--fill", a->fill, "data of inputs not given: random (default) or zero")
      ->check(CLI::IsMember({"random", "zero"}));
  cmd->add_option("--warmup", a->warmup, "untimed calls first (default 3)");
  cmd->add_option("--warmup-seconds", a->warmup_seconds,
                  "warm up for at least this long too (GPU clocks ramp up under load)");
  cmd->add_option("--iterations", a->iterations,
                  "timed calls per phase (default 20): host-time calls, then as many with "
                  "per-command timestamps");
  cmd->add_flag("--json", a->json, "print one JSON object instead of the text report");
  cmd->callback([a] {
    Status s = bench(*a);
    if (!s) {
      fmt::print(stderr, "error: {}\n", s.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
