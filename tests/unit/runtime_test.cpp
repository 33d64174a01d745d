// Runtime tests: every C API function (misuse included) on the null driver, artifact
// verification, and real runs on the Vulkan driver (lavapipe in CI) with the validation layer.
// Fault injection and synchronization validation: runtime_fault_test.cpp.
#include "runtime_test_util.h"
#include "vulkan_device_fixture.h"

#include "kiln/artifact/digest.h"
#include "kiln/artifact/kiln_generated.h"
#include "kiln/kiln.h"
#include "kiln/kiln.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <link.h>
#include <unistd.h>

namespace {

using namespace runtime_test;


// ---------------------------------------------------------------------------------------------
// Statuses, dtypes, drivers, devices

TEST(RuntimeStatus, NullIsOk) {
  EXPECT_EQ(kiln_status_code_of(nullptr), KILN_OK);
  EXPECT_STREQ(kiln_status_message(nullptr), "OK");
  kiln_status_free(nullptr);
  EXPECT_STREQ(kiln_status_code_name(KILN_UNSUPPORTED), "UNSUPPORTED");
  EXPECT_STREQ(kiln_dtype_name(KILN_BF16), "bf16");
  EXPECT_STREQ(kiln_dtype_name(kiln_dtype(99)), "?");
  EXPECT_EQ(kiln_dtype_size(KILN_I64), 8u);
  EXPECT_EQ(kiln_dtype_size(KILN_BOOL), 1u);
  EXPECT_EQ(kiln_dtype_size(kiln_dtype(99)), 0u);
}

TEST(RuntimeDevices, DriversAndUris) {
  ASSERT_EQ(kiln_driver_count(), 3u);
  EXPECT_STREQ(kiln_driver_name(0), "null");
  EXPECT_STREQ(kiln_driver_name(1), "vulkan");
  EXPECT_STREQ(kiln_driver_name(2), "cpu");
  EXPECT_EQ(kiln_driver_name(3), nullptr);
  size_t n = 0;
  EXPECT_OK(kiln_device_count("null", &n));
  EXPECT_EQ(n, 1u);
  EXPECT_STATUS(kiln_device_count("cuda", &n), "NOT_FOUND", "unknown driver 'cuda'");
  EXPECT_STATUS(kiln_device_count(nullptr, &n), "INVALID_ARGUMENT", "driver is NULL");
  EXPECT_STATUS(kiln_device_count("null", nullptr), "INVALID_ARGUMENT", "out_count");
  kiln_device_info info;
  EXPECT_OK(kiln_device_describe("null", &info));
  EXPECT_STREQ(info.uri, "null:0");
  EXPECT_STATUS(kiln_device_describe("null:1", &info), "NOT_FOUND", "has 1 device");
  EXPECT_STATUS(kiln_device_describe("null:x", &info), "INVALID_ARGUMENT", "not a device index");
  EXPECT_STATUS(kiln_device_describe("metal", &info), "NOT_FOUND", "drivers are null, vulkan, cpu");
  EXPECT_STATUS(kiln_device_describe(nullptr, &info), "INVALID_ARGUMENT", "uri is NULL");
  EXPECT_STATUS(kiln_device_describe("null", nullptr), "INVALID_ARGUMENT", "out_info");
  size_t total = 0;
  EXPECT_OK(kiln_devices_list(nullptr, 0, &total));
  ASSERT_GE(total, 1u);
  std::vector<kiln_device_info> all(total);
  EXPECT_OK(kiln_devices_list(all.data(), all.size(), &total));
  EXPECT_STREQ(all[0].driver, "null");
  EXPECT_STATUS(kiln_devices_list(nullptr, 3, &total), "INVALID_ARGUMENT", "infos");
  EXPECT_STATUS(kiln_devices_list(nullptr, 0, nullptr), "INVALID_ARGUMENT", "out_count");
}

TEST(RuntimeDevices, OpenRelease) {
  kiln_device *d = nullptr;
  EXPECT_STATUS(kiln_device_open("null:3", &d), "NOT_FOUND", "null");
  EXPECT_EQ(d, nullptr);
  EXPECT_STATUS(kiln_device_open("null", nullptr), "INVALID_ARGUMENT", "out_device");
  EXPECT_OK(kiln_device_open("null", &d));
  ASSERT_NE(d, nullptr);
  kiln_device_info info;
  EXPECT_OK(kiln_device_info_get(d, &info));
  EXPECT_STREQ(info.driver, "null");
  EXPECT_STATUS(kiln_device_info_get(nullptr, &info), "INVALID_ARGUMENT", "device is NULL");
  EXPECT_STATUS(kiln_device_info_get(d, nullptr), "INVALID_ARGUMENT", "out_info");
  uint64_t messages = 7;
  EXPECT_OK(kiln_device_validation_message_count(d, &messages));
  EXPECT_EQ(messages, 0u);
  EXPECT_STATUS(kiln_device_validation_message_count(nullptr, &messages), "INVALID_ARGUMENT", "device");
  EXPECT_STATUS(kiln_device_validation_message_count(d, nullptr), "INVALID_ARGUMENT", "out_count");
  kiln_device_release(d);
  kiln_device_release(nullptr);
}

// Under AddressSanitizer the Vulkan driver the loader opened is still mapped after its device
// and instance are gone (the no-op dlclose of src/runtime/vulkan/vk_api.cpp), so LeakSanitizer
// can attribute what it holds (tests/sanitizers/lsan.supp). The tests see lavapipe alone
// (VK_DRIVER_FILES, tests/CMakeLists.txt).
TEST(RuntimeDevices, VulkanDriverStaysLoadedUnderAddressSanitizer) {
#if !KILN_KEEP_MODULES_LOADED
  GTEST_SKIP() << "only AddressSanitizer builds keep dlopen'ed modules loaded";
#else
  size_t n = 0;
  kiln_status st = kiln_device_count("vulkan", &n);
  if (st || n == 0) {
    kiln_status_free(st);
    GTEST_SKIP() << "no Vulkan device";
  }
  kiln_device *d = nullptr;
  ASSERT_EQ(take(kiln_device_open("vulkan", &d)), "OK: OK");
  kiln_device_release(d);
  int drivers = 0;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *count) {
        if (info->dlpi_name && std::strstr(info->dlpi_name, "libvulkan_"))
          ++*static_cast<int *>(count);
        return 0;
      },
      &drivers);
  EXPECT_GE(drivers, 1) << "no libvulkan_*.so mapped after the device was released";
