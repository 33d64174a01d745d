#include "runtime/vulkan/vk_device.h"
#include "runtime/driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::rt::vk {
namespace {

constexpr const char *kCoopMatrixExtension = "VK_KHR_cooperative_matrix";
constexpr const char *kStatsExtension = "VK_KHR_pipeline_executable_properties";
// VK_KHR_cooperative_matrix postdates the installed headers (1.3.239): its feature struct,
// from the published extension (extension number 507).
constexpr auto kCoopMatrixFeaturesType = static_cast<VkStructureType>(1000506000);
struct CoopMatrixFeatures {
  VkStructureType sType = kCoopMatrixFeaturesType;
  void *pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};

// The feature structs kiln queries and enables, chained.
struct Features {
  VkPhysicalDeviceFeatures2 core{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  CoopMatrixFeatures coop;
  void chain(bool with_coop) {
    core.pNext = &v11;
    v11.pNext = &v12;
    v12.pNext = with_coop ? &coop : nullptr;
  }
};

const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
  default: return "other";
  }
}

bool has_device_extension(const Instance &in, VkPhysicalDevice pd, const char *name) {
  uint32_t n = 0;
  in.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  in.vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  for (const auto &e : exts)
    if (std::strcmp(e.extensionName, name) == 0)
      return true;
  return false;
}

