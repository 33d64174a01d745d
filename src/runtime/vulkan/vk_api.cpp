#include "runtime/vulkan/vk_api.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <vector>

#if KILN_KEEP_MODULES_LOADED
// AddressSanitizer builds only (CMakeLists.txt): dlclose does nothing, for every caller in the
// process (the executable exports it, so it interposes libc's for the Vulkan loader too). The
// loader unloads drivers and layers when an instance is destroyed; memory they still held
// then shows in LeakSanitizer's report at exit as frames of an "<unknown module>", which no
// `leak:library` suppression can match, and their globals are no longer scanned as roots. A
// module that stays mapped keeps both. Never compiled into a normal build.
extern "C" int dlclose(void *) noexcept { return 0; }
#endif

namespace kiln::rt::vk {
namespace {

Status load_library(Loader *l) {
  void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return error(KILN_UNAVAILABLE, "cannot load libvulkan.so.1 (install a Vulkan loader): ",
                 why ? why : "unknown error");
  }
  l->vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!l->vkGetInstanceProcAddr)
    return error(KILN_UNAVAILABLE, "libvulkan.so.1 has no vkGetInstanceProcAddr");
#define KILN_VK_LOAD_GLOBAL(name)                                                                  \
  l->name = reinterpret_cast<PFN_##name>(l->vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
  KILN_VK_GLOBAL_FNS(KILN_VK_LOAD_GLOBAL)
#undef KILN_VK_LOAD_GLOBAL
  if (!l->vkCreateInstance || !l->vkEnumerateInstanceLayerProperties ||
      !l->vkEnumerateInstanceExtensionProperties)
    return error(KILN_UNAVAILABLE, "libvulkan.so.1 lacks the global Vulkan entry points");
  return {};
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT *data,
                                          void *user) {
  auto *instance = static_cast<Instance *>(user);
  const bool is_error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  instance->messages.fetch_add(1);
  if (is_error)
    instance->errors.fetch_add(1);
  std::fprintf(stderr, "kiln: vulkan validation %s: %s\n", is_error ? "error" : "warning",
               data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

bool has_layer(const Loader &l, const char *name) {
  uint32_t n = 0;
  l.vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  l.vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto &p : layers)
    if (std::strcmp(p.layerName, name) == 0)
      return true;
  return false;
}

bool has_instance_extension(const Loader &l, const char *layer, const char *name) {
  uint32_t n = 0;
  l.vkEnumerateInstanceExtensionProperties(layer, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  l.vkEnumerateInstanceExtensionProperties(layer, &n, exts.data());
  for (const auto &e : exts)
    if (std::strcmp(e.extensionName, name) == 0)
      return true;
  return false;
}

Status load_instance_fns(Instance *in, PFN_vkGetInstanceProcAddr get_proc) {
#define KILN_VK_LOAD_INSTANCE(name)                                                                \
  in->name = reinterpret_cast<PFN_##name>(get_proc(in->instance, #name));                          \
  if (!in->name)                                                                                   \
    return error(KILN_UNAVAILABLE, "Vulkan instance lacks " #name);
  KILN_VK_INSTANCE_FNS(KILN_VK_LOAD_INSTANCE)
  if (in->validation) {
    KILN_VK_DEBUG_FNS(KILN_VK_LOAD_INSTANCE)
  }
#undef KILN_VK_LOAD_INSTANCE
  return {};
}

Status create_messenger(Instance *in) {
  VkDebugUtilsMessengerCreateInfoEXT ci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  ci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  ci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                   VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  ci.pfnUserCallback = on_message;
  ci.pUserData = in;
  return check(in->vkCreateDebugUtilsMessengerEXT(in->instance, &ci, nullptr, &in->messenger),
               "vkCreateDebugUtilsMessengerEXT");
}

} // namespace

Status get_loader(const Loader **out) {
  static Loader loader;
  static std::once_flag once;
  static std::string failure_message;
  static kiln_status_code failure_code = KILN_OK;
  std::call_once(once, [] {
    Status s = load_library(&loader);
    failure_code = s.code();
    failure_message = s.message();
  });
  if (failure_code != KILN_OK)
    return Status(failure_code, failure_message);
  *out = &loader;
  return {};
}

Validation validation_requested() {
  const char *v = std::getenv("KILN_VULKAN_VALIDATION");
  if (v && std::strcmp(v, "sync") == 0)
    return Validation::sync;
  return v && std::strcmp(v, "1") == 0 ? Validation::core : Validation::off;
}

Instance::~Instance() {
  if (messenger)
    vkDestroyDebugUtilsMessengerEXT(instance, messenger, nullptr);
  if (instance && !borrowed)
    vkDestroyInstance(instance, nullptr);
}

Status adopt_instance(PFN_vkGetInstanceProcAddr get_proc, VkInstance instance,
                      std::unique_ptr<Instance> *out) {
  auto in = std::make_unique<Instance>();
  in->instance = instance;
  in->borrowed = true;
  KILN_RT_TRY(load_instance_fns(in.get(), get_proc));
  *out = std::move(in);
  return {};
}

Status create_instance(Validation level, std::unique_ptr<Instance> *out) {
  const bool validation = level != Validation::off;
  const Loader *l = nullptr;
  KILN_RT_TRY(get_loader(&l));
  uint32_t version = VK_API_VERSION_1_0;
  if (l->vkEnumerateInstanceVersion)
    l->vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2)
    return error(KILN_UNSUPPORTED, "the Vulkan loader offers version ", VK_API_VERSION_MAJOR(version),
                 ".", VK_API_VERSION_MINOR(version), "; kiln needs 1.2");
  auto in = std::make_unique<Instance>();
  in->loader = l;
  in->validation = validation;
  in->sync_validation = level == Validation::sync;
  const char *layer = "VK_LAYER_KHRONOS_validation";
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME,
                        VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME};
  const uint32_t num_exts = in->sync_validation ? 2 : 1;
  const char *setting =
      in->sync_validation ? "KILN_VULKAN_VALIDATION=sync" : "KILN_VULKAN_VALIDATION=1";
  if (validation && !has_layer(*l, layer))
    return error(KILN_UNAVAILABLE, setting, " but ", layer,
                 " is not installed (install vulkan-validationlayers)");
  for (uint32_t i = 0; validation && i < num_exts; ++i)
    if (!has_instance_extension(*l, nullptr, exts[i]) &&
        !has_instance_extension(*l, layer, exts[i]))
      return error(KILN_UNAVAILABLE, setting, " but ", exts[i], " is missing");
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "kiln";
  app.pEngineName = "kiln";
  app.apiVersion = version >= VK_API_VERSION_1_3 ? VK_API_VERSION_1_3 : VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  // Synchronization validation is off by default in the layer; it is enabled per instance.
  const VkValidationFeatureEnableEXT sync =
      VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validation) {
    ci.enabledLayerCount = 1;
    ci.ppEnabledLayerNames = &layer;
    ci.enabledExtensionCount = num_exts;
    ci.ppEnabledExtensionNames = exts;
    if (in->sync_validation)
      ci.pNext = &features;
  }
  KILN_RT_TRY(check(l->vkCreateInstance(&ci, nullptr, &in->instance), "vkCreateInstance"));
  KILN_RT_TRY(load_instance_fns(in.get(), l->vkGetInstanceProcAddr));
  if (validation)
    KILN_RT_TRY(create_messenger(in.get()));
  *out = std::move(in);
  return {};
}

