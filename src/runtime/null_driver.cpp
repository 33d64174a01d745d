// The null driver: a test double and the template for real drivers. It accepts any validated
// artifact (executables of every code kind) and checks every buffer and command argument like a
// real driver, but its command lists run nothing: buffers are zero-filled host memory, so a
// module's outputs are zeros and every timer reads 0. It has exactly one device.
#include "runtime/driver.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <new>

namespace kiln::rt {

namespace {

// The opaque driver states stay incomplete: each driver casts to its own types.
struct NullDevice {};
struct NullBuffer {
  std::unique_ptr<uint8_t[]> bytes;
  uint64_t size = 0;
};
struct NullExecutable {
  const Executable *executable;
};
struct NullCommands {
  CommandListDesc desc;
  bool recording = false, ended = false, submitted = false;
  uint32_t dispatches = 0;
};
NullBuffer *self(BufferState *b) { return reinterpret_cast<NullBuffer *>(b); }
const NullBuffer *self(const BufferState *b) { return reinterpret_cast<const NullBuffer *>(b); }
NullCommands *self(CommandState *c) { return reinterpret_cast<NullCommands *>(c); }

Status count(size_t *n) {
  *n = 1;
  return {};
}

Status describe(size_t index, kiln_device_info *info) {
  if (index != 0)
    return error(KILN_NOT_FOUND, "the null driver has one device");
  *info = kiln_device_info{};
  set_info_strings(info, "null", 0, "null (test double: outputs are zeros)");
  std::snprintf(info->device_type, sizeof info->device_type, "%s", "other");
  info->max_storage_buffer_range = UINT64_MAX;
  return {};
}

Status default_device(size_t *index) {
  *index = 0;
  return {};
}

Status open(size_t index, DeviceState **out) {
  if (index != 0)
    return error(KILN_NOT_FOUND, "the null driver has one device");
  *out = reinterpret_cast<DeviceState *>(new NullDevice{});
  return {};
}

void destroy(DeviceState *device) { delete reinterpret_cast<NullDevice *>(device); }

Status info(const DeviceState *, kiln_device_info *out) { return describe(0, out); }

Status limits(const DeviceState *, DeviceLimits *out) {
  *out = DeviceLimits{};
  return {};
}

uint64_t validation_messages(const DeviceState *) { return 0; }

Status buffer_create(DeviceState *, uint64_t bytes, MemoryKind, BufferState **out) {
  if (bytes == 0)
    return error(KILN_INVALID_ARGUMENT, "cannot create a buffer of 0 bytes");
  if (bytes > SIZE_MAX / 2)
    return error(KILN_OUT_OF_MEMORY, "null driver: a buffer of ", bytes, " bytes is too large");
  auto b = std::make_unique<NullBuffer>();
  b->bytes.reset(new (std::nothrow) uint8_t[size_t(bytes)]());
  if (!b->bytes)
    return error(KILN_OUT_OF_MEMORY, "null driver: out of host memory for ", bytes, " bytes");
  b->size = bytes;
  *out = reinterpret_cast<BufferState *>(b.release());
  return {};
}

void buffer_destroy(DeviceState *, BufferState *b) { delete self(b); }

void *buffer_host_pointer(DeviceState *, BufferState *b) { return self(b)->bytes.get(); }

uint64_t buffer_size(const BufferState *b) { return self(b)->size; }

Status executable_create(DeviceState *, const Program &program, size_t index, const ArtifactBytes &,
                         ExecutableState **out) {
  *out = reinterpret_cast<ExecutableState *>(new NullExecutable{&program.executables[index]});
  return {};
}

void executable_destroy(DeviceState *, ExecutableState *exe) {
  delete reinterpret_cast<NullExecutable *>(exe);
}

Status commands_create(DeviceState *, const CommandListDesc &desc, CommandState **out) {
  *out = reinterpret_cast<CommandState *>(new NullCommands{desc});
  return {};
}

void commands_destroy(DeviceState *, CommandState *list) { delete self(list); }

Status recording(const NullCommands &c, const char *what) {
  if (!c.recording)
    return error(KILN_INVALID_ARGUMENT, what, ": the command list is not recording (call begin)");
  return {};
}

Status commands_begin(DeviceState *, CommandState *list) {
  NullCommands &c = *self(list);
  if (c.recording)
    return error(KILN_INVALID_ARGUMENT, "begin: the command list is already recording (call end)");
  c.recording = true;
  c.ended = false;
  c.submitted = false;
  c.dispatches = 0;
  return {};
}

Status commands_dispatch(DeviceState *, CommandState *list, const Dispatch &d) {
  NullCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "dispatch"));
  if (!d.executable)
    return error(KILN_INVALID_ARGUMENT, "dispatch: executable is NULL");
  const Executable &exe = *reinterpret_cast<const NullExecutable *>(d.executable)->executable;
  if (c.dispatches >= c.desc.dispatches)
    return error(KILN_INVALID_ARGUMENT, "dispatch: the command list holds at most ",
                 c.desc.dispatches, " dispatch(es)");
  if (d.binding_count != exe.num_bindings)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", d.binding_count,
                 " bindings given, the executable has ", exe.num_bindings);
  if (d.push_constant_bytes > exe.push_constant_bytes)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", d.push_constant_bytes,
                 " push constant bytes given, the executable takes ", exe.push_constant_bytes);
  for (size_t i = 0; i < d.binding_count; ++i) {
    const Binding &b = d.bindings[i];
    if (!b.buffer)
      return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': binding ", i,
                   " has no buffer");
    KILN_RT_TRY(check_range(cat("dispatch of '", exe.name, "' binding ", i).c_str(), b.offset,
                            b.size, self(b.buffer)->size));
  }
  ++c.dispatches;
  return {};
}

