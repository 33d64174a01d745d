/* kiln runtime C API: load a compiled artifact (.kiln) onto a device and run it.
 *
 * Objects are opaque handles created by this library and released by the caller with the
 * matching *_release function. Every fallible call returns a kiln_status: NULL means success;
 * anything else is an error object owned by the caller, who reads it with kiln_status_code()
 * and kiln_status_message() and frees it with kiln_status_free(). No C++ exception crosses this
 * boundary. Output parameters are written only on success.
 *
 * Threading: unless a function says otherwise, it may be called from any thread, and calls on
 * different objects never interfere. A device and a module may be used from several threads at
 * once (kiln_module_run is explicitly concurrent); only their *_release functions require that
 * no other call on the same object is in flight or follows.
 *
 * Lifetime: a module keeps its device alive internally, so kiln_device_release may be called
 * before the modules loaded on it are released.
 */
#ifndef KILN_KILN_H
#define KILN_KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the artifact schema (schema/kiln.fbs, Model.schema_version) this runtime reads
 * and the compiler writes. Bump it on any incompatible schema change. Version 2 added the
 * 40-byte digest trailer (SHA-256 of the content; see kiln_artifact_digest). */
#define KILN_ARTIFACT_SCHEMA_VERSION 3

/* ---------------------------------------------------------------------------------------- */
/* Status                                                                                    */

typedef enum kiln_status_code {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 1,  /* a caller error: null handle, wrong tensor count/dtype/shape */
  KILN_NOT_FOUND = 2,         /* no such file, driver or device index */
  KILN_INVALID_ARTIFACT = 3,  /* the artifact is truncated, corrupt or from another version */
  KILN_UNSUPPORTED = 4,       /* the device lacks a capability the artifact needs */
  KILN_UNAVAILABLE = 5,       /* a driver cannot start (e.g. libvulkan.so.1 missing) */
  KILN_DEVICE_ERROR = 6,      /* the device API failed (including validation-layer errors) */
  KILN_OUT_OF_MEMORY = 7,     /* host or device allocation failed */
  KILN_INTERNAL = 8,          /* a bug in kiln */
  KILN_DEVICE_LOST = 9        /* the device was lost (GPU reset, driver crash): every later
                                 load or run on it fails with this code; release its modules
                                 and the device, then open it again */
} kiln_status_code;

/* NULL means OK. A non-NULL status is owned by the caller and must be freed. */
typedef struct kiln_status_s *kiln_status;

/* Code of `status`; KILN_OK for NULL. */
kiln_status_code kiln_status_code_of(kiln_status status);
/* Human-readable message, "OK" for NULL. The string lives until kiln_status_free(status). */
const char *kiln_status_message(kiln_status status);
/* Frees a status; NULL is accepted and ignored. */
void kiln_status_free(kiln_status status);
/* Static name of a code, e.g. "INVALID_ARGUMENT". */
const char *kiln_status_code_name(kiln_status_code code);

/* ---------------------------------------------------------------------------------------- */
/* Tensors                                                                                   */

/* Element types; the values equal schema/kiln.fbs DType. Booleans are one byte (0 or 1). */
typedef enum kiln_dtype {
  KILN_F32 = 0, KILN_F16, KILN_BF16, KILN_F64, KILN_I8, KILN_U8, KILN_I16, KILN_U16,
  KILN_I32, KILN_U32, KILN_I64, KILN_U64, KILN_BOOL,
  /* Narrow types, one element per byte (never packed): KILN_I4 / KILN_I2 hold a sign-extended
   * int8 in [-8, 7] / [-2, 1], KILN_U4 / KILN_U2 a uint8 in [0, 15] / [0, 3]; the float types
   * hold their bit pattern (ONNX FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ,
   * FLOAT4E2M1 in the low 4 bits, FLOAT8E8M0). */
  KILN_I4, KILN_U4, KILN_I2, KILN_U2, KILN_F8E4M3FN, KILN_F8E4M3FNUZ, KILN_F8E5M2,
  KILN_F8E5M2FNUZ, KILN_F4E2M1, KILN_F8E8M0
} kiln_dtype;

/* Static name ("f32", ...) of a dtype, or "?" for a value outside the enum. */
const char *kiln_dtype_name(kiln_dtype dtype);
/* Size of one element in bytes, 0 for a value outside the enum. */
size_t kiln_dtype_size(kiln_dtype dtype);

/* A caller-owned dense, row-major tensor. kiln reads `shape` and `data` only during the call it
 * is passed to and never keeps the pointers. For inputs `data` is only read. */
