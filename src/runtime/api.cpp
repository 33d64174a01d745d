// The C API: handles, argument checks and exception containment around the drivers.
#include "runtime/digest.h"
#include "runtime/handles.h"

#include <cerrno>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln::rt;

namespace {

// kiln.h spells kiln_dtype out (a public C enum): each value must be its place in the list.
enum class DTypeIndex {
#define KILN_X(id, text, api, bytes, c_enum, fb) id,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};
#define KILN_X(id, text, api, bytes, c_enum, fb)                                               \
  static_assert(int(c_enum) == int(DTypeIndex::id), #c_enum " must equal its place in KILN_DTYPES");
KILN_DTYPES(KILN_X)
#undef KILN_X




std::string shape_str(const int64_t *dims, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i)
      s += ',';
    s += std::to_string(dims[i]);
  }
  s += ']';
  return s;
}

Status check_tensor(const kiln_tensor &t, const TensorSig &sig, const std::string &what) {
  const std::string who = what + " '" + sig.name + "'";
  if (t.dtype != sig.dtype)
    return error(KILN_INVALID_ARGUMENT, who, ": expected dtype ", kiln_dtype_name(sig.dtype),
                 ", got ", kiln_dtype_name(t.dtype));
  const std::string expected = shape_str(sig.shape.data(), sig.shape.size());
  if (t.rank != sig.shape.size())
    return error(KILN_INVALID_ARGUMENT, who, ": expected rank ", sig.shape.size(), " (shape ",
                 expected, "), got rank ", t.rank);
  if (t.rank && !t.shape)
    return error(KILN_INVALID_ARGUMENT, who, ": shape is NULL");
  for (size_t i = 0; i < t.rank; ++i)
    if (t.shape[i] != sig.shape[i])
      return error(KILN_INVALID_ARGUMENT, who, ": expected shape ", expected, ", got ",
                   shape_str(t.shape, t.rank));
  if (t.bytes != sig.bytes)
    return error(KILN_INVALID_ARGUMENT, who, ": expected ", sig.bytes, " bytes, got ", t.bytes);
  if (t.bytes && !t.data)
    return error(KILN_INVALID_ARGUMENT, who, ": data is NULL");
  return {};
}

Status check_tensors(const kiln_tensor *ts, size_t n, const std::vector<TensorSig> &sigs,
                     const char *what) {
  if (n != sigs.size())
    return error(KILN_INVALID_ARGUMENT, "expected ", sigs.size(), " ", what, "s, got ", n);
  if (n && !ts)
    return error(KILN_INVALID_ARGUMENT, what, "s array is NULL");
  for (size_t i = 0; i < n; ++i)
    KILN_RT_TRY(check_tensor(ts[i], sigs[i], std::string(what) + " " + std::to_string(i)));
  return {};
}

void fill_tensor_info(const TensorSig &sig, kiln_tensor_info *out) {
  out->name = sig.name.c_str();
  out->dtype = sig.dtype;
  out->rank = uint32_t(sig.shape.size());
  out->shape = sig.shape.data();
  out->bytes = size_t(sig.bytes);
}

// An artifact file opened for loading: mapped read-only when it is a regular file (only the pages
// the loader touches become resident; constant data is read with pread()), else read whole.
class ArtifactFile {
public:
  ~ArtifactFile() {
    if (map_)
      ::munmap(map_, size_);
    if (fd_ >= 0)
      ::close(fd_);
  }
  Status open(const char *path) {
    do
      fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
    while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0)
      return error(KILN_NOT_FOUND, "cannot open artifact '", path, "': ", std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      return error(KILN_NOT_FOUND, "cannot stat artifact '", path, "': ", std::strerror(errno));
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      size_ = size_t(st.st_size);
      void *map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (map != MAP_FAILED) {
        map_ = map;
        return {};
      }
    }
    return read_all(path);
  }
  const void *data() const { return map_ ? map_ : static_cast<const void *>(buffer_.data()); }
  size_t size() const { return map_ ? size_ : buffer_.size(); }
  // The descriptor constant data can be read from, or -1 when the file was read into memory.
  int fd() const { return map_ ? fd_ : -1; }

private:
  Status read_all(const char *path) {
    char chunk[1 << 16];
    for (;;) {
      ssize_t got = ::read(fd_, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return error(KILN_NOT_FOUND, "cannot read artifact '", path, "': ", std::strerror(errno));
      if (got == 0)
        return {};
      buffer_.insert(buffer_.end(), chunk, chunk + got);
    }
  }
  int fd_ = -1;
  void *map_ = nullptr;
  size_t size_ = 0;
  std::vector<uint8_t> buffer_;
};

} // namespace