const char *result_name(VkResult r) {
  switch (r) {
#define KILN_VK_RESULT(name)                                                                       \
  case name: return #name;
    KILN_VK_RESULT(VK_SUCCESS)
    KILN_VK_RESULT(VK_NOT_READY)
    KILN_VK_RESULT(VK_TIMEOUT)
    KILN_VK_RESULT(VK_INCOMPLETE)
    KILN_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    KILN_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    KILN_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    KILN_VK_RESULT(VK_ERROR_DEVICE_LOST)
    KILN_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    KILN_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    KILN_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    KILN_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    KILN_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    KILN_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    KILN_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    KILN_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    KILN_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    KILN_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef KILN_VK_RESULT
  default: return "VkResult error";
  }
}

Status check(VkResult r, const char *what) {
  if (r == VK_SUCCESS)
    return {};
  if (r == VK_ERROR_DEVICE_LOST)
    return error(KILN_DEVICE_LOST, what, " failed: ", result_name(r), " (", int(r),
                 "): the Vulkan device was lost; release its modules and the device and open "
                 "it again");
  kiln_status_code code = (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
                              ? KILN_OUT_OF_MEMORY
                              : KILN_DEVICE_ERROR;
  return error(code, what, " failed: ", result_name(r), " (", int(r), ")");
}

} // namespace kiln::rt::vk
