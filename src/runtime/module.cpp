// The generic module (module.h): load-time checks and constants, the frame pool, recording the
// program into a frame's command list, and one call. Nothing here knows which driver runs it.
#include "runtime/module.h"

#include "runtime/cpu/cpu_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace kiln::rt {

struct Frame {
  BufferState *arena = nullptr;
  std::vector<BufferState *> inputs, outputs;               // bound by the program
  std::vector<BufferState *> input_staging, output_staging; // null where the above are mapped
  std::vector<void *> input_host, output_host; // where a call writes inputs / reads outputs
  CommandState *commands = nullptr;
  // How the commands are recorded: 1 with a timer around each step, 0 without, -1 not usable
  // (a recording failed). A call that asks for the other kind records the frame again
  // (timestamps can cost a wait each, so plain calls run without them).
  int step_timers = 1;
  // Buffers of the caller that the recording binds instead of `inputs` and `outputs`
  // (kiln_module_run_buffers; empty: the frame's own), and their identities.
  std::vector<BufferState *> user_inputs, user_outputs;
  std::vector<uint64_t> user_ids;
  bool user() const { return !user_ids.empty(); }
  // Large inputs that go through staging are uploaded in chunks, each copied by a list of its
  // own that is submitted (without waiting) as soon as the host has written its bytes, so the
  // host's copy of one chunk overlaps the device's copy of the one before; the main list then
  // starts with a barrier. Only on drivers with submit_async.
  struct UploadChunk {
    size_t input = 0;
    uint64_t offset = 0, bytes = 0;
    CommandState *list = nullptr;
  };
  std::vector<UploadChunk> upload_chunks;
  std::vector<uint8_t> input_chunked; // per input
  BufferState *input(size_t i) const { return user() ? user_inputs[i] : inputs[i]; }
  BufferState *output(size_t i) const { return user() ? user_outputs[i] : outputs[i]; }
};

namespace {

// Staging memory for transfers to and from buffers the host cannot address.
constexpr uint64_t kStagingBytes = uint64_t(4) << 20;

std::string device_name(const DriverVtable &driver, const DeviceState *device) {
  kiln_device_info info{};
  if (!driver.device.info(device, &info).ok())
    return driver.name;
  return info.name;
}

Status check_limits(const DriverVtable &driver, const DeviceState *device, const Program &p) {
  DeviceLimits lim;
  KILN_RT_TRY(driver.device.limits(device, &lim));
  for (size_t i = 0; i < p.commands.size() + p.init_commands.size(); ++i) {
    const bool init = i >= p.commands.size();
    const Command &c = init ? p.init_commands[i - p.commands.size()] : p.commands[i];
    if (c.kind != KILN_COMMAND_DISPATCH)
      continue;
    for (size_t j = 0; j < c.bindings.size(); ++j) {
      const BufferRef &b = c.bindings[j];
      if (b.offset % lim.binding_offset_alignment != 0)
        return error(KILN_UNSUPPORTED, "command ", i, " binding ", j, " starts at byte offset ",
                     b.offset, " of ", buffer_kind_name(b.kind), " buffer, but device '",
                     device_name(driver, device), "' needs storage buffer offsets aligned to ",
                     lim.binding_offset_alignment, " bytes");
      if (b.size > lim.max_binding_bytes)
        return error(KILN_UNSUPPORTED, "command ", i, " binding ", j, " spans ", b.size,
                     " bytes, more than the ", lim.max_binding_bytes,
                     "-byte maxStorageBufferRange of device '", device_name(driver, device), "'");
    }
    for (int k = 0; k < 3; ++k)
      if (c.workgroups[k] > lim.max_workgroups[k])
        return error(KILN_UNSUPPORTED, "command ", i, " dispatches ", c.workgroups[k],
                     " workgroups in dimension ", k, "; device '", device_name(driver, device),
                     "' allows ", lim.max_workgroups[k]);
  }
  return {};
}

// Owns a buffer or command list of the driver for the length of a scope.
struct ScopedBuffer {
  const DriverVtable &driver;
  DeviceState *device;
  BufferState *buffer = nullptr;
  ~ScopedBuffer() {
    if (buffer)
      driver.buffer.destroy(device, buffer);
  }
};
struct ScopedCommands {
  const DriverVtable &driver;
  DeviceState *device;
  CommandState *list = nullptr;
  ~ScopedCommands() {
    if (list)
      driver.command.destroy(device, list);
  }
};

// Records one copy (and, for a readback, the barrier that makes it visible to the host) into
// `list` and runs it.
Status copy_now(const DriverVtable &d, DeviceState *device, CommandState *list, BufferState *src,
                uint64_t src_offset, BufferState *dst, uint64_t dst_offset, uint64_t n,
                bool to_host) {
  KILN_RT_TRY(d.command.begin(device, list));
  KILN_RT_TRY(d.command.copy(device, list, src, src_offset, dst, dst_offset, n));
  if (to_host)
    KILN_RT_TRY(d.command.barrier(device, list));
  KILN_RT_TRY(d.command.end(device, list));
  return d.command.submit(device, list);
}

Status check_transfer(const DriverVtable &d, BufferState *buffer, const char *what, uint64_t offset,
                      uint64_t n) {
  if (!buffer)
    return error(KILN_INVALID_ARGUMENT, what, ": buffer is NULL");
  const uint64_t size = d.buffer.size(buffer);
  if (n == 0 && offset <= size)
    return {};
  return check_range(what, offset, n, size);
}

} // namespace