extern "C" {

const char *kiln_dtype_name(kiln_dtype dtype) {
  static const char *const names[] = {
#define KILN_X(id, text, api, bytes, c_enum, fb) api,
      KILN_DTYPES(KILN_X)
#undef KILN_X
  };
  return unsigned(dtype) < std::size(names) ? names[dtype] : "?";
}

size_t kiln_dtype_size(kiln_dtype dtype) {
  static const size_t sizes[] = {
#define KILN_X(id, text, api, bytes, c_enum, fb) bytes,
      KILN_DTYPES(KILN_X)
#undef KILN_X
  };
  return unsigned(dtype) < std::size(sizes) ? sizes[dtype] : 0;
}

size_t kiln_driver_count(void) { return driver_count(); }

const char *kiln_driver_name(size_t index) {
  const DriverVtable *d = driver_at(index);
  return d ? d->name : nullptr;
}

kiln_status kiln_device_count(const char *driver, size_t *out_count) {
  return guarded([&]() -> Status {
    if (!driver)
      return null_arg("driver");
    if (!out_count)
      return null_arg("out_count");
    const DriverVtable *d = find_driver(driver);
    if (!d)
      return error(KILN_NOT_FOUND, "unknown driver '", driver, "'");
    return d->device.count(out_count);
  });
}

kiln_status kiln_device_describe(const char *uri, kiln_device_info *out_info) {
  return guarded([&]() -> Status {
    if (!out_info)
      return null_arg("out_info");
    const DriverVtable *d = nullptr;
    size_t index = 0;
    KILN_RT_TRY(resolve_uri(uri, &d, &index));
    return d->device.describe(index, out_info);
  });
}

kiln_status kiln_devices_list(kiln_device_info *infos, size_t capacity, size_t *out_count) {
  return guarded([&]() -> Status {
    if (!out_count)
      return null_arg("out_count");
    if (capacity && !infos)
      return null_arg("infos");
    size_t total = 0;
    for (size_t i = 0; i < driver_count(); ++i) {
      const DriverVtable *d = driver_at(i);
      size_t n = 0;
      if (!d->device.count(&n).ok())
        continue; // a driver that cannot start has no devices to list
      for (size_t j = 0; j < n; ++j, ++total)
        if (total < capacity)
          KILN_RT_TRY(d->device.describe(j, &infos[total]));
    }
    *out_count = total;
    return {};
  });
}

kiln_status kiln_device_open(const char *uri, kiln_device **out_device) {
  return guarded([&]() -> Status {
    if (!out_device)
      return null_arg("out_device");
    const DriverVtable *d = nullptr;
    size_t index = 0;
    KILN_RT_TRY(resolve_uri(uri, &d, &index));
    auto holder = std::make_shared<DeviceHolder>();
    holder->driver = d;
    KILN_RT_TRY(d->device.open(index, &holder->state));
    *out_device = new kiln_device{std::move(holder)};
    return {};
  });
}

void kiln_device_release(kiln_device *device) { delete device; }

kiln_status kiln_device_info_get(const kiln_device *device, kiln_device_info *out_info) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!out_info)
      return null_arg("out_info");
    return device->holder->driver->device.info(device->holder->state, out_info);
  });
}

kiln_status kiln_device_validation_message_count(const kiln_device *device, uint64_t *out_count) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!out_count)
      return null_arg("out_count");
    *out_count = device->holder->driver->device.validation_messages(device->holder->state);
    return {};
  });
}

namespace {

// Verifies `data` in place and builds the module; `fd` >= 0 when `data` maps that file.
Status load_module(kiln_device *device, const void *data, size_t size, int fd,
                   kiln_module **out_module) {
  auto module = std::make_unique<kiln_module>();
  module->device = device->holder;
  ArtifactBytes bytes;
  if (fd >= 0)
    bytes.read_from_file(fd);
  KILN_RT_TRY(parse_artifact(data, size, &module->program, &bytes));
  const DriverVtable *d = device->holder->driver;
  DeviceState *state = device->holder->state;
  module->executables.reserve(module->program->executables.size());
  for (size_t i = 0; i < module->program->executables.size(); ++i) {
    ExecutableState *exe = nullptr;
    KILN_RT_TRY(d->executable.create(state, *module->program, i, bytes, &exe));
    module->executables.push_back(exe);
  }
  KILN_RT_TRY(Module::create(*d, state, *module->program, bytes, module->executables.data(),
                             &module->module));
  *out_module = module.release();
  return {};
}

} // namespace

kiln_status kiln_module_load_memory(kiln_device *device, const void *data, size_t size,
                                    kiln_module **out_module) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!out_module)
      return null_arg("out_module");
    if (!data)
      return null_arg("data");
    return load_module(device, data, size, -1, out_module);
  });
}

