// Shared helpers of the runtime tests (runtime_test.cpp, runtime_fault_test.cpp): a small
// two-dispatch artifact built in memory (optionally broken), status helpers, and the I/O of
// one run with its exact expected result.
#pragma once

#include "kiln/artifact/digest.h"
#include "kiln/artifact/kiln_generated.h"
#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace runtime_test {

inline constexpr int64_t kN = 100;
inline constexpr uint64_t kBytes = kN * 4;
inline constexpr uint64_t kT2 = 448; // arena offset of the second intermediate (64-aligned)

inline std::vector<uint32_t> read_spirv() {
  std::ifstream in(KILN_TEST_ADD_SPV, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

inline std::vector<float> constant_k() {
  std::vector<float> k(kN);
  for (int64_t i = 0; i < kN; ++i)
    k[i] = 0.25f * float(i) - 7.0f;
  return k;
}

// Knobs for building broken artifacts.
struct Tweaks {
  uint32_t schema_version = KILN_ARTIFACT_SCHEMA_VERSION;
  kiln::fb::BufferKind bad_kind = kiln::fb::BufferKind::constant;
  uint32_t bad_index = 0;        // replaces binding 1 of command 0 when bad_ref is set
  uint64_t bad_offset = 0, bad_size = kBytes;
  bool bad_ref = false;
  bool need_cooperative_matrix = false;
  uint32_t push_bytes = 4;
  bool drop_third_binding = false; // the shader still uses binding 2: a validation error
  bool seal = true;                // append the digest trailer
  bool concurrent_copies = false;  // the last copy does not wait for the one before it
  // The executable's code: SPIR-V (the code union), a native object, or the schema-version-2
  // layout (SPIR-V words in the now deprecated Executable field 1, no code union).
  enum class Code { spirv, native, v2_layout } code = Code::spirv;
};

// The add executable of make_artifact, its code as `t` asks.
inline flatbuffers::Offset<kiln::fb::Executable>
make_executable(flatbuffers::FlatBufferBuilder &b, const Tweaks &t,
                flatbuffers::Offset<kiln::fb::Requirements> req) {
  using namespace kiln::fb;
  std::vector<uint32_t> spirv = read_spirv(), wgs{64, 1, 1};
  const uint32_t bindings = t.drop_third_binding ? 2 : 3;
  if (t.code == Tweaks::Code::v2_layout) {
    auto name = b.CreateString("add"), entry = b.CreateString("main");
    auto words = b.CreateVector(spirv), wg = b.CreateVector(wgs);
    ExecutableBuilder e(b);
    e.add_name(name);
    b.AddOffset(6, words); // field 1 (vtable slot 4 + 2 * 1): version 2's `spirv`
    e.add_entry_point(entry);
    e.add_workgroup_size(wg);
    e.add_num_bindings(bindings);
    e.add_push_constant_bytes(t.push_bytes);
    e.add_requirements(req);
    return e.Finish();
  }
  flatbuffers::Offset<void> code;
  ExecutableCode kind = ExecutableCode::SpirvCode;
  if (t.code == Tweaks::Code::native) {
    std::vector<uint8_t> object{0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    code = CreateNativeCodeDirect(b, "elf-x86_64-so", &object).Union();
    kind = ExecutableCode::NativeCode;
  } else {
    code = CreateSpirvCodeDirect(b, &spirv).Union();
  }
  return CreateExecutableDirect(b, "add", "main", &wgs, bindings, t.push_bytes, req, kind, code);
}

// y = (x + k) + x and z = x + k with x: f32[4,25], k a constant, through two dispatches of the
// add kernel into the transient arena and two copies into the outputs.
inline std::vector<uint8_t> make_artifact(const Tweaks &t = {}) {
  using namespace kiln::fb;
  flatbuffers::FlatBufferBuilder b;
  auto ref = [&](BufferKind kind, uint32_t index, uint64_t offset, uint64_t size) {
    return CreateBufferRef(b, kind, index, offset, size);
  };
  std::vector<uint8_t> pc(t.push_bytes, 0);
  uint32_t n = kN;
  std::memcpy(pc.data(), &n, std::min<size_t>(4, pc.size()));
  // `ops`: Dispatch.source_ops (none: as an artifact written before the field existed).
  auto dispatch = [&](flatbuffers::Offset<BufferRef> a, flatbuffers::Offset<BufferRef> bb,
                      flatbuffers::Offset<BufferRef> c, std::vector<std::string> ops = {}) {
    std::vector<flatbuffers::Offset<BufferRef>> binds{a, bb, c};
    if (t.drop_third_binding)
      binds.pop_back();
    std::vector<uint32_t> wg{2, 1, 1};
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> source_ops;
    if (!ops.empty())
      source_ops = b.CreateVectorOfStrings(ops);
    auto d2 = CreateDispatch(b, 0, b.CreateVector(binds), b.CreateVector(pc), b.CreateVector(wg),
                             source_ops);
    return CreateCommandEntry(b, Command::Dispatch, d2.Union());
  };
  std::vector<flatbuffers::Offset<CommandEntry>> cmds;
  auto second = t.bad_ref ? ref(t.bad_kind, t.bad_index, t.bad_offset, t.bad_size)
                          : ref(BufferKind::constant, 0, 0, kBytes);
  cmds.push_back(dispatch(ref(BufferKind::input, 0, 0, kBytes), second,
                          ref(BufferKind::transient, 0, 0, kBytes)));
  cmds.push_back(dispatch(ref(BufferKind::transient, 0, 0, kBytes),
                          ref(BufferKind::input, 0, 0, kBytes),
                          ref(BufferKind::transient, 0, kT2, kBytes), {"kiln.add", "kiln.relu"}));
  auto copy = [&](uint64_t src_offset, uint32_t out, bool waits) {
    auto c = CreateCopy(b, ref(BufferKind::transient, 0, src_offset, kBytes),
                        ref(BufferKind::output, out, 0, kBytes));
    return CreateCommandEntry(b, Command::Copy, c.Union(), waits);
  };
  cmds.push_back(copy(kT2, 0, true));
  cmds.push_back(copy(0, 1, !t.concurrent_copies)); // reads and writes other bytes

  auto req = CreateRequirements(b, false, false, false, false, false, false, false, 0, 0,
                                t.need_cooperative_matrix, 0);
  std::vector<flatbuffers::Offset<Executable>> exes{make_executable(b, t, req)};

  std::vector<int64_t> shape_x{4, 25}, shape_z{kN};
  std::vector<flatbuffers::Offset<TensorSig>> ins{CreateTensorSigDirect(b, "x", DType::f32, &shape_x)};
  std::vector<flatbuffers::Offset<TensorSig>> outs{
      CreateTensorSigDirect(b, "y", DType::f32, &shape_x),
      CreateTensorSigDirect(b, "z", DType::f32, &shape_z)};
  std::vector<uint8_t> data(64 + kBytes, 0);
  std::vector<float> k = constant_k();
  std::memcpy(data.data() + 64, k.data(), kBytes);
  b.ForceVectorAlignment(data.size(), 1, 64);
  auto data_vec = b.CreateVector(data);
  std::vector<flatbuffers::Offset<Constant>> consts{CreateConstant(b, 64, kBytes)};
  auto model = CreateModel(b, t.schema_version, b.CreateString("kiln test"),
                           b.CreateString("vulkan"), b.CreateVector(ins), b.CreateVector(outs),
                           b.CreateVector(consts), data_vec, b.CreateVector(exes),
                           b.CreateVector(cmds), kT2 + kBytes);
  FinishModelBuffer(b, model);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (t.seal)
    kiln::artifact::seal_artifact(&bytes);
  return bytes;
}

// Takes ownership of a status and returns "CODE: message" (or "OK").
inline std::string take(kiln_status s) {
  std::string out = std::string(kiln_status_code_name(kiln_status_code_of(s))) + ": " +
                    kiln_status_message(s);
  kiln_status_free(s);
  return out;
}

#define EXPECT_OK(call) EXPECT_EQ(take(call), "OK: OK")
#define EXPECT_STATUS(call, code, substring)                                                       \
  do {                                                                                             \
    std::string s_ = take(call);                                                                   \
    EXPECT_EQ(s_.rfind(code, 0), 0u) << s_;                                                        \
    EXPECT_NE(s_.find(substring), std::string::npos) << s_;                                        \
  } while (0)

struct Io {
  std::vector<float> x = std::vector<float>(kN), y = std::vector<float>(kN, -1.0f),
                     z = std::vector<float>(kN, -1.0f);
  int64_t shape_x[2] = {4, 25}, shape_z[1] = {kN};
  std::vector<kiln_tensor> inputs, outputs;
  explicit Io(float seed = 1.0f) {
    for (int64_t i = 0; i < kN; ++i)
      x[i] = seed * float(i) * 0.5f + 3.0f;
    inputs = {{KILN_F32, 2, shape_x, x.data(), kBytes}};
    outputs = {{KILN_F32, 2, shape_x, y.data(), kBytes}, {KILN_F32, 1, shape_z, z.data(), kBytes}};
  }
  void poison() {
    std::fill(y.begin(), y.end(), std::nanf(""));
    std::fill(z.begin(), z.end(), std::nanf(""));
  }
  void expect_exact() const {
    std::vector<float> k = constant_k();
    for (int64_t i = 0; i < kN; ++i) {
      float t = x[i] + k[i];
      ASSERT_EQ(y[i], t + x[i]) << "y[" << i << "]";
      ASSERT_EQ(z[i], t) << "z[" << i << "]";
    }
  }
};

inline kiln_module *load(kiln_device *d, const std::vector<uint8_t> &bytes) {
  kiln_module *m = nullptr;
  kiln_status s = kiln_module_load_memory(d, bytes.data(), bytes.size(), &m);
  EXPECT_EQ(s, nullptr) << kiln_status_message(s);
  kiln_status_free(s);
  return m;
}

} // namespace runtime_test
