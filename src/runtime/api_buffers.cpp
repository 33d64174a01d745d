// The C API of device buffers and Vulkan interop (kiln.h): handles and argument checks around
// the drivers; what a run on buffers does is Module::run_buffers.
#include "runtime/handles.h"

#include <atomic>

using namespace kiln::rt;

namespace {

std::atomic<uint64_t> g_next_buffer_id{1};

Status wrap(const std::shared_ptr<DeviceHolder> &device, BufferState *state, uint64_t bytes,
            kiln_buffer **out) {
  auto b = std::make_unique<kiln_buffer>();
  b->device = device;
  b->state = state;
  b->id = g_next_buffer_id.fetch_add(1);
  b->bytes = bytes;
  *out = b.release();
  return {};
}

Status need_vulkan(const DeviceHolder &d, const char *what) {
  if (d.driver != vulkan_driver())
    return error(KILN_INVALID_ARGUMENT, what, " needs a Vulkan device; this one is '",
                 d.driver->name, "'");
  return {};
}

// Checks one side of a run (inputs or outputs) and collects the driver buffers and identities.
Status check_buffers(const kiln_module &m, kiln_buffer *const *bufs, size_t n,
                     const std::vector<TensorSig> &sigs, const char *what,
                     std::vector<BufferState *> *states, std::vector<uint64_t> *ids) {
  if (n != sigs.size())
    return error(KILN_INVALID_ARGUMENT, "expected ", sigs.size(), " ", what, " buffers, got ", n);
  if (n && !bufs)
    return error(KILN_INVALID_ARGUMENT, what, " buffer array is NULL");
  for (size_t i = 0; i < n; ++i) {
    const kiln_buffer *b = bufs[i];
    const std::string who = cat(what, " ", i, " '", sigs[i].name, "'");
    if (!b) {
      if (sigs[i].bytes != 0)
        return error(KILN_INVALID_ARGUMENT, who, ": buffer is NULL");
      states->push_back(nullptr);
      ids->push_back(0);
      continue;
    }
    if (b->device != m.device)
      return error(KILN_INVALID_ARGUMENT, who,
                   ": the buffer belongs to another device than the module");
    if (b->bytes < sigs[i].bytes)
      return error(KILN_INVALID_ARGUMENT, who, ": the buffer has ", b->bytes,
                   " bytes, the tensor needs ", sigs[i].bytes);
    states->push_back(b->state);
    ids->push_back(b->id);
  }
  return {};
}

Status check_semaphores(uint32_t count, const uint64_t *handles, const char *what) {
  if (count && !handles)
    return error(KILN_INVALID_ARGUMENT, "kiln_vulkan_sync: ", count, " ", what,
                 " semaphore(s) but the handle array is NULL");
  for (uint32_t i = 0; i < count; ++i)
    if (!handles[i])
      return error(KILN_INVALID_ARGUMENT, "kiln_vulkan_sync: ", what, " semaphore ", i,
                   " is VK_NULL_HANDLE");
  return {};
}

} // namespace

extern "C" {

kiln_status kiln_buffer_create(kiln_device *device, uint64_t bytes, kiln_buffer **out_buffer) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!out_buffer)
      return null_arg("out_buffer");
    *out_buffer = nullptr;
    if (bytes == 0)
      return error(KILN_INVALID_ARGUMENT, "kiln_buffer_create: 0 bytes");
    const DeviceHolder &d = *device->holder;
    BufferState *state = nullptr;
    KILN_RT_TRY(d.driver->buffer.create(d.state, bytes, MemoryKind::device, &state));
    Status s = wrap(device->holder, state, bytes, out_buffer);
    if (!s.ok())
      d.driver->buffer.destroy(d.state, state);
    return s;
  });
}

void kiln_buffer_release(kiln_buffer *buffer) { delete buffer; }

uint64_t kiln_buffer_size(const kiln_buffer *buffer) { return buffer ? buffer->bytes : 0; }

kiln_status kiln_buffer_write(kiln_buffer *buffer, uint64_t offset, const void *src,
                              uint64_t bytes) {
  return guarded([&]() -> Status {
    if (!buffer)
      return null_arg("buffer");
    const DeviceHolder &d = *buffer->device;
    return write_buffer(*d.driver, d.state, buffer->state, offset, src, bytes);
  });
}

kiln_status kiln_buffer_read(kiln_buffer *buffer, uint64_t offset, void *dst, uint64_t bytes) {
  return guarded([&]() -> Status {
    if (!buffer)
      return null_arg("buffer");
    const DeviceHolder &d = *buffer->device;
    return read_buffer(*d.driver, d.state, buffer->state, offset, dst, bytes);
  });
}