#endif
}

// ---------------------------------------------------------------------------------------------
// Modules on the null driver: signature, argument checks, artifact verification

class NullModule : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(kiln_device_open("null", &device_), nullptr); }
  void TearDown() override { kiln_device_release(device_); }
  kiln_device *device_ = nullptr;
};

TEST_F(NullModule, SignatureAndCommands) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(kiln_module_input_count(m), 1u);
  ASSERT_EQ(kiln_module_output_count(m), 2u);
  kiln_tensor_info ti;
  EXPECT_OK(kiln_module_input_info(m, 0, &ti));
  EXPECT_STREQ(ti.name, "x");
  EXPECT_EQ(ti.dtype, KILN_F32);
  ASSERT_EQ(ti.rank, 2u);
  EXPECT_EQ(ti.shape[0], 4);
  EXPECT_EQ(ti.shape[1], 25);
  EXPECT_EQ(ti.bytes, kBytes);
  EXPECT_OK(kiln_module_output_info(m, 1, &ti));
  EXPECT_STREQ(ti.name, "z");
  EXPECT_STATUS(kiln_module_input_info(m, 1, &ti), "INVALID_ARGUMENT", "input index 1 out of range");
  EXPECT_STATUS(kiln_module_output_info(m, 2, &ti), "INVALID_ARGUMENT", "output index 2");
  EXPECT_STATUS(kiln_module_input_info(nullptr, 0, &ti), "INVALID_ARGUMENT", "module is NULL");
  EXPECT_STATUS(kiln_module_output_info(m, 0, nullptr), "INVALID_ARGUMENT", "out_info");
  EXPECT_EQ(kiln_module_input_count(nullptr), 0u);
  EXPECT_EQ(kiln_module_output_count(nullptr), 0u);
  ASSERT_EQ(kiln_module_command_count(m), 4u);
  EXPECT_EQ(kiln_module_command_count(nullptr), 0u);
  kiln_command_info ci;
  EXPECT_OK(kiln_module_command_info(m, 0, &ci));
  EXPECT_EQ(ci.kind, KILN_COMMAND_DISPATCH);
  EXPECT_STREQ(ci.name, "add");
  EXPECT_EQ(ci.workgroups[0], 2u);
  EXPECT_EQ(ci.bytes, 3 * kBytes);
  EXPECT_STREQ(ci.ops, ""); // no Dispatch.source_ops: unknown
  EXPECT_OK(kiln_module_command_info(m, 1, &ci));
  EXPECT_STREQ(ci.ops, "kiln.add,kiln.relu");
  EXPECT_OK(kiln_module_command_info(m, 3, &ci));
  EXPECT_EQ(ci.kind, KILN_COMMAND_COPY);
  EXPECT_STREQ(ci.ops, "");
  EXPECT_STATUS(kiln_module_command_info(m, 4, &ci), "INVALID_ARGUMENT", "command index 4");
  EXPECT_STATUS(kiln_module_command_info(nullptr, 0, &ci), "INVALID_ARGUMENT", "module");
  EXPECT_STATUS(kiln_module_command_info(m, 0, nullptr), "INVALID_ARGUMENT", "out_info");
  kiln_module_release(m);
  kiln_module_release(nullptr);
}

