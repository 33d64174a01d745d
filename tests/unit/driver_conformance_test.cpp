// Driver conformance: the same cases against every runtime driver (null and vulkan; a driver
// whose device is missing, such as vulkan without a GPU or lavapipe, is skipped). Drivers that
// execute programs must give exact values; the null driver (a test double that runs nothing
// and writes zeros) must accept the same artifacts and arguments and refuse the same errors.
#include "runtime_test_util.h"

#include <string>

using namespace runtime_test;

namespace {

struct DriverCase {
  const char *name;
  bool executes;       // runs commands (values are checked), else writes zeros
  bool runs_native;    // accepts native-object executables
};

// A program of copies only: each input goes through the transient arena into its output.
// Input 0 is f32[kN], input 1 is u8[13] (a size that is not a multiple of 4).
std::vector<uint8_t> copy_artifact() {
  using namespace kiln::fb;
  flatbuffers::FlatBufferBuilder b;
  const uint64_t odd = 13, odd_at = 448; // arena offset of the second tensor (64-aligned)
  auto ref = [&](BufferKind kind, uint32_t index, uint64_t offset, uint64_t size) {
    return CreateBufferRef(b, kind, index, offset, size);
  };
  auto copy = [&](flatbuffers::Offset<BufferRef> src, flatbuffers::Offset<BufferRef> dst) {
    return CreateCommandEntry(b, Command::Copy, CreateCopy(b, src, dst).Union());
  };
  std::vector<flatbuffers::Offset<CommandEntry>> cmds{
      copy(ref(BufferKind::input, 0, 0, kBytes), ref(BufferKind::transient, 0, 0, kBytes)),
      copy(ref(BufferKind::input, 1, 0, odd), ref(BufferKind::transient, 0, odd_at, odd)),
      copy(ref(BufferKind::transient, 0, 0, kBytes), ref(BufferKind::output, 0, 0, kBytes)),
      copy(ref(BufferKind::transient, 0, odd_at, odd), ref(BufferKind::output, 1, 0, odd))};
  std::vector<int64_t> shape{kN}, shape_odd{int64_t(odd)};
  std::vector<flatbuffers::Offset<TensorSig>> ins{
      CreateTensorSigDirect(b, "x", DType::f32, &shape),
      CreateTensorSigDirect(b, "b", DType::u8, &shape_odd)};
  std::vector<flatbuffers::Offset<TensorSig>> outs{
      CreateTensorSigDirect(b, "y", DType::f32, &shape),
      CreateTensorSigDirect(b, "c", DType::u8, &shape_odd)};
  auto model = CreateModel(b, KILN_ARTIFACT_SCHEMA_VERSION, b.CreateString("kiln test"),
                           b.CreateString("vulkan"), b.CreateVector(ins), b.CreateVector(outs), 0,
                           0, 0, b.CreateVector(cmds), odd_at + odd);
  FinishModelBuffer(b, model);
  std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  kiln::artifact::seal_artifact(&bytes);
  return bytes;
}

class DriverConformance : public ::testing::TestWithParam<DriverCase> {
protected:
  void SetUp() override {
    size_t count = 0;
    kiln_status s = kiln_device_count(GetParam().name, &count);
    const bool none = s != nullptr || count == 0;
    kiln_status_free(s);
    if (none)
      GTEST_SKIP() << "no " << GetParam().name << " device";
    ASSERT_OK_OPEN();
  }
  void ASSERT_OK_OPEN() {
    kiln_status s = kiln_device_open(GetParam().name, &device_);
    ASSERT_EQ(s, nullptr) << kiln_status_message(s);
  }
  void TearDown() override {
    if (!device_)
      return;
    uint64_t messages = 0;
    EXPECT_OK(kiln_device_validation_message_count(device_, &messages));
    EXPECT_EQ(messages, 0u) << "validation layer messages (see stderr)";
    kiln_device_release(device_);
  }
  kiln_device *device_ = nullptr;
};

TEST_P(DriverConformance, OpenDescribeClose) {
  kiln_device_info info;
  EXPECT_OK(kiln_device_info_get(device_, &info));
  EXPECT_STREQ(info.driver, GetParam().name);
  EXPECT_EQ(std::string(info.uri).rfind(std::string(GetParam().name) + ":", 0), 0u) << info.uri;
  EXPECT_GT(info.max_storage_buffer_range, 0u);
  // A second device of the same driver opens and closes independently.
  kiln_device *second = nullptr;
  EXPECT_OK(kiln_device_open(GetParam().name, &second));
  ASSERT_NE(second, nullptr);
  kiln_device_release(second);
  EXPECT_STATUS(kiln_device_open((std::string(GetParam().name) + ":99").c_str(), &second),
                "NOT_FOUND", "device");
}

// Inputs go to the device, through the arena, and back into the outputs byte for byte
// (an f32 tensor and a 13-byte u8 tensor), three times on one module.
TEST_P(DriverConformance, UploadDownloadRoundTrip) {
  kiln_module *m = load(device_, copy_artifact());
  ASSERT_NE(m, nullptr);
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<float> x(kN), y(kN, -1.0f);
    std::vector<uint8_t> b(13), c(13, 0xee);
    for (int64_t i = 0; i < kN; ++i)
      x[i] = float(i * (rep + 1)) - 17.25f;
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = uint8_t(251 - 7 * i - rep);
    int64_t shape[1] = {kN}, shape_b[1] = {13};
    kiln_tensor in[2] = {{KILN_F32, 1, shape, x.data(), kBytes}, {KILN_U8, 1, shape_b, b.data(), 13}};
    kiln_tensor out[2] = {{KILN_F32, 1, shape, y.data(), kBytes}, {KILN_U8, 1, shape_b, c.data(), 13}};
    EXPECT_OK(kiln_module_run(m, in, 2, out, 2));
    if (GetParam().executes) {
      EXPECT_EQ(y, x);
      EXPECT_EQ(c, b);
    } else {
      EXPECT_EQ(y, std::vector<float>(kN, 0.0f));
      EXPECT_EQ(c, std::vector<uint8_t>(13, 0));
    }
  }
  kiln_module_release(m);
}

