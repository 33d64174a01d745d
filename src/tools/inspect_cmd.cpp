// kiln inspect: an artifact's digest (for pinning, docs/SECURITY.md), signature and commands,
// read through the runtime's C API on the null device (nothing runs); the executables' code
// kinds straight from the FlatBuffer, once the runtime has verified it; with --graph, a picture
// of the program (inspect_graph.cpp).
#include "kiln/artifact/kiln_generated.h"
#include "kiln/kiln.h"
#include "tools/tools.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

namespace kiln::tools {

namespace {

struct Released {
  void operator()(kiln_device *d) const { kiln_device_release(d); }
  void operator()(kiln_module *m) const { kiln_module_release(m); }
};

Status from_runtime(kiln_status s, const std::string &what) {
  if (!s)
    return Status::ok();
  std::string message = fmt::format("{}: {}", what, kiln_status_message(s));
  kiln_status_free(s);
  return Status::error(message);
}

std::string describe(const kiln_tensor_info &t) {
  std::string dims;
  for (uint32_t i = 0; i < t.rank; ++i)
    dims += fmt::format("{}{}", i ? "x" : "", t.shape[i]);
  return fmt::format("'{}' {}[{}] ({} bytes)", t.name, kiln_dtype_name(t.dtype), dims, t.bytes);
}

// What a device must offer to run an executable, as the Vulkan names the runtime reports when
// one is missing (so a user can see why a device refuses the artifact), then its limits.
std::string requirements_of(const fb::Requirements *r) {
  if (!r)
    return "";
  std::vector<std::string> out;
#define KILN_X(field, name)                                                                        \
  if (r->field())                                                                                  \
    out.emplace_back(name);
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  if (r->subgroup_size())
    out.push_back(fmt::format("subgroup size {}", r->subgroup_size()));
  if (r->shared_memory_bytes())
    out.push_back(fmt::format("{} bytes of shared memory", r->shared_memory_bytes()));
  if (r->max_workgroup_invocations())
    out.push_back(fmt::format("{} invocations per workgroup", r->max_workgroup_invocations()));
  return fmt::format("{}", fmt::join(out, ", "));
}

// One line per executable: its name and code kind (only after the runtime accepted `bytes`),
// then what it requires of the device.
void print_executables(const std::vector<uint8_t> &bytes) {
  const fb::Model *model = fb::GetModel(bytes.data());
  if (!model->executables())
    return;
  for (uint32_t i = 0; i < model->executables()->size(); ++i) {
    const fb::Executable *e = model->executables()->Get(i);
    std::string kind;
    if (const fb::SpirvCode *s = e->code_as_SpirvCode())
      kind = fmt::format("spirv ({} words)", s->words()->size());
    else if (const fb::NativeCode *n = e->code_as_NativeCode())
      kind = fmt::format("native {} ({} bytes)", n->format()->str(), n->bytes()->size());
    fmt::print("executable {}: '{}' {}\n", i, e->name() ? e->name()->str() : "", kind);
    if (const std::string req = requirements_of(e->requirements()); !req.empty())
      fmt::print("  requires: {}\n", req);
  }
  if (const fb::NativeLibrary *lib = model->native_library()) {
    std::vector<std::string> features;
    if (lib->cpu_features())
      for (const auto *f : *lib->cpu_features())
        features.push_back(f->str());
    fmt::print("native library: {} for {} ({} bytes), requires CPU features: {}\n",
               lib->format() ? lib->format()->str() : "?", lib->isa() ? lib->isa()->str() : "?",
               lib->bytes() ? lib->bytes()->size() : 0, fmt::join(features, ", "));
  }
}

// The precision the compiler chose (schema PrecisionChoice): one line, and for --precision auto
// the budget, the nodes kept in f32 and each output's error at the choice.
void print_precision(const std::vector<uint8_t> &bytes) {
  const fb::PrecisionChoice *p = fb::GetModel(bytes.data())->precision();
  if (!p || !p->mode()) {
    fmt::print("precision: not recorded (an older artifact)\n");
    return;
  }
  if (p->mode()->str() != "auto") {
    fmt::print("precision: {}\n", p->mode()->str());
    return;
  }
  std::vector<std::string> nodes, errors;
  const size_t kept = p->f32_nodes() ? p->f32_nodes()->size() : 0;
  if (p->f32_nodes())
    for (const auto *n : *p->f32_nodes())
      if (nodes.size() < 10) nodes.push_back(fmt::format("'{}'", n->str()));
  if (kept > nodes.size()) nodes.push_back(fmt::format("and {} more", kept - nodes.size()));
  if (p->output_errors())
    for (double e : *p->output_errors()) errors.push_back(fmt::format("{:.3g}", e));
  fmt::print("precision: auto (fp16 within {} of each output's range): {} nodes fp16, {} kept "
             "f32{}{}; output errors {}\n",
             p->max_error(), p->half_nodes(), kept, nodes.empty() ? "" : ": ",
             fmt::join(nodes, ", "), fmt::join(errors, ", "));
}

Status inspect(const std::string &path, const std::string &graph) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("cannot open '{}'", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint8_t digest[KILN_ARTIFACT_DIGEST_BYTES];
  KILN_TRY(from_runtime(kiln_artifact_digest(bytes.data(), bytes.size(), digest), path));
  std::string hex;
  for (uint8_t b : digest)
    hex += fmt::format("{:02x}", b);
  fmt::print("sha256: {}\n", hex);
  kiln_device *d = nullptr;
  KILN_TRY(from_runtime(kiln_device_open("null", &d), "null device"));
  std::unique_ptr<kiln_device, Released> device(d);
  kiln_module *m = nullptr;
  KILN_TRY(from_runtime(kiln_module_load_memory(d, bytes.data(), bytes.size(), &m), path));
  std::unique_ptr<kiln_module, Released> module(m);
  fmt::print("schema version: {}\n", KILN_ARTIFACT_SCHEMA_VERSION);
  for (size_t i = 0; i < kiln_module_input_count(m); ++i) {
    kiln_tensor_info t;
    KILN_TRY(from_runtime(kiln_module_input_info(m, i, &t), "input"));
    fmt::print("input {}: {}\n", i, describe(t));
  }
  for (size_t i = 0; i < kiln_module_output_count(m); ++i) {
    kiln_tensor_info t;
    KILN_TRY(from_runtime(kiln_module_output_info(m, i, &t), "output"));
    fmt::print("output {}: {}\n", i, describe(t));
  }
  size_t dispatches = 0, copies = 0;
  for (size_t i = 0; i < kiln_module_command_count(m); ++i) {
    kiln_command_info c;
    KILN_TRY(from_runtime(kiln_module_command_info(m, i, &c), "command"));
    ++(c.kind == KILN_COMMAND_COPY ? copies : dispatches);
  }
  print_executables(bytes);
  print_precision(bytes);
  fmt::print("commands: {} dispatches, {} copies\n", dispatches, copies);
  if (const auto *init = fb::GetModel(bytes.data())->init_commands(); init && init->size())
    fmt::print("init commands: {} (run once at load), {} derived constant bytes\n", init->size(),
               fb::GetModel(bytes.data())->derived_bytes());
  if (!graph.empty()) {
    KILN_TRY(write_artifact_graph(bytes, graph));
    fmt::print("graph: {}\n", graph);
  }
  return Status::ok();
}

} // namespace

void add_inspect_command(CLI::App &app) {
  auto path = std::make_shared<std::string>();
  auto graph = std::make_shared<std::string>();
  auto *cmd = app.add_subcommand(
      "inspect", "Check an artifact's digest and print it (sha256, for pinning) and its signature");
  cmd->add_option("artifact", *path, "compiled artifact (.kiln)")->required();
  cmd->add_option("--graph", *graph,
                  "also draw the compiled program (dispatches, fused ops, data flow, arena "
                  "plan): FILE.svg or FILE.html (need Graphviz's dot), or FILE.dot");
  cmd->callback([path, graph] {
    Status s = inspect(*path, *graph);
    if (!s) {
      fmt::print(stderr, "error: {}\n", s.message());
      throw CLI::RuntimeError(1);
    }
  });
}

} // namespace kiln::tools
