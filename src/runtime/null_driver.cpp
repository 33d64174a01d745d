// The null driver: a test double and the template for real drivers. It accepts any validated
// artifact (executables of every code kind), runs nothing, and fills every output with zeros.
// It has exactly one device.
#include "runtime/driver.h"

#include <cstdio>
#include <cstring>

namespace kiln::rt {

namespace {

// DeviceState, ExecutableState and ModuleState stay incomplete: each driver casts to its own
// types.
struct NullDevice {};
struct NullExecutable {
  const Executable *executable;
};
struct NullModule {
  const Program *program;
};
NullModule *self(ModuleState *m) { return reinterpret_cast<NullModule *>(m); }

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

uint64_t validation_messages(const DeviceState *) { return 0; }

Status executable_create(DeviceState *, const Program &program, size_t index,
                         const ArtifactBytes &, ExecutableState **out) {
  *out = reinterpret_cast<ExecutableState *>(new NullExecutable{&program.executables[index]});
  return {};
}

void executable_destroy(DeviceState *, ExecutableState *exe) {
  delete reinterpret_cast<NullExecutable *>(exe);
}

Status module_create(DeviceState *, const Program &program, const ArtifactBytes &,
                     ExecutableState *const *, ModuleState **out) {
  *out = reinterpret_cast<ModuleState *>(new NullModule{&program});
  return {};
}

void module_destroy(ModuleState *module) { delete self(module); }

Status module_run(ModuleState *state, const RunArgs &args) {
  NullModule *module = self(state);
  for (size_t i = 0; i < module->program->outputs.size(); ++i)
    if (args.outputs[i].bytes)
      std::memset(args.outputs[i].data, 0, args.outputs[i].bytes);
  for (size_t i = 0; i < args.command_ns_capacity && i < module->program->commands.size(); ++i)
    args.command_ns[i] = 0;
  return {};
}

const DriverVtable kNullDriver = {
    "null",
    {count, describe, default_device, open, destroy, info, validation_messages},
    {executable_create, executable_destroy},
    {module_create, module_destroy, module_run},
};

} // namespace

const DriverVtable *null_driver() { return &kNullDriver; }

} // namespace kiln::rt
