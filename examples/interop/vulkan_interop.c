/* An application that owns its Vulkan device and runs a kiln model inside its own GPU work,
 * with no host round trip between its shaders and the model:
 *
 *   kiln_interop_example MODEL.kiln [--validate | --validate=core] [--race]
 *
 * 1. The application creates its instance, device, queue and a timeline semaphore, and opens
 *    a kiln device on them (kiln_device_open_vulkan).
 * 2. It writes a synthetic camera frame (pixel values, HWC) into a buffer of its own and runs
 *    its pre-processing compute shader (preprocess.comp), which writes the model input into a
 *    second buffer of its own; the submission signals the semaphore to 1.
 * 3. That buffer is imported into kiln (kiln_buffer_import_vulkan) and the model runs on it
 *    asynchronously (kiln_module_run_buffers): kiln waits for 1 and signals 2, writing its
 *    output into a kiln buffer.
 * 4. The application copies kiln's output (kiln_buffer_export_vulkan) into its readback
 *    buffer after waiting for 2, signals 3, waits for 3 on the host and reads the result.
 * The result is checked against the same model run through the host path (kiln_module_run on
 * the frame normalised on the CPU). With --validate the application enables the Khronos
 * validation layer with synchronization validation on its instance (kiln's calls go through
 * it too) and fails if it reports anything; --validate=core leaves synchronization validation
 * off (the AddressSanitizer build uses it: that layer leaks on exit). --race drops kiln's wait for the shader (a
 * deliberate data race, for proving that the layer catches one). The model needs one f32 input of rank 4 (NCHW)
 * and f32 outputs; the first output is compared. Exit status 0 when everything matched. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <kiln/kiln.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preprocess.spv.h"

static PFN_vkGetInstanceProcAddr get_proc;
#define VK_FN(name) static PFN_##name name
VK_FN(vkCreateInstance);
VK_FN(vkDestroyInstance);
VK_FN(vkEnumeratePhysicalDevices);
VK_FN(vkGetPhysicalDeviceQueueFamilyProperties);
VK_FN(vkGetPhysicalDeviceMemoryProperties);
VK_FN(vkCreateDevice);
VK_FN(vkDestroyDevice);
VK_FN(vkGetDeviceQueue);
VK_FN(vkCreateBuffer);
VK_FN(vkDestroyBuffer);
VK_FN(vkGetBufferMemoryRequirements);
VK_FN(vkAllocateMemory);
VK_FN(vkFreeMemory);
VK_FN(vkBindBufferMemory);
VK_FN(vkMapMemory);
VK_FN(vkCreateSemaphore);
VK_FN(vkDestroySemaphore);
VK_FN(vkWaitSemaphores);
VK_FN(vkCreateShaderModule);
VK_FN(vkDestroyShaderModule);
VK_FN(vkCreateDescriptorSetLayout);
VK_FN(vkDestroyDescriptorSetLayout);
VK_FN(vkCreatePipelineLayout);
VK_FN(vkDestroyPipelineLayout);
VK_FN(vkCreateComputePipelines);
VK_FN(vkDestroyPipeline);
VK_FN(vkCreateDescriptorPool);
VK_FN(vkDestroyDescriptorPool);
VK_FN(vkAllocateDescriptorSets);
VK_FN(vkUpdateDescriptorSets);
VK_FN(vkCreateCommandPool);
VK_FN(vkDestroyCommandPool);
VK_FN(vkAllocateCommandBuffers);
VK_FN(vkBeginCommandBuffer);
VK_FN(vkEndCommandBuffer);
VK_FN(vkCmdBindPipeline);
VK_FN(vkCmdBindDescriptorSets);
VK_FN(vkCmdPushConstants);
VK_FN(vkCmdDispatch);
VK_FN(vkCmdCopyBuffer);
VK_FN(vkCmdPipelineBarrier);
VK_FN(vkQueueSubmit);
VK_FN(vkDeviceWaitIdle);
VK_FN(vkCreateDebugUtilsMessengerEXT);
VK_FN(vkDestroyDebugUtilsMessengerEXT);

static unsigned validation_messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data,
                                                 void *user) {
  (void)type;
  (void)user;
  ++validation_messages;
  fprintf(stderr, "validation %s: %s\n",
          severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT ? "error" : "warning",
          data->pMessage);
  return VK_FALSE;
}

static int vk_ok(VkResult r, const char *what) {
  if (r == VK_SUCCESS)
    return 1;
  fprintf(stderr, "%s failed: VkResult %d\n", what, (int)r);
  return 0;
}

static int kiln_ok(kiln_status status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "%s: %s\n", what, kiln_status_message(status));
  kiln_status_free(status);
  return 0;
}

/* The application's side of the example: its Vulkan objects. */
typedef struct App {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice physical;
  VkPhysicalDeviceMemoryProperties memory;
  VkDevice device;
  uint32_t family;
  VkQueue queue;
  VkSemaphore timeline;
  VkCommandPool pool;
} App;