Status write_buffer(const DriverVtable &d, DeviceState *device, BufferState *buffer,
                    uint64_t offset, uint64_t n, ReadSource read_source, const void *context) {
  KILN_RT_TRY(check_transfer(d, buffer, "buffer write", offset, n));
  if (n == 0)
    return {};
  if (auto *host = static_cast<uint8_t *>(d.buffer.host_pointer(device, buffer)))
    return read_source(context, 0, host + offset, size_t(n));
  ScopedBuffer staging{d, device};
  KILN_RT_TRY(
      d.buffer.create(device, std::min(n, kStagingBytes), MemoryKind::upload, &staging.buffer));
  ScopedCommands commands{d, device};
  KILN_RT_TRY(d.command.create(device, CommandListDesc{}, &commands.list));
  void *host = d.buffer.host_pointer(device, staging.buffer);
  for (uint64_t at = 0; at < n; at += kStagingBytes) {
    const uint64_t chunk = std::min(kStagingBytes, n - at);
    KILN_RT_TRY(read_source(context, at, host, size_t(chunk)));
    KILN_RT_TRY(
        copy_now(d, device, commands.list, staging.buffer, 0, buffer, offset + at, chunk, false));
  }
  return {};
}

Status write_buffer(const DriverVtable &d, DeviceState *device, BufferState *buffer,
                    uint64_t offset, const void *src, uint64_t n) {
  if (n && !src)
    return error(KILN_INVALID_ARGUMENT, "buffer write: source is NULL");
  auto from_memory = [](const void *context, uint64_t at, void *dst, size_t bytes) -> Status {
    std::memcpy(dst, static_cast<const uint8_t *>(context) + at, bytes);
    return {};
  };
  return write_buffer(d, device, buffer, offset, n, from_memory, src);
}

Status read_buffer(const DriverVtable &d, DeviceState *device, BufferState *buffer, uint64_t offset,
                   void *dst, uint64_t n) {
  KILN_RT_TRY(check_transfer(d, buffer, "buffer read", offset, n));
  if (n == 0)
    return {};
  if (!dst)
    return error(KILN_INVALID_ARGUMENT, "buffer read: destination is NULL");
  if (auto *host = static_cast<const uint8_t *>(d.buffer.host_pointer(device, buffer))) {
    std::memcpy(dst, host + offset, size_t(n));
    return {};
  }
  ScopedBuffer staging{d, device};
  KILN_RT_TRY(
      d.buffer.create(device, std::min(n, kStagingBytes), MemoryKind::readback, &staging.buffer));
  ScopedCommands commands{d, device};
  KILN_RT_TRY(d.command.create(device, CommandListDesc{}, &commands.list));
  const void *host = d.buffer.host_pointer(device, staging.buffer);
  for (uint64_t at = 0; at < n; at += kStagingBytes) {
    const uint64_t chunk = std::min(kStagingBytes, n - at);
    KILN_RT_TRY(
        copy_now(d, device, commands.list, buffer, offset + at, staging.buffer, 0, chunk, true));
    std::memcpy(static_cast<uint8_t *>(dst) + at, host, size_t(chunk));
  }
  return {};
}

