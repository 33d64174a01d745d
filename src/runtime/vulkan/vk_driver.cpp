// The "vulkan" driver vtable: glue between the driver interface and vk_device (devices,
// buffers), vk_executable (pipelines) and vk_command (command lists).
#include "runtime/driver.h"
#include "runtime/vulkan/vk_objects.h"

#include <algorithm>
#include <memory>

namespace kiln::rt {
namespace {

vk::Device *self(DeviceState *d) { return reinterpret_cast<vk::Device *>(d); }
const vk::Device *self(const DeviceState *d) { return reinterpret_cast<const vk::Device *>(d); }
vk::Buffer *self(BufferState *b) { return reinterpret_cast<vk::Buffer *>(b); }
const vk::Buffer *self(const BufferState *b) { return reinterpret_cast<const vk::Buffer *>(b); }
vk::CommandList &self(CommandState *c) { return *reinterpret_cast<vk::CommandList *>(c); }

// Enumerates devices with a short-lived instance (no validation: nothing runs on it).
Status physical_devices(std::vector<vk::PhysicalInfo> *out) {
  std::unique_ptr<vk::Instance> instance;
  KILN_RT_TRY(vk::create_instance(vk::Validation::off, &instance));
  return vk::enumerate(*instance, out);
}

Status count(size_t *n) {
  std::vector<vk::PhysicalInfo> all;
  KILN_RT_TRY(physical_devices(&all));
  *n = all.size();
  return {};
}

Status describe(size_t index, kiln_device_info *info) {
  std::vector<vk::PhysicalInfo> all;
  KILN_RT_TRY(physical_devices(&all));
  if (index >= all.size())
    return error(KILN_NOT_FOUND, "vulkan device ", index, " does not exist (", all.size(),
                 " found)");
  *info = all[index].info;
  return {};
}

// The first discrete GPU, else the first device.
Status default_device(size_t *index) {
  std::vector<vk::PhysicalInfo> all;
  KILN_RT_TRY(physical_devices(&all));
  *index = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (std::string(all[i].info.device_type) == "discrete") {
      *index = i;
      break;
    }
  return {};
}

Status open(size_t index, DeviceState **out) {
  std::unique_ptr<vk::Device> d;
  KILN_RT_TRY(vk::open_device(index, &d));
  *out = reinterpret_cast<DeviceState *>(d.release());
  return {};
}

void destroy(DeviceState *d) { delete self(d); }

Status info(const DeviceState *d, kiln_device_info *out) {
  *out = self(d)->physical.info;
  return {};
}

Status limits(const DeviceState *d, DeviceLimits *out) {
  KILN_RT_TRY(vk::check_not_lost(*self(d)));
  const VkPhysicalDeviceLimits &lim = self(d)->physical.limits;
  out->binding_offset_alignment = std::max<uint64_t>(lim.minStorageBufferOffsetAlignment, 1);
  out->max_binding_bytes = lim.maxStorageBufferRange;
  for (int k = 0; k < 3; ++k)
    out->max_workgroups[k] = lim.maxComputeWorkGroupCount[k];
  return {};
}

uint64_t validation_messages(const DeviceState *d) { return self(d)->instance->messages.load(); }

// Every buffer can be bound and copied from and to; device buffers prefer device-local memory
// (host-addressable where it is also host-visible: unified memory), staging buffers need
// host-visible memory.
Status buffer_create(DeviceState *state, uint64_t bytes, MemoryKind kind, BufferState **out) {
  vk::Device &d = *self(state);
  KILN_RT_TRY(vk::check_not_lost(d));
  if (bytes == 0)
    return error(KILN_INVALID_ARGUMENT, "cannot create a buffer of 0 bytes");
  constexpr VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  auto b = std::make_unique<vk::Buffer>();
  KILN_RT_TRY(vk::create_buffer(d, bytes, usage,
                                kind == MemoryKind::device ? vk::MemoryUse::device_local
                                                           : vk::MemoryUse::host_visible,
                                b.get()));
  *out = reinterpret_cast<BufferState *>(b.release());
  return {};
}

void buffer_destroy(DeviceState *d, BufferState *b) {
  vk::destroy_buffer(*self(d), self(b));
  delete self(b);
}

void *buffer_host_pointer(DeviceState *, BufferState *b) { return self(b)->mapped; }

uint64_t buffer_size(const BufferState *b) { return self(b)->size; }

Status executable_create(DeviceState *d, const Program &program, size_t index,
                         const ArtifactBytes &bytes, ExecutableState **out) {
  std::unique_ptr<vk::Pipeline> p;
  KILN_RT_TRY(vk::create_executable(*self(d), program.executables[index], bytes, index, &p));
  *out = reinterpret_cast<ExecutableState *>(p.release());
  return {};
}

void executable_destroy(DeviceState *d, ExecutableState *e) {
  vk::destroy_executable(*self(d), reinterpret_cast<vk::Pipeline *>(e));
}

Status commands_create(DeviceState *d, const CommandListDesc &desc, CommandState **out) {
  std::unique_ptr<vk::CommandList> list;
  KILN_RT_TRY(vk::create_commands(*self(d), desc, &list));
  *out = reinterpret_cast<CommandState *>(list.release());
  return {};
}

void commands_destroy(DeviceState *d, CommandState *c) {
  vk::destroy_commands(*self(d), &self(c));
}

Status commands_begin(DeviceState *d, CommandState *c) {
  return vk::begin_commands(*self(d), self(c));
}

Status commands_dispatch(DeviceState *d, CommandState *c, const Dispatch &dispatch) {
  return vk::record_dispatch(*self(d), self(c), dispatch);
}

Status commands_copy(DeviceState *d, CommandState *c, BufferState *src, uint64_t src_offset,
                     BufferState *dst, uint64_t dst_offset, uint64_t bytes) {
  return vk::record_copy(*self(d), self(c), self(src), src_offset, self(dst), dst_offset, bytes);
}

Status commands_barrier(DeviceState *d, CommandState *c) {
  return vk::record_barrier(*self(d), self(c));
}

Status commands_timer(DeviceState *d, CommandState *c, uint32_t index, bool end) {
  return vk::record_timer(*self(d), self(c), index, end);
}

Status commands_end(DeviceState *d, CommandState *c) { return vk::end_commands(*self(d), self(c)); }

Status commands_submit(DeviceState *d, CommandState *c) {
  return vk::submit_commands(*self(d), self(c));
}

Status commands_read_timers(DeviceState *d, CommandState *c, uint64_t *ns, size_t count) {
  return vk::read_timers(*self(d), self(c), ns, count);
}

Status commands_submit_async(DeviceState *d, CommandState *c, const kiln_vulkan_sync &sync) {
  return vk::submit_commands_async(*self(d), self(c), sync);
}

Status commands_wait(DeviceState *d, CommandState *c) { return vk::settle(*self(d), self(c)); }

const DriverVtable kVulkanDriver = {
    "vulkan",
    {count, describe, default_device, open, destroy, info, limits, validation_messages},
    {buffer_create, buffer_destroy, buffer_host_pointer, buffer_size},
    {executable_create, executable_destroy},
    {commands_create, commands_destroy, commands_begin, commands_dispatch, commands_copy,
     commands_barrier, commands_timer, commands_end, commands_submit, commands_read_timers,
     commands_submit_async, commands_wait},
};

} // namespace

Status vulkan_open_external(const kiln_vulkan_context &context, DeviceState **out) {
  std::unique_ptr<vk::Device> d;
  KILN_RT_TRY(vk::open_external(context, &d));
  *out = reinterpret_cast<DeviceState *>(d.release());
  return {};
}

Status vulkan_import_buffer(DeviceState *state, uint64_t vk_buffer, uint64_t offset,
                            uint64_t bytes, BufferState **out) {
  const vk::Device &d = *self(state);
  KILN_RT_TRY(vk::check_not_lost(d));
  if (bytes == 0)
    return error(KILN_INVALID_ARGUMENT, "kiln_buffer_import_vulkan: 0 bytes");
  const uint64_t align = std::max<uint64_t>(d.physical.limits.minStorageBufferOffsetAlignment, 1);
  if (offset % align != 0)
    return error(KILN_INVALID_ARGUMENT, "kiln_buffer_import_vulkan: offset ", offset,
                 " is not a multiple of the device's storage buffer offset alignment (", align,
                 ")");
  auto b = std::make_unique<vk::Buffer>();
  b->buffer = reinterpret_cast<VkBuffer>(vk_buffer);
  b->base = offset;
  b->size = bytes;
  b->borrowed = true;
  *out = reinterpret_cast<BufferState *>(b.release());
  return {};
}

void vulkan_export_buffer(const BufferState *buffer, uint64_t *vk_buffer, uint64_t *offset) {
  *vk_buffer = reinterpret_cast<uint64_t>(self(buffer)->buffer);
  *offset = self(buffer)->base;
}

const DriverVtable *vulkan_driver() { return &kVulkanDriver; }

} // namespace kiln::rt
