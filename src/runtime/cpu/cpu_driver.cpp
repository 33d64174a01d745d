// The CPU driver: runs the native code of artifacts compiled for a cpu target (the C backend,
// src/target/c) on this machine's cores.
//
// - One device, "cpu". Buffers are 64-byte aligned host memory (every kind host-addressable).
// - An artifact's native library (one shared object for all its executables) is loaded from
//   memory: written into a sealed memfd and dlopen'ed through /proc/self/fd, never from a path
//   another process could replace. Before that, the CPU features the library was compiled for
//   are checked (KILN_CPU_FEATURES, a comma-separated list, replaces the detected features:
//   for tests). Executables of one artifact share the loaded library.
// - A command list records dispatches, copies, barriers and timers; submit runs them in order
//   on the calling thread and the device's worker threads (KILN_CPU_THREADS, default: the
//   cores this process may use): a dispatch's workgroups are split into chunks over all
//   threads, and each dispatch finishes before the next command starts, so barriers need no
//   work. Timers are steady-clock readings.
#include "kiln/artifact/cpu_abi.h"
#include "kiln/artifact/cpu_features.h"
#include "runtime/cpu/cpu_pool.h"
#include "runtime/driver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sched.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace kiln::rt {

namespace {

// ---- CPU features ----------------------------------------------------------------------------

bool cpu_has(const std::string &f) {
  if (const char *o = std::getenv("KILN_CPU_FEATURES")) {
    std::string list = std::string(",") + o + ",";
    return list.find("," + f + ",") != std::string::npos;
  }
  return artifact::host_cpu_supports(f);
}

unsigned default_threads() {
  if (const char *e = std::getenv("KILN_CPU_THREADS")) {
    const long n = std::strtol(e, nullptr, 10);
    if (n >= 1 && n <= 1024) return static_cast<unsigned>(n);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// ---- states ----------------------------------------------------------------------------------

// A loaded native library.
struct Library {
  void *handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

struct CpuDevice {
  unsigned threads = 1;
  std::unique_ptr<cpu::Pool> pool;
  std::mutex run_mu; // one submission runs on the pool at a time
  std::mutex lib_mu;
  std::map<std::array<uint8_t, 32>, std::weak_ptr<Library>> libraries; // by artifact digest
};

struct CpuBuffer {
  void *bytes = nullptr;
  uint64_t size = 0;
  ~CpuBuffer() { std::free(bytes); }
};

struct CpuExecutable {
  std::shared_ptr<Library> library;
  kiln_cpu_kernel_fn fn = nullptr;
  std::string name;
  uint32_t num_bindings = 0, push_constant_bytes = 0;
};

struct Op {
  enum Kind : uint8_t { dispatch, copy, timer } kind;
  // dispatch
  const CpuExecutable *exe = nullptr;
  uint32_t first_binding = 0; // into CpuCommands::bindings
  uint32_t first_push = 0;    // into CpuCommands::push (words)
  std::array<uint32_t, 3> groups{};
  // copy
  const CpuBuffer *src = nullptr;
  CpuBuffer *dst = nullptr;
  uint64_t src_offset = 0, dst_offset = 0, bytes = 0;
  // timer
  uint32_t timer_index = 0;
  bool end = false;
};

struct CpuCommands {
  CommandListDesc desc;
  bool recording = false, ended = false, submitted = false;
  uint32_t dispatches = 0;
  std::vector<Op> ops;
  std::vector<void *> bindings;
  std::vector<uint32_t> push;
  std::vector<std::chrono::steady_clock::time_point> starts, ends;
  std::vector<uint8_t> started, finished;
};

CpuDevice *self(DeviceState *d) { return reinterpret_cast<CpuDevice *>(d); }
CpuBuffer *self(BufferState *b) { return reinterpret_cast<CpuBuffer *>(b); }
const CpuBuffer *self(const BufferState *b) { return reinterpret_cast<const CpuBuffer *>(b); }
CpuCommands *self(CommandState *c) { return reinterpret_cast<CpuCommands *>(c); }

// ---- device ----------------------------------------------------------------------------------

Status count(size_t *n) {
  *n = 1;
  return {};
}

Status describe(size_t index, kiln_device_info *info) {
  if (index != 0) return error(KILN_NOT_FOUND, "the cpu driver has one device");
  *info = kiln_device_info{};
  char name[96];
  std::snprintf(name, sizeof name, "cpu (%u threads)", default_threads());
  set_info_strings(info, "cpu", 0, name);
  std::snprintf(info->device_type, sizeof info->device_type, "%s", "cpu");
  info->max_storage_buffer_range = uint64_t(1) << 31;
  info->subgroup_size = 1; // subgroups of one invocation (target/c/c.h)
  info->shared_memory_bytes = 65536;
  info->max_workgroup_invocations = 1024;
  info->float16 = info->float64 = info->int8 = info->int16 = info->int64 = 1;
  info->storage8 = info->storage16 = 1;
  info->timestamps = 1;
  return {};
}

Status default_device(size_t *index) {
  *index = 0;
  return {};
}

Status open(size_t index, DeviceState **out) {
  if (index != 0) return error(KILN_NOT_FOUND, "the cpu driver has one device");
  auto d = std::make_unique<CpuDevice>();
  d->threads = default_threads();
  d->pool = std::make_unique<cpu::Pool>(d->threads);
  *out = reinterpret_cast<DeviceState *>(d.release());
  return {};
}

void destroy(DeviceState *device) { delete self(device); }

Status info(const DeviceState *, kiln_device_info *out) { return describe(0, out); }

Status limits(const DeviceState *, DeviceLimits *out) {
  *out = DeviceLimits{};
  out->binding_offset_alignment = 1;
  out->max_binding_bytes = uint64_t(1) << 31;
  return {};
}

uint64_t validation_messages(const DeviceState *) { return 0; }

// ---- buffers ---------------------------------------------------------------------------------

Status buffer_create(DeviceState *, uint64_t bytes, MemoryKind, BufferState **out) {
  if (bytes == 0) return error(KILN_INVALID_ARGUMENT, "cannot create a buffer of 0 bytes");
  if (bytes > SIZE_MAX / 2)
    return error(KILN_OUT_OF_MEMORY, "cpu driver: a buffer of ", bytes, " bytes is too large");
  auto b = std::make_unique<CpuBuffer>();
  // Whole cache lines, then the readable tail the kernels may read into (cpu_abi.h), zeroed.
  const uint64_t rounded = (bytes + 63) / 64 * 64;
  b->bytes = std::aligned_alloc(64, size_t(rounded + KILN_CPU_BINDING_TAIL));
  if (!b->bytes)
    return error(KILN_OUT_OF_MEMORY, "cpu driver: out of host memory for ", bytes, " bytes");
  std::memset(static_cast<char *>(b->bytes) + bytes, 0, size_t(rounded - bytes + KILN_CPU_BINDING_TAIL));
  b->size = bytes;
  *out = reinterpret_cast<BufferState *>(b.release());
  return {};
}

void buffer_destroy(DeviceState *, BufferState *b) { delete self(b); }
void *buffer_host_pointer(DeviceState *, BufferState *b) { return self(b)->bytes; }
uint64_t buffer_size(const BufferState *b) { return self(b)->size; }

// ---- executables -----------------------------------------------------------------------------

// The path of descriptor `fd` under /proc, spelt differently for every load in the process.
// glibc's dlopen returns an already-loaded object whose name matches the path it is given,
// and descriptor numbers are reused: two libraries loaded through the same /proc/self/fd/N,
// the first still loaded (held by a live module, or kept mapped because dlclose is a no-op as
// in the sanitizer builds), would alias. The load count is written into the path as "./"
// (bit 1) and "/" (bit 0) segments, which the kernel resolves to the same file.
std::string unique_fd_path(int fd) {
  static std::atomic<uint64_t> loads{0};
  const uint64_t n = loads.fetch_add(1, std::memory_order_relaxed) + 1;
  std::string p = "/proc/self/fd/";
  for (int bit = 63 - __builtin_clzll(n); bit >= 0; --bit) p += (n >> bit) & 1 ? "./" : "/";
  return p + std::to_string(fd);
}

// Loads `size` bytes of a shared object from memory: a sealed memfd, dlopen'ed by its
// /proc/self/fd path (the file exists only in this process and cannot change after sealing).
Status load_library(const uint8_t *bytes, size_t size, std::shared_ptr<Library> *out) {
  const int fd = memfd_create("kiln-cpu-kernels", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return error(KILN_INTERNAL, "memfd_create failed: ", std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, bytes + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return error(KILN_INTERNAL, "cannot write the native library to memory: ",
                   std::strerror(errno));
    }
    done += size_t(n);
  }
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  auto lib = std::make_shared<Library>();
  lib->handle = dlopen(unique_fd_path(fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  ::close(fd); // the mapping keeps the file alive
  if (!lib->handle) {
    const char *why = dlerror();
    return error(KILN_INVALID_ARTIFACT, "cannot load the artifact's native library: ",
                 why ? why : "dlopen failed");
  }
  void *h = lib->handle;
  const auto *version = static_cast<const int *>(dlsym(h, "kiln_cpu_abi_version"));
  if (!version || *version != KILN_CPU_ABI_VERSION)
    return error(KILN_INVALID_ARTIFACT, "the artifact's native library has calling convention ",
                 version ? *version : 0, ", this runtime uses ", KILN_CPU_ABI_VERSION,
                 " (recompile the model with this kiln)");
  *out = std::move(lib);
  return {};
}

Status library_of(CpuDevice &d, const Program &p, const ArtifactBytes &bytes,
                  std::shared_ptr<Library> *out) {
  const NativeLibrary &nl = p.native_library;
  if (nl.bytes == 0 || !bytes.native_library())
    return error(KILN_INVALID_ARTIFACT, "the artifact has no native library");
  if (nl.format != "elf-x86_64-so")
    return error(KILN_UNSUPPORTED, "the artifact's native library is '", nl.format,
                 "': this cpu driver loads elf-x86_64-so");
#if !defined(__x86_64__)
  return error(KILN_UNSUPPORTED, "the artifact holds x86-64 code and this machine is not x86-64");
#endif
  std::string missing;
  for (const std::string &f : nl.cpu_features)
    if (!cpu_has(f)) missing += (missing.empty() ? "" : ", ") + f;
  if (!missing.empty())
    return error(KILN_UNSUPPORTED, "the artifact was compiled for ", nl.isa,
                 " and this CPU lacks ", missing,
                 " (compile for a lower level, e.g. --target cpu-x86-64-v3, or --target cpu on "
                 "this machine)");
  std::lock_guard<std::mutex> lock(d.lib_mu);
  auto it = d.libraries.find(p.digest);
  if (it != d.libraries.end())
    if ((*out = it->second.lock())) return {};
  KILN_RT_TRY(load_library(bytes.native_library(), nl.bytes, out));
  d.libraries[p.digest] = *out;
  return {};
}

Status executable_create(DeviceState *device, const Program &program, size_t index,
                         const ArtifactBytes &bytes, ExecutableState **out) {
  const Executable &e = program.executables[index];
  const auto *n = std::get_if<NativeCode>(&e.code);
  if (!n || n->format != "symbol")
    return error(KILN_UNSUPPORTED, "executable '", e.name, "' is ", code_kind_name(e.code),
                 ": the cpu driver runs only native code compiled for a cpu target");
  std::string sym(reinterpret_cast<const char *>(bytes.native(index)), n->bytes);
  for (char c : sym)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return error(KILN_INVALID_ARTIFACT, "executable '", e.name,
                   "' names an invalid symbol");
  auto exe = std::make_unique<CpuExecutable>();
  KILN_RT_TRY(library_of(*self(device), program, bytes, &exe->library));
  exe->fn = reinterpret_cast<kiln_cpu_kernel_fn>(dlsym(exe->library->handle, sym.c_str()));
  if (!exe->fn)
    return error(KILN_INVALID_ARTIFACT, "executable '", e.name, "': symbol '", sym,
                 "' is not in the artifact's native library");
  exe->name = e.name;
  exe->num_bindings = e.num_bindings;
  exe->push_constant_bytes = e.push_constant_bytes;
  *out = reinterpret_cast<ExecutableState *>(exe.release());
  return {};
}

void executable_destroy(DeviceState *, ExecutableState *exe) {
  delete reinterpret_cast<CpuExecutable *>(exe);
}

// ---- command lists ---------------------------------------------------------------------------

Status commands_create(DeviceState *, const CommandListDesc &desc, CommandState **out) {
  auto c = std::make_unique<CpuCommands>();
  c->desc = desc;
  c->starts.resize(desc.timers);
  c->ends.resize(desc.timers);
  c->started.resize(desc.timers);
  c->finished.resize(desc.timers);
  *out = reinterpret_cast<CommandState *>(c.release());
  return {};
}

void commands_destroy(DeviceState *, CommandState *list) { delete self(list); }

Status recording(const CpuCommands &c, const char *what) {
  if (!c.recording)
    return error(KILN_INVALID_ARGUMENT, what, ": the command list is not recording (call begin)");
  return {};
}

Status commands_begin(DeviceState *, CommandState *list) {
  CpuCommands &c = *self(list);
  if (c.recording)
    return error(KILN_INVALID_ARGUMENT, "begin: the command list is already recording (call end)");
  c.recording = true;
  c.ended = c.submitted = false;
  c.dispatches = 0;
  c.ops.clear();
  c.bindings.clear();
  c.push.clear();
  return {};
}

Status commands_dispatch(DeviceState *, CommandState *list, const Dispatch &d) {
  CpuCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "dispatch"));
  if (!d.executable) return error(KILN_INVALID_ARGUMENT, "dispatch: executable is NULL");
  const auto &exe = *reinterpret_cast<const CpuExecutable *>(d.executable);
  if (c.dispatches >= c.desc.dispatches)
    return error(KILN_INVALID_ARGUMENT, "dispatch: the command list holds at most ",
                 c.desc.dispatches, " dispatch(es)");
  if (d.binding_count != exe.num_bindings)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", d.binding_count,
                 " bindings given, the executable has ", exe.num_bindings);
  if (d.push_constant_bytes > exe.push_constant_bytes || d.push_constant_bytes % 4 != 0)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': ", d.push_constant_bytes,
                 " push constant bytes given, the executable takes ", exe.push_constant_bytes);
  if (uint64_t(d.workgroups[0]) * d.workgroups[1] * d.workgroups[2] > UINT32_MAX)
    return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': too many workgroups");
  Op op{Op::dispatch};
  op.exe = &exe;
  op.first_binding = static_cast<uint32_t>(c.bindings.size());
  op.first_push = static_cast<uint32_t>(c.push.size());
  op.groups = d.workgroups;
  for (size_t i = 0; i < d.binding_count; ++i) {
    const Binding &b = d.bindings[i];
    if (!b.buffer)
      return error(KILN_INVALID_ARGUMENT, "dispatch of '", exe.name, "': binding ", i,
                   " has no buffer");
    KILN_RT_TRY(check_range(cat("dispatch of '", exe.name, "' binding ", i).c_str(), b.offset,
                            b.size, self(b.buffer)->size));
    c.bindings.push_back(static_cast<uint8_t *>(self(b.buffer)->bytes) + b.offset);
  }
  // Words the kernel may read past the given ones read as zero.
  c.push.resize(c.push.size() + exe.push_constant_bytes / 4 + 1, 0);
  if (d.push_constant_bytes)
    std::memcpy(c.push.data() + op.first_push, d.push_constants, d.push_constant_bytes);
  c.ops.push_back(op);
  ++c.dispatches;
  return {};
}

Status commands_copy(DeviceState *, CommandState *list, BufferState *src, uint64_t src_offset,
                     BufferState *dst, uint64_t dst_offset, uint64_t bytes) {
  CpuCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "copy"));
  if (!src || !dst)
    return error(KILN_INVALID_ARGUMENT, "copy: ", src ? "destination" : "source",
                 " buffer is NULL");
  KILN_RT_TRY(check_range("copy source", src_offset, bytes, self(src)->size));
  KILN_RT_TRY(check_range("copy destination", dst_offset, bytes, self(dst)->size));
  if (src == dst && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
    return error(KILN_INVALID_ARGUMENT, "copy: source [", src_offset, ", +", bytes,
                 ") and destination [", dst_offset, ", +", bytes, ") overlap");
  Op op{Op::copy};
  op.src = self(src);
  op.dst = self(dst);
  op.src_offset = src_offset;
  op.dst_offset = dst_offset;
  op.bytes = bytes;
  c.ops.push_back(op);
  return {};
}

Status commands_barrier(DeviceState *, CommandState *list) {
  return recording(*self(list), "barrier"); // every command finishes before the next one
}

Status commands_timer(DeviceState *, CommandState *list, uint32_t index, bool end) {
  CpuCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "timer"));
  if (index >= c.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "timer ", index, ": the command list has ", c.desc.timers,
                 " timer(s)");
  Op op{Op::timer};
  op.timer_index = index;
  op.end = end;
  c.ops.push_back(op);
  return {};
}

