// Driver conformance: the same cases against every runtime driver (null and vulkan; a driver
// whose device is missing, such as vulkan without a GPU or lavapipe, is skipped). Drivers that
// execute programs must give exact values; the null driver (a test double that runs nothing
// and writes zeros) must accept the same artifacts and arguments and refuse the same errors.
// The DriverObjects cases drive the driver's buffer, executable and command objects directly
// (runtime/driver.h), as the generic module does.
#include "runtime_test_util.h"

#include "runtime/driver.h"
#include "runtime/module.h"

#include <memory>
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

// Runs make_artifact(t) (two dispatches of a small add kernel, SPIR-V, and two copies) once
// and checks its outputs, the per-command timings and the span around them.
void run_small_program(kiln_device *device, const DriverCase &c, const Tweaks &t) {
  kiln_module *m = load(device, make_artifact(t));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(kiln_module_command_count(m), 4u);
  Io io(2.0f);
  io.poison();
  std::vector<uint64_t> ns(4, ~uint64_t(0));
  uint64_t span = ~uint64_t(0);
  kiln_run_options opts{ns.data(), ns.size(), &span};
  EXPECT_OK(kiln_module_run_with_options(m, io.inputs.data(), 1, io.outputs.data(), 2, &opts));
  if (c.executes) {
    io.expect_exact();
  } else {
    EXPECT_EQ(io.y, std::vector<float>(kN, 0.0f));
    EXPECT_EQ(io.z, std::vector<float>(kN, 0.0f));
  }
  uint64_t sum = 0;
  for (uint64_t t : ns) {
    EXPECT_NE(t, ~uint64_t(0)) << "a command's time was not written";
    sum += t;
  }
  if (t.concurrent_copies) {
    EXPECT_EQ(ns[3], 0u) << "the second copy runs with the first and has no timer of its own";
  }
  // The steps run one after another inside the span: it holds all of their times.
  EXPECT_NE(span, ~uint64_t(0)) << "the span was not written";
  EXPECT_GE(span, sum);
  kiln_module_release(m);
}

TEST_P(DriverConformance, SmallDispatch) { run_small_program(device_, GetParam(), {}); }