void query_queue(const Instance &in, PhysicalInfo *p) {
  uint32_t n = 0;
  in.vkGetPhysicalDeviceQueueFamilyProperties(p->handle, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  in.vkGetPhysicalDeviceQueueFamilyProperties(p->handle, &n, families.data());
  p->queue_family = UINT32_MAX;
  // Prefer a compute queue without graphics (async compute), else any compute queue.
  for (int pass = 0; pass < 2 && p->queue_family == UINT32_MAX; ++pass) {
    for (uint32_t i = 0; i < n; ++i) {
      const auto flags = families[i].queueFlags;
      if ((flags & VK_QUEUE_COMPUTE_BIT) && (pass == 1 || !(flags & VK_QUEUE_GRAPHICS_BIT))) {
        p->queue_family = i;
        p->timestamp_valid_bits = families[i].timestampValidBits;
        break;
      }
    }
  }
}

void fill_info(const Features &f, const VkPhysicalDeviceProperties &props, uint32_t subgroup,
               size_t index, PhysicalInfo *p) {
  kiln_device_info &info = p->info;
  info = kiln_device_info{};
  set_info_strings(&info, "vulkan", index, props.deviceName);
  std::snprintf(info.device_type, sizeof info.device_type, "%s", type_name(props.deviceType));
  info.api_version = props.apiVersion;
  info.subgroup_size = subgroup;
  info.shared_memory_bytes = props.limits.maxComputeSharedMemorySize;
  info.max_workgroup_invocations = props.limits.maxComputeWorkGroupInvocations;
  info.max_storage_buffer_range = props.limits.maxStorageBufferRange;
  for (uint32_t i = 0; i < p->memory.memoryHeapCount; ++i)
    if (p->memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT &&
        p->memory.memoryHeaps[i].size > info.device_local_bytes)
      info.device_local_bytes = p->memory.memoryHeaps[i].size;
  info.float16 = f.v12.shaderFloat16;
  info.float64 = f.core.features.shaderFloat64;
  info.int8 = f.v12.shaderInt8;
  info.int16 = f.core.features.shaderInt16;
  info.int64 = f.core.features.shaderInt64;
  info.storage8 = f.v12.storageBuffer8BitAccess;
  info.storage16 = f.v11.storageBuffer16BitAccess;
  info.cooperative_matrix = p->cooperative_matrix_extension && f.coop.cooperativeMatrix;
  info.timestamps = p->timestamp_valid_bits > 0 && props.limits.timestampPeriod > 0;
}

Status query_physical(const Instance &in, VkPhysicalDevice pd, size_t index, PhysicalInfo *p,
                      Features *f) {
  p->handle = pd;
  VkPhysicalDeviceVulkan11Properties v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  in.vkGetPhysicalDeviceProperties(pd, &props.properties);
  const bool v12 = props.properties.apiVersion >= VK_API_VERSION_1_2;
  if (v12) {
    props.pNext = &v11;
    in.vkGetPhysicalDeviceProperties2(pd, &props);
    p->cooperative_matrix_extension = has_device_extension(in, pd, kCoopMatrixExtension);
    f->chain(p->cooperative_matrix_extension);
    in.vkGetPhysicalDeviceFeatures2(pd, &f->core);
  }
  p->limits = props.properties.limits;
  p->timestamp_period = props.properties.limits.timestampPeriod;
  in.vkGetPhysicalDeviceMemoryProperties(pd, &p->memory);
  query_queue(in, p);
  fill_info(*f, props.properties, v12 ? v11.subgroupSize : 0, index, p);
  if (std::strncmp(props.properties.deviceName, "llvmpipe", 8) == 0) p->loop_iteration_cap = 65535;
  return {};
}

// The subset of `have` that kiln enables.
void select_features(const Features &have, Features *want) {
  want->core.features.shaderInt16 = have.core.features.shaderInt16;
  want->core.features.shaderInt64 = have.core.features.shaderInt64;
  want->core.features.shaderFloat64 = have.core.features.shaderFloat64;
  want->v11.storageBuffer16BitAccess = have.v11.storageBuffer16BitAccess;
  want->v12.storageBuffer8BitAccess = have.v12.storageBuffer8BitAccess;
  want->v12.shaderInt8 = have.v12.shaderInt8;
  want->v12.shaderFloat16 = have.v12.shaderFloat16;
  want->v12.vulkanMemoryModel = have.v12.vulkanMemoryModel;
  want->coop.cooperativeMatrix = have.coop.cooperativeMatrix;
}

Status load_device_fns(Device *d) {
  const Instance &in = *d->instance;
#define KILN_VK_LOAD_DEVICE(name)                                                                  \
  d->name = reinterpret_cast<PFN_##name>(in.vkGetDeviceProcAddr(d->device, #name));                \
  if (!d->name)                                                                                    \
    return error(KILN_UNAVAILABLE, "Vulkan device lacks " #name);
  KILN_VK_DEVICE_FNS(KILN_VK_LOAD_DEVICE)
#undef KILN_VK_LOAD_DEVICE
  return {};
}

Status create_logical(Device *d) {
  const Instance &in = *d->instance;
  Features have, want;
  PhysicalInfo again;
  KILN_RT_TRY(query_physical(in, d->physical.handle, 0, &again, &have));
  select_features(have, &want);
  const bool coop = d->physical.info.cooperative_matrix;
  want.chain(coop);
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = d->physical.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &want.core;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &queue;
  std::vector<const char *> exts;
  if (coop) exts.push_back(kCoopMatrixExtension);
  const char *stats_env = std::getenv("KILN_VK_PIPELINE_STATS");
  const bool stats = stats_env && std::strcmp(stats_env, "1") == 0 &&
                     has_device_extension(in, d->physical.handle, kStatsExtension);
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR stats_feature{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  if (stats) {
    exts.push_back(kStatsExtension);
    stats_feature.pipelineExecutableInfo = VK_TRUE;
    stats_feature.pNext = const_cast<void *>(ci.pNext);
    ci.pNext = &stats_feature;
  }
  ci.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ci.ppEnabledExtensionNames = exts.empty() ? nullptr : exts.data();
  KILN_RT_TRY(check(in.vkCreateDevice(d->physical.handle, &ci, nullptr, &d->device),
                    "vkCreateDevice"));
  KILN_RT_TRY(load_device_fns(d));
  if (stats) {
    d->vkGetPipelineExecutablePropertiesKHR = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
        in.vkGetDeviceProcAddr(d->device, "vkGetPipelineExecutablePropertiesKHR"));
    d->vkGetPipelineExecutableStatisticsKHR = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
        in.vkGetDeviceProcAddr(d->device, "vkGetPipelineExecutableStatisticsKHR"));
    if (!d->vkGetPipelineExecutablePropertiesKHR) d->vkGetPipelineExecutableStatisticsKHR = nullptr;
  }
  d->vkGetDeviceQueue(d->device, d->physical.queue_family, 0, &d->queue);
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  return check(d->vkCreatePipelineCache(d->device, &cache, nullptr, &d->pipeline_cache),
               "vkCreatePipelineCache");
}

} // namespace