Status commands_copy(DeviceState *, CommandState *list, BufferState *src, uint64_t src_offset,
                     BufferState *dst, uint64_t dst_offset, uint64_t bytes) {
  KILN_RT_TRY(recording(*self(list), "copy"));
  if (!src || !dst)
    return error(KILN_INVALID_ARGUMENT, "copy: ", src ? "destination" : "source",
                 " buffer is NULL");
  KILN_RT_TRY(check_range("copy source", src_offset, bytes, self(src)->size));
  KILN_RT_TRY(check_range("copy destination", dst_offset, bytes, self(dst)->size));
  if (src == dst && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
    return error(KILN_INVALID_ARGUMENT, "copy: source [", src_offset, ", +", bytes,
                 ") and destination [", dst_offset, ", +", bytes, ") overlap");
  return {};
}

Status commands_barrier(DeviceState *, CommandState *list) {
  return recording(*self(list), "barrier");
}

Status commands_timer(DeviceState *, CommandState *list, uint32_t index, bool) {
  NullCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "timer"));
  if (index >= c.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "timer ", index, ": the command list has ", c.desc.timers,
                 " timer(s)");
  return {};
}

Status commands_end(DeviceState *, CommandState *list) {
  NullCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "end"));
  c.recording = false;
  c.ended = true;
  return {};
}

Status commands_submit(DeviceState *, CommandState *list) {
  if (!self(list)->ended)
    return error(KILN_INVALID_ARGUMENT,
                 "submit: the command list was not recorded (call begin and end first)");
  self(list)->submitted = true;
  return {};
}

Status commands_read_timers(DeviceState *, CommandState *list, uint64_t *ns, size_t count) {
  const NullCommands &c = *self(list);
  if (count > c.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "read_timers: ", count,
                 " timers asked for, the command list has ", c.desc.timers);
  if (!c.submitted)
    return error(KILN_INVALID_ARGUMENT,
                 "read_timers: the command list has not run since it was recorded (call submit)");
  std::fill(ns, ns + count, 0);
  return {};
}

const DriverVtable kNullDriver = {
    "null",
    {count, describe, default_device, open, destroy, info, limits, validation_messages},
    {buffer_create, buffer_destroy, buffer_host_pointer, buffer_size},
    {executable_create, executable_destroy},
    {commands_create, commands_destroy, commands_begin, commands_dispatch, commands_copy,
     commands_barrier, commands_timer, commands_end, commands_submit, commands_read_timers},
};

} // namespace

const DriverVtable *null_driver() { return &kNullDriver; }

} // namespace kiln::rt
