// The driver interface: one vtable (a struct of function pointers) per driver, registered by
// register_builtin_drivers() (drivers.cpp). The null driver (null_driver.cpp) is the template.
// It is split by object, and a driver implements only device-specific parts:
//   - device: enumeration, open, info, limits;
//   - buffer: device memory of N bytes (device, upload or readback kind), with a host pointer
//     where the host can address it;
//   - executable: one per program executable, built once per module load (a pipeline on Vulkan);
//   - command list: record dispatches, copies, barriers and timers, end, then submit-and-wait
//     as many times as wanted (a list is recorded once and replayed), and read the timers.
// What a module does with these is generic (module.cpp, the same for every driver): constants
// uploaded once, a pool of per-call frames (arena, I/O buffers, staging buffers where the device
// memory is not host-addressable, and one command list recorded with the whole program), input
// upload, submission, output download and per-command timings.
//
// A driver never sees unchecked input: artifacts arrive as a validated Program and run
// arguments have been checked against the signature (api.cpp). Buffer ranges and command
// arguments are checked by the driver (check_range) since tests call the ops directly; errors
// are Statuses, never crashes. Drivers own their state through the opaque DeviceState,
// BufferState, ExecutableState and CommandState they return.
//
// Threading: device, buffer and executable ops may be called from any thread; one command list
// is used by one thread at a time (the module's frame pool guarantees it), different lists of a
// device concurrently.
#pragma once

#include "kiln/kiln.h"
#include "runtime/program.h"
#include "runtime/status.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace kiln::rt {

struct DeviceState;     // defined by each driver
struct BufferState;     // defined by each driver
struct ExecutableState; // defined by each driver
struct CommandState;    // defined by each driver

// What the generic module checks a program against at load.
struct DeviceLimits {
  uint64_t binding_offset_alignment = 1; // a dispatch binding starts at a multiple of this
  uint64_t max_binding_bytes = UINT64_MAX;
  std::array<uint32_t, 3> max_workgroups{UINT32_MAX, UINT32_MAX, UINT32_MAX};
};

struct DeviceOps {
  // Enumeration; may be called without an open device, from any thread.
  Status (*count)(size_t *count);
  Status (*describe)(size_t index, kiln_device_info *info);
  // Index chosen when the uri names the driver without ":N".
  Status (*default_device)(size_t *index);
  Status (*open)(size_t index, DeviceState **out);
  void (*destroy)(DeviceState *device);
  Status (*info)(const DeviceState *device, kiln_device_info *info);
  // Also the device's health check at module load: DEVICE_LOST once the device was lost.
  Status (*limits)(const DeviceState *device, DeviceLimits *limits);
  uint64_t (*validation_messages)(const DeviceState *device);
};

enum class MemoryKind : uint8_t {
  device,   // bound by dispatches and copies; host-addressable only where memory is unified
  upload,   // host-addressable source of copies into device buffers (staging)
  readback, // host-addressable destination of copies out of device buffers (staging)
};

struct BufferOps {
  // Allocates `bytes` bytes of `kind` memory, usable as a dispatch binding and as the source
  // and destination of copies. INVALID_ARGUMENT for 0 bytes; OUT_OF_MEMORY naming the failing
  // call when the device has no room. Contents are unspecified until written.
  Status (*create)(DeviceState *device, uint64_t bytes, MemoryKind kind, BufferState **out);
  // Waits for nothing: the caller has finished every submission that uses the buffer.
  void (*destroy)(DeviceState *device, BufferState *buffer);
  // The host address of the whole buffer, valid until destroy, or nullptr when the host cannot
  // address it (then data moves through upload/readback buffers and copy commands). Never
  // nullptr for upload and readback buffers. Writes are visible to the next submission; a
  // submission's writes are visible once its submit returned.
  void *(*host_pointer)(DeviceState *device, BufferState *buffer);
  uint64_t (*size)(const BufferState *buffer);
};

struct ExecutableOps {
  // Builds executable `index` of `program` (a pipeline on Vulkan). Refuses, with
  // KILN_UNSUPPORTED naming the executable, a code kind the driver cannot run (its message
  // names the kind: code_kind_name) and requirements the device lacks. `bytes` is valid only
  // during the call. Called once per executable at load, before the module is built.
  Status (*create)(DeviceState *device, const Program &program, size_t index,
                   const ArtifactBytes &bytes, ExecutableState **out);
  // Called after every module using it is destroyed.
  void (*destroy)(DeviceState *device, ExecutableState *executable);
};

