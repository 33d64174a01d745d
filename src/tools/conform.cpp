// kiln conform: runs a folder of ONNX backend tests (node/ layout: TEST/model.onnx and
// TEST/test_data_set_N/{input,output}_K.pb) or of models (NAME.onnx, NAME.in.INPUT.npy,
// NAME.out.OUTPUT.npy; NAME.tflite or NNEF folders NAME/graph.nnef with NAME.in.K.npy and
// NAME.out.K.npy by position) and compares with the expected outputs.
#include "exec/executor.h"
#include "frontend/model_import.h"
#include "passes/pass.h"
#include "tools/device_runner.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

namespace kiln::tools {

namespace fs = std::filesystem;

namespace {

struct ConformArgs {
  std::string dir, device = "cpu-ref", filter, json, expect, write_expect;
  double rtol = -1, atol = -1;
  int jobs = 0;
  bool verbose = false;
  compiler::ScheduleMode schedule = compiler::ScheduleMode::automatic;
  compiler::RowReductionSchedule row_reduction;
  compiler::WindowSchedule window;
  int winograd = 4;
  compiler::ParallelSchedule parallel;
};

struct TestCase {
  std::string name;
  fs::path model;
  // One entry per data set: input files (in param order or by name) and output files.
  struct DataSet {
    std::vector<std::pair<std::string, fs::path>> inputs;  // name ("" = positional)
    std::vector<std::pair<std::string, fs::path>> outputs;
  };
  std::vector<DataSet> sets;
  double rtol = 1e-3, atol = 1e-7;
  // TFLite / NNEF folders: a float output matches when max |got - want| <= range_tol *
  // max |want| (their READMEs' measure); integer outputs may differ by int_lsb.
  double range_tol = 0;
  int64_t int_lsb = 0;
};

struct Outcome {
  std::string name;
  enum Kind { pass, fail, skip } kind = fail;
  std::string stage; // import, run, mismatch, data
  std::string message;
  double seconds = 0;
};

std::vector<fs::path> sorted_files(const fs::path &dir, const std::string &prefix) {
  std::vector<fs::path> v;
  for (auto &e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) v.push_back(e.path());
  // input_10 after input_9: sort by the number after the prefix.
  std::sort(v.begin(), v.end(), [&](const fs::path &a, const fs::path &b) {
    auto num = [&](const fs::path &p) {
      std::string s = p.stem().string().substr(prefix.size());
      return s.empty() ? 0L : std::atol(s.c_str());
    };
    return num(a) < num(b);
  });
  return v;
}

// NAME.in.K.npy / NAME.out.K.npy beside a TFLite file or an NNEF folder, K the position.
TestCase positional_case(const fs::path &dir, const std::string &name, fs::path model) {
  TestCase t;
  t.name = name;
  t.model = std::move(model);
  t.rtol = 0;
  t.atol = 0;
  t.range_tol = 1e-5;
  t.int_lsb = 1;
  std::map<long, fs::path> ins, outs;
  for (auto &f : fs::directory_iterator(dir)) {
    const std::string fn = f.path().filename().string();
    if (f.path().extension() != ".npy") continue;
    for (auto [prefix, into] : {std::pair{name + ".in.", &ins}, std::pair{name + ".out.", &outs}}) {
      if (fn.rfind(prefix, 0) != 0) continue;
      const std::string k = fn.substr(prefix.size(), fn.size() - prefix.size() - 4);
      if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos)
        (*into)[std::atol(k.c_str())] = f.path();
    }
  }
  TestCase::DataSet ds;
  for (auto &[k, f] : ins) ds.inputs.push_back({"", f});
  for (auto &[k, f] : outs) ds.outputs.push_back({"", f});
  t.sets.push_back(std::move(ds));
  return t;
}

std::vector<TestCase> discover(const fs::path &dir) {
  std::vector<TestCase> tests;
  std::set<std::string> seen;
  for (auto &e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".tflite") {
      tests.push_back(positional_case(dir, e.path().stem().string(), e.path()));
    } else if (e.is_regular_file() && e.path().extension() == ".tgz") {
      tests.push_back(positional_case(dir, e.path().stem().string(), e.path())); // NNEF, packed
    } else if (e.is_directory() && fs::exists(e.path() / "graph.nnef")) {
      tests.push_back(positional_case(dir, e.path().filename().string(), e.path()));
    } else if (e.is_directory() && fs::exists(e.path() / "model.onnx")) {
      TestCase t;
      t.name = e.path().filename().string();
      t.model = e.path() / "model.onnx";
      std::vector<fs::path> sets;
      for (auto &s : fs::directory_iterator(e.path()))
        if (s.is_directory() && s.path().filename().string().rfind("test_data_set_", 0) == 0)
          sets.push_back(s.path());
      std::sort(sets.begin(), sets.end());
      for (auto &s : sets) {
        TestCase::DataSet ds;
        for (auto &f : sorted_files(s, "input_")) ds.inputs.push_back({"", f});
        for (auto &f : sorted_files(s, "output_")) ds.outputs.push_back({"", f});
        t.sets.push_back(std::move(ds));
      }
      tests.push_back(std::move(t));
    } else if (e.is_regular_file() &&
               (e.path().extension() == ".onnx" || e.path().extension() == ".mlir")) {
      // NAME.onnx, NAME.stablehlo.mlir (or NAME.mlir); NAME.generic.mlir is the same program in
      // MLIR's generic form and shares NAME's data. StableHLO data is numbered by position:
      // NAME.in.K.npy feeds argK, NAME.out.K.npy is outK.
      TestCase t;
      const bool mlir = e.path().extension() == ".mlir";
      t.name = e.path().stem().string();
      std::string data_name = t.name;
      if (mlir) {
        auto strip = [](std::string &s, std::string_view suffix) {
          if (s.size() > suffix.size() && s.ends_with(suffix)) s.resize(s.size() - suffix.size());
        };
        strip(t.name, ".stablehlo");
        data_name = t.name;
        strip(data_name, ".generic");
      }
      t.model = e.path();
      t.rtol = 1e-4;
      t.atol = 1e-5;
      TestCase::DataSet ds;
      std::vector<fs::path> files;
      for (auto &f : fs::directory_iterator(dir)) files.push_back(f.path());
      std::sort(files.begin(), files.end());
      for (auto &f : files) {
        std::string fn = f.filename().string();
        if (f.extension() != ".npy") continue;
        std::string in_prefix = data_name + ".in.", out_prefix = data_name + ".out.";
        if (fn.rfind(in_prefix, 0) == 0) {
          std::string n = fn.substr(in_prefix.size(), fn.size() - in_prefix.size() - 4);
          ds.inputs.push_back({mlir ? "arg" + n : n, f});
        } else if (fn.rfind(out_prefix, 0) == 0) {
          std::string n = fn.substr(out_prefix.size(), fn.size() - out_prefix.size() - 4);
          ds.outputs.push_back({mlir ? "out" + n : n, f});
        }
      }
      t.sets.push_back(std::move(ds));
      tests.push_back(std::move(t));
    }
  }
  std::sort(tests.begin(), tests.end(), [](auto &a, auto &b) { return a.name < b.name; });
  return tests;
}

