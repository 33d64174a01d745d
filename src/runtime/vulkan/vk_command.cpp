// Command lists on Vulkan: a command buffer recorded once (descriptor sets written while
// recording, since a list's bindings never change between submissions), submitted and waited
// for with a fence, timestamps around timed commands.
#include "runtime/vulkan/vk_objects.h"

#include <algorithm>
#include <vector>

namespace kiln::rt::vk {
namespace {

Status recording(const CommandList &list, const char *what) {
  if (list.state != CommandList::State::recording)
    return error(KILN_INVALID_ARGUMENT, what, ": the command list is not recording (call begin)");
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

Status create_parts(Device &d, CommandList *l) {
  VkCommandPoolCreateInfo pci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = d.physical.queue_family;
  KILN_RT_TRY(
      check(d.vkCreateCommandPool(d.device, &pci, nullptr, &l->pool), "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = l->pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  KILN_RT_TRY(
      check(d.vkAllocateCommandBuffers(d.device, &ai, &l->cmd), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  KILN_RT_TRY(check(d.vkCreateFence(d.device, &fci, nullptr, &l->fence), "vkCreateFence"));
  if (l->desc.dispatches) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, l->desc.bindings};
    VkDescriptorPoolCreateInfo dci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dci.maxSets = l->desc.dispatches;
    dci.poolSizeCount = l->desc.bindings ? 1 : 0;
    dci.pPoolSizes = &size;
    KILN_RT_TRY(check(d.vkCreateDescriptorPool(d.device, &dci, nullptr, &l->descriptors),
                      "vkCreateDescriptorPool"));
  }
  if (d.physical.info.timestamps && l->desc.timers) {
    VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = 2 * l->desc.timers;
    KILN_RT_TRY(
        check(d.vkCreateQueryPool(d.device, &qci, nullptr, &l->queries), "vkCreateQueryPool"));
  }
  return {};
}

// Checks one binding of a dispatch against its buffer and the device's limits.
Status check_binding(const Device &d, const Executable &exe, size_t i, const Binding &b) {
  const std::string what = cat("dispatch of '", exe.name, "' binding ", i);
  if (!b.buffer)
    return error(KILN_INVALID_ARGUMENT, what, ": buffer is NULL");
  const Buffer &buffer = *reinterpret_cast<const Buffer *>(b.buffer);
  KILN_RT_TRY(check_range(what.c_str(), b.offset, b.size, buffer.size));
  const VkPhysicalDeviceLimits &lim = d.physical.limits;
  if ((buffer.base + b.offset) % lim.minStorageBufferOffsetAlignment != 0)
    return error(KILN_INVALID_ARGUMENT, what, ": offset ", buffer.base + b.offset,
                 " is not a multiple of the device's storage buffer offset alignment (",
                 lim.minStorageBufferOffsetAlignment, ")");
  if (b.size > lim.maxStorageBufferRange)
    return error(KILN_INVALID_ARGUMENT, what, ": ", b.size, " bytes exceed the device's ",
                 lim.maxStorageBufferRange, "-byte maxStorageBufferRange");
  return {};
}

Status check_dispatch(const Device &d, const CommandList &l, const Dispatch &x) {
  if (!x.executable)
    return error(KILN_INVALID_ARGUMENT, "dispatch: executable is NULL");
  const Executable &exe = *reinterpret_cast<const Pipeline *>(x.executable)->executable;
  if (l.dispatches >= l.desc.dispatches || l.bindings + x.binding_count > l.desc.bindings)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name,
                 "': the command list holds at most ", l.desc.dispatches, " dispatch(es) with ",
                 l.desc.bindings, " binding(s) in all");
  if (x.binding_count != exe.num_bindings)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", x.binding_count,
                 " bindings given, the executable has ", exe.num_bindings);
  if (x.push_constant_bytes > exe.push_constant_bytes || x.push_constant_bytes % 4 != 0 ||
      (x.push_constant_bytes && !x.push_constants))
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", x.push_constant_bytes,
                 " push constant bytes given, the executable takes ", exe.push_constant_bytes,
                 " (a multiple of 4)");
  for (size_t i = 0; i < x.binding_count; ++i)
    KILN_RT_TRY(check_binding(d, exe, i, x.bindings[i]));
  const VkPhysicalDeviceLimits &lim = d.physical.limits;
  for (int k = 0; k < 3; ++k)
    if (x.workgroups[k] > lim.maxComputeWorkGroupCount[k])
      return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", x.workgroups[k],
                   " workgroups in dimension ", k, "; the device allows ",
                   lim.maxComputeWorkGroupCount[k]);
  return {};
}

