// Module load on Vulkan: capability and limit checks, pipelines, constant upload.
#include "runtime/vulkan/vk_module.h"

#include <algorithm>

namespace kiln::rt::vk {
namespace {

Status check_limits(const Device &d, const Program &p) {
  const VkPhysicalDeviceLimits &lim = d.physical.limits;
  const std::string &dev = d.physical.info.name;
  for (size_t i = 0; i < p.commands.size(); ++i) {
    const Command &c = p.commands[i];
    if (c.kind != KILN_COMMAND_DISPATCH)
      continue;
    for (size_t j = 0; j < c.bindings.size(); ++j) {
      const BufferRef &b = c.bindings[j];
      if (b.offset % lim.minStorageBufferOffsetAlignment != 0)
        return error(KILN_UNSUPPORTED, "command ", i, " binding ", j, " starts at byte offset ",
                     b.offset, " of ", buffer_kind_name(b.kind),
                     " buffer, but device '", dev, "' needs storage buffer offsets aligned to ",
                     lim.minStorageBufferOffsetAlignment, " bytes");
      if (b.size > lim.maxStorageBufferRange)
        return error(KILN_UNSUPPORTED, "command ", i, " binding ", j, " spans ", b.size,
                     " bytes, more than the ", lim.maxStorageBufferRange,
                     "-byte maxStorageBufferRange of device '", dev, "'");
    }
    for (int k = 0; k < 3; ++k)
      if (c.workgroups[k] > lim.maxComputeWorkGroupCount[k])
        return error(KILN_UNSUPPORTED, "command ", i, " dispatches ", c.workgroups[k],
                     " workgroups in dimension ", k, "; device '", dev, "' allows ",
                     lim.maxComputeWorkGroupCount[k]);
  }
  return {};
}

Status create_layouts(Device &d, const Executable &exe, Pipeline *out) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(exe.num_bindings);
  for (uint32_t i = 0; i < exe.num_bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = exe.num_bindings;
  sl.pBindings = bindings.data();
  KILN_RT_TRY(check(d.vkCreateDescriptorSetLayout(d.device, &sl, nullptr, &out->set_layout),
                    "vkCreateDescriptorSetLayout"));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, exe.push_constant_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &out->set_layout;
  pl.pushConstantRangeCount = exe.push_constant_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  return check(d.vkCreatePipelineLayout(d.device, &pl, nullptr, &out->layout),
               "vkCreatePipelineLayout");
}

// Builds the pipeline of executable `index`; its shader module lives only during the call.
Status create_pipeline(Device &d, const Executable &exe, const ArtifactBytes &bytes, size_t index,
                       Pipeline *out) {
  KILN_RT_TRY(create_layouts(d, exe, out));
  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = std::get<SpirvCode>(exe.code).words * 4;
  sm.pCode = bytes.spirv(index);
  VkShaderModule shader = VK_NULL_HANDLE;
  KILN_RT_TRY(check(d.vkCreateShaderModule(d.device, &sm, nullptr, &shader),
                    "vkCreateShaderModule"));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = shader;
  ci.stage.pName = exe.entry_point.c_str();
  ci.layout = out->layout;
  Status s = check(d.vkCreateComputePipelines(d.device, d.pipeline_cache, 1, &ci, nullptr,
                                              &out->pipeline),
                   "vkCreateComputePipelines");
  d.vkDestroyShaderModule(d.device, shader, nullptr);
  if (!s.ok())
    return error(s.code(), "executable '", exe.name, "': ", s.message());
  return {};
}

void destroy_pipeline(Device &d, Pipeline *p) {
  if (p->pipeline)
    d.vkDestroyPipeline(d.device, p->pipeline, nullptr);
  if (p->layout)
    d.vkDestroyPipelineLayout(d.device, p->layout, nullptr);
  if (p->set_layout)
    d.vkDestroyDescriptorSetLayout(d.device, p->set_layout, nullptr);
}

// Host-visible staging memory used to upload constants to device memory that cannot be mapped.
constexpr VkDeviceSize kStagingBytes = VkDeviceSize(4) << 20;

// A one-off command pool, command buffer and fence for copies made at load time.
struct Uploader {
  Device &d;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;