typedef struct AppBuffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped; /* host-visible buffers only */
} AppBuffer;

static int create_instance(App *app, int validate) {
  VkApplicationInfo ai = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  ai.pApplicationName = "kiln interop example";
  ai.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &ai;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validate == 2) {
    /* Hazards between submissions (the application's and kiln's) are checked only with the
     * layer's submit-time synchronization validation, off by default in the 1.3.239 layer. */
    setenv("VK_LAYER_ENABLES", "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT", 0);
    ci.pNext = &features;
  }
  if (validate) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &layer;
    ci.enabledExtensionCount = 2;
    ci.ppEnabledExtensionNames = exts;
  }
  if (!vk_ok(vkCreateInstance(&ci, NULL, &app->instance), "vkCreateInstance"))
    return 0;
#define LOAD_INSTANCE(name) name = (PFN_##name)get_proc(app->instance, #name);
  LOAD_INSTANCE(vkDestroyInstance)
  LOAD_INSTANCE(vkEnumeratePhysicalDevices)
  LOAD_INSTANCE(vkGetPhysicalDeviceQueueFamilyProperties)
  LOAD_INSTANCE(vkGetPhysicalDeviceMemoryProperties)
  LOAD_INSTANCE(vkCreateDevice)
  LOAD_INSTANCE(vkCreateDebugUtilsMessengerEXT)
  LOAD_INSTANCE(vkDestroyDebugUtilsMessengerEXT)
  if (validate) {
    VkDebugUtilsMessengerCreateInfoEXT mi = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = on_message;
    if (!vk_ok(vkCreateDebugUtilsMessengerEXT(app->instance, &mi, NULL, &app->messenger),
               "vkCreateDebugUtilsMessengerEXT"))
      return 0;
  }
  return 1;
}

/* The first device with a compute queue; timeline semaphores enabled (and nothing else). */
static int create_device(App *app, VkPhysicalDeviceVulkan12Features *enabled) {
  uint32_t n = 1;
  VkResult r = vkEnumeratePhysicalDevices(app->instance, &n, &app->physical);
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
    fprintf(stderr, "no Vulkan device\n");
    return 0;
  }
  vkGetPhysicalDeviceMemoryProperties(app->physical, &app->memory);
  VkQueueFamilyProperties families[16];
  uint32_t nf = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(app->physical, &nf, families);
  app->family = UINT32_MAX;
  for (uint32_t i = 0; i < nf && app->family == UINT32_MAX; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)
      app->family = i;
  if (app->family == UINT32_MAX) {
    fprintf(stderr, "no compute queue\n");
    return 0;
  }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qi = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = app->family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = enabled;
  enabled->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  enabled->timelineSemaphore = VK_TRUE;
  VkDeviceCreateInfo ci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &features;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qi;
  if (!vk_ok(vkCreateDevice(app->physical, &ci, NULL, &app->device), "vkCreateDevice"))
    return 0;
  PFN_vkGetDeviceProcAddr get_device_proc =
      (PFN_vkGetDeviceProcAddr)get_proc(app->instance, "vkGetDeviceProcAddr");