TEST_F(NullModule, RunFillsZeros) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  Io io;
  std::vector<uint64_t> ns(4, 99);
  kiln_run_options opts{ns.data(), ns.size()};
  EXPECT_OK(kiln_module_run_with_options(m, io.inputs.data(), 1, io.outputs.data(), 2, &opts));
  for (int64_t i = 0; i < kN; ++i)
    ASSERT_EQ(io.y[i], 0.0f);
  EXPECT_EQ(ns[0], 0u);
  EXPECT_OK(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
  kiln_module_release(m);
}

TEST_F(NullModule, RunArgumentErrors) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  Io io;
  auto run = [&] { return kiln_module_run(m, io.inputs.data(), io.inputs.size(), io.outputs.data(), io.outputs.size()); };
  EXPECT_STATUS(kiln_module_run(nullptr, io.inputs.data(), 1, io.outputs.data(), 2), "INVALID_ARGUMENT", "module is NULL");
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 0, io.outputs.data(), 2), "INVALID_ARGUMENT", "expected 1 inputs, got 0");
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 1), "INVALID_ARGUMENT", "expected 2 outputs, got 1");
  EXPECT_STATUS(kiln_module_run(m, nullptr, 1, io.outputs.data(), 2), "INVALID_ARGUMENT", "inputs array is NULL");
  io.inputs[0].dtype = KILN_I32;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "input 0 'x': expected dtype f32, got i32");
  io.inputs[0].dtype = KILN_F32;
  io.inputs[0].rank = 1;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "input 0 'x': expected rank 2 (shape [4,25]), got rank 1");
  io.inputs[0].rank = 2;
  io.shape_x[1] = 26;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "expected shape [4,25], got [4,26]");
  io.shape_x[1] = 25;
  io.outputs[1].bytes = 399;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "output 1 'z': expected 400 bytes, got 399");
  io.outputs[1].bytes = kBytes;
  io.outputs[0].data = nullptr;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "output 0 'y': data is NULL");
  io.outputs[0].data = io.y.data();
  io.inputs[0].shape = nullptr;
  EXPECT_STATUS(run(), "INVALID_ARGUMENT", "input 0 'x': shape is NULL");
  kiln_module_release(m);
}

