// Vulkan physical-device capabilities and the open logical device shared by its modules.
#pragma once

#include "runtime/program.h"
#include "runtime/vulkan/vk_api.h"

#include <atomic>
#include <mutex>

namespace kiln::rt::vk {

// What kiln needs to know about a physical device.
struct PhysicalInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  kiln_device_info info{};
  VkPhysicalDeviceLimits limits{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = 0;
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period = 1.0f;
  bool cooperative_matrix_extension = false;
  // Loop iterations one shader invocation may run; 0 = no known cap. llvmpipe (lavapipe) leaves
  // every loop after 65,535 iterations per invocation without an error (gallivm's limiter).
  uint64_t loop_iteration_cap = 0;
};

// Enumerates physical devices of `instance` in driver order.
Status enumerate(const Instance &instance, std::vector<PhysicalInfo> *out);

// Test-only fault injection, inert unless KILN_VULKAN_FAULT is set when the device is opened:
//   alloc:N    the Nth vkCreateBuffer or vkAllocateMemory call (counted together, from 1)
//              fails with VK_ERROR_OUT_OF_DEVICE_MEMORY
//   submit:N   the Nth vkQueueSubmit fails with VK_ERROR_DEVICE_LOST (nothing is submitted)
//   lost:N     the Nth vkWaitForFences waits as usual, then reports VK_ERROR_DEVICE_LOST
//   no-barriers  command lists record no barriers (CommandOps::barrier does nothing): a
//              deliberate data race between a program's commands, for proving that
//              synchronization validation (KILN_VULKAN_VALIDATION=sync) works
//   no-map     never maps device-local memory, so constants, inputs and outputs go through
//              staging buffers and copies as on a discrete GPU (lavapipe's memory is mappable)
// Settings combine with commas (e.g. "no-map,submit:2"); at most one of them counts calls.
// Counters belong to the device, so every kiln_device_open starts again from zero.
struct Fault {
  enum Kind { none, alloc, submit, lost };
  Kind kind = none;
  uint64_t nth = 0;
  bool no_barriers = false, no_map = false;
  std::atomic<uint64_t> calls{0};
  // Counts a call of `kind`; true when this call is the one to fail.
  bool hit(Kind k) { return kind == k && calls.fetch_add(1) + 1 == nth; }
};

// Reads KILN_VULKAN_FAULT; INVALID_ARGUMENT for a value it does not understand.
Status parse_fault(const char *value, Fault *out);

// Buffers and memory allocations kiln has created and not yet destroyed, over all devices of
// the process (tests check that failed calls release what they allocated).
uint64_t live_allocations();

struct Device {
  std::unique_ptr<Instance> instance;
  Fault fault;
  // Set once any call reported VK_ERROR_DEVICE_LOST; from then on loads and runs fail with
  // KILN_DEVICE_LOST and only releasing modules and the device is useful.
  std::atomic<bool> lost{false};
  PhysicalInfo physical;
  VkDevice device = VK_NULL_HANDLE;
  bool borrowed = false; // the application's VkDevice (kiln_device_open_vulkan): not destroyed
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex; // vkQueueSubmit needs external synchronisation
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  KILN_VK_DEVICE_FNS(KILN_VK_DECLARE)
  // Diagnostics for kernel tuning: with KILN_VK_PIPELINE_STATS=1 at device open, on a driver
  // with VK_KHR_pipeline_executable_properties, each pipeline's compiler statistics (registers,
  // spills, instruction counts: whatever the driver reports) are printed to stderr at load.
  PFN_vkGetPipelineExecutablePropertiesKHR vkGetPipelineExecutablePropertiesKHR = nullptr;
  PFN_vkGetPipelineExecutableStatisticsKHR vkGetPipelineExecutableStatisticsKHR = nullptr;
  bool pipeline_stats() const { return vkGetPipelineExecutableStatisticsKHR != nullptr; }
  ~Device();
};

Status open_device(size_t index, std::unique_ptr<Device> *out);
// A device on the application's VkDevice and queue (kiln_device_open_vulkan): capabilities are
// what the physical device offers and the application enabled.
Status open_external(const kiln_vulkan_context &context, std::unique_ptr<Device> *out);

// Marks the device lost when `s` is KILN_DEVICE_LOST; returns `s`.
Status note_loss(Device &d, Status s);
// KILN_DEVICE_LOST when the device was lost earlier, else OK.
Status check_not_lost(const Device &d);

// Submits `cmd` alone, signalling `fence` (reset first), and waits for it. A lost device is
// noted (see Device::lost).
Status submit_and_wait(Device &d, VkCommandBuffer cmd, VkFence fence);

// Names what `req` (of executable `name`) needs that the device lacks; OK when nothing.
Status check_requirements(const PhysicalInfo &p, const Executable &exe);

// A buffer with its own memory allocation; `mapped` is set for host-visible memory.
// An imported buffer (kiln_buffer_import_vulkan) is `size` bytes at `base` of the application's
// VkBuffer, with no memory of kiln's: destroy_buffer leaves it alone, and every binding and copy
// offset is relative to `base`.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *mapped = nullptr;
  VkDeviceSize size = 0;
  VkDeviceSize base = 0;
  bool borrowed = false;
};

enum class MemoryUse { device_local, host_visible };

// Creates a buffer of `size` (> 0) bytes. device_local prefers DEVICE_LOCAL memory (mapped too
// when that memory happens to be host-visible); host_visible needs HOST_VISIBLE|HOST_COHERENT.
Status create_buffer(Device &d, VkDeviceSize size, VkBufferUsageFlags usage, MemoryUse use,
                     Buffer *out);
void destroy_buffer(Device &d, Buffer *b);

} // namespace kiln::rt::vk