// DEVICE_ERROR when the validation layer reported errors since the list's last check.
Status validation_errors(Device &d, CommandList &l) {
  const uint64_t errors = d.instance->errors.load();
  const uint64_t n = errors - l.errors_mark;
  l.errors_mark = errors;
  if (n)
    return error(KILN_DEVICE_ERROR, "the Vulkan validation layer reported ", n,
                 " error(s) while recording or running commands (printed to stderr)");
  return {};
}

} // namespace

Status create_commands(Device &d, const CommandListDesc &desc, std::unique_ptr<CommandList> *out) {
  KILN_RT_TRY(check_not_lost(d));
  auto l = std::make_unique<CommandList>();
  l->desc = desc;
  Status s = create_parts(d, l.get());
  if (!s.ok()) {
    destroy_commands(d, l.release());
    return s;
  }
  *out = std::move(l);
  return {};
}

void destroy_commands(Device &d, CommandList *l) {
  if (l->pending) // the status was the run's to report; the list goes either way
    (void)settle(d, *l);
  if (l->queries)
    d.vkDestroyQueryPool(d.device, l->queries, nullptr);
  if (l->fence)
    d.vkDestroyFence(d.device, l->fence, nullptr);
  if (l->pool)
    d.vkDestroyCommandPool(d.device, l->pool, nullptr);
  if (l->descriptors)
    d.vkDestroyDescriptorPool(d.device, l->descriptors, nullptr);
  delete l;
}

Status begin_commands(Device &d, CommandList &l) {
  KILN_RT_TRY(settle(d, l));
  if (l.state == CommandList::State::recording)
    return error(KILN_INVALID_ARGUMENT, "begin: the command list is already recording (call end)");
  if (l.dispatches)
    KILN_RT_TRY(
        check(d.vkResetDescriptorPool(d.device, l.descriptors, 0), "vkResetDescriptorPool"));
  l.dispatches = l.bindings = 0;
  l.submitted = false;
  l.written.assign(l.queries ? 2 * l.desc.timers : 0, 0);
  l.state = CommandList::State::empty;
  l.errors_mark = d.instance->errors.load();
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  KILN_RT_TRY(check(d.vkBeginCommandBuffer(l.cmd, &bi), "vkBeginCommandBuffer"));
  if (l.queries)
    d.vkCmdResetQueryPool(l.cmd, l.queries, 0, 2 * l.desc.timers);
  l.state = CommandList::State::recording;
  return {};
}