typedef struct kiln_tensor {
  kiln_dtype dtype;
  uint32_t rank;
  const int64_t *shape; /* `rank` dimensions; may be NULL when rank == 0 */
  void *data;           /* `bytes` bytes; may be NULL when bytes == 0 */
  size_t bytes;         /* must equal element count * dtype size */
} kiln_tensor;

/* Signature of one model input or output. The pointers stay valid until the module is
 * released. */
typedef struct kiln_tensor_info {
  const char *name;
  kiln_dtype dtype;
  uint32_t rank;
  const int64_t *shape;
  size_t bytes;
} kiln_tensor_info;

/* ---------------------------------------------------------------------------------------- */
/* Drivers and devices                                                                       */

/* Drivers compiled into this library ("null", "vulkan"), in a fixed order. The "null" driver is
 * a test double: it validates artifacts and arguments like a real driver, runs nothing, and
 * fills outputs with zeros. */
size_t kiln_driver_count(void);
/* Static name of driver `index`, NULL when out of range. */
const char *kiln_driver_name(size_t index);

/* What a device offers, as kiln sees it. Plain data: copy it freely. */
typedef struct kiln_device_info {
  char driver[16];             /* "null", "vulkan" or "cpu" */
  char uri[32];                /* what kiln_device_open accepts for it, e.g. "vulkan:0" */
  char name[256];              /* e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
  char device_type[16];        /* "discrete", "integrated", "virtual", "cpu", "other" */
  uint32_t api_version;        /* packed Vulkan version (VK_MAKE_API_VERSION); 0 for null */
  uint32_t subgroup_size;
  uint32_t shared_memory_bytes;        /* per workgroup */
  uint32_t max_workgroup_invocations;
  uint64_t max_storage_buffer_range;   /* bytes one binding may span */
  uint64_t device_local_bytes;         /* size of the largest device-local heap */
  int float16, float64, int8, int16, int64;  /* shader arithmetic, 1 = supported */
  int storage8, storage16;                   /* 8/16-bit storage buffer access */
  int cooperative_matrix;                    /* VK_KHR_cooperative_matrix */
  int timestamps;                            /* per-dispatch profiling available */
} kiln_device_info;

/* Number of devices `driver` ("null" or "vulkan") can open. Fails with KILN_NOT_FOUND for an
 * unknown driver and KILN_UNAVAILABLE when the driver cannot start (message says why). */
kiln_status kiln_device_count(const char *driver, size_t *out_count);
/* Describes the device at `uri` (see kiln_device_open) without opening it. */
kiln_status kiln_device_describe(const char *uri, kiln_device_info *out_info);
/* Describes every device of every driver; drivers that cannot start are skipped. Writes at most
 * `capacity` entries to `infos` (which may be NULL when capacity is 0) and the total number
 * found to *out_count. */
kiln_status kiln_devices_list(kiln_device_info *infos, size_t capacity, size_t *out_count);

typedef struct kiln_device kiln_device;

/* Opens a device: "null", "vulkan" (the first discrete GPU, else the first device), or
 * "vulkan:N" (physical device N in the driver's enumeration order). With the environment
 * variable KILN_VULKAN_VALIDATION=1 the Vulkan driver enables VK_LAYER_KHRONOS_validation,
 * prints its messages to stderr, and fails any run during which it reported an error;
 * KILN_VULKAN_VALIDATION=sync also enables the layer's synchronization validation. On
 * success *out_device is owned by the caller. */
kiln_status kiln_device_open(const char *uri, kiln_device **out_device);
/* Drops the caller's reference; the device is destroyed once its modules are released too.
 * NULL is accepted. */
void kiln_device_release(kiln_device *device);
/* Describes an open device. */
kiln_status kiln_device_info_get(const kiln_device *device, kiln_device_info *out_info);
/* Number of messages the validation layer has reported for this device (0 when validation is
 * off). Lets tests assert a clean run. */
kiln_status kiln_device_validation_message_count(const kiln_device *device, uint64_t *out_count);

/* ---------------------------------------------------------------------------------------- */
/* Modules                                                                                   */

typedef struct kiln_module kiln_module;