TEST_F(NullModule, LoadArgumentErrors) {
  std::vector<uint8_t> a = make_artifact();
  kiln_module *m = nullptr;
  EXPECT_STATUS(kiln_module_load_memory(nullptr, a.data(), a.size(), &m), "INVALID_ARGUMENT", "device is NULL");
  EXPECT_STATUS(kiln_module_load_memory(device_, nullptr, a.size(), &m), "INVALID_ARGUMENT", "data is NULL");
  EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), a.size(), nullptr), "INVALID_ARGUMENT", "out_module");
  EXPECT_STATUS(kiln_module_load_file(device_, nullptr, &m), "INVALID_ARGUMENT", "path is NULL");
  EXPECT_STATUS(kiln_module_load_file(device_, "/nonexistent/model.kiln", &m), "NOT_FOUND",
                "cannot open artifact '/nonexistent/model.kiln'");
  EXPECT_EQ(m, nullptr);
}

TEST_F(NullModule, LoadFile) {
  std::vector<uint8_t> a = make_artifact();
  std::string path = ::testing::TempDir() + "kiln_runtime_test.kiln";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(a.data()), a.size());
  kiln_module *m = nullptr;
  EXPECT_OK(kiln_module_load_file(device_, path.c_str(), &m));
  EXPECT_EQ(kiln_module_input_count(m), 1u);
  kiln_module_release(m);
  // Left behind for trying examples/run_model.c by hand.
  std::ofstream(::testing::TempDir() + "kiln_runtime_example.kiln", std::ios::binary)
      .write(reinterpret_cast<const char *>(a.data()), a.size());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(a.data()), 40);
  EXPECT_STATUS(kiln_module_load_file(device_, path.c_str(), &m), "INVALID_ARTIFACT", path + ": invalid artifact");
}