// How much one command list must hold (so a driver can size its pools up front).
struct CommandListDesc {
  uint32_t dispatches = 0; // dispatch commands per recording
  uint32_t bindings = 0;   // bindings over all of them
  uint32_t timers = 0;     // timer indices [0, timers) usable with CommandOps::timer
};

// A byte range of a buffer bound to a dispatch (binding i of the executable is bindings[i]).
struct Binding {
  BufferState *buffer = nullptr;
  uint64_t offset = 0, size = 0;
};

struct Dispatch {
  ExecutableState *executable = nullptr;
  const Binding *bindings = nullptr;
  size_t binding_count = 0; // must equal the executable's num_bindings
  const void *push_constants = nullptr;
  uint32_t push_constant_bytes = 0; // must equal the executable's push_constant_bytes
  std::array<uint32_t, 3> workgroups{0, 0, 0};
};

struct CommandOps {
  Status (*create)(DeviceState *device, const CommandListDesc &desc, CommandState **out);
  // The list is not executing (submit waits).
  void (*destroy)(DeviceState *device, CommandState *list);
  // Starts a recording, discarding an earlier one. Commands run in recording order, but their
  // memory effects are ordered only by barriers.
  Status (*begin)(DeviceState *device, CommandState *list);
  Status (*dispatch)(DeviceState *device, CommandState *list, const Dispatch &dispatch);
  Status (*copy)(DeviceState *device, CommandState *list, BufferState *src, uint64_t src_offset,
                 BufferState *dst, uint64_t dst_offset, uint64_t bytes);
  // Makes the writes of every earlier command visible to every later command and to the host.
  Status (*barrier)(DeviceState *device, CommandState *list);
  // Records the start (end = false) or end (end = true) time of timer `index`.
  Status (*timer)(DeviceState *device, CommandState *list, uint32_t index, bool end);
  Status (*end)(DeviceState *device, CommandState *list);
  // Runs the recorded list (ended, possibly submitted before) and waits for it to finish.
  Status (*submit)(DeviceState *device, CommandState *list);
  // Nanoseconds between the start and end of timers [0, count) of the last submission: 0
  // where the device has no timestamps or the recording did not write both ends. Refused
  // before the recording has been submitted.
  Status (*read_timers)(DeviceState *device, CommandState *list, uint64_t *ns, size_t count);
  // Optional (nullptr where the driver shares no queue with an application): submits the
  // recorded list after the waits of `sync`, has it signal the signals of `sync` when done, and
  // returns without waiting. Every other op on the list (and destroy) first waits for it.
  Status (*submit_async)(DeviceState *device, CommandState *list, const kiln_vulkan_sync &sync);
  // Optional with submit_async: waits for the list's asynchronous submission, if one is in
  // flight (OK when none).
  Status (*wait)(DeviceState *device, CommandState *list);
};

struct DriverVtable {
  const char *name;
  DeviceOps device;
  BufferOps buffer;
  ExecutableOps executable;
  CommandOps command;
};

// Vulkan interop (vk_driver.cpp): a device on the application's VkDevice, and buffers that are
// the application's VkBuffers. Both are destroyed through the vulkan vtable like kiln's own (an
// imported VkBuffer and a borrowed VkDevice are left to the application).
Status vulkan_open_external(const kiln_vulkan_context &context, DeviceState **out);
Status vulkan_import_buffer(DeviceState *device, uint64_t vk_buffer, uint64_t offset,
                            uint64_t bytes, BufferState **out);
void vulkan_export_buffer(const BufferState *buffer, uint64_t *vk_buffer, uint64_t *offset);

const DriverVtable *null_driver();
const DriverVtable *vulkan_driver();
const DriverVtable *cpu_driver();

// All registered drivers, in a fixed order (registered once, on first use).
size_t driver_count();
const DriverVtable *driver_at(size_t index);
const DriverVtable *find_driver(const char *name);

// Parses "driver" or "driver:N" into a driver and a device index.
Status resolve_uri(const char *uri, const DriverVtable **driver, size_t *index);

// Fills the common fields of a kiln_device_info.
void set_info_strings(kiln_device_info *info, const char *driver, size_t index, const char *name);

// INVALID_ARGUMENT unless [offset, offset + bytes) lies within a buffer of `size` bytes;
// `what` names the access ("copy source", "binding 2").
Status check_range(const char *what, uint64_t offset, uint64_t bytes, uint64_t size);

} // namespace kiln::rt