Status Module::create(const DriverVtable &driver, DeviceState *device, const Program &program,
                      const ArtifactBytes &bytes, ExecutableState *const *executables,
                      std::unique_ptr<Module> *out) {
  KILN_RT_TRY(check_limits(driver, device, program));
  std::unique_ptr<Module> m(new Module());
  m->driver_ = &driver;
  m->device_ = device;
  m->program_ = &program;
  m->executables_.assign(executables, executables + program.executables.size());
  if (const char *env = std::getenv("KILN_UPLOAD_CHUNK_BYTES"))
    m->upload_chunk_bytes_ = std::strtoull(env, nullptr, 10);
  uint64_t largest = 0;
  for (const auto *sig : {&program.inputs, &program.outputs})
    for (const auto &t : *sig)
      largest = std::max(largest, t.bytes);
  unsigned threads = std::min(8u, std::max(1u, std::thread::hardware_concurrency()));
  if (const char *env = std::getenv("KILN_COPY_THREADS"))
    threads = unsigned(std::clamp<unsigned long>(std::strtoul(env, nullptr, 10), 1, 64));
  if (largest >= kParallelCopyBytes && threads > 1)
    m->copy_pool_ = std::make_unique<cpu::Pool>(threads);
  if (program.constant_bytes + program.derived_bytes) {
    KILN_RT_TRY(driver.buffer.create(device, program.constant_bytes + program.derived_bytes,
                                     MemoryKind::device, &m->constants_));
    auto from_artifact = [](const void *context, uint64_t at, void *dst, size_t n) -> Status {
      return static_cast<const ArtifactBytes *>(context)->read_constants(at, dst, n);
    };
    if (program.constant_bytes)
      KILN_RT_TRY(write_buffer(driver, device, m->constants_, 0, program.constant_bytes,
                               from_artifact, &bytes));
  }
  KILN_RT_TRY(m->run_init());
  *out = std::move(m);
  return {};
}

// One command into `list`, its buffers those of frame `f` (nullptr: the init commands, which
// bind constants only).
Status Module::record_command(CommandState *list, const Frame *f, const Command &c,
                              std::vector<Binding> &bindings) {
  const DriverVtable &d = *driver_;
  auto buffer = [&](const BufferRef &ref) { return f ? buffer_of(*f, ref) : constants_; };
  if (c.kind == KILN_COMMAND_COPY)
    return d.command.copy(device_, list, buffer(c.src), c.src.offset, buffer(c.dst), c.dst.offset,
                          c.src.size);
  bindings.clear();
  for (const BufferRef &b : c.bindings)
    bindings.push_back(Binding{buffer(b), b.offset, b.size});
  Dispatch dispatch;
  dispatch.executable = executables_[c.executable];
  dispatch.bindings = bindings.data();
  dispatch.binding_count = bindings.size();
  dispatch.push_constants = c.push_constants.data();
  dispatch.push_constant_bytes = uint32_t(c.push_constants.size());
  dispatch.workgroups = c.workgroups;
  return d.command.dispatch(device_, list, dispatch);
}

// The init commands, once: every binding is a constant (the verifier checked), each command
// after a barrier.
Status Module::run_init() {
  const auto &commands = program_->init_commands;
  if (commands.empty())
    return {};
  const DriverVtable &d = *driver_;
  CommandListDesc desc;
  for (const Command &c : commands)
    if (c.kind == KILN_COMMAND_DISPATCH) {
      ++desc.dispatches;
      desc.bindings += uint32_t(c.bindings.size());
    }
  ScopedCommands list{d, device_};
  KILN_RT_TRY(d.command.create(device_, desc, &list.list));
  KILN_RT_TRY(d.command.begin(device_, list.list));
  std::vector<Binding> bindings;
  for (const Command &c : commands) {
    KILN_RT_TRY(d.command.barrier(device_, list.list));
    KILN_RT_TRY(record_command(list.list, nullptr, c, bindings));
  }
  KILN_RT_TRY(d.command.barrier(device_, list.list));
  KILN_RT_TRY(d.command.end(device_, list.list));
  return d.command.submit(device_, list.list);
}