kiln_status kiln_module_run_buffers(kiln_module *module, kiln_buffer *const *inputs,
                                    size_t input_count, kiln_buffer *const *outputs,
                                    size_t output_count, const kiln_vulkan_sync *sync) {
  return guarded([&]() -> Status {
    if (!module)
      return null_arg("module");
    const Program &p = *module->program;
    std::vector<BufferState *> in, out;
    std::vector<uint64_t> in_ids, out_ids;
    KILN_RT_TRY(check_buffers(*module, inputs, input_count, p.inputs, "input", &in, &in_ids));
    KILN_RT_TRY(check_buffers(*module, outputs, output_count, p.outputs, "output", &out, &out_ids));
    for (size_t o = 0; o < out_ids.size(); ++o) {
      for (size_t i = 0; out_ids[o] && i < in_ids.size(); ++i)
        if (in_ids[i] == out_ids[o])
          return error(KILN_INVALID_ARGUMENT, "output ", o, " '", p.outputs[o].name,
                       "' is written to the buffer of input ", i, " '", p.inputs[i].name, "'");
      for (size_t k = 0; out_ids[o] && k < o; ++k)
        if (out_ids[k] == out_ids[o])
          return error(KILN_INVALID_ARGUMENT, "outputs ", k, " and ", o, " share one buffer");
    }
    if (sync) {
      if (!module->device->driver->command.submit_async)
        return error(KILN_INVALID_ARGUMENT, "an asynchronous run (kiln_vulkan_sync) needs a "
                     "Vulkan device; device '", module->device->driver->name,
                     "' runs synchronously (pass NULL)");
      KILN_RT_TRY(check_semaphores(sync->wait_count, sync->wait_semaphores, "wait"));
      KILN_RT_TRY(check_semaphores(sync->signal_count, sync->signal_semaphores, "signal"));
    }
    BufferRunArgs args;
    args.inputs = in.data();
    args.outputs = out.data();
    args.input_ids = in_ids.data();
    args.output_ids = out_ids.data();
    args.sync = sync;
    return module->module->run_buffers(args);
  });
}

kiln_status kiln_device_open_vulkan(const kiln_vulkan_context *context, kiln_device **out_device) {
  return guarded([&]() -> Status {
    if (!context)
      return null_arg("context");
    if (!out_device)
      return null_arg("out_device");
    *out_device = nullptr;
    if (!context->get_instance_proc_addr || !context->instance || !context->physical_device ||
        !context->device)
      return error(KILN_INVALID_ARGUMENT, "kiln_vulkan_context: get_instance_proc_addr, "
                   "instance, physical_device and device must all be set");
    auto holder = std::make_shared<DeviceHolder>();
    holder->driver = vulkan_driver();
    KILN_RT_TRY(vulkan_open_external(*context, &holder->state));
    *out_device = new kiln_device{std::move(holder)};
    return {};
  });
}

kiln_status kiln_buffer_import_vulkan(kiln_device *device, uint64_t vk_buffer, uint64_t offset,
                                      uint64_t bytes, kiln_buffer **out_buffer) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!out_buffer)
      return null_arg("out_buffer");
    *out_buffer = nullptr;
    const DeviceHolder &d = *device->holder;
    KILN_RT_TRY(need_vulkan(d, "kiln_buffer_import_vulkan"));
    if (!vk_buffer)
      return error(KILN_INVALID_ARGUMENT, "kiln_buffer_import_vulkan: vk_buffer is VK_NULL_HANDLE");
    BufferState *state = nullptr;
    KILN_RT_TRY(vulkan_import_buffer(d.state, vk_buffer, offset, bytes, &state));
    Status s = wrap(device->holder, state, bytes, out_buffer);
    if (!s.ok())
      d.driver->buffer.destroy(d.state, state);
    return s;
  });
}

kiln_status kiln_buffer_export_vulkan(const kiln_buffer *buffer, uint64_t *out_vk_buffer,
                                      uint64_t *out_offset) {
  return guarded([&]() -> Status {
    if (!buffer)
      return null_arg("buffer");
    if (!out_vk_buffer || !out_offset)
      return null_arg(!out_vk_buffer ? "out_vk_buffer" : "out_offset");
    KILN_RT_TRY(need_vulkan(*buffer->device, "kiln_buffer_export_vulkan"));
    vulkan_export_buffer(buffer->state, out_vk_buffer, out_offset);
    return {};
  });
}

} // extern "C"