// Artifacts are verified in place: any start address works, and a file that cannot be mapped
// (a pipe) is read instead.
TEST_F(NullModule, LoadFromAnyAddressAndFromAPipe) {
  std::vector<uint8_t> a = make_artifact();
  for (size_t shift = 1; shift < 8; ++shift) {
    std::vector<uint8_t> shifted(a.size() + shift);
    std::memcpy(shifted.data() + shift, a.data(), a.size());
    kiln_module *m = load(device_, {shifted.begin() + shift, shifted.end()});
    kiln_module *m2 = nullptr;
    EXPECT_OK(kiln_module_load_memory(device_, shifted.data() + shift, a.size(), &m2));
    EXPECT_EQ(kiln_module_command_count(m2), 4u);
    kiln_module_release(m);
    kiln_module_release(m2);
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_LT(a.size(), 65536u); // fits the pipe buffer
  ASSERT_EQ(write(fds[1], a.data(), a.size()), ssize_t(a.size()));
  close(fds[1]);
  kiln_module *m = nullptr;
  EXPECT_OK(kiln_module_load_file(device_, ("/dev/fd/" + std::to_string(fds[0])).c_str(), &m));
  EXPECT_EQ(kiln_module_command_count(m), 4u);
  kiln_module_release(m);
  close(fds[0]);
}

TEST_F(NullModule, CorruptArtifacts) {
  std::vector<uint8_t> a = make_artifact();
  kiln_module *m = nullptr;
  for (size_t cut : {size_t(0), size_t(4), size_t(7)})
    EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), cut, &m), "INVALID_ARTIFACT", "truncated");
  for (size_t cut : {size_t(16), a.size() / 2, a.size() - 1})
    EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), cut, &m), "INVALID_ARTIFACT",
                  "no checksum trailer at its end (truncated");
  std::vector<uint8_t> wrong = a;
  std::memcpy(wrong.data() + 4, "KLN2", 4);
  EXPECT_STATUS(kiln_module_load_memory(device_, wrong.data(), wrong.size(), &m), "INVALID_ARTIFACT",
                "file identifier is not \"KLN1\"");
  Tweaks t;
  t.schema_version = 4;
  std::vector<uint8_t> v4 = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, v4.data(), v4.size(), &m), "INVALID_ARTIFACT",
                "schema version 4 is not supported: this runtime reads version 3");
  // A version-2 artifact in its own layout (SPIR-V in the old Executable field, no code union)
  // verifies and is refused by its version, with the advice to recompile.
  t.schema_version = 2;
  t.code = Tweaks::Code::v2_layout;
  std::vector<uint8_t> v2 = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, v2.data(), v2.size(), &m), "INVALID_ARTIFACT",
                "artifact schema version 2 is not supported: this runtime reads version 3 "
                "(recompile the model with this kiln)");
  // The same layout claiming the current version has no code.
  t.schema_version = KILN_ARTIFACT_SCHEMA_VERSION;
  std::vector<uint8_t> no_code = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, no_code.data(), no_code.size(), &m),
                "INVALID_ARTIFACT", "executable 0 ('add') has no code (code kind 0");
  // A version-1 artifact (no digest trailer) names its version.
  t = Tweaks{};
  t.schema_version = 1;
  t.seal = false;
  std::vector<uint8_t> v1 = make_artifact(t);
  EXPECT_STATUS(kiln_module_load_memory(device_, v1.data(), v1.size(), &m), "INVALID_ARTIFACT",
                "schema version 1 is not supported: this runtime reads version 3 (recompile");
  // Any flipped byte before the trailer is caught by the digest, before parsing; with the
  // digest recomputed, scribbling over the body must still give a clean status, never a crash.
  const size_t payload = a.size() - kiln::artifact::kTrailerBytes;
  for (size_t i = 8; i < payload; i += 7) {
    std::vector<uint8_t> c = a;
    c[i] ^= 0x5a;
    EXPECT_STATUS(kiln_module_load_memory(device_, c.data(), c.size(), &m), "INVALID_ARTIFACT",
                  "the artifact is corrupt (checksum mismatch");
    c.resize(payload);
    kiln::artifact::seal_artifact(&c);
    kiln_status s = kiln_module_load_memory(device_, c.data(), c.size(), &m);
    if (!s)
      kiln_module_release(m);
    kiln_status_free(s);
  }
  std::vector<uint8_t> c = a; // a damaged trailer digest
  c[payload + 5] ^= 1;
  EXPECT_STATUS(kiln_module_load_memory(device_, c.data(), c.size(), &m), "INVALID_ARTIFACT",
                "checksum mismatch");
}