Compare compare_output(const Tensor &got, const Tensor &want, const TestCase &t, double rtol,
                       double atol) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape() || (t.range_tol <= 0 && t.int_lsb <= 0))
    return compare_tensors(got, want, rtol, atol);
  if (is_float(want.dtype()) && t.range_tol > 0) {
    double range = 0;
    for (int64_t i = 0; i < want.numel(); ++i) range = std::max(range, std::fabs(want.get_f64(i)));
    return compare_tensors(got, want, 0, t.range_tol * range);
  }
  if (!is_float(want.dtype()) && t.int_lsb > 0)
    return compare_tensors(got.cast(DType::f64), want.cast(DType::f64), 0, double(t.int_lsb));
  return compare_tensors(got, want, rtol, atol);
}

Outcome run_test(const TestCase &t, const ConformArgs &args, DeviceRunner &runner) {
  Outcome o;
  o.name = t.name;
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](Outcome::Kind k, std::string stage, std::string msg) {
    o.kind = k;
    o.stage = std::move(stage);
    o.message = std::move(msg);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return o;
  };
  if (t.sets.empty()) return finish(Outcome::skip, "data", "no test data sets");
  auto module = frontend::import_model(t.model.string());
  if (!module) return finish(Outcome::fail, "import", module.status().message());
  const Function &f = *module.value()->main();
  double rtol = args.rtol >= 0 ? args.rtol : t.rtol, atol = args.atol >= 0 ? args.atol : t.atol;
  for (const auto &ds : t.sets) {
    std::vector<Tensor> inputs(f.body.params.size());
    for (size_t i = 0; i < ds.inputs.size(); ++i) {
      size_t slot = i;
      if (!ds.inputs[i].first.empty()) {
        slot = f.body.params.size();
        for (size_t p = 0; p < f.body.params.size(); ++p)
          if (f.body.params[p]->name == ds.inputs[i].first) slot = p;
      }
      if (slot >= inputs.size())
        return finish(Outcome::fail, "data", fmt::format("input file {} matches no model input",
                                                         ds.inputs[i].second.filename().string()));
      auto r = load_tensor_file(ds.inputs[i].second.string());
      if (!r) return finish(Outcome::fail, "data", r.status().message());
      inputs[slot] = std::move(r).value();
    }
    Result<std::vector<Tensor>> outs = Status::error("not run");
    if (runner.is_reference()) {
      outs = execute(f, std::move(inputs));
    } else {
      // Each data set gets its own specialised compilation (shapes may depend on the inputs).
      Status st = check_inputs(f, inputs);
      if (!st) return finish(Outcome::fail, "run", st.message());
      auto fresh = frontend::import_model(t.model.string());
      if (!fresh) return finish(Outcome::fail, "import", fresh.status().message());
      st = specialize_inputs(*fresh.value(), inputs);
      if (!st) return finish(Outcome::fail, "compile", st.message());
      auto compiled = compile_module(*fresh.value(), runner.target(), runner.compile_options());
      if (!compiled) return finish(Outcome::fail, "compile", compiled.status().message());
      outs = runner.run_artifact(compiled.value(), inputs);
    }
    if (!outs) return finish(Outcome::fail, "run", outs.status().message());
    if (outs->size() < ds.outputs.size())
      return finish(Outcome::fail, "run", fmt::format("{} outputs, {} expected", outs->size(), ds.outputs.size()));
    for (size_t i = 0; i < ds.outputs.size(); ++i) {
      size_t slot = i;
      if (!ds.outputs[i].first.empty())
        for (size_t p = 0; p < f.body.results.size(); ++p)
          if (f.body.results[p]->name == ds.outputs[i].first) slot = p;
      auto want = load_tensor_file(ds.outputs[i].second.string());
      if (!want) return finish(Outcome::fail, "data", want.status().message());
      // --rtol / --atol on the command line replace a folder's own measure.
      Compare c = args.rtol >= 0 || args.atol >= 0
                      ? compare_tensors((*outs)[slot], want.value(), rtol, atol)
                      : compare_output((*outs)[slot], want.value(), t, rtol, atol);
      if (!c.ok) return finish(Outcome::fail, "mismatch", fmt::format("output {}: {}", i, c.reason));
    }
  }
  return finish(Outcome::pass, "", "");
}

