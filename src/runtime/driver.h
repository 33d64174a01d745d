// The driver interface: one vtable (a struct of function pointers) per driver, registered by
// register_builtin_drivers() (drivers.cpp). The null driver (null_driver.cpp) is the template.
//
// A driver never sees unchecked input: artifacts arrive as a validated Program and run
// arguments have been checked against the signature (api.cpp). Drivers own their device and
// module state through the opaque DeviceState / ModuleState they return.
#pragma once

#include "kiln/kiln.h"
#include "runtime/program.h"
#include "runtime/status.h"

#include <cstddef>

namespace kiln::rt {

struct DeviceState;  // defined by each driver
struct ModuleState;  // defined by each driver

// Arguments of one run, already checked against the program's signature.
struct RunArgs {
  const kiln_tensor *inputs = nullptr;
  kiln_tensor *outputs = nullptr;
  uint64_t *command_ns = nullptr; // optional profiling output
  size_t command_ns_capacity = 0;
};

struct DriverVtable {
  const char *name;
  // Enumeration; may be called without an open device, from any thread.
  Status (*device_count)(size_t *count);
  Status (*device_describe)(size_t index, kiln_device_info *info);
  // Index chosen when the uri names the driver without ":N".
  Status (*default_device)(size_t *index);
  Status (*device_open)(size_t index, DeviceState **out);
  void (*device_destroy)(DeviceState *device);
  Status (*device_info)(const DeviceState *device, kiln_device_info *info);
  uint64_t (*validation_messages)(const DeviceState *device);
  // Builds what the program needs on the device; `program` outlives the module. `bytes` (SPIR-V
  // and constant data) is valid only during the call: keep nothing that points into it.
  Status (*module_create)(DeviceState *device, const Program &program, const ArtifactBytes &bytes,
                          ModuleState **out);
  void (*module_destroy)(ModuleState *module);
  // Must be safe to call concurrently on one module.
  Status (*module_run)(ModuleState *module, const RunArgs &args);
};

const DriverVtable *null_driver();
const DriverVtable *vulkan_driver();

// All registered drivers, in a fixed order (registered once, on first use).
size_t driver_count();
const DriverVtable *driver_at(size_t index);
const DriverVtable *find_driver(const char *name);

// Parses "driver" or "driver:N" into a driver and a device index.
Status resolve_uri(const char *uri, const DriverVtable **driver, size_t *index);

// Fills the common fields of a kiln_device_info.
void set_info_strings(kiln_device_info *info, const char *driver, size_t index, const char *name);

} // namespace kiln::rt
