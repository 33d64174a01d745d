// The C API's handles (kiln_device, kiln_module, kiln_buffer) and the helpers every C entry
// point uses: api.cpp (devices, modules, runs) and api_buffers.cpp (device buffers, Vulkan
// interop).
#pragma once

#include "runtime/driver.h"
#include "runtime/module.h"

#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace kiln::rt {

// Owns one driver device; shared by the kiln_device handle and every module and buffer made on
// it.
struct DeviceHolder {
  const DriverVtable *driver = nullptr;
  DeviceState *state = nullptr;
  ~DeviceHolder() {
    if (state)
      driver->device.destroy(state);
  }
};

// Runs `fn`, turning escaping exceptions into statuses so none crosses the C boundary.
template <typename Fn> kiln_status guarded(Fn &&fn) {
  try {
    return fn().release();
  } catch (const std::bad_alloc &) {
    return Status(KILN_OUT_OF_MEMORY, "out of host memory").release();
  } catch (const std::exception &e) {
    return Status(KILN_INTERNAL, std::string("internal error: ") + e.what()).release();
  } catch (...) {
    return Status(KILN_INTERNAL, "internal error: unknown exception").release();
  }
}

inline Status null_arg(const char *what) { return error(KILN_INVALID_ARGUMENT, what, " is NULL"); }

} // namespace kiln::rt

struct kiln_device {
  std::shared_ptr<kiln::rt::DeviceHolder> holder;
};

struct kiln_module {
  std::shared_ptr<kiln::rt::DeviceHolder> device;
  std::unique_ptr<kiln::rt::Program> program;
  std::vector<kiln::rt::ExecutableState *> executables; // program->executables, built by the driver
  std::unique_ptr<kiln::rt::Module> module;              // uses the executables: destroyed first
  ~kiln_module() {
    const kiln::rt::DriverVtable *d = device->driver;
    module.reset();
    for (kiln::rt::ExecutableState *e : executables)
      d->executable.destroy(device->state, e);
  }
};

// A device buffer: the driver's buffer, the device it belongs to (kept alive by it), and an
// identity no other buffer of the process ever has (a module compares identities, not
// addresses, to know whether its recording still binds the right buffers).
struct kiln_buffer {
  std::shared_ptr<kiln::rt::DeviceHolder> device;
  kiln::rt::BufferState *state = nullptr;
  uint64_t id = 0;
  uint64_t bytes = 0;
  ~kiln_buffer() {
    if (state)
      device->driver->buffer.destroy(device->state, state);
  }
};
