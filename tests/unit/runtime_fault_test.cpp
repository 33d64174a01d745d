// Runtime tests under injected Vulkan faults (KILN_VULKAN_FAULT: failed allocations, device
// loss, missing barriers) and with synchronization validation. main() is in runtime_test.cpp.
#include "runtime_test_util.h"

#include "kiln/kiln.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// Vulkan fault injection (KILN_VULKAN_FAULT, see src/runtime/vulkan/vk_device.h)

// Sets an environment variable for one scope and restores the previous value.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    const char *old = std::getenv(name);
    had_ = old != nullptr;
    if (had_)
      old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  bool had_ = false;
  std::string old_;
};

bool have_vulkan() {
  size_t n = 0;
  kiln_status s = kiln_device_count("vulkan", &n);
  kiln_status_free(s);
  return !s && n > 0;
}

// A fresh device under `fault`; null (and a test failure) when it does not open.
kiln_device *open_with_fault(const std::string &fault) {
  ScopedEnv env("KILN_VULKAN_FAULT", fault.c_str());
  kiln_device *d = nullptr;
  kiln_status s = kiln_device_open("vulkan", &d);
  EXPECT_EQ(s, nullptr) << fault << ": " << kiln_status_message(s);
  kiln_status_free(s);
  return d;
}

} // namespace

// Exported by the runtime for tests: Vulkan buffers and memory allocations not yet freed.
namespace kiln::rt::vk {
uint64_t live_allocations();
}