/* Loads an artifact from memory. The bytes are verified (FlatBuffers verifier, file identifier
 * "KLN1", schema version KILN_ARTIFACT_SCHEMA_VERSION) and every index, offset and size of the
 * program is checked before any device work; then the device builds its pipelines and uploads
 * the constants. `data` is read in place during the call (it needs no particular alignment)
 * and nothing points into it afterwards: the caller may free it when the call returns. Host
 * memory the load adds beyond `data`: the driver's pipelines, plus the constants themselves
 * only where device memory is host memory; constants reach other devices through a staging
 * buffer of at most 4 MiB that is freed before the call returns. Fails with
 * KILN_INVALID_ARTIFACT for a bad artifact and KILN_UNSUPPORTED when the device lacks a
 * capability the artifact needs (the message names it). */
kiln_status kiln_module_load_memory(kiln_device *device, const void *data, size_t size,
                                    kiln_module **out_module);
/* Loads the file at `path` as kiln_module_load_memory does. A regular file is mapped read-only
 * (only the pages the verifier and the pipelines read become resident) and its constant data
 * is read with pread() into device or staging memory, so the file is never held in memory as
 * a whole; the mapping is gone when the call returns. Do not truncate the file while it loads.
 * Anything else (a pipe) is read into memory first. */
kiln_status kiln_module_load_file(kiln_device *device, const char *path,
                                  kiln_module **out_module);
/* Releases a module; no kiln_module_run on it may be in flight. NULL is accepted. */
void kiln_module_release(kiln_module *module);

/* Artifact digest: an artifact ends with a 40-byte trailer holding the SHA-256 of everything
 * before it (schema/kiln.fbs). Loading recomputes it before anything else is parsed and fails
 * with KILN_INVALID_ARTIFACT ("checksum mismatch") when they differ. The digest also
 * identifies the artifact: `kiln inspect FILE` prints it, as does `head -c -40 FILE | sha256sum`.
 * docs/SECURITY.md says what the digest does and does not protect against. */
#define KILN_ARTIFACT_DIGEST_BYTES 32
/* Checks the digest of the artifact in `data` without parsing anything else and writes it to
 * `out_digest`. To pin a trusted artifact, compare it with a digest obtained from a trusted
 * source, then pass the same bytes to kiln_module_load_memory (loading a file by path again
 * would read it again). KILN_INVALID_ARTIFACT when the trailer is missing or does not match. */
kiln_status kiln_artifact_digest(const void *data, size_t size,
                                 uint8_t out_digest[KILN_ARTIFACT_DIGEST_BYTES]);
/* The digest of the artifact `module` was loaded from. */
kiln_status kiln_module_artifact_digest(const kiln_module *module,
                                        uint8_t out_digest[KILN_ARTIFACT_DIGEST_BYTES]);

/* Signature queries; out-of-range indices and NULL arguments give KILN_INVALID_ARGUMENT. A
 * NULL module has 0 inputs and 0 outputs. */
size_t kiln_module_input_count(const kiln_module *module);
size_t kiln_module_output_count(const kiln_module *module);
kiln_status kiln_module_input_info(const kiln_module *module, size_t index,
                                   kiln_tensor_info *out_info);
kiln_status kiln_module_output_info(const kiln_module *module, size_t index,
                                    kiln_tensor_info *out_info);

/* The program's commands, in execution order (for profiling tables). */
typedef enum kiln_command_kind { KILN_COMMAND_DISPATCH = 0, KILN_COMMAND_COPY = 1 } kiln_command_kind;
typedef struct kiln_command_info {
  kiln_command_kind kind;
  const char *name;       /* executable name for a dispatch, "copy" for a copy; module-owned */
  uint32_t workgroups[3]; /* zero for a copy */
  uint64_t bytes;         /* bytes copied, or bytes bound by a dispatch */
  /* The graph ops a dispatch computes, comma-separated graph-IR op names: the lowered op, then
   * the ops fused into its kernel (e.g. "kiln.conv,kiln.relu"). Module-owned, valid until the
   * module is released; "" for a copy and for artifacts that do not record it (compiled before
   * this field existed). Appended last: code built against an older kiln.h passes a smaller
   * struct, so rebuild it against this header. */
  const char *ops;
} kiln_command_info;
size_t kiln_module_command_count(const kiln_module *module);
kiln_status kiln_module_command_info(const kiln_module *module, size_t index,
                                     kiln_command_info *out_info);