Status commands_end(DeviceState *, CommandState *list) {
  CpuCommands &c = *self(list);
  KILN_RT_TRY(recording(c, "end"));
  c.recording = false;
  c.ended = true;
  return {};
}

struct DispatchJob {
  kiln_cpu_kernel_fn fn;
  kiln_cpu_dispatch args;
};

void run_chunk(void *ctx, uint32_t begin, uint32_t end) {
  auto *j = static_cast<DispatchJob *>(ctx);
  j->fn(&j->args, begin, end);
}

Status commands_submit(DeviceState *device, CommandState *list) {
  CpuDevice &d = *self(device);
  CpuCommands &c = *self(list);
  if (!c.ended)
    return error(KILN_INVALID_ARGUMENT,
                 "submit: the command list was not recorded (call begin and end first)");
  std::fill(c.started.begin(), c.started.end(), 0);
  std::fill(c.finished.begin(), c.finished.end(), 0);
  std::lock_guard<std::mutex> lock(d.run_mu);
  for (const Op &op : c.ops) {
    switch (op.kind) {
    case Op::dispatch: {
      DispatchJob job{op.exe->fn,
                      {c.bindings.data() + op.first_binding, c.push.data() + op.first_push,
                       {op.groups[0], op.groups[1], op.groups[2]}}};
      const uint32_t n = op.groups[0] * op.groups[1] * op.groups[2];
      // About 4 chunks per thread. A workgroup's cost is unknown here (one invocation of a
      // matrix kernel multiplies a whole tile), so even a grid of two is split; the workers
      // are spinning between the dispatches of a submission, so waking them costs little.
      const uint32_t per = d.pool->threads() * 4;
      const uint32_t chunk = std::max<uint32_t>(1, (n + per - 1) / per);
      d.pool->run(n, chunk, run_chunk, &job);
      break;
    }
    case Op::copy:
      std::memcpy(static_cast<uint8_t *>(op.dst->bytes) + op.dst_offset,
                  static_cast<const uint8_t *>(op.src->bytes) + op.src_offset, op.bytes);
      break;
    case Op::timer:
      (op.end ? c.ends : c.starts)[op.timer_index] = std::chrono::steady_clock::now();
      (op.end ? c.finished : c.started)[op.timer_index] = 1;
      break;
    }
  }
  c.submitted = true;
  return {};
}

Status commands_read_timers(DeviceState *, CommandState *list, uint64_t *ns, size_t count) {
  const CpuCommands &c = *self(list);
  if (count > c.desc.timers)
    return error(KILN_INVALID_ARGUMENT, "read_timers: ", count,
                 " timers asked for, the command list has ", c.desc.timers);
  if (!c.submitted)
    return error(KILN_INVALID_ARGUMENT,
                 "read_timers: the command list has not run since it was recorded (call submit)");
  for (size_t i = 0; i < count; ++i)
    ns[i] = c.started[i] && c.finished[i]
                ? uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(c.ends[i] -
                                                                                c.starts[i])
                               .count())
                : 0;
  return {};
}

const DriverVtable kCpuDriver = {
    "cpu",
    {count, describe, default_device, open, destroy, info, limits, validation_messages},
    {buffer_create, buffer_destroy, buffer_host_pointer, buffer_size},
    {executable_create, executable_destroy},
    {commands_create, commands_destroy, commands_begin, commands_dispatch, commands_copy,
     commands_barrier, commands_timer, commands_end, commands_submit, commands_read_timers},
};

} // namespace

const DriverVtable *cpu_driver() { return &kCpuDriver; }

} // namespace kiln::rt
