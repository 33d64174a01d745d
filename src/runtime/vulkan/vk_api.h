// Vulkan entry points, loaded at run time: libvulkan.so.1 is opened with dlopen and every
// function comes from vkGetInstanceProcAddr / vkGetDeviceProcAddr, so the runtime does not link
// libvulkan. The Vulkan headers are used for types only (VK_NO_PROTOTYPES).
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan_core.h>

#include "runtime/status.h"

#include <atomic>
#include <memory>

namespace kiln::rt::vk {

#define KILN_VK_GLOBAL_FNS(X)                                                                      \
  X(vkCreateInstance)                                                                              \
  X(vkEnumerateInstanceExtensionProperties)                                                        \
  X(vkEnumerateInstanceLayerProperties)                                                            \
  X(vkEnumerateInstanceVersion)

#define KILN_VK_INSTANCE_FNS(X)                                                                    \
  X(vkDestroyInstance)                                                                             \
  X(vkEnumeratePhysicalDevices)                                                                    \
  X(vkGetPhysicalDeviceProperties)                                                                 \
  X(vkGetPhysicalDeviceProperties2)                                                                \
  X(vkGetPhysicalDeviceFeatures2)                                                                  \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                                      \
  X(vkGetPhysicalDeviceMemoryProperties)                                                           \
  X(vkEnumerateDeviceExtensionProperties)                                                          \
  X(vkCreateDevice)                                                                                \
  X(vkGetDeviceProcAddr)

// Present only when VK_EXT_debug_utils is enabled.
#define KILN_VK_DEBUG_FNS(X)                                                                       \
  X(vkCreateDebugUtilsMessengerEXT)                                                                \
  X(vkDestroyDebugUtilsMessengerEXT)

#define KILN_VK_DEVICE_FNS(X)                                                                      \
  X(vkDestroyDevice)                                                                               \
  X(vkGetDeviceQueue)                                                                              \
  X(vkDeviceWaitIdle)                                                                              \
  X(vkCreateBuffer)                                                                                \
  X(vkDestroyBuffer)                                                                               \
  X(vkGetBufferMemoryRequirements)                                                                 \
  X(vkAllocateMemory)                                                                              \
  X(vkFreeMemory)                                                                                  \
  X(vkBindBufferMemory)                                                                            \
  X(vkMapMemory)                                                                                   \
  X(vkUnmapMemory)                                                                                 \
  X(vkCreateShaderModule)                                                                          \
  X(vkDestroyShaderModule)                                                                         \
  X(vkCreatePipelineCache)                                                                         \
  X(vkDestroyPipelineCache)                                                                        \
  X(vkCreateDescriptorSetLayout)                                                                   \
  X(vkDestroyDescriptorSetLayout)                                                                  \
  X(vkCreatePipelineLayout)                                                                        \
  X(vkDestroyPipelineLayout)                                                                       \
  X(vkCreateComputePipelines)                                                                      \
  X(vkDestroyPipeline)                                                                             \
  X(vkResetDescriptorPool)                                                                         \
  X(vkCreateDescriptorPool)                                                                        \
  X(vkDestroyDescriptorPool)                                                                       \
  X(vkAllocateDescriptorSets)                                                                      \
  X(vkUpdateDescriptorSets)                                                                        \
  X(vkCreateCommandPool)                                                                           \
  X(vkDestroyCommandPool)                                                                          \
  X(vkAllocateCommandBuffers)                                                                      \
  X(vkBeginCommandBuffer)                                                                          \
  X(vkEndCommandBuffer)                                                                            \
  X(vkCmdBindPipeline)                                                                             \
  X(vkCmdBindDescriptorSets)                                                                       \
  X(vkCmdPushConstants)                                                                            \
  X(vkCmdDispatch)                                                                                 \
  X(vkCmdCopyBuffer)                                                                               \
  X(vkCmdPipelineBarrier)                                                                          \
  X(vkCmdWriteTimestamp)                                                                           \
  X(vkCmdResetQueryPool)                                                                           \
  X(vkCreateQueryPool)                                                                             \
  X(vkDestroyQueryPool)                                                                            \
  X(vkGetQueryPoolResults)                                                                         \
  X(vkCreateFence)                                                                                 \
  X(vkDestroyFence)                                                                                \
  X(vkWaitForFences)                                                                               \
  X(vkResetFences)                                                                                 \
  X(vkQueueSubmit)

#define KILN_VK_DECLARE(name) PFN_##name name = nullptr;

// The loaded library; created once per process and never unloaded.
struct Loader {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  KILN_VK_GLOBAL_FNS(KILN_VK_DECLARE)
};

// Opens libvulkan.so.1 on first use (thread-safe). KILN_UNAVAILABLE when it cannot.
Status get_loader(const Loader **out);

// A VkInstance with its entry points and, when validation is on, a debug messenger that
// counts and prints what the validation layer reports.
struct Instance {
  const Loader *loader = nullptr;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool validation = false;
  bool borrowed = false; // the application's VkInstance (kiln_device_open_vulkan): never destroyed
  bool sync_validation = false; // synchronization validation on top of the core checks
  std::atomic<uint64_t> messages{0}; // everything the layer reported
  std::atomic<uint64_t> errors{0};   // of which errors
  KILN_VK_INSTANCE_FNS(KILN_VK_DECLARE)
  KILN_VK_DEBUG_FNS(KILN_VK_DECLARE)
  ~Instance();
};

enum class Validation { off, core, sync };

// `core`: enable VK_LAYER_KHRONOS_validation + VK_EXT_debug_utils (fails when missing); `sync`
// also turns on the layer's synchronization validation (VK_EXT_validation_features), which
// reports missing or too weak barriers between commands, submissions and the host.
Status create_instance(Validation validation, std::unique_ptr<Instance> *out);

// Wraps the application's VkInstance, loading kiln's entry points through its
// vkGetInstanceProcAddr (so its layers see kiln's calls); the instance is never destroyed.
Status adopt_instance(PFN_vkGetInstanceProcAddr get_proc, VkInstance instance,
                      std::unique_ptr<Instance> *out);

// KILN_VULKAN_VALIDATION: "1" -> core, "sync" -> core + synchronization, else off.
Validation validation_requested();

// DEVICE_ERROR (OUT_OF_MEMORY, DEVICE_LOST) naming the call and the VkResult, OK for VK_SUCCESS.
Status check(VkResult result, const char *what);
const char *result_name(VkResult result);

} // namespace kiln::rt::vk
