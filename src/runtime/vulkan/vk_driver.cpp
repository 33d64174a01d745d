// The "vulkan" driver vtable: glue between the driver interface and vk_device / vk_module.
#include "runtime/driver.h"
#include "runtime/vulkan/vk_module.h"

namespace kiln::rt {
namespace {

vk::Device *self(DeviceState *d) { return reinterpret_cast<vk::Device *>(d); }
const vk::Device *self(const DeviceState *d) { return reinterpret_cast<const vk::Device *>(d); }
vk::Module *self(ModuleState *m) { return reinterpret_cast<vk::Module *>(m); }

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

uint64_t validation_messages(const DeviceState *d) { return self(d)->instance->messages.load(); }

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

Status module_create(DeviceState *d, const Program &program, const ArtifactBytes &bytes,
                     ExecutableState *const *executables, ModuleState **out) {
  std::unique_ptr<vk::Module> m;
  KILN_RT_TRY(vk::create_module(*self(d), program, bytes,
                                reinterpret_cast<const vk::Pipeline *const *>(executables), &m));
  *out = reinterpret_cast<ModuleState *>(m.release());
  return {};
}

void module_destroy(ModuleState *m) { delete self(m); }

Status module_run(ModuleState *m, const RunArgs &args) { return vk::run_module(*self(m), args); }

const DriverVtable kVulkanDriver = {
    "vulkan",
    {count, describe, default_device, open, destroy, info, validation_messages},
    {executable_create, executable_destroy},
    {module_create, module_destroy, module_run},
};

} // namespace

const DriverVtable *vulkan_driver() { return &kVulkanDriver; }

} // namespace kiln::rt
