// The generic module: what every driver's module does, written once over the driver's buffer,
// executable and command objects (driver.h).
//
// At load it checks the program against the device limits and uploads the constants into one
// device buffer. Each call takes a frame from a small pool: the arena, the input and output
// buffers (with upload/readback staging buffers where device memory is not host-addressable)
// and one command list recorded once, when the frame is created, with the whole program
// (staging copies, every command between barriers, a timer around each). A call writes the
// inputs, submits the list, reads the outputs and the timers. Large inputs through staging are
// written and copied chunk by chunk, each chunk's copy list submitted before the next chunk is
// written (create_upload_chunks), so host and device copies overlap. Several threads may run one
// module at once; each call uses its own frame, and calls beyond the pool size wait.
#pragma once

#include "runtime/driver.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace kiln::rt {

// Arguments of one run, already checked against the program's signature.
struct RunArgs {
  const kiln_tensor *inputs = nullptr;
  kiln_tensor *outputs = nullptr;
  uint64_t *command_ns = nullptr; // optional profiling output
  size_t command_ns_capacity = 0;
  uint64_t *span_ns = nullptr; // optional: first command's start to last command's end
};

// Arguments of a run on device buffers (kiln_module_run_buffers), already checked: one buffer
// per input and output (nullptr only for a zero-byte tensor), each with the identity the
// module compares to decide whether a frame's recording still binds the right buffers.
struct BufferRunArgs {
  BufferState *const *inputs = nullptr;
  BufferState *const *outputs = nullptr;
  const uint64_t *input_ids = nullptr;
  const uint64_t *output_ids = nullptr;
  const kiln_vulkan_sync *sync = nullptr; // asynchronous when set (driver has submit_async)
};

struct Frame;
namespace cpu {
class Pool;
}

class Module {
public:
  // `executables[i]` is program.executables[i] built by the driver; `program`, the executables
  // and the device outlive the module. `bytes` (constant data) is read during the call only.
  static Status create(const DriverVtable &driver, DeviceState *device, const Program &program,
                       const ArtifactBytes &bytes, ExecutableState *const *executables,
                       std::unique_ptr<Module> *out);
  ~Module();
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  // Safe to call concurrently.
  Status run(const RunArgs &args);
  // The program on the caller's buffers; no host transfer. Safe to call concurrently.
  Status run_buffers(const BufferRunArgs &args);

  static constexpr size_t kMaxFrames = 4;

private:
  Module() = default;
  Status create_frame(std::unique_ptr<Frame> *out);
  Status create_upload_chunks(Frame &f);
  Status record(Frame &f);
  // Runs Program::init_commands once, at load (they fill the derived constants).
  Status run_init();
  Status record_command(CommandState *list, const Frame *f, const Command &c,
                        std::vector<Binding> &bindings);
  void destroy_frame(Frame *f);
  Status acquire(Frame **out);
  void release(Frame *f);
  // Records `f` again when its recording does not match `timers` and the buffers it binds
  // (ids empty: the frame's own); on failure the frame is left to be recorded next time.
  Status rerecord_if_needed(Frame &f, int timers, const std::vector<uint64_t> &ids);
  BufferState *buffer_of(const Frame &f, const BufferRef &ref) const;
  // memcpy, on the copy threads when `bytes` is large and they are free.
  void copy_host(void *dst, const void *src, uint64_t bytes);

  const DriverVtable *driver_ = nullptr;
  DeviceState *device_ = nullptr;
  const Program *program_ = nullptr;
  std::vector<ExecutableState *> executables_;
  BufferState *constants_ = nullptr;
  // Inputs of at least two chunks that pass through staging are uploaded chunk by chunk,
  // overlapping the host's copy with the device's (Frame::upload_chunks). 0: never.
  // KILN_UPLOAD_CHUNK_BYTES at load overrides it (tests, tuning).
  uint64_t upload_chunk_bytes_ = uint64_t(8) << 20;
  // Host copies of inputs and outputs of at least kParallelCopyBytes are split over these
  // threads (one memcpy thread reaches about a fifth of a server's memory bandwidth); created
  // at load when a tensor is that large, up to 8 threads (KILN_COPY_THREADS overrides; 1: off).
  // One call at a time uses them; a concurrent call copies on its own thread.
  static constexpr uint64_t kParallelCopyBytes = uint64_t(4) << 20;
  std::unique_ptr<cpu::Pool> copy_pool_;
  std::mutex copy_mutex_;

  // Frame pool: at most kMaxFrames exist; calls beyond that wait for a free one.
  std::mutex mutex_;
  std::condition_variable frame_freed_;
  std::vector<std::unique_ptr<Frame>> frames_;
  std::vector<Frame *> free_frames_;
  size_t frames_reserved_ = 0;
};

// Synchronous transfers between host memory and bytes [offset, offset + n) of a buffer of any
// kind: a memcpy where the buffer is host-addressable, else through an upload (readback)
// buffer of at most 4 MiB and one submitted copy per chunk. `read_source(at, dst, n)` produces
// the bytes to write, so constants can be read from the artifact chunk by chunk.
using ReadSource = Status (*)(const void *context, uint64_t at, void *dst, size_t n);
Status write_buffer(const DriverVtable &driver, DeviceState *device, BufferState *buffer,
                    uint64_t offset, uint64_t n, ReadSource read_source, const void *context);
Status write_buffer(const DriverVtable &driver, DeviceState *device, BufferState *buffer,
                    uint64_t offset, const void *src, uint64_t n);
Status read_buffer(const DriverVtable &driver, DeviceState *device, BufferState *buffer,
                   uint64_t offset, void *dst, uint64_t n);

} // namespace kiln::rt
