// Executables on Vulkan: one compute pipeline per program executable, built at module load.
#include "runtime/vulkan/vk_objects.h"

#include <cstdio>
#include <string>

namespace kiln::rt::vk {
namespace {

Status create_layouts(Device &d, const Executable &exe, Pipeline *out) {
  std::vector<VkDescriptorSetLayoutBinding> bindings(exe.num_bindings);
  for (uint32_t i = 0; i < exe.num_bindings; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo sl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  sl.bindingCount = exe.num_bindings;
  sl.pBindings = bindings.data();
  KILN_RT_TRY(check(d.vkCreateDescriptorSetLayout(d.device, &sl, nullptr, &out->set_layout),
                    "vkCreateDescriptorSetLayout"));
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, exe.push_constant_bytes};
  VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &out->set_layout;
  pl.pushConstantRangeCount = exe.push_constant_bytes ? 1 : 0;
  pl.pPushConstantRanges = &range;
  return check(d.vkCreatePipelineLayout(d.device, &pl, nullptr, &out->layout),
               "vkCreatePipelineLayout");
}

// KILN_VK_PIPELINE_STATS=1 (see Device::pipeline_stats): one stderr line per pipeline
// executable with the driver's statistics.
void print_statistics(Device &d, const Executable &exe, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  uint32_t n = 0;
  if (d.vkGetPipelineExecutablePropertiesKHR(d.device, &info, &n, nullptr) != VK_SUCCESS) return;
  for (uint32_t i = 0; i < n; ++i) {
    VkPipelineExecutableInfoKHR ei{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    ei.pipeline = pipeline;
    ei.executableIndex = i;
    uint32_t m = 0;
    if (d.vkGetPipelineExecutableStatisticsKHR(d.device, &ei, &m, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> stats(
        m, VkPipelineExecutableStatisticKHR{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (d.vkGetPipelineExecutableStatisticsKHR(d.device, &ei, &m, stats.data()) != VK_SUCCESS)
      continue;
    std::string line = "kiln: pipeline stats '" + exe.name + "':";
    for (const VkPipelineExecutableStatisticKHR &st : stats) {
      line += std::string(" ") + st.name + "=";
      switch (st.format) {
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: line += st.value.b32 ? "1" : "0"; break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: line += std::to_string(st.value.i64); break;
      case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: line += std::to_string(st.value.u64); break;
      default: line += std::to_string(st.value.f64); break;
      }
      line += ";";
    }
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

// Builds the pipeline of executable `index`; its shader module lives only during the call.
Status create_pipeline(Device &d, const Executable &exe, const ArtifactBytes &bytes, size_t index,
                       Pipeline *out) {
  KILN_RT_TRY(create_layouts(d, exe, out));
  VkShaderModuleCreateInfo sm{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  sm.codeSize = std::get<SpirvCode>(exe.code).words * 4;
  sm.pCode = bytes.spirv(index);
  VkShaderModule shader = VK_NULL_HANDLE;
  KILN_RT_TRY(check(d.vkCreateShaderModule(d.device, &sm, nullptr, &shader),
                    "vkCreateShaderModule"));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = shader;
  ci.stage.pName = exe.entry_point.c_str();
  ci.layout = out->layout;
  if (d.pipeline_stats()) ci.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  Status s = check(d.vkCreateComputePipelines(d.device, d.pipeline_cache, 1, &ci, nullptr,
                                              &out->pipeline),
                   "vkCreateComputePipelines");
  d.vkDestroyShaderModule(d.device, shader, nullptr);
  if (!s.ok())
    return error(s.code(), "executable '", exe.name, "': ", s.message());
  if (d.pipeline_stats()) print_statistics(d, exe, out->pipeline);
  return {};
}

void destroy_pipeline(Device &d, Pipeline *p) {
  if (p->pipeline)
    d.vkDestroyPipeline(d.device, p->pipeline, nullptr);
  if (p->layout)
    d.vkDestroyPipelineLayout(d.device, p->layout, nullptr);
  if (p->set_layout)
    d.vkDestroyDescriptorSetLayout(d.device, p->set_layout, nullptr);
}

} // namespace

Status create_executable(Device &d, const Executable &exe, const ArtifactBytes &bytes,
                         size_t index, std::unique_ptr<Pipeline> *out) {
  KILN_RT_TRY(check_not_lost(d));
  if (!std::holds_alternative<SpirvCode>(exe.code))
    return error(KILN_UNSUPPORTED, "executable '", exe.name, "' is ", code_kind_name(exe.code),
                 ": the vulkan driver runs only SPIR-V (compile for a vulkan target)");
  KILN_RT_TRY(check_requirements(d.physical, exe));
  const uint64_t errors_before = d.instance->errors.load();
  auto p = std::make_unique<Pipeline>();
  p->executable = &exe;
  Status s = create_pipeline(d, exe, bytes, index, p.get());
  if (s.ok())
    if (uint64_t n = d.instance->errors.load() - errors_before)
      s = error(KILN_DEVICE_ERROR, "the Vulkan validation layer reported ", n,
                " error(s) while loading the module (printed to stderr)");
  if (!s.ok()) {
    destroy_pipeline(d, p.get());
    return s;
  }
  *out = std::move(p);
  return {};
}

void destroy_executable(Device &d, Pipeline *p) {
  destroy_pipeline(d, p);
  delete p;
}

} // namespace kiln::rt::vk
