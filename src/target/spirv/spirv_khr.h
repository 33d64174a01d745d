// SPV_KHR_cooperative_matrix enumerants. Debian 12's spirv-headers (1.3.239) predate the
// extension, so its values are written here from the published SPIR-V registry.
#pragma once

#include <spirv/unified1/spirv.hpp>

#include <cstdint>

namespace kiln::spirv::khr {

constexpr spv::Op OpTypeCooperativeMatrix = static_cast<spv::Op>(4456);
constexpr spv::Op OpCooperativeMatrixLoad = static_cast<spv::Op>(4457);
constexpr spv::Op OpCooperativeMatrixStore = static_cast<spv::Op>(4458);
constexpr spv::Op OpCooperativeMatrixMulAdd = static_cast<spv::Op>(4459);
constexpr spv::Op OpCooperativeMatrixLength = static_cast<spv::Op>(4460);
constexpr spv::Capability CapabilityCooperativeMatrix = static_cast<spv::Capability>(6022);

// CooperativeMatrixUse, CooperativeMatrixLayout and CooperativeMatrixOperands.
constexpr uint32_t kUseA = 0, kUseB = 1, kUseAccumulator = 2;
constexpr uint32_t kRowMajor = 0, kColumnMajor = 1;
constexpr uint32_t kASigned = 0x1, kBSigned = 0x2, kCSigned = 0x4, kResultSigned = 0x8;

constexpr const char *kExtension = "SPV_KHR_cooperative_matrix";

} // namespace kiln::spirv::khr