  explicit Uploader(Device &device) : d(device) {}
  ~Uploader() {
    if (fence)
      d.vkDestroyFence(d.device, fence, nullptr);
    if (pool)
      d.vkDestroyCommandPool(d.device, pool, nullptr);
  }
  Status init() {
    VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pci.queueFamilyIndex = d.physical.queue_family;
    KILN_RT_TRY(check(d.vkCreateCommandPool(d.device, &pci, nullptr, &pool), "vkCreateCommandPool"));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    KILN_RT_TRY(check(d.vkAllocateCommandBuffers(d.device, &ai, &cmd), "vkAllocateCommandBuffers"));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    return check(d.vkCreateFence(d.device, &fci, nullptr, &fence), "vkCreateFence");
  }
  // Copies `region` from `src` to `dst` and waits for it.
  Status copy(const Buffer &src, const Buffer &dst, const VkBufferCopy &region) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    KILN_RT_TRY(check(d.vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
    d.vkCmdCopyBuffer(cmd, src.buffer, dst.buffer, 1, &region);
    KILN_RT_TRY(check(d.vkEndCommandBuffer(cmd), "vkEndCommandBuffer"));
    return submit_and_wait(d, cmd, fence);
  }
};

// Uploads the constants through a staging buffer of at most kStagingBytes, one chunk at a time,
// so host memory for the upload stays bounded whatever the size of the constants.
Status upload_staged(Device &d, const ArtifactBytes &bytes, uint64_t total, const Buffer &dst) {
  Buffer staging;
  KILN_RT_TRY(create_buffer(d, std::min<VkDeviceSize>(total, kStagingBytes),
                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT, MemoryUse::host_visible, &staging));
  auto run = [&]() -> Status {
    Uploader up(d);
    KILN_RT_TRY(up.init());
    for (uint64_t at = 0; at < total; at += staging.size) {
      const VkDeviceSize n = std::min<VkDeviceSize>(staging.size, total - at);
      KILN_RT_TRY(bytes.read_constants(at, staging.mapped, size_t(n)));
      KILN_RT_TRY(up.copy(staging, dst, VkBufferCopy{0, at, n}));
    }
    return {};
  };
  Status s = run();
  destroy_buffer(d, &staging);
  return s;
}

Status upload_constants(Device &d, const Program &p, const ArtifactBytes &bytes, Buffer *out) {
  if (p.constant_bytes == 0)
    return {};
  KILN_RT_TRY(create_buffer(d, p.constant_bytes,
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
                            MemoryUse::device_local, out));
  if (out->mapped) // unified memory: no staging needed
    return bytes.read_constants(0, out->mapped, size_t(p.constant_bytes));
  return upload_staged(d, bytes, p.constant_bytes, *out);
}

} // namespace

Module::~Module() {
  for (auto &f : frames)
    destroy_frame(*device, f.get());
  destroy_buffer(*device, &constants);
}

Status create_executable(Device &d, const Executable &exe, const ArtifactBytes &bytes,
                         size_t index, std::unique_ptr<Pipeline> *out) {
  KILN_RT_TRY(check_not_lost(d));
  if (!std::holds_alternative<SpirvCode>(exe.code))
    return error(KILN_UNSUPPORTED, "executable '", exe.name, "' is ", code_kind_name(exe.code),
                 ": the vulkan driver runs only SPIR-V (compile for a vulkan target)");
  KILN_RT_TRY(check_requirements(d.physical, exe));
  const uint64_t errors_before = d.instance->errors.load();
  auto p = std::make_unique<Pipeline>();
  Status s = create_pipeline(d, exe, bytes, index, p.get());
  if (s.ok())
    if (uint64_t n = d.instance->errors.load() - errors_before)
      s = error(KILN_DEVICE_ERROR, "the Vulkan validation layer reported ", n,
                " error(s) while loading the module (printed to stderr)");
  if (!s.ok()) {
    destroy_pipeline(d, p.get());
    return s;
  }
  *out = std::move(p);
  return {};
}

void destroy_executable(Device &d, Pipeline *p) {
  destroy_pipeline(d, p);
  delete p;
}

Status create_module(Device &d, const Program &p, const ArtifactBytes &bytes,
                     const Pipeline *const *pipelines, std::unique_ptr<Module> *out) {
  KILN_RT_TRY(check_not_lost(d));
  KILN_RT_TRY(check_limits(d, p));
  auto m = std::make_unique<Module>();
  m->device = &d;
  m->program = &p;
  const uint64_t errors_before = d.instance->errors.load();
  m->pipelines.assign(pipelines, pipelines + p.executables.size());
  KILN_RT_TRY(upload_constants(d, p, bytes, &m->constants));
  if (uint64_t n = d.instance->errors.load() - errors_before)
    return error(KILN_DEVICE_ERROR, "the Vulkan validation layer reported ", n,
                 " error(s) while loading the module (printed to stderr)");
  *out = std::move(m);
  return {};
}

} // namespace kiln::rt::vk