void Module::copy_host(void *dst, const void *src, uint64_t bytes) {
  if (copy_pool_ && bytes >= kParallelCopyBytes) {
    std::unique_lock lock(copy_mutex_, std::try_to_lock);
    if (lock.owns_lock()) {
      struct Copy {
        uint8_t *dst;
        const uint8_t *src;
        uint64_t bytes;
      } copy{static_cast<uint8_t *>(dst), static_cast<const uint8_t *>(src), bytes};
      constexpr uint64_t kPiece = uint64_t(1) << 20;
      copy_pool_->run(uint32_t((bytes + kPiece - 1) / kPiece), 1,
                      [](void *ctx, uint32_t begin, uint32_t end) {
                        const Copy &c = *static_cast<const Copy *>(ctx);
                        const uint64_t from = begin * kPiece;
                        const uint64_t to = std::min(c.bytes, end * kPiece);
                        std::memcpy(c.dst + from, c.src + from, size_t(to - from));
                      },
                      &copy);
      return;
    }
  }
  std::memcpy(dst, src, size_t(bytes));
}

Module::~Module() {
  for (auto &f : frames_)
    destroy_frame(f.get());
  if (constants_)
    driver_->buffer.destroy(device_, constants_);
}

BufferState *Module::buffer_of(const Frame &f, const BufferRef &ref) const {
  switch (ref.kind) {
  case BufferKind::constant:
    return constants_;
  case BufferKind::input:
    return f.input(ref.index);
  case BufferKind::output:
    return f.output(ref.index);
  case BufferKind::transient:
    return f.arena;
  }
  return f.arena;
}

namespace {

// Creates the device buffer of each tensor, and a staging buffer of `staging_kind` where the
// host cannot address it. Zero-byte tensors get no buffer (the program never binds them).
Status create_io(const DriverVtable &d, DeviceState *device, const std::vector<TensorSig> &sigs,
                 MemoryKind staging_kind, std::vector<BufferState *> *bufs,
                 std::vector<BufferState *> *staging, std::vector<void *> *host) {
  bufs->assign(sigs.size(), nullptr);
  staging->assign(sigs.size(), nullptr);
  host->assign(sigs.size(), nullptr);
  for (size_t i = 0; i < sigs.size(); ++i) {
    if (sigs[i].bytes == 0)
      continue;
    KILN_RT_TRY(d.buffer.create(device, sigs[i].bytes, MemoryKind::device, &(*bufs)[i]));
    (*host)[i] = d.buffer.host_pointer(device, (*bufs)[i]);
    if ((*host)[i])
      continue;
    KILN_RT_TRY(d.buffer.create(device, sigs[i].bytes, staging_kind, &(*staging)[i]));
    (*host)[i] = d.buffer.host_pointer(device, (*staging)[i]);
  }
  return {};
}

// Copies between each device buffer and its staging buffer (where one exists and `skip`, when
// given, does not mark the buffer).
Status record_staging(const DriverVtable &d, DeviceState *device, CommandState *list,
                      const std::vector<BufferState *> &bufs,
                      const std::vector<BufferState *> &staging, bool to_device, bool *any,
                      const std::vector<uint8_t> *skip = nullptr) {
  *any = false;
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!staging[i] || (skip && (*skip)[i]))
      continue;
    const uint64_t n = d.buffer.size(bufs[i]);
    KILN_RT_TRY(to_device ? d.command.copy(device, list, staging[i], 0, bufs[i], 0, n)
                          : d.command.copy(device, list, bufs[i], 0, staging[i], 0, n));
    *any = true;
  }
  return {};
}

} // namespace