// Two dispatches of a small add kernel (SPIR-V) and two copies; per-command timings are filled.
TEST_P(DriverConformance, SmallDispatch) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(kiln_module_command_count(m), 4u);
  Io io(2.0f);
  io.poison();
  std::vector<uint64_t> ns(4, ~uint64_t(0));
  kiln_run_options opts{ns.data(), ns.size()};
  EXPECT_OK(kiln_module_run_with_options(m, io.inputs.data(), 1, io.outputs.data(), 2, &opts));
  if (GetParam().executes) {
    io.expect_exact();
  } else {
    EXPECT_EQ(io.y, std::vector<float>(kN, 0.0f));
    EXPECT_EQ(io.z, std::vector<float>(kN, 0.0f));
  }
  for (uint64_t t : ns)
    EXPECT_NE(t, ~uint64_t(0)) << "a command's time was not written";
  kiln_module_release(m);
}

// An executable of a kind the driver cannot run is refused at load, naming it and its kind.
TEST_P(DriverConformance, ExecutableKind) {
  Tweaks t;
  t.code = Tweaks::Code::native;
  const std::vector<uint8_t> a = make_artifact(t);
  kiln_module *m = nullptr;
  kiln_status s = kiln_module_load_memory(device_, a.data(), a.size(), &m);
  if (GetParam().runs_native) {
    EXPECT_EQ(s, nullptr) << kiln_status_message(s);
    kiln_status_free(s);
  } else {
    EXPECT_STATUS(s, "UNSUPPORTED",
                  "executable 'add' is native object (elf-x86_64-so): the " +
                      std::string(GetParam().name) + " driver runs only SPIR-V");
    EXPECT_EQ(m, nullptr);
  }
  kiln_module_release(m);
}

// Wrong tensor counts, sizes, shapes, dtypes and missing data are refused before any work,
// and the module still runs afterwards.
TEST_P(DriverConformance, WrongSizesAreRefused) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  Io io;
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 0, io.outputs.data(), 2), "INVALID_ARGUMENT",
                "expected 1 inputs, got 0");
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 1), "INVALID_ARGUMENT",
                "expected 2 outputs, got 1");
  io.inputs[0].bytes = kBytes - 4;
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2), "INVALID_ARGUMENT",
                "input 0 'x': expected 400 bytes, got 396");
  io.inputs[0].bytes = kBytes;
  io.outputs[1].shape = io.shape_x;
  io.outputs[1].rank = 2;
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2), "INVALID_ARGUMENT",
                "output 1 'z': expected rank 1 (shape [100]), got rank 2");
  Io good;
  good.inputs[0].dtype = KILN_I32;
  EXPECT_STATUS(kiln_module_run(m, good.inputs.data(), 1, good.outputs.data(), 2),
                "INVALID_ARGUMENT", "input 0 'x': expected dtype f32, got i32");
  good.inputs[0].dtype = KILN_F32;
  good.outputs[0].data = nullptr;
  EXPECT_STATUS(kiln_module_run(m, good.inputs.data(), 1, good.outputs.data(), 2),
                "INVALID_ARGUMENT", "output 0 'y': data is NULL");
  Io after(3.0f);
  EXPECT_OK(kiln_module_run(m, after.inputs.data(), 1, after.outputs.data(), 2));
  if (GetParam().executes)
    after.expect_exact();
  kiln_module_release(m);
}

// A binding past the end of its buffer and a malformed push-constant size are artifact
// errors, refused the same way by every driver.
TEST_P(DriverConformance, BadBindingsAreRefused) {
  Tweaks t;
  t.bad_ref = true;
  t.bad_kind = kiln::fb::BufferKind::input;
  t.bad_offset = 8;
  kiln_module *m = nullptr;
  std::vector<uint8_t> a = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), a.size(), &m), "INVALID_ARTIFACT",
                "command 0 binding 1 covers bytes [8, +400) outside input 0 ('x') of 400 bytes");
  t = Tweaks{};
  t.push_bytes = 6;
  a = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), a.size(), &m), "INVALID_ARTIFACT",
                "executable 0 ('add') has 6 push constant bytes (a multiple of 4");
  EXPECT_EQ(m, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverConformance,
                         ::testing::Values(DriverCase{"null", false, true},
                                           DriverCase{"vulkan", true, false}),
                         [](const ::testing::TestParamInfo<DriverCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