Status enumerate(const Instance &in, std::vector<PhysicalInfo> *out) {
  uint32_t n = 0;
  KILN_RT_TRY(check(in.vkEnumeratePhysicalDevices(in.instance, &n, nullptr),
                    "vkEnumeratePhysicalDevices"));
  std::vector<VkPhysicalDevice> handles(n);
  VkResult r = in.vkEnumeratePhysicalDevices(in.instance, &n, handles.data());
  if (r != VK_INCOMPLETE)
    KILN_RT_TRY(check(r, "vkEnumeratePhysicalDevices"));
  out->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Features f;
    KILN_RT_TRY(query_physical(in, handles[i], i, &(*out)[i], &f));
  }
  return {};
}

Device::~Device() {
  if (!device)
    return;
  // A borrowed device may be busy with the application's work: kiln's own lists were waited
  // for when they were destroyed, so only kiln's objects go.
  if (!borrowed)
    vkDeviceWaitIdle(device);
  if (pipeline_cache)
    vkDestroyPipelineCache(device, pipeline_cache, nullptr);
  if (!borrowed)
    vkDestroyDevice(device, nullptr);
}

Status parse_fault(const char *value, Fault *out) {
  out->kind = Fault::none;
  if (!value)
    return {};
  const std::string all = value;
  for (size_t start = 0; start < all.size();) {
    const size_t end = std::min(all.find(',', start), all.size());
    const std::string v = all.substr(start, end - start);
    start = end + 1;
    if (v == "no-barriers" || v == "no-map") {
      (v == "no-map" ? out->no_map : out->no_barriers) = true;
      continue;
    }
    const size_t colon = v.find(':');
    const std::string kind = v.substr(0, colon), count = colon == v.npos ? "" : v.substr(colon + 1);
    const bool digits = !count.empty() && count.size() < 19 &&
                        count.find_first_not_of("0123456789") == std::string::npos;
    const Fault::Kind k = kind == "alloc"    ? Fault::alloc
                          : kind == "submit" ? Fault::submit
                          : kind == "lost"   ? Fault::lost
                                             : Fault::none;
    if (k == Fault::none || !digits || std::stoull(count) == 0 || out->kind != Fault::none)
      return error(KILN_INVALID_ARGUMENT, "KILN_VULKAN_FAULT='", all, "': '", v,
                   "' is not one of alloc:N, submit:N, lost:N (N >= 1, at most one of them), "
                   "no-barriers, no-map");
    out->kind = k;
    out->nth = std::stoull(count);
  }
  return {};
}

Status note_loss(Device &d, Status s) {
  if (s.code() == KILN_DEVICE_LOST)
    d.lost.store(true);
  return s;
}

Status check_not_lost(const Device &d) {
  if (d.lost.load())
    return error(KILN_DEVICE_LOST, "Vulkan device '", d.physical.info.name,
                 "' was lost earlier; release its modules and the device and open it again");
  return {};
}

Status submit_and_wait(Device &d, VkCommandBuffer cmd, VkFence fence) {
  KILN_RT_TRY(check(d.vkResetFences(d.device, 1, &fence), "vkResetFences"));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  VkResult r = VK_SUCCESS;
  {
    std::lock_guard lock(d.queue_mutex);
    r = d.fault.hit(Fault::submit) ? VK_ERROR_DEVICE_LOST
                                   : d.vkQueueSubmit(d.queue, 1, &si, fence);
  }
  KILN_RT_TRY(note_loss(d, check(r, "vkQueueSubmit")));
  r = d.vkWaitForFences(d.device, 1, &fence, VK_TRUE, UINT64_MAX);
  if (r == VK_SUCCESS && d.fault.hit(Fault::lost))
    r = VK_ERROR_DEVICE_LOST;
  return note_loss(d, check(r, "vkWaitForFences"));
}