Status record_dispatch(Device &d, CommandList &l, const Dispatch &x) {
  KILN_RT_TRY(recording(l, "dispatch"));
  KILN_RT_TRY(check_dispatch(d, l, x));
  const Pipeline &p = *reinterpret_cast<const Pipeline *>(x.executable);
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = l.descriptors;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p.set_layout;
  KILN_RT_TRY(check(d.vkAllocateDescriptorSets(d.device, &ai, &set), "vkAllocateDescriptorSets"));
  ++l.dispatches;
  l.bindings += uint32_t(x.binding_count);
  std::vector<VkDescriptorBufferInfo> infos(x.binding_count);
  std::vector<VkWriteDescriptorSet> writes(x.binding_count);
  for (size_t j = 0; j < x.binding_count; ++j) {
    const Binding &b = x.bindings[j];
    const Buffer &buffer = *reinterpret_cast<const Buffer *>(b.buffer);
    infos[j] = {buffer.buffer, buffer.base + b.offset, b.size};
    writes[j] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[j].dstSet = set;
    writes[j].dstBinding = uint32_t(j);
    writes[j].descriptorCount = 1;
    writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[j].pBufferInfo = &infos[j];
  }
  d.vkUpdateDescriptorSets(d.device, uint32_t(writes.size()), writes.data(), 0, nullptr);
  d.vkCmdBindPipeline(l.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  d.vkCmdBindDescriptorSets(l.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0,
                            nullptr);
  if (x.push_constant_bytes)
    d.vkCmdPushConstants(l.cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, x.push_constant_bytes,
                         x.push_constants);
  d.vkCmdDispatch(l.cmd, x.workgroups[0], x.workgroups[1], x.workgroups[2]);
  return {};
}

Status record_copy(Device &d, CommandList &l, Buffer *src, uint64_t src_offset, Buffer *dst,
                   uint64_t dst_offset, uint64_t bytes) {
  KILN_RT_TRY(recording(l, "copy"));
  if (!src || !dst)
    return error(KILN_INVALID_ARGUMENT, "copy: ", src ? "destination" : "source",
                 " buffer is NULL");
  KILN_RT_TRY(check_range("copy source", src_offset, bytes, src->size));
  KILN_RT_TRY(check_range("copy destination", dst_offset, bytes, dst->size));
  if (src->buffer == dst->buffer && src->base + src_offset < dst->base + dst_offset + bytes &&
      dst->base + dst_offset < src->base + src_offset + bytes)
    return error(KILN_INVALID_ARGUMENT, "copy: source [", src_offset, ", +", bytes,
                 ") and destination [", dst_offset, ", +", bytes, ") overlap");
  VkBufferCopy region{src->base + src_offset, dst->base + dst_offset, bytes};
  d.vkCmdCopyBuffer(l.cmd, src->buffer, dst->buffer, 1, &region);
  return {};
}

Status record_barrier(Device &d, CommandList &l) {
  KILN_RT_TRY(recording(l, "barrier"));
  if (!d.fault.no_barriers) // a test-only deliberate race
    full_barrier(d, l.cmd);
  return {};
}

Status record_timer(Device &d, CommandList &l, uint32_t index, bool end) {
  KILN_RT_TRY(recording(l, "timer"));
  if (index >= l.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "timer ", index, ": the command list has ", l.desc.timers,
                 " timer(s)");
  if (l.queries) {
    d.vkCmdWriteTimestamp(l.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, l.queries,
                          2 * index + (end ? 1 : 0));
    l.written[2 * index + (end ? 1 : 0)] = 1;
  }
  return {};
}

Status end_commands(Device &d, CommandList &l) {
  KILN_RT_TRY(recording(l, "end"));
  l.state = CommandList::State::empty;
  KILN_RT_TRY(check(d.vkEndCommandBuffer(l.cmd), "vkEndCommandBuffer"));
  l.state = CommandList::State::ended;
  return {};
}

// What every submission checks first: the list is recorded, its last run has finished, the
// device is not lost.
static Status begin_submit(Device &d, CommandList &l) {
  if (l.state != CommandList::State::ended)
    return error(KILN_INVALID_ARGUMENT,
                 "submit: the command list was not recorded (call begin and end first)");
  KILN_RT_TRY(settle(d, l));
  KILN_RT_TRY(check_not_lost(d));
  l.submitted = false;
  return {};
}

Status submit_commands(Device &d, CommandList &l) {
  KILN_RT_TRY(begin_submit(d, l));
  KILN_RT_TRY(submit_and_wait(d, l.cmd, l.fence));
  l.submitted = true;
  return validation_errors(d, l);
}

Status submit_commands_async(Device &d, CommandList &l, const kiln_vulkan_sync &sync) {
  KILN_RT_TRY(begin_submit(d, l));
  std::vector<VkSemaphore> waits(sync.wait_count), signals(sync.signal_count);
  std::vector<uint64_t> wait_values(sync.wait_count), signal_values(sync.signal_count);
  std::vector<VkPipelineStageFlags> stages(sync.wait_count, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  for (uint32_t i = 0; i < sync.wait_count; ++i) {
    waits[i] = reinterpret_cast<VkSemaphore>(sync.wait_semaphores[i]);
    wait_values[i] = sync.wait_values ? sync.wait_values[i] : 0;
  }
  for (uint32_t i = 0; i < sync.signal_count; ++i) {
    signals[i] = reinterpret_cast<VkSemaphore>(sync.signal_semaphores[i]);
    signal_values[i] = sync.signal_values ? sync.signal_values[i] : 0;
  }
  VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  timeline.waitSemaphoreValueCount = sync.wait_count;
  timeline.pWaitSemaphoreValues = wait_values.data();
  timeline.signalSemaphoreValueCount = sync.signal_count;
  timeline.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  if (sync.wait_count || sync.signal_count)
    si.pNext = &timeline;
  si.waitSemaphoreCount = sync.wait_count;
  si.pWaitSemaphores = waits.data();
  si.pWaitDstStageMask = stages.data();
  si.commandBufferCount = 1;
  si.pCommandBuffers = &l.cmd;
  si.signalSemaphoreCount = sync.signal_count;
  si.pSignalSemaphores = signals.data();
  KILN_RT_TRY(check(d.vkResetFences(d.device, 1, &l.fence), "vkResetFences"));
  VkResult r = VK_SUCCESS;
  {
    std::lock_guard lock(d.queue_mutex);
    r = d.fault.hit(Fault::submit) ? VK_ERROR_DEVICE_LOST
                                   : d.vkQueueSubmit(d.queue, 1, &si, l.fence);
  }
  KILN_RT_TRY(note_loss(d, check(r, "vkQueueSubmit")));
  l.pending = true;
  return {};
}

Status settle(Device &d, CommandList &l) {
  if (!l.pending)
    return {};
  l.pending = false;
  VkResult r = d.vkWaitForFences(d.device, 1, &l.fence, VK_TRUE, UINT64_MAX);
  if (r == VK_SUCCESS && d.fault.hit(Fault::lost))
    r = VK_ERROR_DEVICE_LOST;
  KILN_RT_TRY(note_loss(d, check(r, "vkWaitForFences")));
  l.submitted = true;
  return validation_errors(d, l);
}

Status read_timers(Device &d, CommandList &l, uint64_t *ns, size_t count) {
  KILN_RT_TRY(settle(d, l));
  if (count > l.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "read_timers: ", count,
                 " timers asked for, the command list has ", l.desc.timers);
  if (!l.submitted)
    return error(KILN_INVALID_ARGUMENT,
                 "read_timers: the command list has not run since it was recorded (call submit)");
  if (!l.queries || count == 0) {
    std::fill(ns, ns + count, 0);
    return {};
  }
  // Waiting for a query the recording never wrote would never return: such timers read 0.
  std::vector<uint64_t> ticks(2 * count);
  const size_t written = size_t(std::count(l.written.begin(), l.written.begin() + 2 * count, 1));
  for (size_t i = 0; i < count; ++i) {
    if (written != 2 * count && !(l.written[2 * i] && l.written[2 * i + 1]))
      continue;
    const size_t n = written == 2 * count ? 2 * count : 2;
    const size_t first = written == 2 * count ? 0 : 2 * i;
    const VkResult r = d.vkGetQueryPoolResults(
        d.device, l.queries, uint32_t(first), uint32_t(n), n * sizeof(uint64_t), &ticks[first],
        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    KILN_RT_TRY(note_loss(d, check(r, "vkGetQueryPoolResults")));
    if (written == 2 * count)
      break;
  }
  const uint32_t bits = d.physical.timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t delta = ((ticks[2 * i + 1] & mask) - (ticks[2 * i] & mask)) & mask;
    ns[i] = uint64_t(double(delta) * d.physical.timestamp_period);
  }
  return {};
}

} // namespace kiln::rt::vk