#define LOAD_DEVICE(name) name = (PFN_##name)get_device_proc(app->device, #name);
  LOAD_DEVICE(vkDestroyDevice) LOAD_DEVICE(vkGetDeviceQueue) LOAD_DEVICE(vkCreateBuffer)
  LOAD_DEVICE(vkDestroyBuffer) LOAD_DEVICE(vkGetBufferMemoryRequirements)
  LOAD_DEVICE(vkAllocateMemory) LOAD_DEVICE(vkFreeMemory) LOAD_DEVICE(vkBindBufferMemory)
  LOAD_DEVICE(vkMapMemory) LOAD_DEVICE(vkCreateSemaphore) LOAD_DEVICE(vkDestroySemaphore)
  LOAD_DEVICE(vkWaitSemaphores) LOAD_DEVICE(vkCreateShaderModule)
  LOAD_DEVICE(vkDestroyShaderModule) LOAD_DEVICE(vkCreateDescriptorSetLayout)
  LOAD_DEVICE(vkDestroyDescriptorSetLayout) LOAD_DEVICE(vkCreatePipelineLayout)
  LOAD_DEVICE(vkDestroyPipelineLayout) LOAD_DEVICE(vkCreateComputePipelines)
  LOAD_DEVICE(vkDestroyPipeline) LOAD_DEVICE(vkCreateDescriptorPool)
  LOAD_DEVICE(vkDestroyDescriptorPool) LOAD_DEVICE(vkAllocateDescriptorSets)
  LOAD_DEVICE(vkUpdateDescriptorSets) LOAD_DEVICE(vkCreateCommandPool)
  LOAD_DEVICE(vkDestroyCommandPool) LOAD_DEVICE(vkAllocateCommandBuffers)
  LOAD_DEVICE(vkBeginCommandBuffer) LOAD_DEVICE(vkEndCommandBuffer)
  LOAD_DEVICE(vkCmdBindPipeline) LOAD_DEVICE(vkCmdBindDescriptorSets)
  LOAD_DEVICE(vkCmdPushConstants) LOAD_DEVICE(vkCmdDispatch) LOAD_DEVICE(vkCmdCopyBuffer)
  LOAD_DEVICE(vkCmdPipelineBarrier) LOAD_DEVICE(vkQueueSubmit) LOAD_DEVICE(vkDeviceWaitIdle)
  vkGetDeviceQueue(app->device, app->family, 0, &app->queue);
  VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  si.pNext = &type;
  VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pi.queueFamilyIndex = app->family;
  return vk_ok(vkCreateSemaphore(app->device, &si, NULL, &app->timeline), "vkCreateSemaphore") &&
         vk_ok(vkCreateCommandPool(app->device, &pi, NULL, &app->pool), "vkCreateCommandPool");
}

static int create_buffer(App *app, VkDeviceSize bytes, int host_visible, AppBuffer *out) {
  VkBufferCreateInfo ci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  ci.size = bytes;
  ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  if (!vk_ok(vkCreateBuffer(app->device, &ci, NULL, &out->buffer), "vkCreateBuffer"))
    return 0;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(app->device, out->buffer, &req);
  VkMemoryPropertyFlags want = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                  VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                            : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = UINT32_MAX;
  for (uint32_t i = 0; i < app->memory.memoryTypeCount && ai.memoryTypeIndex == UINT32_MAX; ++i)
    if ((req.memoryTypeBits & (1u << i)) &&
        (app->memory.memoryTypes[i].propertyFlags & want) == want)
      ai.memoryTypeIndex = i;
  if (ai.memoryTypeIndex == UINT32_MAX) {
    fprintf(stderr, "no suitable memory type\n");
    return 0;
  }
  if (!vk_ok(vkAllocateMemory(app->device, &ai, NULL, &out->memory), "vkAllocateMemory") ||
      !vk_ok(vkBindBufferMemory(app->device, out->buffer, out->memory, 0), "vkBindBufferMemory"))
    return 0;
  return !host_visible ||
         vk_ok(vkMapMemory(app->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped),
               "vkMapMemory");
}

static void destroy_buffer(App *app, AppBuffer *b) {
  if (b->buffer)
    vkDestroyBuffer(app->device, b->buffer, NULL);
  if (b->memory)
    vkFreeMemory(app->device, b->memory, NULL);
}

/* Submits `cmd` waiting for the timeline to reach `wait` (0: no wait) and signalling `signal`. */
static int submit(App *app, VkCommandBuffer cmd, uint64_t wait, uint64_t signal) {
  VkTimelineSemaphoreSubmitInfo ti = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  ti.waitSemaphoreValueCount = wait ? 1 : 0;
  ti.pWaitSemaphoreValues = &wait;
  ti.signalSemaphoreValueCount = 1;
  ti.pSignalSemaphoreValues = &signal;
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.pNext = &ti;
  si.waitSemaphoreCount = wait ? 1 : 0;
  si.pWaitSemaphores = &app->timeline;
  si.pWaitDstStageMask = &stage;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  si.signalSemaphoreCount = 1;
  si.pSignalSemaphores = &app->timeline;
  return vk_ok(vkQueueSubmit(app->queue, 1, &si, VK_NULL_HANDLE), "vkQueueSubmit");
}

