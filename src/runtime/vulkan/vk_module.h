// A program loaded on a Vulkan device: pipelines (the driver's executables, built once per
// load before the module) and constants uploaded once at load, plus a
// small pool of per-call frames (command buffer, descriptor sets, arena and I/O buffers) so
// several threads can run one module at once.
#pragma once

#include "runtime/driver.h"
#include "runtime/vulkan/vk_device.h"

#include <condition_variable>
#include <mutex>
#include <vector>

namespace kiln::rt::vk {

// The shader module is destroyed once the pipeline exists (the pipeline no longer needs it).
struct Pipeline {
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

// Everything one call needs; used by one call at a time. Its command buffer is recorded once
// at creation (the bindings never change) and submitted again on every call.
struct Frame {
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets; // per command; null for copies
  VkQueryPool queries = VK_NULL_HANDLE;
  Buffer arena;
  std::vector<Buffer> inputs, outputs;                 // bound by the program
  std::vector<Buffer> input_staging, output_staging;   // empty when the above are mapped
};

struct Module {
  Device *device = nullptr;
  const Program *program = nullptr;
  Buffer constants;
  std::vector<const Pipeline *> pipelines; // per executable; owned by the caller, outlive this

  // Frame pool: at most kMaxFrames exist; calls beyond that wait for a free one.
  static constexpr size_t kMaxFrames = 4;
  std::mutex mutex;
  std::condition_variable frame_freed;
  std::vector<std::unique_ptr<Frame>> frames;
  std::vector<Frame *> free_frames;
  size_t frames_reserved = 0;

  ~Module();
};

// Builds the pipeline of `exe` (executable `index`): refuses code other than SPIR-V and
// requirements the device lacks. `bytes` is read during the call only.
Status create_executable(Device &device, const Executable &exe, const ArtifactBytes &bytes,
                         size_t index, std::unique_ptr<Pipeline> *out);
void destroy_executable(Device &device, Pipeline *pipeline);

// `pipelines[i]` is executable i's, from create_executable. `bytes` is read during the call
// only (constants for the upload).
Status create_module(Device &device, const Program &program, const ArtifactBytes &bytes,
                     const Pipeline *const *pipelines, std::unique_ptr<Module> *out);
Status run_module(Module &module, const RunArgs &args);

// Frame lifetime (vk_frame.cpp).
Status create_frame(Module &m, std::unique_ptr<Frame> *out);
void destroy_frame(Device &d, Frame *f);

} // namespace kiln::rt::vk
