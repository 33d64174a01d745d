// Device buffers (kiln_buffer) and runs on them (kiln_module_run_buffers): argument checks on
// the null driver, exact results on Vulkan (lavapipe in CI) with kiln's own buffers and with a
// VkBuffer range imported at an offset, recordings reused and redone as the buffers change.
// An application's own VkDevice, shaders and semaphores around a model: the interop test
// (examples/interop/vulkan_interop.c under core and synchronization validation).
#include "runtime_test_util.h"
#include "vulkan_device_fixture.h"

#include <cmath>
#include <vector>

namespace {

using namespace runtime_test;

#define ASSERT_OK(call) ASSERT_EQ(take(call), "OK: OK")

struct Buffers {
  kiln_buffer *x = nullptr, *y = nullptr, *z = nullptr;
  void reset() {
    for (kiln_buffer **b : {&x, &y, &z}) {
      kiln_buffer_release(*b);
      *b = nullptr;
    }
  }
  ~Buffers() { reset(); }
};

void create_all(kiln_device *d, Buffers *b) {
  EXPECT_OK(kiln_buffer_create(d, kBytes, &b->x));
  EXPECT_OK(kiln_buffer_create(d, kBytes, &b->y));
  EXPECT_OK(kiln_buffer_create(d, kBytes, &b->z));
}

// Runs the test artifact on buffers holding `io.x` and reads y and z back into `io`.
void run_on_buffers(kiln_module *m, Buffers &b, Io &io) {
  EXPECT_OK(kiln_buffer_write(b.x, 0, io.x.data(), kBytes));
  std::vector<float> poison(kN, std::nanf(""));
  EXPECT_OK(kiln_buffer_write(b.y, 0, poison.data(), kBytes));
  EXPECT_OK(kiln_buffer_write(b.z, 0, poison.data(), kBytes));
  kiln_buffer *outs[2] = {b.y, b.z};
  EXPECT_OK(kiln_module_run_buffers(m, &b.x, 1, outs, 2, nullptr));
  EXPECT_OK(kiln_buffer_read(b.y, 0, io.y.data(), kBytes));
  EXPECT_OK(kiln_buffer_read(b.z, 0, io.z.data(), kBytes));
}

TEST(RuntimeBuffers, CreateWriteReadOnNull) {
  kiln_device *d = nullptr;
  ASSERT_OK(kiln_device_open("null", &d));
  kiln_buffer *b = nullptr;
  EXPECT_STATUS(kiln_buffer_create(d, 0, &b), "INVALID_ARGUMENT", "0 bytes");
  EXPECT_STATUS(kiln_buffer_create(nullptr, 4, &b), "INVALID_ARGUMENT", "device is NULL");
  ASSERT_OK(kiln_buffer_create(d, 64, &b));
  EXPECT_EQ(kiln_buffer_size(b), 64u);
  EXPECT_EQ(kiln_buffer_size(nullptr), 0u);
  std::vector<uint8_t> in(64), out(64, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = uint8_t(3 * i + 1);
  EXPECT_OK(kiln_buffer_write(b, 0, in.data(), 64));
  EXPECT_OK(kiln_buffer_read(b, 0, out.data(), 64));
  EXPECT_EQ(in, out);
  EXPECT_STATUS(kiln_buffer_write(b, 60, in.data(), 8), "INVALID_ARGUMENT", "outside the buffer");
  EXPECT_STATUS(kiln_buffer_read(b, 0, nullptr, 8), "INVALID_ARGUMENT", "NULL");
  uint64_t handle = 0, offset = 0;
  EXPECT_STATUS(kiln_buffer_export_vulkan(b, &handle, &offset), "INVALID_ARGUMENT",
                "needs a Vulkan device");
  kiln_buffer *imported = nullptr;
  EXPECT_STATUS(kiln_buffer_import_vulkan(d, 1234, 0, 64, &imported), "INVALID_ARGUMENT",
                "needs a Vulkan device");
  EXPECT_EQ(imported, nullptr);
  kiln_buffer_release(b);
  kiln_device_release(d); // after its buffers, or before: a buffer keeps its device alive
}

TEST(RuntimeBuffers, RunArgumentErrors) {
  kiln_device *d = nullptr, *other = nullptr;
  ASSERT_OK(kiln_device_open("null", &d));
  ASSERT_OK(kiln_device_open("null", &other));
  kiln_module *m = load(d, make_artifact());
  ASSERT_NE(m, nullptr);
  Buffers b, foreign;
  create_all(d, &b);
  create_all(other, &foreign);
  kiln_buffer *small = nullptr;
  ASSERT_OK(kiln_buffer_create(d, kBytes - 4, &small));
  kiln_buffer *outs[2] = {b.y, b.z};
  EXPECT_OK(kiln_module_run_buffers(m, &b.x, 1, outs, 2, nullptr));
  EXPECT_STATUS(kiln_module_run_buffers(m, &b.x, 0, outs, 2, nullptr), "INVALID_ARGUMENT",
                "expected 1 input buffers, got 0");
  EXPECT_STATUS(kiln_module_run_buffers(m, &small, 1, outs, 2, nullptr), "INVALID_ARGUMENT",
                "the tensor needs 400");
  EXPECT_STATUS(kiln_module_run_buffers(m, &foreign.x, 1, outs, 2, nullptr), "INVALID_ARGUMENT",
                "another device");
  kiln_buffer *null_in = nullptr;
  EXPECT_STATUS(kiln_module_run_buffers(m, &null_in, 1, outs, 2, nullptr), "INVALID_ARGUMENT",
                "input 0 'x': buffer is NULL");
  kiln_buffer *aliased[2] = {b.x, b.z};
  EXPECT_STATUS(kiln_module_run_buffers(m, &b.x, 1, aliased, 2, nullptr), "INVALID_ARGUMENT",
                "is written to the buffer of input 0");
  kiln_buffer *shared[2] = {b.y, b.y};
  EXPECT_STATUS(kiln_module_run_buffers(m, &b.x, 1, shared, 2, nullptr), "INVALID_ARGUMENT",
                "share one buffer");
  kiln_vulkan_sync sync{};
  EXPECT_STATUS(kiln_module_run_buffers(m, &b.x, 1, outs, 2, &sync), "INVALID_ARGUMENT",
                "needs a Vulkan device");
  kiln_buffer_release(small);
  kiln_module_release(m);
  kiln_device_release(other);
  kiln_device_release(d);
}

using VulkanBuffers = kiln_test::VulkanDeviceTest;

// kiln's own buffers: exact results; calls alternate between buffer sets and the host path
// (each change records the frame again), and a released buffer's successor is never mistaken
// for it.
TEST_F(VulkanBuffers, RunOnOwnBuffersExact) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  Buffers first, second;
  create_all(device_, &first);
  create_all(device_, &second);
  for (int rep = 0; rep < 6; ++rep) {
    Io io(float(rep + 1));
    if (rep % 3 == 2) { // the host path in between
      io.poison();
      EXPECT_OK(kiln_module_run(m, io.inputs.data(), 1, io.outputs.data(), 2));
    } else {
      run_on_buffers(m, rep % 3 == 0 ? first : second, io);
    }
    io.expect_exact();
  }
  // New buffers after releasing the old ones (the allocator may hand back the same addresses).
  first.reset();
  create_all(device_, &first);
  Io io(7.0f);
  run_on_buffers(m, first, io);
  io.expect_exact();
  kiln_module_release(m);
}

// A range of a VkBuffer at an offset, imported: bindings and copies land at that offset and
// the bytes around the range stay untouched.
TEST_F(VulkanBuffers, ImportedRangeAtAnOffset) {
  kiln_module *m = load(device_, make_artifact());
  ASSERT_NE(m, nullptr);
  const uint64_t align = 256; // a multiple of every device's minStorageBufferOffsetAlignment
  kiln_buffer *big = nullptr;
  ASSERT_OK(kiln_buffer_create(device_, 4 * align + 3 * kBytes, &big));
  uint64_t handle = 0, base = 0;
  ASSERT_OK(kiln_buffer_export_vulkan(big, &handle, &base));
  EXPECT_NE(handle, 0u);
  EXPECT_EQ(base, 0u);
  const uint64_t total = kiln_buffer_size(big);
  std::vector<uint8_t> sentinel(total, 0x5a);
  ASSERT_OK(kiln_buffer_write(big, 0, sentinel.data(), total));
  Buffers b;
  const uint64_t at_x = align, at_y = 2 * align + kBytes, at_z = 3 * align + 2 * kBytes;
  ASSERT_OK(kiln_buffer_import_vulkan(device_, handle, at_x, kBytes, &b.x));
  ASSERT_OK(kiln_buffer_import_vulkan(device_, handle, at_y, kBytes, &b.y));
  ASSERT_OK(kiln_buffer_import_vulkan(device_, handle, at_z, kBytes, &b.z));
  uint64_t got_handle = 0, got_offset = 0;
  ASSERT_OK(kiln_buffer_export_vulkan(b.y, &got_handle, &got_offset));
  EXPECT_EQ(got_handle, handle);
  EXPECT_EQ(got_offset, at_y);
  kiln_buffer *misaligned = nullptr;
  EXPECT_STATUS(kiln_buffer_import_vulkan(device_, handle, 2, kBytes, &misaligned),
                "INVALID_ARGUMENT", "alignment");
  EXPECT_STATUS(kiln_buffer_import_vulkan(device_, 0, 0, kBytes, &misaligned), "INVALID_ARGUMENT",
                "VK_NULL_HANDLE");
  Io io(3.0f);
  run_on_buffers(m, b, io);
  io.expect_exact();
  std::vector<uint8_t> after(total);
  ASSERT_OK(kiln_buffer_read(big, 0, after.data(), total));
  for (uint64_t i = 0; i < total; ++i) {
    const bool inside = (i >= at_x && i < at_x + kBytes) || (i >= at_y && i < at_y + kBytes) ||
                        (i >= at_z && i < at_z + kBytes);
    if (!inside) {
      ASSERT_EQ(after[i], 0x5a) << "byte " << i << " outside the imported ranges was written";
    }
  }
  b.reset();
  kiln_buffer_release(big);
  kiln_module_release(m);
}

} // namespace
