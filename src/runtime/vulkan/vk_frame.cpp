// Per-call resources and execution: a frame owns the arena, I/O buffers, descriptor sets and a
// command buffer recorded once with every command of the program; a call fills the inputs,
// submits, waits for the fence and reads the outputs.
#include "runtime/vulkan/vk_module.h"

#include <cstring>

namespace kiln::rt::vk {
namespace {

constexpr VkBufferUsageFlags kStorageUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT;

// Creates the device buffer of each tensor, and a host-visible staging buffer when the device
// buffer cannot be mapped. Zero-byte tensors get no buffer (the program never binds them).
Status create_io(Device &d, const std::vector<TensorSig> &sigs, VkBufferUsageFlags staging_usage,
                 std::vector<Buffer> *bufs, std::vector<Buffer> *staging) {
  bufs->resize(sigs.size());
  staging->resize(sigs.size());
  for (size_t i = 0; i < sigs.size(); ++i) {
    if (sigs[i].bytes == 0)
      continue;
    KILN_RT_TRY(create_buffer(d, sigs[i].bytes, kStorageUsage, MemoryUse::device_local,
                              &(*bufs)[i]));
    if (!(*bufs)[i].mapped)
      KILN_RT_TRY(create_buffer(d, sigs[i].bytes, staging_usage, MemoryUse::host_visible,
                                &(*staging)[i]));
  }
  return {};
}

const Buffer &buffer_of(const Module &m, const Frame &f, const BufferRef &ref) {
  switch (ref.kind) {
  case BufferKind::constant: return m.constants;
  case BufferKind::input: return f.inputs[ref.index];
  case BufferKind::output: return f.outputs[ref.index];
  case BufferKind::transient: return f.arena;
  }
  return f.arena;
}

Status create_descriptors(Module &m, Frame *f) {
  Device &d = *m.device;
  const Program &p = *m.program;
  uint32_t sets = 0, descriptors = 0;
  for (const Command &c : p.commands)
    if (c.kind == KILN_COMMAND_DISPATCH) {
      ++sets;
      descriptors += uint32_t(c.bindings.size());
    }
  f->sets.assign(p.commands.size(), VK_NULL_HANDLE);
  if (sets == 0)
    return {};
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptors};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = sets;
  pci.poolSizeCount = descriptors ? 1 : 0;
  pci.pPoolSizes = &size;
  KILN_RT_TRY(check(d.vkCreateDescriptorPool(d.device, &pci, nullptr, &f->descriptor_pool),
                    "vkCreateDescriptorPool"));
  for (size_t i = 0; i < p.commands.size(); ++i) {
    const Command &c = p.commands[i];
    if (c.kind != KILN_COMMAND_DISPATCH)
      continue;
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = f->descriptor_pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &m.pipelines[c.executable]->set_layout;
    KILN_RT_TRY(check(d.vkAllocateDescriptorSets(d.device, &ai, &f->sets[i]),
                      "vkAllocateDescriptorSets"));
    std::vector<VkDescriptorBufferInfo> infos(c.bindings.size());
    std::vector<VkWriteDescriptorSet> writes(c.bindings.size());
    for (size_t j = 0; j < c.bindings.size(); ++j) {
      const BufferRef &b = c.bindings[j];
      infos[j] = {buffer_of(m, *f, b).buffer, b.offset, b.size};
      writes[j] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      writes[j].dstSet = f->sets[i];
      writes[j].dstBinding = uint32_t(j);
      writes[j].descriptorCount = 1;
      writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[j].pBufferInfo = &infos[j];
    }
    d.vkUpdateDescriptorSets(d.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
  }
  return {};
}

// Makes all earlier compute/transfer writes visible to later compute, transfer and host access.
// Stronger than needed between independent commands; correct for every program.
void full_barrier(Device &d, VkCommandBuffer cmd) {
  VkMemoryBarrier b{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                    VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                    VK_ACCESS_HOST_READ_BIT;
  d.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &b, 0, nullptr, 0, nullptr);
}

void record_command(const Module &m, const Frame &f, size_t i, VkCommandBuffer cmd) {
  Device &d = *m.device;
  const Command &c = m.program->commands[i];
  if (c.kind == KILN_COMMAND_COPY) {
    VkBufferCopy region{c.src.offset, c.dst.offset, c.src.size};
    d.vkCmdCopyBuffer(cmd, buffer_of(m, f, c.src).buffer, buffer_of(m, f, c.dst).buffer, 1,
                      &region);
    return;
  }
  const Pipeline &p = *m.pipelines[c.executable];
  d.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  d.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &f.sets[i], 0,
                            nullptr);
  if (!c.push_constants.empty())
    d.vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         uint32_t(c.push_constants.size()), c.push_constants.data());
  d.vkCmdDispatch(cmd, c.workgroups[0], c.workgroups[1], c.workgroups[2]);
}

