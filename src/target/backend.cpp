#include "target/backend.h"

namespace kiln::target {

const char *payload_kind_name(const Payload &p) {
  return std::holds_alternative<SpirvPayload>(p) ? "spirv" : "native";
}

} // namespace kiln::target