/* Runs the module once: copies `inputs` to the device, executes every command, and copies the
 * results into `outputs` (caller-allocated, matching the output signature exactly). Counts,
 * dtypes, ranks, dimensions and byte sizes are checked first; a mismatch gives
 * KILN_INVALID_ARGUMENT naming the input or output and what was expected, and nothing runs.
 * Several threads may run the same module concurrently; each call uses its own device buffers
 * from a small pool (calls beyond the pool size wait), so repeated calls do not grow memory.
 * Host copies of tensors of 4 MiB or more are split over a few copy threads the module starts
 * at load (at most 8; environment KILN_COPY_THREADS=N sets the count, 1 turns them off), and
 * on Vulkan such inputs are uploaded in 8 MiB chunks whose device copies overlap the host's
 * (KILN_UPLOAD_CHUNK_BYTES=N sets the chunk, 0 turns it off). */
kiln_status kiln_module_run(kiln_module *module, const kiln_tensor *inputs, size_t input_count,
                            kiln_tensor *outputs, size_t output_count);

/* Options of kiln_module_run_with_options. Zero-initialise, then set what you need. */
typedef struct kiln_run_options {
  /* When non-NULL, receives the device time of each command in nanoseconds (index = command
   * index, see kiln_module_command_info); at most `command_ns_capacity` entries are written.
   * Commands that run together (the compiler found them independent: no barrier between them)
   * share one time, reported on the first of them; the others read 0.
   * Entries are 0 when the device has no timestamps. A call without command_ns runs a
   * recording without these per-command timestamps (each one can add a wait on some GPUs); a
   * frame is recorded again when a call asks for the other kind. */
  uint64_t *command_ns;
  size_t command_ns_capacity;
  /* When non-NULL, receives the device time from the start of the first command to the end of
   * the last, in nanoseconds: the commands' own times plus the barriers and idle gaps between
   * them (0 when the device has no timestamps). */
  uint64_t *span_ns;
} kiln_run_options;

/* kiln_module_run with options; `options` may be NULL. */
kiln_status kiln_module_run_with_options(kiln_module *module, const kiln_tensor *inputs,
                                         size_t input_count, kiln_tensor *outputs,
                                         size_t output_count, const kiln_run_options *options);

/* ---------------------------------------------------------------------------------------- */
/* Device-resident buffers                                                                   */
/*                                                                                            */
/* A kiln_buffer is memory on a device that stays there across calls: feed one model's output */
/* to the next without a host round trip, or keep a camera frame on the GPU. Every device     */
/* (null, cpu, vulkan) creates them; Vulkan also imports an application's VkBuffer and exports */
/* its own (below). A buffer belongs to the device it was made on and keeps that device alive;*/
/* it may be released before or after the modules that used it, but not while a run that     */
/* uses it is in flight (for an asynchronous run: before its signal semaphores signal).       */

typedef struct kiln_buffer kiln_buffer;

/* Allocates `bytes` (> 0) bytes of device memory (device-local where the device has it). Its
 * contents are undefined until written. */
kiln_status kiln_buffer_create(kiln_device *device, uint64_t bytes, kiln_buffer **out_buffer);
/* Releases a buffer (an imported VkBuffer itself stays the application's). NULL is accepted. */
void kiln_buffer_release(kiln_buffer *buffer);
/* The buffer's size in bytes (0 for NULL). */
uint64_t kiln_buffer_size(const kiln_buffer *buffer);
/* Copies `bytes` bytes between host memory and the buffer at `offset`; waits until done.
 * Direct where the host can address the memory, else through a temporary staging buffer of at
 * most 4 MiB. No run using the buffer may be in flight. INVALID_ARGUMENT when the range does not
 * fit. */
kiln_status kiln_buffer_write(kiln_buffer *buffer, uint64_t offset, const void *src,
                              uint64_t bytes);
kiln_status kiln_buffer_read(kiln_buffer *buffer, uint64_t offset, void *dst, uint64_t bytes);

/* Synchronisation of an asynchronous run with the application's own GPU work (Vulkan only).
 * Semaphores are VkSemaphore handles of the kiln device's VkDevice: timeline semaphores take
 * the value in the parallel array, binary ones ignore it (the array may then be NULL). kiln's
 * submission waits for every wait semaphore before any of its commands (all stages) and
 * signals every signal semaphore once all its commands, and their memory writes, are done. */
typedef struct kiln_vulkan_sync {
  uint32_t wait_count;
  const uint64_t *wait_semaphores; /* VkSemaphore handles */
  const uint64_t *wait_values;
  uint32_t signal_count;
  const uint64_t *signal_semaphores; /* VkSemaphore handles */
  const uint64_t *signal_values;
} kiln_vulkan_sync;