kiln_status kiln_module_load_file(kiln_device *device, const char *path,
                                  kiln_module **out_module) {
  return guarded([&]() -> Status {
    if (!device)
      return null_arg("device");
    if (!path)
      return null_arg("path");
    if (!out_module)
      return null_arg("out_module");
    ArtifactFile file;
    KILN_RT_TRY(file.open(path));
    Status s = load_module(device, file.data(), file.size(), file.fd(), out_module);
    if (s.ok())
      return {};
    return Status(s.code(), std::string(path) + ": " + s.message());
  });
}

void kiln_module_release(kiln_module *module) { delete module; }

kiln_status kiln_artifact_digest(const void *data, size_t size,
                                 uint8_t out_digest[KILN_ARTIFACT_DIGEST_BYTES]) {
  return guarded([&]() -> Status {
    if (!data)
      return null_arg("data");
    if (!out_digest)
      return null_arg("out_digest");
    std::array<uint8_t, 32> digest;
    size_t payload = 0;
    KILN_RT_TRY(check_digest(data, size, -1, &digest, &payload));
    std::memcpy(out_digest, digest.data(), digest.size());
    return {};
  });
}

kiln_status kiln_module_artifact_digest(const kiln_module *module,
                                        uint8_t out_digest[KILN_ARTIFACT_DIGEST_BYTES]) {
  return guarded([&]() -> Status {
    if (!module)
      return null_arg("module");
    if (!out_digest)
      return null_arg("out_digest");
    std::memcpy(out_digest, module->program->digest.data(), module->program->digest.size());
    return {};
  });
}

size_t kiln_module_input_count(const kiln_module *module) {
  return module ? module->program->inputs.size() : 0;
}

size_t kiln_module_output_count(const kiln_module *module) {
  return module ? module->program->outputs.size() : 0;
}

static kiln_status signature_info(const kiln_module *module, size_t index, kiln_tensor_info *out,
                                  bool input) {
  return guarded([&]() -> Status {
    if (!module)
      return null_arg("module");
    if (!out)
      return null_arg("out_info");
    const auto &sigs = input ? module->program->inputs : module->program->outputs;
    if (index >= sigs.size())
      return error(KILN_INVALID_ARGUMENT, input ? "input" : "output", " index ", index,
                   " out of range: the module has ", sigs.size());
    fill_tensor_info(sigs[index], out);
    return {};
  });
}

kiln_status kiln_module_input_info(const kiln_module *module, size_t index,
                                   kiln_tensor_info *out_info) {
  return signature_info(module, index, out_info, true);
}

kiln_status kiln_module_output_info(const kiln_module *module, size_t index,
                                    kiln_tensor_info *out_info) {
  return signature_info(module, index, out_info, false);
}

size_t kiln_module_command_count(const kiln_module *module) {
  return module ? module->program->commands.size() : 0;
}

kiln_status kiln_module_command_info(const kiln_module *module, size_t index,
                                     kiln_command_info *out_info) {
  return guarded([&]() -> Status {
    if (!module)
      return null_arg("module");
    if (!out_info)
      return null_arg("out_info");
    const Program &p = *module->program;
    if (index >= p.commands.size())
      return error(KILN_INVALID_ARGUMENT, "command index ", index, " out of range: the module has ",
                   p.commands.size());
    const Command &c = p.commands[index];
    *out_info = kiln_command_info{};
    out_info->kind = c.kind;
    out_info->ops = c.source_ops.c_str(); // "" for a copy
    if (c.kind == KILN_COMMAND_COPY) {
      out_info->name = "copy";
      out_info->bytes = c.src.size;
    } else {
      out_info->name = p.executables[c.executable].name.c_str();
      for (int i = 0; i < 3; ++i)
        out_info->workgroups[i] = c.workgroups[i];
      for (const BufferRef &b : c.bindings)
        out_info->bytes += b.size;
    }
    return {};
  });
}

kiln_status kiln_module_run_with_options(kiln_module *module, const kiln_tensor *inputs,
                                         size_t input_count, kiln_tensor *outputs,
                                         size_t output_count, const kiln_run_options *options) {
  return guarded([&]() -> Status {
    if (!module)
      return null_arg("module");
    KILN_RT_TRY(check_tensors(inputs, input_count, module->program->inputs, "input"));
    KILN_RT_TRY(check_tensors(outputs, output_count, module->program->outputs, "output"));
    RunArgs args;
    args.inputs = inputs;
    args.outputs = outputs;
    if (options && options->command_ns) {
      args.command_ns = options->command_ns;
      args.command_ns_capacity = options->command_ns_capacity;
    }
    if (options)
      args.span_ns = options->span_ns;
    return module->module->run(args);
  });
}

kiln_status kiln_module_run(kiln_module *module, const kiln_tensor *inputs, size_t input_count,
                            kiln_tensor *outputs, size_t output_count) {
  return kiln_module_run_with_options(module, inputs, input_count, outputs, output_count, nullptr);
}

} // extern "C"