// The digest is SHA-256 of the content before the trailer: known vectors, the same value from
// kiln_artifact_digest, from a loaded module (memory and file), and for a damaged artifact an
// error instead.
TEST_F(NullModule, ArtifactDigest) {
  using kiln::artifact::sha256;
  using kiln::artifact::to_hex;
  EXPECT_EQ(to_hex(sha256("", 0)),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc", 3)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(to_hex(sha256(two_blocks, std::strlen(two_blocks))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  std::vector<uint8_t> million(1000000, 'a');
  kiln::artifact::Sha256 chunked; // uneven updates across block boundaries
  for (size_t at = 0; at < million.size(); at += 77)
    chunked.update(million.data() + at, std::min<size_t>(77, million.size() - at));
  EXPECT_EQ(to_hex(chunked.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

  std::vector<uint8_t> a = make_artifact();
  const size_t payload = a.size() - kiln::artifact::kTrailerBytes;
  uint8_t d[KILN_ARTIFACT_DIGEST_BYTES] = {}, from_module[KILN_ARTIFACT_DIGEST_BYTES] = {};
  EXPECT_OK(kiln_artifact_digest(a.data(), a.size(), d));
  kiln::artifact::Digest want = sha256(a.data(), payload);
  EXPECT_EQ(std::memcmp(d, want.data(), want.size()), 0);
  kiln_module *m = load(device_, a);
  ASSERT_NE(m, nullptr);
  EXPECT_OK(kiln_module_artifact_digest(m, from_module));
  EXPECT_EQ(std::memcmp(from_module, want.data(), want.size()), 0);
  kiln_module_release(m);
  std::string path = ::testing::TempDir() + "kiln_runtime_digest.kiln";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(a.data()), a.size());
  EXPECT_OK(kiln_module_load_file(device_, path.c_str(), &m));
  std::memset(from_module, 0, sizeof from_module);
  EXPECT_OK(kiln_module_artifact_digest(m, from_module));
  EXPECT_EQ(std::memcmp(from_module, want.data(), want.size()), 0);
  kiln_module_release(m);
  // Damaged on disk: the file is hashed with pread, and the damage is caught.
  std::vector<uint8_t> c = a;
  c[payload / 2] ^= 0x01;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(c.data()), c.size());
  EXPECT_STATUS(kiln_module_load_file(device_, path.c_str(), &m), "INVALID_ARTIFACT",
                "checksum mismatch");
  std::remove(path.c_str());
  EXPECT_STATUS(kiln_artifact_digest(c.data(), c.size(), d), "INVALID_ARTIFACT",
                "checksum mismatch");
  EXPECT_STATUS(kiln_artifact_digest(a.data(), payload, d), "INVALID_ARTIFACT",
                "no checksum trailer");
  EXPECT_STATUS(kiln_artifact_digest(nullptr, 0, d), "INVALID_ARGUMENT", "data is NULL");
  EXPECT_STATUS(kiln_module_artifact_digest(nullptr, d), "INVALID_ARGUMENT", "module is NULL");
}

TEST_F(NullModule, OutOfRangeBufferRefs) {
  struct Case {
    kiln::fb::BufferKind kind;
    uint32_t index;
    uint64_t offset, size;
    const char *message;
  } cases[] = {
      {kiln::fb::BufferKind::constant, 1, 0, 4, "refers to constant 1 but there are 1"},
      {kiln::fb::BufferKind::constant, 0, 8, kBytes, "outside constant 0 of 400 bytes"},
      {kiln::fb::BufferKind::input, 1, 0, 4, "refers to input 1 but there are 1"},
      {kiln::fb::BufferKind::output, 0, kBytes, 4, "outside output 0 ('y') of 400 bytes"},
      {kiln::fb::BufferKind::transient, 0, kT2 + 64, kBytes, "outside the transient arena"},
      {kiln::fb::BufferKind::transient, 0, UINT64_MAX - 2, 8, "outside the transient arena"},
      {kiln::fb::BufferKind::input, 0, 0, 0, "is empty"},
      {kiln::fb::BufferKind(9), 0, 0, 4, "unknown buffer kind 9"},
  };
  for (const Case &c : cases) {
    Tweaks t;
    t.bad_ref = true;
    t.bad_kind = c.kind;
    t.bad_index = c.index;
    t.bad_offset = c.offset;
    t.bad_size = c.size;
    std::vector<uint8_t> a = make_artifact(t);
    kiln_module *m = nullptr;
    std::string s = take(kiln_module_load_memory(device_, a.data(), a.size(), &m));
    EXPECT_NE(s.find("command 0 binding 1"), std::string::npos) << s;
    EXPECT_NE(s.find(c.message), std::string::npos) << s;
    EXPECT_EQ(s.rfind("INVALID_ARTIFACT", 0), 0u) << s;
  }
  Tweaks t;
  t.push_bytes = 6;
  std::vector<uint8_t> a = make_artifact(t);
  kiln_module *m = nullptr;
  EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), a.size(), &m), "INVALID_ARTIFACT",
                "6 push constant bytes (a multiple of 4");
}