Status open_device(size_t index, std::unique_ptr<Device> *out) {
  auto d = std::make_unique<Device>();
  KILN_RT_TRY(parse_fault(std::getenv("KILN_VULKAN_FAULT"), &d->fault));
  KILN_RT_TRY(create_instance(validation_requested(), &d->instance));
  std::vector<PhysicalInfo> all;
  KILN_RT_TRY(enumerate(*d->instance, &all));
  if (index >= all.size())
    return error(KILN_NOT_FOUND, "vulkan device ", index, " does not exist (", all.size(),
                 " found)");
  d->physical = all[index];
  const kiln_device_info &info = d->physical.info;
  if (info.api_version < VK_API_VERSION_1_2)
    return error(KILN_UNSUPPORTED, "device '", info.name, "' supports Vulkan ",
                 VK_API_VERSION_MAJOR(info.api_version), ".", VK_API_VERSION_MINOR(info.api_version),
                 "; kiln needs 1.2");
  if (d->physical.queue_family == UINT32_MAX)
    return error(KILN_UNSUPPORTED, "device '", info.name, "' has no compute queue");
  KILN_RT_TRY(create_logical(d.get()));
  *out = std::move(d);
  return {};
}

namespace {

// The features the application enabled, from the chain it gave vkCreateDevice (read-only).
void read_enabled(const void *chain, Features *out) {
  for (auto *s = static_cast<const VkBaseInStructure *>(chain); s; s = s->pNext) {
    if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
      out->core.features = reinterpret_cast<const VkPhysicalDeviceFeatures2 *>(s)->features;
    else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES)
      out->v11.storageBuffer16BitAccess =
          reinterpret_cast<const VkPhysicalDeviceVulkan11Features *>(s)->storageBuffer16BitAccess;
    else if (s->sType == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES) {
      const auto *v12 = reinterpret_cast<const VkPhysicalDeviceVulkan12Features *>(s);
      out->v12.storageBuffer8BitAccess = v12->storageBuffer8BitAccess;
      out->v12.shaderInt8 = v12->shaderInt8;
      out->v12.shaderFloat16 = v12->shaderFloat16;
      out->v12.vulkanMemoryModel = v12->vulkanMemoryModel;
      out->v12.timelineSemaphore = v12->timelineSemaphore;
    } else if (s->sType == kCoopMatrixFeaturesType)
      out->coop.cooperativeMatrix = reinterpret_cast<const CoopMatrixFeatures *>(s)->cooperativeMatrix;
  }
}

} // namespace

