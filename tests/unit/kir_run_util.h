// Runs one kernel-IR kernel on a device through the runtime: the kernel is emitted to SPIR-V,
// wrapped in a one-dispatch artifact (read-only buffers are the inputs, the others the
// outputs, every buffer a u8 tensor of its bytes), loaded and run.
#pragma once

#include "kiln/artifact/digest.h"
#include "kiln/artifact/kiln_generated.h"
#include "kiln/kiln.h"
#include "kir/kir.h"
#include "kir/target.h"
#include "target/c/c.h"
#include "target/spirv/spirv.h"
#include "vulkan_device_fixture.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace kir_run {

using Bytes = std::vector<uint8_t>;

template <class T> Bytes to_bytes(const std::vector<T> &v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T> std::vector<T> from_bytes(const Bytes &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct Launch {
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::vector<uint32_t> push_constants;
};

inline flatbuffers::Offset<kiln::fb::Requirements> requirements(flatbuffers::FlatBufferBuilder &b,
                                                              const kiln::kir::Requirements &r) {
  return kiln::fb::CreateRequirements(b, r.float16, r.float64, r.int8, r.int16, r.int64,
                                      r.storage8, r.storage16, r.subgroup_size,
                                      r.shared_memory_bytes, r.cooperative_matrix,
                                      r.max_workgroup_invocations, r.loop_iterations);
}

// The artifact for `k` (SPIR-V `spirv`, or with `library` a native shared object whose
// symbol kiln_exe_0 is the kernel) with buffers of the given sizes.
inline Bytes make_artifact(const kiln::kir::Kernel &k, const std::vector<uint32_t> &spirv,
                           const kiln::kir::Requirements &req, const std::vector<size_t> &sizes,
                           const Launch &launch, const std::vector<uint8_t> *library = nullptr,
                           const kiln::kir::TargetDesc *cpu = nullptr) {
  using namespace kiln::fb;
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<TensorSig>> ins, outs;
  std::vector<flatbuffers::Offset<BufferRef>> binds;
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    std::vector<int64_t> shape{static_cast<int64_t>(sizes[i])};
    bool in = k.buffers[i].readonly;
    auto &sigs = in ? ins : outs;
    binds.push_back(CreateBufferRef(b, in ? BufferKind::input : BufferKind::output,
                                    static_cast<uint32_t>(sigs.size()), 0, sizes[i]));
    sigs.push_back(CreateTensorSigDirect(b, k.buffers[i].name.c_str(), DType::u8, &shape));
  }
  std::vector<uint8_t> pc(launch.push_constants.size() * 4);
  if (!pc.empty()) std::memcpy(pc.data(), launch.push_constants.data(), pc.size());
  std::vector<uint32_t> groups(launch.groups.begin(), launch.groups.end());
  auto dispatch = CreateDispatch(b, 0, b.CreateVector(binds), b.CreateVector(pc),
                                 b.CreateVector(groups));
  std::vector<flatbuffers::Offset<CommandEntry>> cmds{
      CreateCommandEntry(b, Command::Dispatch, dispatch.Union())};
  std::vector<uint32_t> wgs(k.workgroup_size, k.workgroup_size + 3);
  flatbuffers::Offset<void> code;
  ExecutableCode kind = ExecutableCode::SpirvCode;
  flatbuffers::Offset<NativeLibrary> lib;
  if (library) {
    const std::string sym = "kiln_exe_0";
    std::vector<uint8_t> sym_bytes(sym.begin(), sym.end());
    code = CreateNativeCodeDirect(b, "symbol", &sym_bytes).Union();
    kind = ExecutableCode::NativeCode;
    std::vector<flatbuffers::Offset<flatbuffers::String>> feats;
    for (const std::string &f : cpu->cpu_features) feats.push_back(b.CreateString(f));
    b.ForceVectorAlignment(library->size(), 1, 16);
    auto bytes = b.CreateVector(*library);
    lib = CreateNativeLibrary(b, b.CreateString("elf-x86_64-so"), b.CreateString(cpu->cpu_isa),
                              b.CreateVector(feats), bytes);
  } else {
    code = CreateSpirvCodeDirect(b, &spirv).Union();
  }
  std::vector<flatbuffers::Offset<Executable>> exes{CreateExecutableDirect(
      b, k.name.c_str(), "main", &wgs, static_cast<uint32_t>(k.buffers.size()),
      k.push_constant_count * 4, requirements(b, req), kind, code)};
  std::vector<uint8_t> data(64, 0);
  b.ForceVectorAlignment(data.size(), 1, 64);
  auto data_vec = b.CreateVector(data);
  std::vector<flatbuffers::Offset<Constant>> consts;
  auto model = CreateModel(b, KILN_ARTIFACT_SCHEMA_VERSION, b.CreateString("kir_run_test"),
                           b.CreateString("vulkan"), b.CreateVector(ins), b.CreateVector(outs),
                           b.CreateVector(consts), data_vec, b.CreateVector(exes),
                           b.CreateVector(cmds), 0, lib);
  FinishModelBuffer(b, model);
  Bytes bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  kiln::artifact::seal_artifact(&bytes);
  return bytes;
}

inline std::string take(kiln_status s) {
  if (!s) return "";
  std::string m = kiln_status_message(s);
  kiln_status_free(s);
  return m;
}

// Runs `k` on `device`: `buffers` holds every buffer's initial bytes (outputs: their size,
// contents ignored); the outputs' bytes come back in place. Empty string on success.
inline std::string run(kiln_device *device, const kiln::kir::Kernel &k,
                       const kiln::kir::TargetDesc &target, std::vector<Bytes> *buffers,
                       const Launch &launch) {
  kiln::kir::Requirements req;
  std::vector<size_t> sizes;
  for (const Bytes &b : *buffers) sizes.push_back(b.size());
  Bytes artifact;
  if (target.backend == "c") {
    auto text = kiln::cgen::emit_c(k, target, &req);
    if (!text.is_ok()) return "emit: " + text.status().message();
    auto so = kiln::cgen::build_shared_object({text.value()}, target.cpu_isa, 1);
    if (!so.is_ok()) return "cc: " + so.status().message();
    artifact = make_artifact(k, {}, req, sizes, launch, &so.value(), &target);
  } else {
    auto spirv = kiln::spirv::emit_spirv(k, target, &req);
    if (!spirv.is_ok()) return "emit: " + spirv.status().message();
    artifact = make_artifact(k, spirv.value(), req, sizes, launch);
  }
  kiln_module *m = nullptr;
  if (std::string e = take(kiln_module_load_memory(device, artifact.data(), artifact.size(), &m));
      !e.empty())
    return "load: " + e;
  std::vector<int64_t> shapes(buffers->size());
  std::vector<kiln_tensor> ins, outs;
  for (size_t i = 0; i < buffers->size(); ++i) {
    Bytes &b = (*buffers)[i];
    shapes[i] = static_cast<int64_t>(b.size());
    kiln_tensor t{KILN_U8, 1, &shapes[i], b.data(), b.size()};
    (k.buffers[i].readonly ? ins : outs).push_back(t);
  }
  std::string e = take(kiln_module_run(m, ins.data(), ins.size(), outs.data(), outs.size()));
  kiln_module_release(m);
  return e.empty() ? "" : "run: " + e;
}

// The device fixture, with the target preset the device matches (as `kiln run` picks it).
class DeviceTest : public kiln_test::VulkanDeviceTest {
protected:
  const kiln::kir::TargetDesc &target() const {
    if (std::string(info_.driver) == "cpu") return *kiln::kir::find_target("cpu");
    return *kiln::kir::find_target(info_.cooperative_matrix ? "vulkan-nvidia" : "vulkan-lavapipe");
  }
};

} // namespace kir_run