// The two final copies touch different bytes and run together (no barrier between them): the
// results are unchanged (the Vulkan suites run under synchronization validation), and the pair
// shares one time, reported on the first.
TEST_P(DriverConformance, CommandsThatRunTogether) {
  Tweaks t;
  t.concurrent_copies = true;
  run_small_program(device_, GetParam(), t);
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

// Driver objects, used directly. Every buffer and list a case creates is released by TearDown
// (before the device), also when the case fails half-way.
namespace rt = kiln::rt;

std::string str(rt::Status s) { return take(s.release()); }

class DriverObjects : public ::testing::TestWithParam<DriverCase> {
protected:
  void SetUp() override {
    d_ = rt::find_driver(GetParam().name);
    ASSERT_NE(d_, nullptr);
    size_t count = 0, index = 0;
    if (!d_->device.count(&count).ok() || count == 0)
      GTEST_SKIP() << "no " << GetParam().name << " device";
    ASSERT_EQ(str(d_->device.default_device(&index)), "OK: OK");
    ASSERT_EQ(str(d_->device.open(index, &dev_)), "OK: OK");
  }
  void TearDown() override {
    if (!dev_)
      return;
    for (rt::CommandState *l : lists_)
      d_->command.destroy(dev_, l);
    for (rt::BufferState *b : buffers_)
      d_->buffer.destroy(dev_, b);
    for (rt::ExecutableState *e : executables_)
      d_->executable.destroy(dev_, e);
    EXPECT_EQ(d_->device.validation_messages(dev_), 0u) << "validation layer messages (stderr)";
    d_->device.destroy(dev_);
  }
  rt::BufferState *buffer(uint64_t bytes, rt::MemoryKind kind = rt::MemoryKind::device) {
    rt::BufferState *b = nullptr;
    EXPECT_EQ(str(d_->buffer.create(dev_, bytes, kind, &b)), "OK: OK") << bytes << " bytes";
    if (b)
      buffers_.push_back(b);
    return b;
  }
  rt::CommandState *list(rt::CommandListDesc desc = {}) {
    rt::CommandState *l = nullptr;
    EXPECT_EQ(str(d_->command.create(dev_, desc, &l)), "OK: OK");
    if (l)
      lists_.push_back(l);
    return l;
  }
  // Fills a buffer with `byte` through the generic transfer helpers.
  void fill(rt::BufferState *b, uint8_t byte) {
    std::vector<uint8_t> v(size_t(d_->buffer.size(b)), byte);
    EXPECT_EQ(str(rt::write_buffer(*d_, dev_, b, 0, v.data(), v.size())), "OK: OK");
  }
  std::vector<uint8_t> contents(rt::BufferState *b) {
    std::vector<uint8_t> v(size_t(d_->buffer.size(b)), 0x11);
    EXPECT_EQ(str(rt::read_buffer(*d_, dev_, b, 0, v.data(), v.size())), "OK: OK");
    return v;
  }
  const rt::DriverVtable *d_ = nullptr;
  rt::DeviceState *dev_ = nullptr;
  std::vector<rt::BufferState *> buffers_;
  std::vector<rt::CommandState *> lists_;
  std::vector<rt::ExecutableState *> executables_;
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = uint8_t(seed + 31 * i + (i >> 8));
  return v;
}

// Poisoned buffers of every kind and of odd, small and multi-chunk sizes take a pattern at an
// offset and give back exactly it, the poison around it untouched.
TEST_P(DriverObjects, BufferRoundTrip) {
  for (rt::MemoryKind kind : {rt::MemoryKind::device, rt::MemoryKind::upload,
                              rt::MemoryKind::readback})
    for (uint64_t size : {uint64_t(13), uint64_t(4096), (uint64_t(9) << 20) + 12}) {
      rt::BufferState *b = buffer(size, kind);
      ASSERT_NE(b, nullptr);
      EXPECT_EQ(d_->buffer.size(b), size);
      if (kind != rt::MemoryKind::device) {
        EXPECT_NE(d_->buffer.host_pointer(dev_, b), nullptr) << "staging buffers are mapped";
      }
      fill(b, 0xA5);
      const uint64_t at = size / 3, n = size - at - 1;
      const std::vector<uint8_t> p = pattern(size_t(n), uint8_t(size));
      EXPECT_EQ(str(rt::write_buffer(*d_, dev_, b, at, p.data(), n)), "OK: OK");
      std::vector<uint8_t> want(size_t(size), 0xA5);
      std::copy(p.begin(), p.end(), want.begin() + at);
      EXPECT_TRUE(contents(b) == want) << "size " << size << " kind " << int(kind);
      std::vector<uint8_t> part(static_cast<size_t>(n));
      EXPECT_EQ(str(rt::read_buffer(*d_, dev_, b, at, part.data(), n)), "OK: OK");
      EXPECT_TRUE(part == p);
    }
}

// Zero-size buffers and ranges outside a buffer are refused with a message, and nothing changes.
TEST_P(DriverObjects, BufferErrors) {
  rt::BufferState *none = nullptr;
  EXPECT_STATUS(d_->buffer.create(dev_, 0, rt::MemoryKind::device, &none).release(),
                "INVALID_ARGUMENT", "buffer of 0 bytes");
  EXPECT_EQ(none, nullptr);
  rt::BufferState *b = buffer(64);
  ASSERT_NE(b, nullptr);
  fill(b, 0xA5);
  std::vector<uint8_t> v(128, 1);
  EXPECT_STATUS(rt::write_buffer(*d_, dev_, b, 0, v.data(), 65).release(), "INVALID_ARGUMENT",
                "buffer write: bytes [0, +65) are outside the buffer of 64 bytes");
  EXPECT_STATUS(rt::write_buffer(*d_, dev_, b, 60, v.data(), 8).release(), "INVALID_ARGUMENT",
                "bytes [60, +8) are outside");
  EXPECT_STATUS(rt::write_buffer(*d_, dev_, b, UINT64_MAX, v.data(), 2).release(),
                "INVALID_ARGUMENT", "outside the buffer of 64 bytes");
  EXPECT_STATUS(rt::read_buffer(*d_, dev_, b, 1, v.data(), 64).release(), "INVALID_ARGUMENT",
                "buffer read: bytes [1, +64) are outside");
  EXPECT_STATUS(rt::read_buffer(*d_, dev_, b, 65, v.data(), 0).release(), "INVALID_ARGUMENT",
                "outside the buffer");
  EXPECT_STATUS(rt::write_buffer(*d_, dev_, nullptr, 0, v.data(), 4).release(),
                "INVALID_ARGUMENT", "buffer is NULL");
  EXPECT_EQ(str(rt::write_buffer(*d_, dev_, b, 64, v.data(), 0)), "OK: OK"); // empty, at the end
  EXPECT_TRUE(contents(b) == std::vector<uint8_t>(64, 0xA5));
}

// A recorded copy runs on every submission (the list is replayed) and moves exactly its range;
// the null driver runs nothing, so there the destination keeps its poison.
TEST_P(DriverObjects, CopyCommand) {
  rt::BufferState *src = buffer(256), *dst = buffer(256);
  ASSERT_TRUE(src && dst);
  const std::vector<uint8_t> p = pattern(256, 7);
  EXPECT_EQ(str(rt::write_buffer(*d_, dev_, src, 0, p.data(), p.size())), "OK: OK");
  fill(dst, 0xA5);
  rt::CommandState *l = list();
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(str(d_->command.begin(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.copy(dev_, l, src, 8, dst, 16, 100)), "OK: OK");
  EXPECT_EQ(str(d_->command.barrier(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.end(dev_, l)), "OK: OK");
  std::vector<uint8_t> want(256, 0xA5);
  if (GetParam().executes)
    std::copy(p.begin() + 8, p.begin() + 108, want.begin() + 16);
  for (int rep = 0; rep < 2; ++rep) {
    EXPECT_EQ(str(d_->command.submit(dev_, l)), "OK: OK");
    EXPECT_TRUE(contents(dst) == want) << "submission " << rep;
    fill(dst, 0xA5);
  }
}

// Misuse of a command list is refused with a message: commands outside a recording, submitting
// an unrecorded list, ranges outside the buffers, empty and overlapping copies, unknown timers.
TEST_P(DriverObjects, CommandErrors) {
  rt::BufferState *a = buffer(64), *b = buffer(32);
  ASSERT_TRUE(a && b);
  rt::CommandState *l = list(rt::CommandListDesc{0, 0, 1});
  ASSERT_NE(l, nullptr);
  EXPECT_STATUS(d_->command.submit(dev_, l).release(), "INVALID_ARGUMENT",
                "submit: the command list was not recorded");
  EXPECT_STATUS(d_->command.copy(dev_, l, a, 0, b, 0, 4).release(), "INVALID_ARGUMENT",
                "copy: the command list is not recording");
  EXPECT_STATUS(d_->command.end(dev_, l).release(), "INVALID_ARGUMENT", "not recording");
  EXPECT_EQ(str(d_->command.begin(dev_, l)), "OK: OK");
  EXPECT_STATUS(d_->command.begin(dev_, l).release(), "INVALID_ARGUMENT", "already recording");
  EXPECT_STATUS(d_->command.copy(dev_, l, a, 0, b, 0, 33).release(), "INVALID_ARGUMENT",
                "copy destination: bytes [0, +33) are outside the buffer of 32 bytes");
  EXPECT_STATUS(d_->command.copy(dev_, l, a, 40, b, 0, 32).release(), "INVALID_ARGUMENT",
                "copy source: bytes [40, +32) are outside the buffer of 64 bytes");
  EXPECT_STATUS(d_->command.copy(dev_, l, a, 0, b, 0, 0).release(), "INVALID_ARGUMENT",
                "a range of 0 bytes");
  EXPECT_STATUS(d_->command.copy(dev_, l, a, 0, a, 8, 16).release(), "INVALID_ARGUMENT",
                "overlap");
  EXPECT_STATUS(d_->command.copy(dev_, l, nullptr, 0, a, 8, 16).release(), "INVALID_ARGUMENT",
                "source buffer is NULL");
  EXPECT_STATUS(d_->command.timer(dev_, l, 1, false).release(), "INVALID_ARGUMENT",
                "timer 1: the command list has 1 timer(s)");
  rt::Dispatch none;
  EXPECT_STATUS(d_->command.dispatch(dev_, l, none).release(), "INVALID_ARGUMENT",
                "executable is NULL");
  EXPECT_EQ(str(d_->command.copy(dev_, l, a, 0, a, 32, 32)), "OK: OK"); // adjacent halves
  EXPECT_EQ(str(d_->command.end(dev_, l)), "OK: OK");
  uint64_t never[1] = {7};
  EXPECT_STATUS(d_->command.read_timers(dev_, l, never, 1).release(), "INVALID_ARGUMENT",
                "read_timers: the command list has not run since it was recorded");
  EXPECT_EQ(str(d_->command.submit(dev_, l)), "OK: OK");
  uint64_t ns[2] = {7, 7};
  EXPECT_STATUS(d_->command.read_timers(dev_, l, ns, 2).release(), "INVALID_ARGUMENT",
                "2 timers asked for, the command list has 1");
  EXPECT_EQ(str(d_->command.read_timers(dev_, l, ns, 1)), "OK: OK");
  EXPECT_EQ(ns[0], 0u) << "a timer never recorded reads 0";
}

// The add kernel (tests/unit/runtime_add.comp) dispatched alone, timed: c = a + b on a driver
// that executes, c untouched on null; the timer is written (0 where there are no timestamps).
// Wrong binding counts, ranges and a list's capacity are refused.
TEST_P(DriverObjects, DispatchAddKernel) {
  const std::vector<uint8_t> artifact = make_artifact();
  std::unique_ptr<rt::Program> program;
  rt::ArtifactBytes bytes;
  ASSERT_EQ(str(rt::parse_artifact(artifact.data(), artifact.size(), &program, &bytes)),
            "OK: OK");
  rt::ExecutableState *exe = nullptr;
  ASSERT_EQ(str(d_->executable.create(dev_, *program, 0, bytes, &exe)), "OK: OK");
  executables_.push_back(exe);
  rt::BufferState *a = buffer(kBytes), *b = buffer(kBytes), *c = buffer(kBytes + 64);
  ASSERT_TRUE(a && b && c);
  std::vector<float> x(kN), y(kN);
  for (int64_t i = 0; i < kN; ++i) {
    x[i] = 0.5f * float(i) - 3.0f;
    y[i] = float(i * i) + 0.25f;
  }
  EXPECT_EQ(str(rt::write_buffer(*d_, dev_, a, 0, x.data(), kBytes)), "OK: OK");
  EXPECT_EQ(str(rt::write_buffer(*d_, dev_, b, 0, y.data(), kBytes)), "OK: OK");
  fill(c, 0xA5);
  rt::CommandState *l = list(rt::CommandListDesc{1, 3, 1});
  ASSERT_NE(l, nullptr);
  const uint32_t n = uint32_t(kN);
  rt::Binding binds[3] = {{a, 0, kBytes}, {b, 0, kBytes}, {c, 64, kBytes}};
  rt::Dispatch add;
  add.executable = exe;
  add.bindings = binds;
  add.binding_count = 3;
  add.push_constants = &n;
  add.push_constant_bytes = 4;
  add.workgroups = {2, 1, 1};
  EXPECT_EQ(str(d_->command.begin(dev_, l)), "OK: OK");
  add.binding_count = 2;
  EXPECT_STATUS(d_->command.dispatch(dev_, l, add).release(), "INVALID_ARGUMENT",
                "dispatch of 'add': 2 bindings given, the executable has 3");
  add.binding_count = 3;
  binds[2].offset = 128;
  EXPECT_STATUS(d_->command.dispatch(dev_, l, add).release(), "INVALID_ARGUMENT",
                "dispatch of 'add' binding 2: bytes [128, +400) are outside the buffer of 464");
  binds[2].offset = 64;
  EXPECT_EQ(str(d_->command.timer(dev_, l, 0, false)), "OK: OK");
  EXPECT_EQ(str(d_->command.dispatch(dev_, l, add)), "OK: OK");
  EXPECT_EQ(str(d_->command.timer(dev_, l, 0, true)), "OK: OK");
  EXPECT_STATUS(d_->command.dispatch(dev_, l, add).release(), "INVALID_ARGUMENT",
                "the command list holds at most 1 dispatch(es)");
  EXPECT_EQ(str(d_->command.barrier(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.end(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.submit(dev_, l)), "OK: OK");
  uint64_t ns = ~uint64_t(0);
  EXPECT_EQ(str(d_->command.read_timers(dev_, l, &ns, 1)), "OK: OK");
  EXPECT_NE(ns, ~uint64_t(0)) << "the timer was not written";
  const std::vector<uint8_t> got = contents(c);
  EXPECT_TRUE(std::all_of(got.begin(), got.begin() + 64, [](uint8_t v) { return v == 0xA5; }))
      << "bytes before the binding were written";
  std::vector<float> sum(kN);
  std::memcpy(sum.data(), got.data() + 64, kBytes);
  for (int64_t i = 0; i < kN; ++i) {
    if (GetParam().executes) {
      ASSERT_EQ(sum[i], x[i] + y[i]) << i;
    } else {
      uint32_t bits;
      std::memcpy(&bits, &sum[i], 4);
      ASSERT_EQ(bits, 0xA5A5A5A5u) << i;
    }
  }
  // Recorded again from the start, the list runs the new recording.
  EXPECT_EQ(str(d_->command.begin(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.dispatch(dev_, l, add)), "OK: OK");
  EXPECT_EQ(str(d_->command.barrier(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.end(dev_, l)), "OK: OK");
  EXPECT_EQ(str(d_->command.submit(dev_, l)), "OK: OK");
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverObjects,
                         ::testing::Values(DriverCase{"null", false, true},
                                           DriverCase{"vulkan", true, false}),
                         [](const ::testing::TestParamInfo<DriverCase> &info) {
                           return std::string(info.param.name);
                         });

INSTANTIATE_TEST_SUITE_P(Drivers, DriverConformance,
                         ::testing::Values(DriverCase{"null", false, true},
                                           DriverCase{"vulkan", true, false}),
                         [](const ::testing::TestParamInfo<DriverCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