Status open_external(const kiln_vulkan_context &ctx, std::unique_ptr<Device> *out) {
  auto d = std::make_unique<Device>();
  KILN_RT_TRY(parse_fault(std::getenv("KILN_VULKAN_FAULT"), &d->fault));
  KILN_RT_TRY(adopt_instance(reinterpret_cast<PFN_vkGetInstanceProcAddr>(ctx.get_instance_proc_addr),
                             reinterpret_cast<VkInstance>(ctx.instance), &d->instance));
  const Instance &in = *d->instance;
  Features have;
  KILN_RT_TRY(query_physical(in, reinterpret_cast<VkPhysicalDevice>(ctx.physical_device), 0,
                             &d->physical, &have));
  kiln_device_info &info = d->physical.info;
  std::snprintf(info.uri, sizeof info.uri, "vulkan:application");
  if (info.api_version < VK_API_VERSION_1_2)
    return error(KILN_UNSUPPORTED, "device '", info.name, "' supports Vulkan ",
                 VK_API_VERSION_MAJOR(info.api_version), ".", VK_API_VERSION_MINOR(info.api_version),
                 "; kiln needs 1.2");
  uint32_t n = 0;
  in.vkGetPhysicalDeviceQueueFamilyProperties(d->physical.handle, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  in.vkGetPhysicalDeviceQueueFamilyProperties(d->physical.handle, &n, families.data());
  if (ctx.queue_family >= n || !(families[ctx.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT))
    return error(KILN_UNSUPPORTED, "queue family ", ctx.queue_family, " of device '", info.name,
                 "' has no compute queues (", n, " families)");
  if (ctx.queue_index >= families[ctx.queue_family].queueCount)
    return error(KILN_INVALID_ARGUMENT, "queue ", ctx.queue_index, " of family ",
                 ctx.queue_family, ": the family has ", families[ctx.queue_family].queueCount);
  d->physical.queue_family = ctx.queue_family;
  d->physical.timestamp_valid_bits = families[ctx.queue_family].timestampValidBits;
  info.timestamps = d->physical.timestamp_valid_bits > 0 && d->physical.timestamp_period > 0;
  // Only what the application enabled may be used.
  Features on;
  read_enabled(ctx.enabled_features, &on);
  info.float16 = info.float16 && on.v12.shaderFloat16;
  info.float64 = info.float64 && on.core.features.shaderFloat64;
  info.int8 = info.int8 && on.v12.shaderInt8;
  info.int16 = info.int16 && on.core.features.shaderInt16;
  info.int64 = info.int64 && on.core.features.shaderInt64;
  info.storage8 = info.storage8 && on.v12.storageBuffer8BitAccess;
  info.storage16 = info.storage16 && on.v11.storageBuffer16BitAccess;
  info.cooperative_matrix =
      info.cooperative_matrix && on.coop.cooperativeMatrix && on.v12.vulkanMemoryModel;
  d->device = reinterpret_cast<VkDevice>(ctx.device);
  d->borrowed = true;
  KILN_RT_TRY(load_device_fns(d.get()));
  d->vkGetDeviceQueue(d->device, ctx.queue_family, ctx.queue_index, &d->queue);
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  KILN_RT_TRY(check(d->vkCreatePipelineCache(d->device, &cache, nullptr, &d->pipeline_cache),
                    "vkCreatePipelineCache"));
  *out = std::move(d);
  return {};
}

Status check_requirements(const PhysicalInfo &p, const Executable &exe) {
  const Requirements &r = exe.requirements;
  const kiln_device_info &info = p.info;
  std::string missing;
  auto need = [&](bool needed, int have, const char *what) {
    if (needed && !have)
      missing += std::string(missing.empty() ? "" : ", ") + what;
  };
#define KILN_X(field, name) need(r.field, info.field, name);
  KILN_DEVICE_FEATURES(KILN_X)
#undef KILN_X
  if (r.subgroup_size && r.subgroup_size != info.subgroup_size)
    missing += cat(missing.empty() ? "" : ", ", "subgroup size ", r.subgroup_size, " (device has ",
                   info.subgroup_size, ")");
  if (r.shared_memory_bytes > info.shared_memory_bytes)
    missing += cat(missing.empty() ? "" : ", ", r.shared_memory_bytes,
                   " bytes of shared memory (device has ", info.shared_memory_bytes, ")");
  const uint64_t invocations =
      uint64_t(exe.workgroup_size[0]) * exe.workgroup_size[1] * exe.workgroup_size[2];
  const uint64_t need_inv = std::max<uint64_t>(invocations, r.max_workgroup_invocations);
  if (need_inv > info.max_workgroup_invocations)
    missing += cat(missing.empty() ? "" : ", ", need_inv, " invocations per workgroup (device has ",
                   info.max_workgroup_invocations, ")");
  for (int i = 0; i < 3; ++i)
    if (exe.workgroup_size[i] > p.limits.maxComputeWorkGroupSize[i])
      missing += cat(missing.empty() ? "" : ", ", "workgroup size ", exe.workgroup_size[i],
                     " in dimension ", i, " (device allows ", p.limits.maxComputeWorkGroupSize[i], ")");
  if (exe.push_constant_bytes > p.limits.maxPushConstantsSize)
    missing += cat(missing.empty() ? "" : ", ", exe.push_constant_bytes,
                   " push constant bytes (device allows ", p.limits.maxPushConstantsSize, ")");
  if (exe.num_bindings > p.limits.maxPerStageDescriptorStorageBuffers)
    missing += cat(missing.empty() ? "" : ", ", exe.num_bindings,
                   " storage buffers (device allows ", p.limits.maxPerStageDescriptorStorageBuffers, ")");
  if (p.loop_iteration_cap && r.loop_iterations > p.loop_iteration_cap)
    missing += cat(missing.empty() ? "" : ", ", "loops of ", r.loop_iterations,
                   " iterations per invocation (the driver stops loops after ",
                   p.loop_iteration_cap, ")");
  if (missing.empty())
    return {};
  return error(KILN_UNSUPPORTED, "executable '", exe.name, "' needs ", missing,
               ", which device '", info.name, "' lacks");
}

namespace {

uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties &m, uint32_t bits,
                          VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < m.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && (m.memoryTypes[i].propertyFlags & want) == want)
      return i;
  return UINT32_MAX;
}

std::atomic<uint64_t> g_live_allocations{0};

Status create_buffer_parts(Device &d, VkDeviceSize size, VkBufferUsageFlags usage, MemoryUse use,
                           Buffer *out) {
  VkBufferCreateInfo ci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = size;
  ci.usage = usage;
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = d.fault.hit(Fault::alloc) ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                          : d.vkCreateBuffer(d.device, &ci, nullptr, &out->buffer);
  KILN_RT_TRY(check(r, cat("vkCreateBuffer(", size, " bytes)").c_str()));
  g_live_allocations.fetch_add(1);
  out->size = size;
  VkMemoryRequirements req;
  d.vkGetBufferMemoryRequirements(d.device, out->buffer, &req);
  const auto &mem = d.physical.memory;
  const VkMemoryPropertyFlags host =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  if (use == MemoryUse::device_local) {
    type = find_memory_type(mem, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type == UINT32_MAX)
      type = find_memory_type(mem, req.memoryTypeBits, 0);
  } else {
    type = find_memory_type(mem, req.memoryTypeBits, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    if (type == UINT32_MAX)
      type = find_memory_type(mem, req.memoryTypeBits, host);
  }
  if (type == UINT32_MAX)
    return error(KILN_UNSUPPORTED, "device '", d.physical.info.name,
                 "' has no suitable memory type for a buffer");
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type;
  r = d.fault.hit(Fault::alloc) ? VK_ERROR_OUT_OF_DEVICE_MEMORY
                                : d.vkAllocateMemory(d.device, &ai, nullptr, &out->memory);
  KILN_RT_TRY(check(r, cat("vkAllocateMemory(", size, " bytes)").c_str()));
  g_live_allocations.fetch_add(1);
  KILN_RT_TRY(check(d.vkBindBufferMemory(d.device, out->buffer, out->memory, 0),
                    "vkBindBufferMemory"));
  const bool unmapped = use == MemoryUse::device_local && d.fault.no_map;
  if ((mem.memoryTypes[type].propertyFlags & host) == host && !unmapped)
    KILN_RT_TRY(check(d.vkMapMemory(d.device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
                      "vkMapMemory"));
  return {};
}

} // namespace

uint64_t live_allocations() { return g_live_allocations.load(); }

Status create_buffer(Device &d, VkDeviceSize size, VkBufferUsageFlags usage, MemoryUse use,
                     Buffer *out) {
  *out = Buffer{};
  Status s = create_buffer_parts(d, size, usage, use, out);
  if (!s.ok())
    destroy_buffer(d, out);
  return s;
}

void destroy_buffer(Device &d, Buffer *b) {
  if (b->borrowed) {
    *b = Buffer{};
    return;
  }
  if (b->buffer) {
    d.vkDestroyBuffer(d.device, b->buffer, nullptr);
    g_live_allocations.fetch_sub(1);
  }
  if (b->memory) {
    d.vkFreeMemory(d.device, b->memory, nullptr);
    g_live_allocations.fetch_sub(1);
  }
  *b = Buffer{};
}

} // namespace kiln::rt::vk