std::set<std::string> read_list(const std::string &path) {
  std::set<std::string> s;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    s.insert(line);
  }
  return s;
}

int conform(const ConformArgs &args) {
  auto runner = DeviceRunner::open(args.device);
  if (!runner) {
    fmt::print(stderr, "error: {}\n", runner.status().message());
    return 2;
  }
  CompileOptions opts = cli_compile_options();
  opts.schedule = args.schedule;
  opts.row_reduction_override = args.row_reduction;
  opts.window_override = args.window;
  opts.winograd = args.winograd;
  opts.parallel_override = args.parallel;
  (*runner)->set_compile_options(opts);
  if (!fs::is_directory(args.dir)) {
    fmt::print(stderr, "error: {} is not a folder\n", args.dir);
    return 2;
  }
  std::vector<TestCase> tests = discover(args.dir);
  if (!args.filter.empty()) {
    std::regex re(args.filter);
    std::erase_if(tests, [&](const TestCase &t) { return !std::regex_search(t.name, re); });
  }
  std::vector<Outcome> results(tests.size());
  std::atomic<size_t> next{0};
  int jobs = args.jobs > 0 ? args.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int j = 0; j < jobs; ++j)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < tests.size();) results[i] = run_test(tests[i], args, *runner.value());
    });
  for (auto &th : pool) th.join();

  int passed = 0, failed = 0, skipped = 0;
  for (const auto &r : results) {
    if (r.kind == Outcome::pass) {
      ++passed;
      if (args.verbose) fmt::print("PASS {} ({:.2f}s)\n", r.name, r.seconds);
    } else if (r.kind == Outcome::skip) {
      ++skipped;
      fmt::print("SKIP {}: {}\n", r.name, r.message);
    } else {
      ++failed;
      std::string msg = r.message;
      std::replace(msg.begin(), msg.end(), '\n', ' ');
      if (msg.size() > 300) msg = msg.substr(0, 300) + "...";
      fmt::print("FAIL {}: {}: {}\n", r.name, r.stage, msg);
    }
  }
  if (!args.json.empty()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto &r : results)
      j.push_back({{"name", r.name},
                   {"result", r.kind == Outcome::pass ? "pass" : r.kind == Outcome::skip ? "skip" : "fail"},
                   {"stage", r.stage},
                   {"message", r.message},
                   {"seconds", r.seconds}});
    std::ofstream(args.json) << j.dump(1) << "\n";
  }
  int rc = failed ? 1 : 0;
  if (!args.write_expect.empty()) {
    std::ofstream f(args.write_expect);
    f << "# Tests expected to pass on device " << args.device << " (one per line; kiln conform --expect)\n";
    for (const auto &r : results)
      if (r.kind == Outcome::pass) f << r.name << "\n";
  }
  if (!args.expect.empty()) {
    std::set<std::string> expected = read_list(args.expect);
    std::set<std::string> ran;
    int regressions = 0, fresh = 0;
    for (const auto &r : results) {
      ran.insert(r.name);
      bool exp = expected.count(r.name) > 0;
      if (exp && r.kind != Outcome::pass) {
        ++regressions;
        fmt::print("REGRESSION {}: listed in {} but {}\n", r.name, args.expect, r.stage);
      } else if (!exp && r.kind == Outcome::pass) {
        ++fresh;
        fmt::print("NEWLY PASSING {} (add it to {})\n", r.name, args.expect);
      }
    }
    fmt::print("expectations: {} regressions, {} newly passing\n", regressions, fresh);
    rc = regressions ? 1 : 0;
  }
  fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return rc;
}

} // namespace