// The whole program: input staging copies, every command (a barrier before each one that waits,
// a timer around each step, and one more timer, the last, around all of them), then output
// staging copies.
// Recorded once per frame and submitted on every call.
Status Module::record(Frame &f) {
  const DriverVtable &d = *driver_;
  CommandState *list = f.commands;
  KILN_RT_TRY(d.command.begin(device_, list));
  bool any = false;
  if (!f.user())
    KILN_RT_TRY(record_staging(d, device_, list, f.inputs, f.input_staging, true, &any,
                               &f.input_chunked));
  if (any || (!f.user() && !f.upload_chunks.empty()))
    KILN_RT_TRY(d.command.barrier(device_, list));
  std::vector<Binding> bindings;
  const auto &commands = program_->commands;
  const uint32_t span = uint32_t(commands.size());
  KILN_RT_TRY(d.command.timer(device_, list, span, false));
  // A step: a command that waits and the following ones that do not; one barrier before it
  // and one timer around it, on its first command (the others run together with it).
  size_t step = 0;
  for (size_t i = 0; i < commands.size(); ++i) {
    const Command &c = commands[i];
    if (i == 0 || c.waits) {
      step = i;
      if (i > 0)
        KILN_RT_TRY(d.command.barrier(device_, list));
      if (f.step_timers == 1)
        KILN_RT_TRY(d.command.timer(device_, list, uint32_t(i), false));
    }
    KILN_RT_TRY(record_command(list, &f, c, bindings));
    if (f.step_timers == 1 && (i + 1 == commands.size() || commands[i + 1].waits))
      KILN_RT_TRY(d.command.timer(device_, list, uint32_t(step), true));
  }
  KILN_RT_TRY(d.command.timer(device_, list, span, true));
  KILN_RT_TRY(d.command.barrier(device_, list));
  if (!f.user())
    KILN_RT_TRY(record_staging(d, device_, list, f.outputs, f.output_staging, false, &any));
  if (any)
    KILN_RT_TRY(d.command.barrier(device_, list));
  return d.command.end(device_, list);
}

Status Module::create_frame(std::unique_ptr<Frame> *out) {
  const DriverVtable &d = *driver_;
  const Program &p = *program_;
  auto f = std::make_unique<Frame>();
  auto build = [&]() -> Status {
    if (p.arena_bytes)
      KILN_RT_TRY(d.buffer.create(device_, p.arena_bytes, MemoryKind::device, &f->arena));
    KILN_RT_TRY(create_io(d, device_, p.inputs, MemoryKind::upload, &f->inputs, &f->input_staging,
                          &f->input_host));
    KILN_RT_TRY(create_io(d, device_, p.outputs, MemoryKind::readback, &f->outputs,
                          &f->output_staging, &f->output_host));
    KILN_RT_TRY(create_upload_chunks(*f));
    CommandListDesc desc;
    desc.timers = uint32_t(p.commands.size()) + 1; // one per command, one around all
    for (const Command &c : p.commands)
      if (c.kind == KILN_COMMAND_DISPATCH) {
        ++desc.dispatches;
        desc.bindings += uint32_t(c.bindings.size());
      }
    KILN_RT_TRY(d.command.create(device_, desc, &f->commands));
    return record(*f);
  };
  Status s = build();
  if (!s.ok()) {
    destroy_frame(f.get());
    return s;
  }
  *out = std::move(f);
  return {};
}

Status Module::create_upload_chunks(Frame &f) {
  const DriverVtable &d = *driver_;
  f.input_chunked.assign(f.inputs.size(), 0);
  if (!d.command.submit_async || upload_chunk_bytes_ == 0)
    return {};
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const uint64_t n = f.input_staging[i] ? d.buffer.size(f.inputs[i]) : 0;
    if (n < 2 * upload_chunk_bytes_)
      continue;
    f.input_chunked[i] = 1;
    for (uint64_t at = 0; at < n; at += upload_chunk_bytes_) {
      Frame::UploadChunk c{i, at, std::min(upload_chunk_bytes_, n - at), nullptr};
      KILN_RT_TRY(d.command.create(device_, CommandListDesc{}, &c.list));
      f.upload_chunks.push_back(c);
      KILN_RT_TRY(d.command.begin(device_, c.list));
      KILN_RT_TRY(d.command.copy(device_, c.list, f.input_staging[i], at, f.inputs[i], at, c.bytes));
      KILN_RT_TRY(d.command.end(device_, c.list));
    }
  }
  return {};
}

void Module::destroy_frame(Frame *f) {
  const DriverVtable &d = *driver_;
  for (const Frame::UploadChunk &c : f->upload_chunks)
    if (c.list)
      d.command.destroy(device_, c.list);
  if (f->commands)
    d.command.destroy(device_, f->commands);
  for (auto *list : {&f->inputs, &f->outputs, &f->input_staging, &f->output_staging})
    for (BufferState *b : *list)
      if (b)
        d.buffer.destroy(device_, b);
  if (f->arena)
    d.buffer.destroy(device_, f->arena);
  *f = Frame{};
}