/* Runs the module on device buffers: input i is read from the start of inputs[i] and output i
 * is written to the start of outputs[i] (each at least its tensor's bytes, see
 * kiln_module_input_info; dtypes and shapes are the signature's). Nothing passes through host
 * memory. The same buffer may not be both an input and an output.
 *   sync == NULL: synchronous. The call returns when the outputs are written. The caller has
 *     finished every use of the buffers by its own GPU work (e.g. waited for its fence).
 *   sync != NULL (Vulkan only): asynchronous. The call submits kiln's commands to the queue
 *     (after the waits in `sync`) and returns without waiting; the outputs are ready when the
 *     signal semaphores signal. The buffers must stay alive and untouched by other work until
 *     then. A later call, kiln_module_release and kiln_device_release wait for earlier
 *     submissions where they must.
 * A module records its commands once per set of buffers: calling again with the same buffers
 * costs one submission. Several threads may call concurrently (each call takes a frame of the
 * module's pool, as kiln_module_run does). */
kiln_status kiln_module_run_buffers(kiln_module *module, kiln_buffer *const *inputs,
                                    size_t input_count, kiln_buffer *const *outputs,
                                    size_t output_count, const kiln_vulkan_sync *sync);

/* ---------------------------------------------------------------------------------------- */
/* Vulkan interop: a kiln device on the application's VkDevice                               */
/*                                                                                            */
/* Handles travel as uint64_t (dispatchable handles are pointers cast to uint64_t) so this    */
/* header does not need vulkan.h.                                                             */

typedef struct kiln_vulkan_context {
  /* The application's vkGetInstanceProcAddr (PFN_vkGetInstanceProcAddr); every entry point
   * kiln uses comes from it, so layers the application enabled see kiln's calls too. */
  void *get_instance_proc_addr;
  uint64_t instance;        /* VkInstance, created with apiVersion >= 1.2 */
  uint64_t physical_device; /* VkPhysicalDevice */
  uint64_t device;          /* VkDevice */
  uint32_t queue_family;    /* a queue family with VK_QUEUE_COMPUTE_BIT the device was created with */
  uint32_t queue_index;     /* which queue of that family kiln submits to */
  /* The VkPhysicalDeviceFeatures2 chain given to vkCreateDevice (VkPhysicalDeviceVulkan11/12Features
   * are read from it), or NULL: kiln then uses no optional feature (artifacts needing fp16,
   * int8, ... are refused with a message naming the feature). Read during the call only. */
  const void *enabled_features;
} kiln_vulkan_context;

/* Opens a kiln device on the application's Vulkan device. kiln creates its own pools, pipelines
 * and buffers on it and submits to the given queue; it never destroys the application's
 * objects. Ownership and synchronisation:
 *   - the instance, device and queue must outlive the kiln device and everything made on it;
 *   - vkQueueSubmit needs external synchronisation: the application must not submit to that
 *     queue from another thread while a kiln call that submits (load, run, buffer write/read)
 *     is in progress;
 *   - kiln_device_release waits for the kiln work on the device to finish (vkDeviceWaitIdle is
 *     not called: the application's own work is not waited for).
 * KILN_UNSUPPORTED when the device offers less than Vulkan 1.2 or the family has no compute. */
kiln_status kiln_device_open_vulkan(const kiln_vulkan_context *context, kiln_device **out_device);

/* Wraps the application's VkBuffer range [offset, offset + bytes) as a kiln_buffer, without a
 * copy. The VkBuffer must belong to the kiln device's VkDevice, be bound to memory, have been
 * created with STORAGE_BUFFER, TRANSFER_SRC and TRANSFER_DST usage and be owned by the kiln
 * device's queue family (or use concurrent sharing); `offset` must be a multiple of the
 * device's minStorageBufferOffsetAlignment. The application keeps ownership: it must keep the
 * VkBuffer and its memory alive until the kiln_buffer is released, and order its own accesses
 * against kiln's with semaphores (kiln_vulkan_sync) or fences. kiln_buffer_write/read on an
 * imported buffer go through staging copies. */
kiln_status kiln_buffer_import_vulkan(kiln_device *device, uint64_t vk_buffer, uint64_t offset,
                                      uint64_t bytes, kiln_buffer **out_buffer);
/* The VkBuffer (and the offset of this buffer's range in it) behind a buffer of a Vulkan
 * device, for the application's own descriptors and copies. kiln keeps ownership: the handle
 * is valid until kiln_buffer_release. */
kiln_status kiln_buffer_export_vulkan(const kiln_buffer *buffer, uint64_t *out_vk_buffer,
                                      uint64_t *out_offset);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_KILN_H */