void add_conform_command(CLI::App &app) {
  auto a = std::make_shared<ConformArgs>();
  auto *cmd = app.add_subcommand("conform", "Run ONNX backend tests or a models folder");
  cmd->add_option("dir", a->dir, "folder of tests (node/ layout) or of NAME.onnx models")->required();
  cmd->add_option("--device", a->device, "cpu-ref, vulkan, vulkan:N or null");
  add_schedule_option(cmd, &a->schedule);
  add_row_reduction_option(cmd, &a->row_reduction);
  add_window_option(cmd, &a->window);
  add_winograd_option(cmd, &a->winograd);
  add_parallel_option(cmd, &a->parallel);
  cmd->add_option("--filter", a->filter, "run tests whose name matches this regex");
  cmd->add_option("--json", a->json, "write per-test results as JSON");
  cmd->add_option("--expect", a->expect,
                  "expected-pass list: fail when a listed test fails, report new passes");
  cmd->add_option("--write-expect", a->write_expect, "write the passing tests to this file");
  cmd->add_option("--rtol", a->rtol, "relative tolerance (default 1e-3, models 1e-4)");
  cmd->add_option("--atol", a->atol, "absolute tolerance (default 1e-7, models 1e-5)");
  cmd->add_option("-j,--jobs", a->jobs, "parallel tests (default: cores)");
  cmd->add_flag("-v,--verbose", a->verbose, "print passing tests too");
  cmd->callback([a] {
    int rc = conform(*a);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

} // namespace kiln::tools
