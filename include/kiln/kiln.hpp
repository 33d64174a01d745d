// Thin C++ RAII wrapper over the kiln C API (kiln.h). Header-only; adds no behaviour: handles
// release themselves, and failures throw kiln::Error carrying the C status code and message.
// Threading and ownership rules are those of kiln.h.
#pragma once

#include "kiln/kiln.h"

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln {

class Error : public std::runtime_error {
public:
  Error(kiln_status_code code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  kiln_status_code code() const { return code_; }

private:
  kiln_status_code code_;
};

// Throws kiln::Error for a failed status (and frees it); does nothing for OK.
inline void check(kiln_status status) {
  if (!status)
    return;
  Error e(kiln_status_code_of(status), kiln_status_message(status));
  kiln_status_free(status);
  throw e;
}

inline std::vector<kiln_device_info> list_devices() {
  size_t n = 0;
  check(kiln_devices_list(nullptr, 0, &n));
  std::vector<kiln_device_info> infos(n);
  check(kiln_devices_list(infos.data(), infos.size(), &n));
  infos.resize(std::min(n, infos.size()));
  return infos;
}

class Device {
public:
  explicit Device(const std::string &uri) {
    kiln_device *d = nullptr;
    check(kiln_device_open(uri.c_str(), &d));
    handle_.reset(d);
  }
  kiln_device *get() const { return handle_.get(); }
  kiln_device_info info() const {
    kiln_device_info i;
    check(kiln_device_info_get(get(), &i));
    return i;
  }

private:
  struct Release {
    void operator()(kiln_device *d) const { kiln_device_release(d); }
  };
  std::unique_ptr<kiln_device, Release> handle_;
};

class Module {
public:
  static Module load_file(const Device &device, const std::string &path) {
    kiln_module *m = nullptr;
    check(kiln_module_load_file(device.get(), path.c_str(), &m));
    return Module(m);
  }
  static Module load_memory(const Device &device, const void *data, size_t size) {
    kiln_module *m = nullptr;
    check(kiln_module_load_memory(device.get(), data, size, &m));
    return Module(m);
  }
  kiln_module *get() const { return handle_.get(); }

  size_t input_count() const { return kiln_module_input_count(get()); }
  size_t output_count() const { return kiln_module_output_count(get()); }
  kiln_tensor_info input(size_t i) const {
    kiln_tensor_info info;
    check(kiln_module_input_info(get(), i, &info));
    return info;
  }
  kiln_tensor_info output(size_t i) const {
    kiln_tensor_info info;
    check(kiln_module_output_info(get(), i, &info));
    return info;
  }
  // Runs once; `command_ns`, when given, is resized to the command count and filled with the
  // device time of each command; `span_ns` receives the time from the first command's start to
  // the last one's end.
  void run(const std::vector<kiln_tensor> &inputs, std::vector<kiln_tensor> &outputs,
           std::vector<uint64_t> *command_ns = nullptr, uint64_t *span_ns = nullptr) const {
    kiln_run_options options{};
    options.span_ns = span_ns;
    if (command_ns) {
      command_ns->assign(kiln_module_command_count(get()), 0);
      options.command_ns = command_ns->data();
      options.command_ns_capacity = command_ns->size();
    }
    check(kiln_module_run_with_options(get(), inputs.data(), inputs.size(), outputs.data(),
                                       outputs.size(), &options));
  }

private:
  explicit Module(kiln_module *m) : handle_(m) {}
  struct Release {
    void operator()(kiln_module *m) const { kiln_module_release(m); }
  };
  std::unique_ptr<kiln_module, Release> handle_;
};

} // namespace kiln
