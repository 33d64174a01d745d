#include "runtime/digest.h"

#include "kiln/artifact/digest.h"
#include "kiln/artifact/kiln_generated.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <unistd.h>

namespace kiln::rt {
namespace {

Status hash_file(int fd, uint64_t n, artifact::Digest *out) {
  artifact::Sha256 h;
  std::vector<uint8_t> chunk(size_t(1) << 20);
  for (uint64_t at = 0; at < n;) {
    const size_t want = size_t(std::min<uint64_t>(chunk.size(), n - at));
    const ssize_t got = ::pread(fd, chunk.data(), want, off_t(at));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return error(KILN_NOT_FOUND, "cannot read the artifact file: ", std::strerror(errno));
    if (got == 0)
      return Status(KILN_INVALID_ARTIFACT,
                    "invalid artifact: the file got shorter while it was being loaded");
    h.update(chunk.data(), size_t(got));
    at += uint64_t(got);
  }
  *out = h.finish();
  return {};
}

// The schema version of an artifact without a digest trailer (an older version), for the error
// message only; false when the bytes are not a verifiable kiln FlatBuffer.
bool schema_version_of(const void *data, size_t size, uint32_t *version) {
  if (size < 8 || size > FLATBUFFERS_MAX_BUFFER_SIZE ||
      !flatbuffers::BufferHasIdentifier(data, fb::ModelIdentifier()))
    return false;
  std::vector<uint64_t> aligned((size + 7) / 8);
  std::memcpy(aligned.data(), data, size);
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t *>(aligned.data()), size);
  if (!fb::VerifyModelBuffer(verifier))
    return false;
  *version = fb::GetModel(aligned.data())->schema_version();
  return true;
}

} // namespace

Status check_digest(const void *data, size_t size, int fd, std::array<uint8_t, 32> *digest,
                    size_t *payload_size) {
  if (!artifact::has_trailer(data, size)) {
    uint32_t version = 0;
    if (schema_version_of(data, size, &version) && version != KILN_ARTIFACT_SCHEMA_VERSION)
      return error(KILN_INVALID_ARTIFACT, "artifact schema version ", version,
                   " is not supported: this runtime reads version ", KILN_ARTIFACT_SCHEMA_VERSION,
                   " (recompile the model with this kiln)");
    return Status(KILN_INVALID_ARTIFACT, "invalid artifact: no checksum trailer at its end "
                                         "(truncated, or not written by kiln)");
  }
  const size_t payload = size - artifact::kTrailerBytes;
  const auto *stored = static_cast<const uint8_t *>(data) + payload;
  artifact::Digest actual;
  if (fd >= 0)
    KILN_RT_TRY(hash_file(fd, payload, &actual));
  else
    actual = artifact::sha256(data, payload);
  artifact::Digest recorded;
  std::memcpy(recorded.data(), stored, recorded.size());
  if (actual != recorded)
    return error(KILN_INVALID_ARTIFACT,
                 "invalid artifact: the artifact is corrupt (checksum mismatch: its content has "
                 "SHA-256 ", artifact::to_hex(actual), ", its trailer records ",
                 artifact::to_hex(recorded), ")");
  *digest = actual;
  *payload_size = payload;
  return {};
}

} // namespace kiln::rt