namespace {

std::string fault_kind_note(const std::string &mode, const char *kind) { return mode + kind; }

TEST(VulkanFault, BadSettingIsRefused) {
  if (!have_vulkan())
    GTEST_SKIP() << "no Vulkan device";
  for (const char *v : {"alloc", "alloc:0", "alloc:x", "submit:-1", "explode:3", "alloc:1,lost:2"}) {
    ScopedEnv env("KILN_VULKAN_FAULT", v);
    kiln_device *d = nullptr;
    EXPECT_STATUS(kiln_device_open("vulkan", &d), "INVALID_ARGUMENT", "KILN_VULKAN_FAULT='");
    EXPECT_EQ(d, nullptr);
  }
}

// Fails every buffer and memory allocation of a load and of the first run in turn (the frame
// of a module is created by its first run): each gives OUT_OF_MEMORY naming the call, releases
// what it allocated, and leaves the module usable; the fault fires once, so the next run is
// exact. Again with no-map: the constant upload's staging buffer and the I/O staging buffers.
TEST(VulkanFault, EveryAllocationFailureIsAnError) {
  if (!have_vulkan())
    GTEST_SKIP() << "no Vulkan device";
  const uint64_t live_before = kiln::rt::vk::live_allocations();
  const std::vector<uint8_t> a = make_artifact();
  for (const std::string mode : {"", "no-map,"}) {
  int failed_loads = 0, failed_runs = 0;
  bool exhausted = false;
  for (int nth = 1; nth <= 200 && !exhausted; ++nth) {
    const std::string fault = mode + "alloc:" + std::to_string(nth);
    kiln_device *d = open_with_fault(fault);
    ASSERT_NE(d, nullptr);
    kiln_module *m = nullptr;
    std::string s = take(kiln_module_load_memory(d, a.data(), a.size(), &m));
    if (s != "OK: OK") {
      ++failed_loads;
      EXPECT_EQ(m, nullptr) << fault;
      EXPECT_EQ(s.rfind("OUT_OF_MEMORY: vk", 0), 0u) << fault << ": " << s;
      EXPECT_NE(s.find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos) << s;
      EXPECT_EQ(kiln::rt::vk::live_allocations(), live_before) << fault << ": leaked";
      m = load(d, a); // the fault has fired: the same device loads fine now
      ASSERT_NE(m, nullptr) << fault;
    } else {
      Io io;
      io.poison();
      s = take(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
      if (s != "OK: OK") {
        ++failed_runs;
        EXPECT_EQ(s.rfind("OUT_OF_MEMORY: vk", 0), 0u) << fault << ": " << s;
      } else {
        io.expect_exact();
        exhausted = true; // nth is past the last allocation
      }
    }
    Io io;
    io.poison();
    EXPECT_OK(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
    io.expect_exact();
    uint64_t messages = 0;
    EXPECT_OK(kiln_device_validation_message_count(d, &messages));
    EXPECT_EQ(messages, 0u) << fault << ": validation layer messages (see stderr)";
    kiln_module_release(m);
    kiln_device_release(d);
    EXPECT_EQ(kiln::rt::vk::live_allocations(), live_before) << fault << ": leaked";
  }
  EXPECT_TRUE(exhausted) << mode;
  // A buffer and its memory each: constants (and their staging buffer); arena, one input, two
  // outputs (and their staging buffers).
  EXPECT_GE(failed_loads, mode.empty() ? 2 : 4) << mode;
  EXPECT_GE(failed_runs, mode.empty() ? 8 : 14) << mode;
  }
}

// Loses the device at every vkQueueSubmit (`submit:N`) and every vkWaitForFences (`lost:N`) of a
// load and three runs in turn: the failing call says DEVICE_LOST and names the Vulkan call,
// every later load or run on the device says DEVICE_LOST, and releasing everything is safe.
// With no-map the load submits too (the constant upload).
TEST(VulkanFault, DeviceLossIsStickyAndReleasable) {
  if (!have_vulkan())
    GTEST_SKIP() << "no Vulkan device";
  const uint64_t live_before = kiln::rt::vk::live_allocations();
  const std::vector<uint8_t> a = make_artifact();
  for (const std::string mode : {"", "no-map,"})
  for (const char *kind : {"submit", "lost"}) {
    const std::string call = std::string(kind) == "submit" ? "vkQueueSubmit" : "vkWaitForFences";
    int losses = 0, load_losses = 0;
    bool exhausted = false;
    for (int nth = 1; nth <= 50 && !exhausted; ++nth) {
      const std::string fault = mode + kind + ":" + std::to_string(nth);
      kiln_device *d = open_with_fault(fault);
      ASSERT_NE(d, nullptr);
      kiln_module *m = nullptr;
      std::string s = take(kiln_module_load_memory(d, a.data(), a.size(), &m));
      load_losses += s != "OK: OK";
      for (int run = 0; run < 3 && s == "OK: OK"; ++run) {
        Io io;
        io.poison();
        s = take(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
        if (s == "OK: OK")
          io.expect_exact();
      }
      if (s == "OK: OK") {
        exhausted = true;
      } else {
        ++losses;
        EXPECT_EQ(s.rfind("DEVICE_LOST: " + call + " failed: VK_ERROR_DEVICE_LOST", 0), 0u)
            << fault << ": " << s;
        EXPECT_NE(s.find("open it again"), std::string::npos) << s;
        if (m) {
          Io io;
          EXPECT_STATUS(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2),
                        "DEVICE_LOST", "was lost earlier");
        }
        kiln_module *m2 = nullptr;
        EXPECT_STATUS(kiln_module_load_memory(d, a.data(), a.size(), &m2), "DEVICE_LOST",
                      "was lost earlier");
        EXPECT_EQ(m2, nullptr);
      }
      kiln_module_release(m);
      kiln_device_release(d);
      EXPECT_EQ(kiln::rt::vk::live_allocations(), live_before) << fault << ": leaked";
    }
    EXPECT_TRUE(exhausted) << fault_kind_note(mode, kind);
    EXPECT_GE(losses, mode.empty() ? 3 : 4) << fault_kind_note(mode, kind); // one per run (+ upload)
    EXPECT_EQ(load_losses, mode.empty() ? 0 : 1) << fault_kind_note(mode, kind);
  }
}

// Synchronization validation is really on with KILN_VULKAN_VALIDATION=sync: a program recorded
// without its barriers (KILN_VULKAN_FAULT=no-barriers) is a data race between dispatches, which
// the layer reports and which fails the run. With the barriers the same program runs clean,
// also through staging buffers (KILN_VULKAN_FAULT=no-map: constant upload, input and output
// copies, as on a GPU whose memory the host cannot map).
TEST(VulkanSyncValidation, MissingBarrierIsReported) {
  if (!have_vulkan())
    GTEST_SKIP() << "no Vulkan device";
#if defined(__SANITIZE_ADDRESS__)
  // The sync-validation layer leaks per instance in a way LeakSanitizer cannot attribute once the
  // loader has unloaded it (tests/CMakeLists.txt); the normal build runs this test.
  GTEST_SKIP() << "synchronization validation is not run under AddressSanitizer";
#endif
  ScopedEnv sync("KILN_VULKAN_VALIDATION", "sync");
  const std::vector<uint8_t> a = make_artifact();
  uint64_t live_plain = 0, live_staged = 0; // buffers + allocations while a module is loaded
  for (const char *fault : {"", "no-map", "no-barriers"}) {
    kiln_device *d = nullptr;
    {
      ScopedEnv env("KILN_VULKAN_FAULT", fault);
      kiln_status s = kiln_device_open("vulkan", &d);
      if (s) {
        std::string why = kiln_status_message(s);
        kiln_status_free(s);
        GTEST_SKIP() << why; // no validation layer installed
      }
    }
    kiln_module *m = load(d, a);
    ASSERT_NE(m, nullptr);
    Io io;
    std::string s = take(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
    uint64_t messages = 0;
    EXPECT_OK(kiln_device_validation_message_count(d, &messages));
    if (std::string(fault) == "no-barriers") {
      EXPECT_EQ(s.rfind("DEVICE_ERROR: the Vulkan validation layer reported", 0), 0u) << s;
      EXPECT_GT(messages, 0u);
    } else {
      EXPECT_EQ(s, "OK: OK") << fault;
      io.expect_exact();
      EXPECT_EQ(messages, 0u) << fault;
      (*fault ? live_staged : live_plain) = kiln::rt::vk::live_allocations();
    }
    kiln_module_release(m);
    kiln_device_release(d);
  }
  // A CPU device's memory is mappable and needs no staging, so there no-map adds staging
  // buffers (a discrete GPU stages either way).
  kiln_device_info info;
  EXPECT_OK(kiln_device_describe("vulkan", &info));
  if (std::string(info.device_type) == "cpu") {
    EXPECT_GT(live_staged, live_plain) << "no-map did not add staging buffers";
  }
}

// An input that passes through staging in chunks (KILN_UPLOAD_CHUNK_BYTES=64: the 400-byte
// input in 7 chunks, each submitted by a list of its own while the host writes the next),
// under synchronization validation with the layer's submit-time checks (hazards between
// submissions): exact on every call, with inputs that change between calls, and silent.
TEST(VulkanSyncValidation, ChunkedUploadThroughStaging) {
  if (!have_vulkan())
    GTEST_SKIP() << "no Vulkan device";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "synchronization validation is not run under AddressSanitizer";
#endif
  ScopedEnv sync("KILN_VULKAN_VALIDATION", "sync");
  ScopedEnv submit_time("VK_LAYER_ENABLES",
                        "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT");
  ScopedEnv chunks("KILN_UPLOAD_CHUNK_BYTES", "64");
  kiln_device *d = nullptr;
  {
    ScopedEnv env("KILN_VULKAN_FAULT", "no-map");
    kiln_status s = kiln_device_open("vulkan", &d);
    if (s) {
      std::string why = kiln_status_message(s);
      kiln_status_free(s);
      GTEST_SKIP() << why; // no validation layer installed
    }
  }
  const uint64_t before = kiln::rt::vk::live_allocations();
  kiln_module *m = load(d, make_artifact());
  ASSERT_NE(m, nullptr);
  for (int rep = 0; rep < 3; ++rep) {
    Io io(float(rep) + 0.5f);
    io.poison();
    EXPECT_OK(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
    io.expect_exact();
  }
  uint64_t messages = 0;
  EXPECT_OK(kiln_device_validation_message_count(d, &messages));
  EXPECT_EQ(messages, 0u);
  kiln_module_release(m);
  EXPECT_EQ(kiln::rt::vk::live_allocations(), before);
  kiln_device_release(d);
}

} // namespace