/* The pre-processing pass, recorded into `cmd`: frame -> input. */
typedef struct Preprocess {
  VkShaderModule shader;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  VkDescriptorPool pool;
  VkDescriptorSet set;
} Preprocess;

static int create_preprocess(App *app, VkBuffer frame, VkBuffer input, Preprocess *p) {
  VkShaderModuleCreateInfo si = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  si.codeSize = sizeof kPreprocessSpv;
  si.pCode = kPreprocessSpv;
  VkDescriptorSetLayoutBinding b[2] = {
      {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
      {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
  VkDescriptorSetLayoutCreateInfo li = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = 2;
  li.pBindings = b;
  VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 3 * sizeof(uint32_t)};
  if (!vk_ok(vkCreateShaderModule(app->device, &si, NULL, &p->shader), "vkCreateShaderModule") ||
      !vk_ok(vkCreateDescriptorSetLayout(app->device, &li, NULL, &p->set_layout),
             "vkCreateDescriptorSetLayout"))
    return 0;
  VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p->set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &range;
  if (!vk_ok(vkCreatePipelineLayout(app->device, &pli, NULL, &p->layout), "vkCreatePipelineLayout"))
    return 0;
  VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = p->shader;
  ci.stage.pName = "main";
  ci.layout = p->layout;
  VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  dpi.maxSets = 1;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &size;
  if (!vk_ok(vkCreateComputePipelines(app->device, VK_NULL_HANDLE, 1, &ci, NULL, &p->pipeline),
             "vkCreateComputePipelines") ||
      !vk_ok(vkCreateDescriptorPool(app->device, &dpi, NULL, &p->pool), "vkCreateDescriptorPool"))
    return 0;
  VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = p->pool;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &p->set_layout;
  if (!vk_ok(vkAllocateDescriptorSets(app->device, &ai, &p->set), "vkAllocateDescriptorSets"))
    return 0;
  VkDescriptorBufferInfo infos[2] = {{frame, 0, VK_WHOLE_SIZE}, {input, 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet w[2];
  for (int i = 0; i < 2; ++i) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w[i].dstSet = p->set;
    w[i].dstBinding = (uint32_t)i;
    w[i].descriptorCount = 1;
    w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(app->device, 2, w, 0, NULL);
  return 1;
}

static void destroy_preprocess(App *app, Preprocess *p) {
  if (p->pool) vkDestroyDescriptorPool(app->device, p->pool, NULL);
  if (p->pipeline) vkDestroyPipeline(app->device, p->pipeline, NULL);
  if (p->layout) vkDestroyPipelineLayout(app->device, p->layout, NULL);
  if (p->set_layout) vkDestroyDescriptorSetLayout(app->device, p->set_layout, NULL);
  if (p->shader) vkDestroyShaderModule(app->device, p->shader, NULL);
}

/* What the shader computes, on the CPU (for the host-path reference run). */
static void preprocess_on_host(const float *frame, float *x, uint32_t count, uint32_t channels,
                               uint32_t plane) {
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t s = i % plane, c = (i / plane) % channels, n = i / (plane * channels);
    float v = frame[(n * plane + s) * channels + c] / 255.0f;
    x[i] = (v - mean[c % 3]) / stdev[c % 3];
  }
}

static int load_vulkan(void) {
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cannot load libvulkan.so.1\n");
    return 0;
  }
  get_proc = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
  vkCreateInstance = get_proc ? (PFN_vkCreateInstance)get_proc(NULL, "vkCreateInstance") : NULL;
  return vkCreateInstance != NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.kiln [--validate | --validate=core] [--race]\n", argv[0]);
    return 2;
  }
  int validate = 0, race = 0;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "--validate") == 0)
      validate = 2; /* core + synchronization */
    else if (strcmp(argv[i], "--validate=core") == 0)
      validate = 1;
    else if (strcmp(argv[i], "--race") == 0)
      race = 1;
    else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (!load_vulkan())
    return 1;
  App app;
  memset(&app, 0, sizeof app);
  VkPhysicalDeviceVulkan12Features enabled;
  memset(&enabled, 0, sizeof enabled);
  if (!create_instance(&app, validate) || !create_device(&app, &enabled))
    return 1;

  /* 1. kiln on the application's device and queue. */
  kiln_vulkan_context ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.get_instance_proc_addr = (void *)get_proc;
  ctx.instance = (uint64_t)(uintptr_t)app.instance;
  ctx.physical_device = (uint64_t)(uintptr_t)app.physical;
  ctx.device = (uint64_t)(uintptr_t)app.device;
  ctx.queue_family = app.family;
  ctx.queue_index = 0;
  VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &enabled;
  ctx.enabled_features = &features;
  kiln_device *device = NULL;
  kiln_module *module = NULL;
  if (!kiln_ok(kiln_device_open_vulkan(&ctx, &device), "kiln_device_open_vulkan") ||
      !kiln_ok(kiln_module_load_file(device, argv[1], &module), argv[1]))
    return 1;
  kiln_tensor_info in_info, out_info;
  if (!kiln_ok(kiln_module_input_info(module, 0, &in_info), "input info") ||
      !kiln_ok(kiln_module_output_info(module, 0, &out_info), "output info"))
    return 1;
  if (kiln_module_input_count(module) != 1 || in_info.dtype != KILN_F32 || in_info.rank != 4 ||
      out_info.dtype != KILN_F32) {
    fprintf(stderr, "the example needs a model with one f32 NCHW input and an f32 output\n");
    return 1;
  }
  const uint32_t count = (uint32_t)(in_info.bytes / sizeof(float));
  const uint32_t channels = (uint32_t)in_info.shape[1];
  const uint32_t plane = (uint32_t)(in_info.shape[2] * in_info.shape[3]);
  const size_t n_out = kiln_module_output_count(module);

  /* 2. The application's buffers and its pre-processing pass. */
  AppBuffer frame, input, readback;
  memset(&frame, 0, sizeof frame);
  memset(&input, 0, sizeof input);
  memset(&readback, 0, sizeof readback);
  Preprocess pre;
  memset(&pre, 0, sizeof pre);
  if (!create_buffer(&app, in_info.bytes, 1, &frame) ||
      !create_buffer(&app, in_info.bytes, 0, &input) ||
      !create_buffer(&app, out_info.bytes, 1, &readback) ||
      !create_preprocess(&app, frame.buffer, input.buffer, &pre))
    return 1;
  float *pixels = (float *)frame.mapped;
  for (uint32_t i = 0; i < count; ++i)
    pixels[i] = (float)((i * 37u + 11u) % 256u); /* a synthetic camera frame */

  /* kiln's buffers: the application's input imported, kiln's own outputs. */
  kiln_buffer *in_buf = NULL;
  kiln_buffer *out_bufs[16] = {NULL};
  if (n_out > 16 ||
      !kiln_ok(kiln_buffer_import_vulkan(device, (uint64_t)(uintptr_t)input.buffer, 0,
                                         in_info.bytes, &in_buf), "import"))
    return 1;
  for (size_t o = 0; o < n_out; ++o) {
    kiln_tensor_info info;
    if (!kiln_ok(kiln_module_output_info(module, o, &info), "output info") ||
        !kiln_ok(kiln_buffer_create(device, info.bytes ? info.bytes : 1, &out_bufs[o]),
                 "kiln_buffer_create"))
      return 1;
  }
  uint64_t out_vk = 0, out_offset = 0;
  if (!kiln_ok(kiln_buffer_export_vulkan(out_bufs[0], &out_vk, &out_offset), "export"))
    return 1;

  VkCommandBuffer cmds[2];
  VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = app.pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 2;
  if (!vk_ok(vkAllocateCommandBuffers(app.device, &cai, cmds), "vkAllocateCommandBuffers"))
    return 1;
  VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  /* cmds[0]: the pre-processing shader. */
  vkBeginCommandBuffer(cmds[0], &bi);
  vkCmdBindPipeline(cmds[0], VK_PIPELINE_BIND_POINT_COMPUTE, pre.pipeline);
  vkCmdBindDescriptorSets(cmds[0], VK_PIPELINE_BIND_POINT_COMPUTE, pre.layout, 0, 1, &pre.set, 0,
                          NULL);
  uint32_t push[3] = {count, channels, plane};
  vkCmdPushConstants(cmds[0], pre.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof push, push);
  vkCmdDispatch(cmds[0], (count + 63) / 64, 1, 1);
  vkEndCommandBuffer(cmds[0]);
  /* cmds[1]: kiln's output into the application's readback buffer, visible to the host. */
  vkBeginCommandBuffer(cmds[1], &bi);
  VkBufferCopy region = {out_offset, 0, out_info.bytes};
  vkCmdCopyBuffer(cmds[1], (VkBuffer)(uintptr_t)out_vk, readback.buffer, 1, &region);
  VkMemoryBarrier to_host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cmds[1], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                       &to_host, 0, NULL, 0, NULL);
  vkEndCommandBuffer(cmds[1]);

  /* 3. One frame through the chain: shader (-> 1), kiln (1 -> 2), copy (2 -> 3). Run twice:
   *    the second pass reuses kiln's recording for the same buffers. */
  int ok = 1;
  float *host_in = malloc(in_info.bytes);
  float *expected = malloc(out_info.bytes);
  preprocess_on_host(pixels, host_in, count, channels, plane);
  /* The reference: the same model through the host path. */
  kiln_tensor in_t = {KILN_F32, in_info.rank, in_info.shape, host_in, in_info.bytes};
  kiln_tensor out_t[16];
  void *out_data[16] = {NULL};
  for (size_t o = 0; o < n_out; ++o) {
    kiln_tensor_info info;
    kiln_module_output_info(module, o, &info);
    out_data[o] = o == 0 ? (void *)expected : malloc(info.bytes ? info.bytes : 1);
    kiln_tensor t = {info.dtype, info.rank, info.shape, out_data[o], info.bytes};
    out_t[o] = t;
  }
  if (!kiln_ok(kiln_module_run(module, &in_t, 1, out_t, n_out), "host-path run"))
    return 1;
  for (uint64_t pass = 0; pass < 2 && ok; ++pass) {
    const uint64_t base = 3 * pass;
    memset(readback.mapped, 0xff, out_info.bytes); /* poison: NaN */
    if (!submit(&app, cmds[0], base, base + 1))
      return 1;
    const uint64_t sem = (uint64_t)(uintptr_t)app.timeline;
    const uint64_t wait_value = base + 1, signal_value = base + 2;
    kiln_vulkan_sync sync = {race ? 0u : 1u, &sem, &wait_value, 1, &sem, &signal_value};
    if (!kiln_ok(kiln_module_run_buffers(module, &in_buf, 1, out_bufs, n_out, &sync),
                 "kiln_module_run_buffers"))
      return 1;
    if (!submit(&app, cmds[1], base + 2, base + 3))
      return 1;
    const uint64_t done = base + 3;
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &app.timeline;
    wi.pValues = &done;
    if (!vk_ok(vkWaitSemaphores(app.device, &wi, UINT64_MAX), "vkWaitSemaphores"))
      return 1;
    const float *got = (const float *)readback.mapped;
    double max_err = 0;
    for (size_t i = 0; i < out_info.bytes / sizeof(float); ++i) {
      double err = fabs((double)got[i] - (double)expected[i]);
      if (!(err <= 1e-4 + 1e-4 * fabs((double)expected[i]))) /* NaN fails too */
        ok = 0;
      if (err > max_err || err != err)
        max_err = err != err ? INFINITY : err;
    }
    printf("pass %d: output '%s' (%zu values) max abs difference from the host path %.3g: %s\n",
           (int)pass, out_info.name, out_info.bytes / sizeof(float), max_err,
           ok ? "match" : "MISMATCH");
  }

  vkDeviceWaitIdle(app.device);
  for (size_t o = 0; o < n_out; ++o) {
    kiln_buffer_release(out_bufs[o]);
    if (o)
      free(out_data[o]);
  }
  kiln_buffer_release(in_buf);
  kiln_module_release(module);
  kiln_device_release(device);
  free(host_in);
  free(expected);
  destroy_preprocess(&app, &pre);
  destroy_buffer(&app, &frame);
  destroy_buffer(&app, &input);
  destroy_buffer(&app, &readback);
  vkDestroyCommandPool(app.device, app.pool, NULL);
  vkDestroySemaphore(app.device, app.timeline, NULL);
  vkDestroyDevice(app.device, NULL);
  if (app.messenger)
    vkDestroyDebugUtilsMessengerEXT(app.instance, app.messenger, NULL);
  vkDestroyInstance(app.instance, NULL);
  if (validate)
    printf("validation (%s): %u message(s)\n", validate == 2 ? "core + synchronization" : "core",
           validation_messages);
  return ok && validation_messages == 0 ? 0 : 1;
}
