// Vulkan physical-device capabilities and the open logical device shared by its modules.
#pragma once

#include "runtime/program.h"
#include "runtime/vulkan/vk_api.h"

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
};

// Enumerates physical devices of `instance` in driver order.
Status enumerate(const Instance &instance, std::vector<PhysicalInfo> *out);

struct Device {
  std::unique_ptr<Instance> instance;
  PhysicalInfo physical;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  std::mutex queue_mutex; // vkQueueSubmit needs external synchronisation
  VkPipelineCache pipeline_cache = VK_NULL_HANDLE;
  KILN_VK_DEVICE_FNS(KILN_VK_DECLARE)
  ~Device();
};

Status open_device(size_t index, std::unique_ptr<Device> *out);

// Names what `req` (of executable `name`) needs that the device lacks; OK when nothing.
Status check_requirements(const PhysicalInfo &p, const Executable &exe);

// A buffer with its own memory allocation; `mapped` is set for host-visible memory.
struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void *mapped = nullptr;
  VkDeviceSize size = 0;
};

enum class MemoryUse { device_local, host_visible };

// Creates a buffer of `size` (> 0) bytes. device_local prefers DEVICE_LOCAL memory (mapped too
// when that memory happens to be host-visible); host_visible needs HOST_VISIBLE|HOST_COHERENT.
Status create_buffer(Device &d, VkDeviceSize size, VkBufferUsageFlags usage, MemoryUse use,
                     Buffer *out);
void destroy_buffer(Device &d, Buffer *b);

} // namespace kiln::rt::vk