Status Module::acquire(Frame **out) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (!free_frames_.empty()) {
      *out = free_frames_.back();
      free_frames_.pop_back();
      return {};
    }
    if (frames_reserved_ < kMaxFrames)
      break;
    frame_freed_.wait(lock);
  }
  ++frames_reserved_;
  lock.unlock();
  std::unique_ptr<Frame> frame;
  Status s = create_frame(&frame);
  lock.lock();
  if (!s.ok()) {
    --frames_reserved_;
    frame_freed_.notify_one();
    return s;
  }
  *out = frame.get();
  frames_.push_back(std::move(frame));
  return {};
}

void Module::release(Frame *f) {
  std::lock_guard lock(mutex_);
  free_frames_.push_back(f);
  frame_freed_.notify_one();
}

Status Module::rerecord_if_needed(Frame &f, int timers, const std::vector<uint64_t> &ids) {
  if (driver_->command.wait) // an asynchronous run of this frame may still be in flight
    KILN_RT_TRY(driver_->command.wait(device_, f.commands));
  if (f.step_timers == timers && f.user_ids == ids)
    return {};
  f.step_timers = timers;
  f.user_ids = ids;
  if (Status r = record(f); !r.ok()) {
    (void)driver_->command.end(device_, f.commands); // closes a half-recorded list
    f.step_timers = -1;                              // the next call records it again
    return r;
  }
  return {};
}

Status Module::run_buffers(const BufferRunArgs &args) {
  const size_t n_in = program_->inputs.size(), n_out = program_->outputs.size();
  std::vector<uint64_t> ids(args.input_ids, args.input_ids + n_in);
  ids.insert(ids.end(), args.output_ids, args.output_ids + n_out);
  ids.push_back(0); // never empty, even for a program without inputs and outputs
  Frame *f = nullptr;
  KILN_RT_TRY(acquire(&f));
  if (f->user_ids != ids) {
    f->user_inputs.assign(args.inputs, args.inputs + n_in);
    f->user_outputs.assign(args.outputs, args.outputs + n_out);
  }
  Status s = rerecord_if_needed(*f, 0, ids);
  if (s.ok())
    s = args.sync ? driver_->command.submit_async(device_, f->commands, *args.sync)
                  : driver_->command.submit(device_, f->commands);
  release(f);
  return s;
}

Status Module::run(const RunArgs &args) {
  Frame *f = nullptr;
  KILN_RT_TRY(acquire(&f));
  if (Status r = rerecord_if_needed(*f, args.command_ns != nullptr, {}); !r.ok()) {
    release(f);
    return r;
  }
  for (size_t i = 0; i < f->inputs.size(); ++i)
    if (f->input_host[i] && !f->input_chunked[i])
      copy_host(f->input_host[i], args.inputs[i].data, args.inputs[i].bytes);
  Status s;
  for (const Frame::UploadChunk &c : f->upload_chunks) {
    copy_host(static_cast<uint8_t *>(f->input_host[c.input]) + c.offset,
              static_cast<const uint8_t *>(args.inputs[c.input].data) + c.offset, c.bytes);
    if (s = driver_->command.submit_async(device_, c.list, kiln_vulkan_sync{}); !s.ok())
      break;
  }
  if (s.ok())
    s = driver_->command.submit(device_, f->commands);
  if (s.ok()) {
    for (size_t i = 0; i < f->outputs.size(); ++i)
      if (f->output_host[i])
        copy_host(args.outputs[i].data, f->output_host[i], args.outputs[i].bytes);
    if (s.ok() && (args.command_ns || args.span_ns)) {
      const size_t n = program_->commands.size();
      std::vector<uint64_t> ns(n + 1);
      s = driver_->command.read_timers(device_, f->commands, ns.data(), n + 1);
      if (s.ok() && args.command_ns)
        std::copy_n(ns.begin(), std::min(args.command_ns_capacity, n), args.command_ns);
      if (s.ok() && args.span_ns)
        *args.span_ns = ns[n];
    }
  }
  release(f);
  return s;
}

} // namespace kiln::rt
