// The SPIR-V backend: target::Backend over emit_spirv.
#include "target/spirv/spirv.h"

namespace kiln::spirv {
namespace {

class SpirvBackend final : public target::Backend {
public:
  explicit SpirvBackend(const kir::TargetDesc &t) : target_(t) {}
  std::string_view name() const override { return "spirv"; }
  Result<target::Payload> serialize(const kir::Kernel &k, kir::Requirements *used) const override {
    auto words = emit_spirv(k, target_, used);
    if (!words) return words.status();
    return target::Payload(target::SpirvPayload{std::move(*words)});
  }

private:
  kir::TargetDesc target_;
};

std::unique_ptr<target::Backend> create(const kir::TargetDesc &t) {
  return std::make_unique<SpirvBackend>(t);
}

} // namespace

const target::BackendInfo &backend_info() {
  static const target::BackendInfo info{"spirv", create};
  return info;
}

} // namespace kiln::spirv
