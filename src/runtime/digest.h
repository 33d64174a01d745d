// Checks the artifact's content digest (schema/include/kiln/artifact/digest.h) before anything
// of the artifact is parsed.
#pragma once

#include "runtime/status.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace kiln::rt {

// `data`/`size`: the whole artifact, trailer included. Recomputes the SHA-256 of everything
// before the trailer (with pread() from `fd` when fd >= 0, so the pages of a mapped file do not
// become resident) and compares it with the trailer. On success *digest holds it and
// *payload_size the size without the trailer. An artifact without a trailer is reported as
// truncated, or as the older artifact version it is.
Status check_digest(const void *data, size_t size, int fd, std::array<uint8_t, 32> *digest,
                    size_t *payload_size);

} // namespace kiln::rt
