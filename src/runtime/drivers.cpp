// Driver registry: register_builtin_drivers() is the one place drivers are registered; helpers
// shared by the drivers.
#include "runtime/driver.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {
namespace {

std::vector<const DriverVtable *> &registry() {
  static std::vector<const DriverVtable *> drivers;
  return drivers;
}

void register_builtin_drivers() {
  registry().push_back(null_driver());
  registry().push_back(vulkan_driver());
  registry().push_back(cpu_driver());
}

void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, register_builtin_drivers);
}

} // namespace

size_t driver_count() {
  ensure_registered();
  return registry().size();
}

const DriverVtable *driver_at(size_t index) {
  ensure_registered();
  return index < registry().size() ? registry()[index] : nullptr;
}

const DriverVtable *find_driver(const char *name) {
  ensure_registered();
  for (const DriverVtable *d : registry())
    if (std::strcmp(d->name, name) == 0)
      return d;
  return nullptr;
}

Status resolve_uri(const char *uri, const DriverVtable **driver, size_t *index) {
  if (!uri)
    return Status(KILN_INVALID_ARGUMENT, "device uri is NULL");
  std::string s(uri), name = s, number;
  if (auto colon = s.find(':'); colon != std::string::npos) {
    name = s.substr(0, colon);
    number = s.substr(colon + 1);
  }
  const DriverVtable *d = find_driver(name.c_str());
  if (!d) {
    std::string known;
    for (size_t i = 0; i < driver_count(); ++i)
      known += std::string(i ? ", " : "") + driver_at(i)->name;
    return error(KILN_NOT_FOUND, "unknown device '", s, "': drivers are ", known,
                 " (use DRIVER or DRIVER:N)");
  }
  size_t count = 0;
  KILN_RT_TRY(d->device.count(&count));
  size_t i = 0;
  if (number.empty()) {
    if (count == 0)
      return error(KILN_NOT_FOUND, "driver '", name, "' found no device");
    KILN_RT_TRY(d->device.default_device(&i));
  } else {
    char *end = nullptr;
    unsigned long long v = std::strtoull(number.c_str(), &end, 10);
    if (*end != '\0' || number[0] == '-' || number[0] == '+')
      return error(KILN_INVALID_ARGUMENT, "device '", s, "': '", number,
                   "' is not a device index");
    if (v >= count)
      return error(KILN_NOT_FOUND, "device '", s, "': driver '", name, "' has ", count,
                   " device(s)");
    i = size_t(v);
  }
  *driver = d;
  *index = i;
  return {};
}

void set_info_strings(kiln_device_info *info, const char *driver, size_t index, const char *name) {
  std::snprintf(info->driver, sizeof info->driver, "%s", driver);
  std::snprintf(info->uri, sizeof info->uri, "%s:%zu", driver, index);
  std::snprintf(info->name, sizeof info->name, "%s", name);
}

Status check_range(const char *what, uint64_t offset, uint64_t bytes, uint64_t size) {
  if (offset > size || bytes > size - offset)
    return error(KILN_INVALID_ARGUMENT, what, ": bytes [", offset, ", +", bytes,
                 ") are outside the buffer of ", size, " bytes");
  if (bytes == 0)
    return error(KILN_INVALID_ARGUMENT, what, ": a range of 0 bytes (at offset ", offset, ")");
  return {};
}

} // namespace kiln::rt
