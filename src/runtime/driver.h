// The driver interface: one vtable (a struct of function pointers) per driver, registered by
// register_builtin_drivers() (drivers.cpp). The null driver (null_driver.cpp) is the template.
// It is split by object: the device (enumeration, open, info), executables (one per program
// executable, built once per module load) and the module (constants, per-call resources, run).
//
// A driver never sees unchecked input: artifacts arrive as a validated Program and run
// arguments have been checked against the signature (api.cpp). Drivers own their state
// through the opaque DeviceState / ExecutableState / ModuleState they return.
#pragma once

#include "kiln/kiln.h"
#include "runtime/program.h"
#include "runtime/status.h"

#include <cstddef>

namespace kiln::rt {

struct DeviceState;     // defined by each driver
struct ExecutableState; // defined by each driver
struct ModuleState;     // defined by each driver

// Arguments of one run, already checked against the program's signature.
struct RunArgs {
  const kiln_tensor *inputs = nullptr;
  kiln_tensor *outputs = nullptr;
  uint64_t *command_ns = nullptr; // optional profiling output
  size_t command_ns_capacity = 0;
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
  uint64_t (*validation_messages)(const DeviceState *device);
};

struct ExecutableOps {
  // Builds executable `index` of `program` (a pipeline on Vulkan). Refuses, with
  // KILN_UNSUPPORTED naming the executable, a code kind the driver cannot run (its message
  // names the kind: code_kind_name) and requirements the device lacks. `bytes` is valid only
  // during the call. Called once per executable at load, before ModuleOps::create.
  Status (*create)(DeviceState *device, const Program &program, size_t index,
                   const ArtifactBytes &bytes, ExecutableState **out);
  // Called after every module using it is destroyed.
  void (*destroy)(DeviceState *device, ExecutableState *executable);
};

struct ModuleOps {
  // Builds what else the program needs on the device (constants, per-call resource pool);
  // `executables[i]` is program.executables[i] built by ExecutableOps::create. `program` and the
  // executables outlive the module. `bytes` (constant data) is valid only during the call.
  Status (*create)(DeviceState *device, const Program &program, const ArtifactBytes &bytes,
                   ExecutableState *const *executables, ModuleState **out);
  void (*destroy)(ModuleState *module);
  // Must be safe to call concurrently on one module.
  Status (*run)(ModuleState *module, const RunArgs &args);
};

struct DriverVtable {
  const char *name;
  DeviceOps device;
  ExecutableOps executable;
  ModuleOps module;
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