TEST_F(NullModule, CppWrapper) {
  std::vector<uint8_t> a = make_artifact();
  kiln::Device device("null");
  EXPECT_STREQ(device.info().driver, "null");
  kiln::Module module = kiln::Module::load_memory(device, a.data(), a.size());
  EXPECT_EQ(module.output(0).rank, 2u);
  Io io;
  std::vector<uint64_t> ns;
  module.run(io.inputs, io.outputs, &ns);
  EXPECT_EQ(ns.size(), 4u);
  try {
    kiln::Module::load_memory(device, a.data(), 3);
    FAIL() << "expected kiln::Error";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_INVALID_ARTIFACT);
  }
  EXPECT_FALSE(kiln::list_devices().empty());
}

// ---------------------------------------------------------------------------------------------
// Vulkan

using Vulkan = kiln_test::VulkanDeviceTest;

TEST_F(Vulkan, Describe) {
  kiln_device_info info;
  EXPECT_OK(kiln_device_describe("vulkan:0", &info));
  EXPECT_STREQ(info.uri, "vulkan:0");
  EXPECT_GE(info.api_version, (1u << 22) | (2u << 12));
  EXPECT_GT(info.subgroup_size, 0u);
  EXPECT_GT(info.max_storage_buffer_range, 0u);
  kiln_device_info open_info;
  EXPECT_OK(kiln_device_info_get(device_, &open_info));
  EXPECT_STREQ(open_info.driver, "vulkan");
  EXPECT_STATUS(kiln_device_describe("vulkan:4096", &info), "NOT_FOUND", "device(s)");
}

TEST_F(Vulkan, EndToEndExact) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  for (int rep = 0; rep < 3; ++rep) {
    Io io(float(rep + 1));
    io.poison();
    std::vector<uint64_t> ns(4, 0);
    kiln_run_options opts{ns.data(), ns.size()};
    EXPECT_OK(kiln_module_run_with_options(m, io.inputs.data(), 1, io.outputs.data(), 2, &opts));
    io.expect_exact();
  }
  kiln_module_release(m);
}

// Calls with and without per-command times alternate (each switch records the frame again):
// outputs stay exact, the span is written either way, and command times only when asked.
TEST_F(Vulkan, CommandTimesOnlyWhenAsked) {
  kiln_device_info info;
  EXPECT_OK(kiln_device_info_get(device_, &info));
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  for (int rep = 0; rep < 4; ++rep) {
    const bool times = rep % 2 == 1;
    Io io(float(rep + 1));
    io.poison();
    std::vector<uint64_t> ns(kiln_module_command_count(m), ~uint64_t(0));
    uint64_t span = ~uint64_t(0);
    kiln_run_options opts{times ? ns.data() : nullptr, times ? ns.size() : 0, &span};
    EXPECT_OK(kiln_module_run_with_options(m, io.inputs.data(), 1, io.outputs.data(), 2, &opts));
    io.expect_exact();
    EXPECT_NE(span, ~uint64_t(0)) << "call " << rep;
    if (info.timestamps) {
      EXPECT_GT(span, 0u) << "call " << rep;
    }
    for (uint64_t t : ns)
      EXPECT_EQ(t == ~uint64_t(0), !times) << "call " << rep; // written only when asked
  }
  kiln_module_release(m);
}

// The module keeps nothing of the caller's bytes: they are overwritten right after the load
// (from a misaligned address), and constants loaded from a mapped file are exact too.
TEST_F(Vulkan, LoadKeepsNoPointerIntoTheArtifact) {
  std::vector<uint8_t> a = make_artifact();
  std::vector<uint8_t> shifted(a.size() + 3);
  std::memcpy(shifted.data() + 3, a.data(), a.size());
  kiln_module *m = nullptr;
  EXPECT_OK(kiln_module_load_memory(device_, shifted.data() + 3, a.size(), &m));
  ASSERT_NE(m, nullptr);
  std::fill(shifted.begin(), shifted.end(), uint8_t(0xAB));
  shifted = {};
  std::string path = ::testing::TempDir() + "kiln_runtime_vulkan_test.kiln";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(a.data()), a.size());
  kiln_module *from_file = nullptr;
  EXPECT_OK(kiln_module_load_file(device_, path.c_str(), &from_file));
  ASSERT_NE(from_file, nullptr);
  std::remove(path.c_str());
  for (kiln_module *mod : {m, from_file}) {
    Io io;
    io.poison();
    EXPECT_OK(kiln_module_run(mod, io.inputs.data(), 1, io.outputs.data(), 2));
    io.expect_exact();
    kiln_module_release(mod);
  }
}