// Copies between each device buffer and its staging buffer (where one exists).
bool record_staging(Device &d, VkCommandBuffer cmd, const std::vector<Buffer> &bufs,
                    const std::vector<Buffer> &staging, bool to_device) {
  bool any = false;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!staging[i].buffer)
      continue;
    VkBufferCopy region{0, 0, bufs[i].size};
    d.vkCmdCopyBuffer(cmd, to_device ? staging[i].buffer : bufs[i].buffer,
                      to_device ? bufs[i].buffer : staging[i].buffer, 1, &region);
    any = true;
  }
  return any;
}

Status record(const Module &m, Frame *f) {
  Device &d = *m.device;
  VkCommandBuffer cmd = f->cmd;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  KILN_RT_TRY(check(d.vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer"));
  const size_t n = m.program->commands.size();
  if (f->queries)
    d.vkCmdResetQueryPool(cmd, f->queries, 0, uint32_t(2 * n));
  if (record_staging(d, cmd, f->inputs, f->input_staging, true))
    full_barrier(d, cmd);
  const bool barriers = !d.fault.no_barriers; // a test-only deliberate race
  for (size_t i = 0; i < n; ++i) {
    if (i > 0 && barriers)
      full_barrier(d, cmd);
    if (f->queries)
      d.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f->queries, uint32_t(2 * i));
    record_command(m, *f, i, cmd);
    if (f->queries)
      d.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, f->queries,
                            uint32_t(2 * i + 1));
  }
  full_barrier(d, cmd);
  if (record_staging(d, cmd, f->outputs, f->output_staging, false))
    full_barrier(d, cmd);
  return check(d.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

Status create_commands(Module &m, Frame *f) {
  Device &d = *m.device;
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.queueFamilyIndex = d.physical.queue_family;
  KILN_RT_TRY(check(d.vkCreateCommandPool(d.device, &pci, nullptr, &f->command_pool),
                    "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = f->command_pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  KILN_RT_TRY(check(d.vkAllocateCommandBuffers(d.device, &ai, &f->cmd), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  KILN_RT_TRY(check(d.vkCreateFence(d.device, &fci, nullptr, &f->fence), "vkCreateFence"));
  const size_t n = m.program->commands.size();
  if (d.physical.info.timestamps && n > 0) {
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = uint32_t(2 * n);
    KILN_RT_TRY(check(d.vkCreateQueryPool(d.device, &qci, nullptr, &f->queries),
                      "vkCreateQueryPool"));
  }
  return record(m, f);
}

void copy_inputs(const Frame &f, const RunArgs &args) {
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const Buffer &dst = f.input_staging[i].buffer ? f.input_staging[i] : f.inputs[i];
    if (dst.buffer)
      std::memcpy(dst.mapped, args.inputs[i].data, args.inputs[i].bytes);
  }
}

void copy_outputs(const Frame &f, const RunArgs &args) {
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    const Buffer &src = f.output_staging[i].buffer ? f.output_staging[i] : f.outputs[i];
    if (src.buffer)
      std::memcpy(args.outputs[i].data, src.mapped, args.outputs[i].bytes);
  }
}

Status read_timestamps(const Module &m, const Frame &f, const RunArgs &args) {
  if (!args.command_ns)
    return {};
  const size_t n = std::min(args.command_ns_capacity, m.program->commands.size());
  if (!f.queries) {
    std::fill(args.command_ns, args.command_ns + n, 0);
    return {};
  }
  Device &d = *m.device;
  std::vector<uint64_t> ticks(2 * m.program->commands.size());
  const VkResult r = d.vkGetQueryPoolResults(
      d.device, f.queries, 0, uint32_t(ticks.size()), ticks.size() * sizeof(uint64_t),
      ticks.data(), sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  KILN_RT_TRY(note_loss(d, check(r, "vkGetQueryPoolResults")));
  const uint32_t bits = d.physical.timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t delta = ((ticks[2 * i + 1] & mask) - (ticks[2 * i] & mask)) & mask;
    args.command_ns[i] = uint64_t(double(delta) * d.physical.timestamp_period);
  }
  return {};
}

Status acquire(Module &m, Frame **out) {
  std::unique_lock lock(m.mutex);
  for (;;) {
    if (!m.free_frames.empty()) {
      *out = m.free_frames.back();
      m.free_frames.pop_back();
      return {};
    }
    if (m.frames_reserved < Module::kMaxFrames)
      break;
    m.frame_freed.wait(lock);
  }
  ++m.frames_reserved;
  lock.unlock();
  std::unique_ptr<Frame> frame;
  Status s = create_frame(m, &frame);
  lock.lock();
  if (!s.ok()) {
    --m.frames_reserved;
    m.frame_freed.notify_one();
    return s;
  }
  *out = frame.get();
  m.frames.push_back(std::move(frame));
  return {};
}

void release(Module &m, Frame *f) {
  std::lock_guard lock(m.mutex);
  m.free_frames.push_back(f);
  m.frame_freed.notify_one();
}

} // namespace

Status create_frame(Module &m, std::unique_ptr<Frame> *out) {
  Device &d = *m.device;
  auto f = std::make_unique<Frame>();
  auto build = [&]() -> Status {
    if (m.program->arena_bytes)
      KILN_RT_TRY(create_buffer(d, m.program->arena_bytes, kStorageUsage, MemoryUse::device_local,
                                &f->arena));
    KILN_RT_TRY(create_io(d, m.program->inputs, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &f->inputs,
                          &f->input_staging));
    KILN_RT_TRY(create_io(d, m.program->outputs, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &f->outputs,
                          &f->output_staging));
    KILN_RT_TRY(create_descriptors(m, f.get()));
    return create_commands(m, f.get());
  };
  Status s = build();
  if (!s.ok()) {
    destroy_frame(d, f.get());
    return s;
  }
  *out = std::move(f);
  return {};
}

void destroy_frame(Device &d, Frame *f) {
  if (f->queries)
    d.vkDestroyQueryPool(d.device, f->queries, nullptr);
  if (f->fence)
    d.vkDestroyFence(d.device, f->fence, nullptr);
  if (f->command_pool)
    d.vkDestroyCommandPool(d.device, f->command_pool, nullptr);
  if (f->descriptor_pool)
    d.vkDestroyDescriptorPool(d.device, f->descriptor_pool, nullptr);
  for (auto *list : {&f->inputs, &f->outputs, &f->input_staging, &f->output_staging})
    for (Buffer &b : *list)
      destroy_buffer(d, &b);
  destroy_buffer(d, &f->arena);
}

Status run_module(Module &m, const RunArgs &args) {
  Device &d = *m.device;
  KILN_RT_TRY(check_not_lost(d));
  // Counted from before acquire(): a new frame records its command buffer there, and
  // synchronization validation reports hazards within a command buffer while it is recorded.
  const uint64_t errors_before = d.instance->errors.load();
  Frame *f = nullptr;
  KILN_RT_TRY(acquire(m, &f));
  copy_inputs(*f, args);
  Status s = submit_and_wait(d, f->cmd, f->fence);
  if (s.ok()) {
    copy_outputs(*f, args);
    s = read_timestamps(m, *f, args);
  }
  release(m, f);
  if (!s.ok())
    return s;
  if (uint64_t n = d.instance->errors.load() - errors_before)
    return error(KILN_DEVICE_ERROR, "the Vulkan validation layer reported ", n,
                 " error(s) during this run (printed to stderr)");
  return {};
}

} // namespace kiln::rt::vk
