// The Vulkan driver's executables (pipelines, vk_executable.cpp) and command lists
// (vk_command.cpp); buffers are vk::Buffer (vk_device.h). The generic module (runtime/module.h)
// drives them through the vtable in vk_driver.cpp.
#pragma once

#include "runtime/driver.h"
#include "runtime/vulkan/vk_device.h"

#include <memory>
#include <vector>

namespace kiln::rt::vk {

// The shader module is destroyed once the pipeline exists (the pipeline no longer needs it).
struct Pipeline {
  const Executable *executable = nullptr; // in the Program, which outlives the pipeline
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// Builds the pipeline of `exe` (executable `index`): refuses code other than SPIR-V and
// requirements the device lacks. `bytes` is read during the call only.
Status create_executable(Device &device, const Executable &exe, const ArtifactBytes &bytes,
                         size_t index, std::unique_ptr<Pipeline> *out);
void destroy_executable(Device &device, Pipeline *pipeline);

// One command buffer with its pool and fence, a descriptor pool sized for the dispatches it
// records (one set per dispatch, written while recording), and a timestamp query pool (two
// queries per timer) where the device has timestamps. Recorded once, submitted any number of
// times; used by one thread at a time.
struct CommandList {
  CommandListDesc desc;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  uint32_t dispatches = 0, bindings = 0; // recorded since begin
  std::vector<uint8_t> written;          // per query: written since begin
  enum class State { empty, recording, ended } state = State::empty;
  bool submitted = false;   // the recording has run (its queries were written)
  bool pending = false;     // submitted asynchronously and not yet waited for (settle)
  uint64_t errors_mark = 0; // validation errors counted before this recording or submission
};

Status create_commands(Device &d, const CommandListDesc &desc, std::unique_ptr<CommandList> *out);
void destroy_commands(Device &d, CommandList *list);
Status begin_commands(Device &d, CommandList &list);
Status record_dispatch(Device &d, CommandList &list, const Dispatch &dispatch);
Status record_copy(Device &d, CommandList &list, Buffer *src, uint64_t src_offset, Buffer *dst,
                   uint64_t dst_offset, uint64_t bytes);
Status record_barrier(Device &d, CommandList &list);
Status record_timer(Device &d, CommandList &list, uint32_t index, bool end);
Status end_commands(Device &d, CommandList &list);
// Submits and waits; DEVICE_ERROR when the validation layer reported errors while the list was
// recorded or run.
Status submit_commands(Device &d, CommandList &list);
Status read_timers(Device &d, CommandList &list, uint64_t *ns, size_t count);
// Submits after the waits of `sync`, signalling its signals when done, without waiting; the
// list's fence still signals, and every other op on the list first waits for it (settle).
Status submit_commands_async(Device &d, CommandList &list, const kiln_vulkan_sync &sync);
// Waits for an asynchronous submission of the list, if one is in flight; DEVICE_ERROR when the
// validation layer reported errors meanwhile.
Status settle(Device &d, CommandList &list);

} // namespace kiln::rt::vk