TEST_F(Vulkan, ModuleOutlivesDevice) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  uint64_t messages = 0;
  EXPECT_OK(kiln_device_validation_message_count(device_, &messages));
  EXPECT_EQ(messages, 0u);
  kiln_device_release(device_);
  device_ = nullptr;
  Io io;
  io.poison();
  EXPECT_OK(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
  io.expect_exact();
  kiln_module_release(m);
}

TEST_F(Vulkan, FourThreadsConcurrently) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        Io io(float(t * 100 + rep));
        io.poison();
        kiln_status s = kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2);
        std::vector<float> k = constant_k();
        bool ok = s == nullptr;
        for (int64_t i = 0; ok && i < kN; ++i)
          ok = io.z[i] == io.x[i] + k[i] && io.y[i] == (io.x[i] + k[i]) + io.x[i];
        if (!ok)
          failures.fetch_add(1);
        kiln_status_free(s);
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
  kiln_module_release(m);
}

TEST_F(Vulkan, MissingCapabilityIsRefused) {
  Tweaks t;
  t.need_cooperative_matrix = true;
  kiln_device_info info;
  EXPECT_OK(kiln_device_info_get(device_, &info));
  if (info.cooperative_matrix)
    GTEST_SKIP() << "device has cooperative matrices";
  std::vector<uint8_t> a = make_artifact(t);
  kiln_module *m = nullptr;
  EXPECT_STATUS(kiln_module_load_memory(device_, a.data(), a.size(), &m), "UNSUPPORTED",
                "executable 'add' needs VK_KHR_cooperative_matrix, which device '");
}

TEST_F(Vulkan, ArgumentErrorsBeforeWork) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  Io io;
  io.inputs[0].dtype = KILN_F16;
  EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2), "INVALID_ARGUMENT",
                "input 0 'x': expected dtype f32, got f16");
  kiln_module_release(m);
}

// The validation layer is really on: a pipeline whose layout lacks a binding the shader uses is
// reported, counted, and fails the load.
TEST(VulkanValidation, ErrorsFailTheLoad) {
  size_t n = 0;
  kiln_status s = kiln_device_count("vulkan", &n);
  const char *v = std::getenv("KILN_VULKAN_VALIDATION");
  if (s || n == 0 || !v || (std::string(v) != "1" && std::string(v) != "sync")) {
    kiln_status_free(s);
    GTEST_SKIP() << "needs a Vulkan device and KILN_VULKAN_VALIDATION=1 or sync";
  }
  kiln_device *d = nullptr;
  ASSERT_EQ(kiln_device_open("vulkan", &d), nullptr);
  Tweaks t;
  t.drop_third_binding = true;
  std::vector<uint8_t> a = make_artifact(t);
  kiln_module *m = nullptr;
  EXPECT_STATUS(kiln_module_load_memory(d, a.data(), a.size(), &m), "DEVICE_ERROR",
                "validation layer reported");
  uint64_t messages = 0;
  EXPECT_OK(kiln_device_validation_message_count(d, &messages));
  EXPECT_GT(messages, 0u);
  kiln_device_release(d);
}

} // namespace

int main(int argc, char **argv) {
  // Vulkan tests run with the validation layer unless the caller chose otherwise.
  setenv("KILN_VULKAN_VALIDATION", "1", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}